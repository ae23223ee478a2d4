package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/types"
)

// SSB4 runs the suite of Super Smash Bros. 4's store (nex/games/ssb4.Store)
// on a fresh store from open: profiles replaced and read back in order, play
// reports replaced and summed per index, replays with their players and
// winners (read, bounded by keep, walked in order, searched, counted),
// viewers' cursors, fighting power charts, and shared data (searched by
// its attributes and fighters, reported once per reporter, hidden when
// reported too often).
func SSB4(t *testing.T, open func(t *testing.T) ssb4.Store) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	t.Run("profiles", func(t *testing.T) {
		s := open(t)
		if got, err := s.Profiles(ctx, []types.PID{1001}); err != nil || len(got) != 0 {
			t.Fatalf("Profiles before any: %v %v", got, err)
		}
		for _, p := range []ssb4.Profile{{PID: 1001, Profile: []byte("old")}, {PID: 1002, Profile: []byte("b")}, {PID: 1001, Profile: []byte("a")}, {PID: 1003}} {
			if err := s.PostProfile(ctx, p.PID, p.Profile, now); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Profiles(ctx, []types.PID{1002, 1004, 1001, 1002, 1003})
		want := []ssb4.Profile{{PID: 1002, Profile: []byte("b")}, {PID: 1001, Profile: []byte("a")}, {PID: 1003, Profile: []byte{}}}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Profiles: %v %v, want %v", got, err, want)
		}
	})
	t.Run("play reports", func(t *testing.T) {
		s := open(t)
		if got, err := s.WorldPlayReport(ctx); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("WorldPlayReport before any: %#v %v", got, err)
		}
		for _, r := range []struct {
			pid    types.PID
			report []int32
		}{{1001, []int32{100, 100}}, {1001, []int32{1, 2, 3}}, {1002, []int32{10, -20}}, {1003, []int32{2147483647}}, {1004, nil}} {
			if err := s.SendPlayReport(ctx, r.pid, r.report, now); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.WorldPlayReport(ctx)
		want := []int64{1 + 10 + 2147483647, 2 - 20, 3}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("WorldPlayReport: %v %v, want %v", got, err, want)
		}
	})
	t.Run("replays", func(t *testing.T) {
		s := open(t)
		if _, err := s.Replay(ctx, 1); !errors.Is(err, ssb4.ErrNotFound) {
			t.Fatalf("Replay of none: %v, want ErrNotFound", err)
		}
		mk := func(id uint64, mode, style uint8, posted time.Time, fighters ...uint8) ssb4.Replay {
			r := ssb4.Replay{ID: id, Poster: 1001, Size: 1000 + uint32(id), Mode: mode, Style: style, Rule: 2, Stage: 12, ReplayType: 1,
				CompetitionID: 1<<63 + id, Score: -5, KeyVersion: 3, Posted: posted, Players: []ssb4.ReplayPlayer{}, Winners: []uint32{}}
			for i, f := range fighters {
				r.Players = append(r.Players, ssb4.ReplayPlayer{Fighter: f, Health: 150, WinningRate: 6500, Color: 1, Color2: 2,
					PrincipalID: 1001 + uint32(i), Country: 49, Region: 2, Number: uint8(i)})
			}
			if len(fighters) > 0 {
				r.Winners = []uint32{1001}
			}
			return r
		}
		all := []ssb4.Replay{
			mk(10, 1, 0, now.Add(-2*time.Hour), 3, 4),
			mk(11, 1, 0, now.Add(-time.Minute), 4, 5),
			mk(12, 2, 0, now, 6, 7, 8, 9),
			mk(13, 1, 1, now, 4, 6),
			mk(14, 1, 0, now, 7, 3),
		}
		for _, r := range all {
			if err := s.AddReplay(ctx, r, 100); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Replay(ctx, 12)
		if err != nil || !sameReplay(got, all[2]) {
			t.Fatalf("Replay(12): %+v %v, want %+v", got, err, all[2])
		}
		after, err := s.ReplaysAfter(ctx, 10, 2)
		if err != nil || len(after) != 2 || !sameReplay(after[0], all[1]) || !sameReplay(after[1], all[2]) {
			t.Fatalf("ReplaysAfter(10, 2): %+v %v", after, err)
		}
		if after, err := s.ReplaysAfter(ctx, 14, 10); err != nil || len(after) != 0 {
			t.Fatalf("ReplaysAfter(14): %+v %v", after, err)
		}
		found, err := s.SearchReplays(ctx, ssb4.ReplayQuery{Mode: 1, Style: 0, Fighter: 4, Limit: 10})
		if err != nil || replayIDs(found) != "11,10" {
			t.Fatalf("SearchReplays(mode 1, style 0, fighter 4): %s %v, want 11,10", replayIDs(found), err)
		}
		found, err = s.SearchReplays(ctx, ssb4.ReplayQuery{Mode: 1, Style: 0, Fighter: 3, Offset: 1, Limit: 1})
		if err != nil || replayIDs(found) != "10" {
			t.Fatalf("SearchReplays(fighter 3, offset 1, limit 1): %s %v, want 10", replayIDs(found), err)
		}
		n, fighters, err := s.ReplayStats(ctx, 1, now.Add(-time.Hour))
		if err != nil || n != 3 || !slices.Equal(fighters, []uint8{3, 4, 5, 6, 7}) {
			t.Fatalf("ReplayStats(mode 1, last hour) = %d %v %v, want 3 [3 4 5 6 7]", n, fighters, err)
		}
		if n, fighters, err := s.ReplayStats(ctx, 9, now.Add(-time.Hour)); err != nil || n != 0 || len(fighters) != 0 {
			t.Fatalf("ReplayStats(mode 9) = %d %v %v", n, fighters, err)
		}
		// keep 2: the three oldest go, with their players.
		if err := s.AddReplay(ctx, mk(15, 1, 0, now, 3), 2); err != nil {
			t.Fatal(err)
		}
		if after, err := s.ReplaysAfter(ctx, 0, 10); err != nil || replayIDs(after) != "14,15" {
			t.Fatalf("after keep 2: %s %v, want 14,15", replayIDs(after), err)
		}
		if _, err := s.Replay(ctx, 10); !errors.Is(err, ssb4.ErrNotFound) {
			t.Fatalf("dropped replay: %v, want ErrNotFound", err)
		}
		if n, fighters, err := s.ReplayStats(ctx, 1, now.Add(-3*time.Hour)); err != nil || n != 2 || !slices.Equal(fighters, []uint8{3, 7}) {
			t.Fatalf("ReplayStats after keep 2 = %d %v %v", n, fighters, err)
		}
	})
	t.Run("replay cursors", func(t *testing.T) {
		s := open(t)
		if id, err := s.ReplayCursor(ctx, 1001); err != nil || id != 0 {
			t.Fatalf("ReplayCursor before any: %d %v", id, err)
		}
		for _, id := range []uint64{5, 9} {
			if err := s.SetReplayCursor(ctx, 1001, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SetReplayCursor(ctx, 1002, 3); err != nil {
			t.Fatal(err)
		}
		if id, err := s.ReplayCursor(ctx, 1001); err != nil || id != 9 {
			t.Fatalf("ReplayCursor(1001) = %d %v, want 9", id, err)
		}
		if id, err := s.ReplayCursor(ctx, 1002); err != nil || id != 3 {
			t.Fatalf("ReplayCursor(1002) = %d %v, want 3", id, err)
		}
	})
	t.Run("fighting power", func(t *testing.T) {
		s := open(t)
		if n, chart, err := s.FightingPowerChart(ctx, 0, 10); err != nil || n != 0 || chart == nil || len(chart) != 0 {
			t.Fatalf("chart of none: %d %#v %v", n, chart, err)
		}
		// Mode 0: scores 1000 (twice), 900, 500, 100; pid 1001 replaces
		// 50 with 1000.
		for _, p := range []struct {
			pid    types.PID
			scores []ssb4.FightingPower
		}{
			{1001, []ssb4.FightingPower{{Mode: 0, Score: 50}, {Mode: 1, Score: 7}}},
			{1001, []ssb4.FightingPower{{Mode: 0, Score: 1000}}},
			{1002, []ssb4.FightingPower{{Mode: 0, Score: 1000}}},
			{1003, []ssb4.FightingPower{{Mode: 0, Score: 900}}},
			{1004, []ssb4.FightingPower{{Mode: 0, Score: 500}}},
			{1005, []ssb4.FightingPower{{Mode: 0, Score: 100}, {Mode: 3, Score: 1}}},
		} {
			if err := s.PostFightingPower(ctx, p.pid, p.scores, now); err != nil {
				t.Fatal(err)
			}
		}
		n, chart, err := s.FightingPowerChart(ctx, 0, 10)
		want := []ssb4.ChartPoint{{Score: 1000, Rank: 1}, {Score: 900, Rank: 3}, {Score: 500, Rank: 4}, {Score: 100, Rank: 5}}
		if err != nil || n != 5 || !slices.Equal(chart, want) {
			t.Fatalf("chart(0, 10 points) = %d %v %v, want 5 %v", n, chart, err, want)
		}
		n, chart, err = s.FightingPowerChart(ctx, 0, 3)
		want = []ssb4.ChartPoint{{Score: 1000, Rank: 1}, {Score: 900, Rank: 3}, {Score: 100, Rank: 5}}
		if err != nil || n != 5 || !slices.Equal(chart, want) {
			t.Fatalf("chart(0, 3 points) = %d %v %v, want 5 %v", n, chart, err, want)
		}
		if n, chart, err := s.FightingPowerChart(ctx, 1, 1); err != nil || n != 1 || !slices.Equal(chart, []ssb4.ChartPoint{{Score: 7, Rank: 1}}) {
			t.Fatalf("chart(1, 1 point) = %d %v %v", n, chart, err)
		}
		if modes, err := s.FightingPowerModes(ctx); err != nil || !slices.Equal(modes, []uint8{0, 1, 3}) {
			t.Fatalf("FightingPowerModes = %v %v, want [0 1 3]", modes, err)
		}
	})
	t.Run("shared data", func(t *testing.T) {
		s := open(t)
		if _, err := s.SharedData(ctx, 1); !errors.Is(err, ssb4.ErrNotFound) {
			t.Fatalf("SharedData of none: %v, want ErrNotFound", err)
		}
		if _, err := s.ReportSharedData(ctx, 1, 1001); !errors.Is(err, ssb4.ErrNotFound) {
			t.Fatalf("ReportSharedData of none: %v, want ErrNotFound", err)
		}
		all := []ssb4.SharedData{
			{ID: 20, Owner: 1001, DataType: 1, Region: 2, Attribute1: 3, Attribute2: 4, Fighters: []byte{5, 6, 5}, Comment: "stage", Posted: now},
			{ID: 21, Owner: 1002, DataType: 1, Region: 1, Attribute1: 3, Attribute2: 0, Fighters: []byte{6}, Comment: "", Posted: now},
			{ID: 22, Owner: 1001, DataType: 2, Region: 2, Attribute1: 0, Attribute2: 0, Fighters: []byte{}, Comment: "photo", Posted: now},
			{ID: 23, Owner: 1001, DataType: 1, Region: 2, Attribute1: 9, Attribute2: 4, Fighters: []byte{7}, Comment: "ünïcode", Posted: now},
		}
		for _, d := range all {
			if err := s.AddSharedData(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.SharedData(ctx, 20)
		if err != nil || !reflect.DeepEqual(got.Fighters, all[0].Fighters) || got.Comment != "stage" || got.Owner != 1001 ||
			got.Region != 2 || got.Attribute1 != 3 || got.Attribute2 != 4 || !got.Posted.Equal(now) || got.Reports != 0 {
			t.Fatalf("SharedData(20): %+v %v", got, err)
		}
		for _, c := range []struct {
			q    ssb4.SharedDataQuery
			want string
		}{
			{ssb4.SharedDataQuery{DataType: 1, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: ssb4.Any, Limit: 10}, "23,21,20"},
			{ssb4.SharedDataQuery{DataType: 1, Owner: 1001, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: ssb4.Any, Limit: 10}, "23,20"},
			{ssb4.SharedDataQuery{DataType: 1, Region: 2, Attribute1: 3, Attribute2: ssb4.Any, Fighter: ssb4.Any, Limit: 10}, "20"},
			{ssb4.SharedDataQuery{DataType: 1, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: 4, Fighter: ssb4.Any, Limit: 10}, "23,20"},
			{ssb4.SharedDataQuery{DataType: 1, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: 6, Limit: 10}, "21,20"},
			{ssb4.SharedDataQuery{DataType: 1, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: ssb4.Any, Offset: 1, Limit: 1}, "21"},
			{ssb4.SharedDataQuery{DataType: 3, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: ssb4.Any, Limit: 10}, ""},
		} {
			found, err := s.SearchSharedData(ctx, c.q)
			if err != nil || sharedIDs(found) != c.want {
				t.Fatalf("SearchSharedData(%+v): %s %v, want %s", c.q, sharedIDs(found), err, c.want)
			}
		}
		for _, r := range []types.PID{1002, 1003, 1002} {
			if _, err := s.ReportSharedData(ctx, 21, r); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := s.ReportSharedData(ctx, 21, 1003); err != nil || n != 2 {
			t.Fatalf("reports of 21: %d %v, want 2 (once per reporter)", n, err)
		}
		q := ssb4.SharedDataQuery{DataType: 1, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: ssb4.Any, Limit: 10, MaxReports: 2}
		if found, err := s.SearchSharedData(ctx, q); err != nil || sharedIDs(found) != "23,20" {
			t.Fatalf("SearchSharedData hiding twice reported: %s %v", sharedIDs(found), err)
		}
	})
}

func sharedIDs(ds []ssb4.SharedData) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += ","
		}
		s += strconv.FormatUint(d.ID, 10)
	}
	return s
}

func sameReplay(a, b ssb4.Replay) bool {
	return a.Posted.Equal(b.Posted) && reflect.DeepEqual(a.Players, b.Players) && slices.Equal(a.Winners, b.Winners) &&
		a.ID == b.ID && a.Poster == b.Poster && a.Size == b.Size && a.Mode == b.Mode && a.Style == b.Style && a.Rule == b.Rule &&
		a.Stage == b.Stage && a.ReplayType == b.ReplayType && a.CompetitionID == b.CompetitionID && a.Score == b.Score &&
		a.KeyVersion == b.KeyVersion
}

func replayIDs(rs []ssb4.Replay) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += ","
		}
		s += strconv.FormatUint(r.ID, 10)
	}
	return s
}
