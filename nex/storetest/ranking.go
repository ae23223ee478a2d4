package storetest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// Ranking runs the ranking store suite against fresh stores made by open.
func Ranking(t *testing.T, open func(t *testing.T) ranking.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	desc := ranking.Category{ID: 10, Descending: true}
	asc := ranking.Category{ID: 20}
	all := func(c ranking.Category) ranking.Query { return ranking.Query{Category: c, GroupIndex: ranking.NoGroup} }
	upload := func(t *testing.T, s ranking.Store, c ranking.Category, pid types.PID, score uint32, when int, groups ...byte) bool {
		t.Helper()
		ok, err := s.UploadScore(ctx, c, pid, 0, ranking.ScoreData{Category: c.ID, Score: score, Groups: groups, Param: uint64(pid)}, at(when))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	pids := func(es []ranking.Entry) []types.PID {
		out := make([]types.PID, len(es))
		for i := range es {
			out[i] = es[i].PID
		}
		return out
	}

	t.Run("categories", func(t *testing.T) {
		s := open(t)
		if _, err := s.Category(ctx, 10); !errors.Is(err, ranking.ErrNoCategory) {
			t.Fatalf("unknown category: %v", err)
		}
		if err := s.AddCategory(ctx, desc); err != nil {
			t.Fatal(err)
		}
		if err := s.AddCategory(ctx, ranking.Category{ID: 10}); err != nil { // exists: keeps its order
			t.Fatal(err)
		}
		if c, err := s.Category(ctx, 10); err != nil || c != desc {
			t.Fatalf("Category = %+v, %v", c, err)
		}
		if err := s.AddCategory(ctx, ranking.Category{ID: 0xFFFFFFFF}); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Category(ctx, 0xFFFFFFFF); err != nil || c.ID != 0xFFFFFFFF || c.Descending {
			t.Fatalf("largest category id: %+v, %v", c, err)
		}
	})

	t.Run("upload keeps the better score", func(t *testing.T) {
		s := open(t)
		for _, c := range []ranking.Category{desc, asc} {
			s.AddCategory(ctx, c)
		}
		if !upload(t, s, desc, 1, 100, 0) || upload(t, s, desc, 1, 50, 1) || upload(t, s, desc, 1, 100, 2) || !upload(t, s, desc, 1, 150, 3) {
			t.Fatal("descending: want first, worse refused, equal refused, better stored")
		}
		if !upload(t, s, asc, 1, 100, 0) || upload(t, s, asc, 1, 150, 1) || !upload(t, s, asc, 1, 50, 2) {
			t.Fatal("ascending: want first, worse refused, better stored")
		}
		ok, err := s.UploadScore(ctx, desc, 1, 0, ranking.ScoreData{Category: desc.ID, Score: 7, UpdateMode: ranking.UpdateDeleteOld}, at(4))
		if err != nil || !ok {
			t.Fatalf("delete-old upload of a worse score: %v %v", ok, err)
		}
		e, pos, err := s.Find(ctx, all(desc), 1, 0)
		if err != nil || e.Score != 7 || pos != 0 || !e.Updated.Equal(at(4)) {
			t.Fatalf("after delete-old: %+v at %d, %v", e, pos, err)
		}
		e, _, err = s.Find(ctx, all(asc), 1, 0)
		if err != nil || e.Score != 50 || e.Category != asc.ID {
			t.Fatalf("ascending score: %+v %v", e, err)
		}
		if _, _, err := s.Find(ctx, all(asc), 2, 0); !errors.Is(err, ranking.ErrNotFound) {
			t.Fatalf("Find of no score: %v", err)
		}
		// Extreme values survive: the highest score, the highest unique id and param.
		ok, err = s.UploadScore(ctx, desc, 9, 1<<63+5, ranking.ScoreData{Category: desc.ID, Score: 0xFFFFFFFF, Param: 1<<64 - 1, Groups: []byte{255, 0}}, at(5))
		if err != nil || !ok {
			t.Fatal(err)
		}
		e, pos, err = s.Find(ctx, all(desc), 9, 1<<63+5)
		if err != nil || e.Score != 0xFFFFFFFF || e.UniqueID != 1<<63+5 || e.Param != 1<<64-1 || !bytes.Equal(e.Groups, []byte{255, 0}) || pos != 0 {
			t.Fatalf("extreme values: %+v at %d, %v", e, pos, err)
		}
	})

	t.Run("concurrent uploads keep the best", func(t *testing.T) {
		s := open(t)
		s.AddCategory(ctx, desc)
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				score := uint32((i * 37) % 101)
				if _, err := s.UploadScore(ctx, desc, 1, 0, ranking.ScoreData{Category: desc.ID, Score: score}, at(i)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		best := uint32(0)
		for i := range 32 {
			best = max(best, uint32((i*37)%101))
		}
		if e, _, err := s.Find(ctx, all(desc), 1, 0); err != nil || e.Score != best {
			t.Fatalf("after 32 concurrent uploads: %+v %v, want %d", e, err, best)
		}
	})

	t.Run("rank order, ties, groups, counts", func(t *testing.T) {
		s := open(t)
		s.AddCategory(ctx, desc)
		// PID: score, upload time, group 0.
		upload(t, s, desc, 1, 50, 5, 1)
		upload(t, s, desc, 2, 90, 3, 2)
		upload(t, s, desc, 3, 50, 1, 1) // ties with 1, uploaded earlier: ranks first
		upload(t, s, desc, 4, 10, 0, 2)
		upload(t, s, desc, 5, 90, 4) // no groups
		list, err := s.List(ctx, all(desc), 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []types.PID{2, 5, 3, 1, 4}
		if got := pids(list); !equalPIDs(got, want) {
			t.Fatalf("rank order %v, want %v", got, want)
		}
		if list, _ := s.List(ctx, all(desc), 2, 2); !equalPIDs(pids(list), []types.PID{3, 1}) {
			t.Fatalf("offset 2 limit 2: %v", pids(list))
		}
		if list, _ := s.List(ctx, all(desc), 7, 2); len(list) != 0 {
			t.Fatalf("past the end: %v", pids(list))
		}
		g1 := ranking.Query{Category: desc, GroupIndex: 0, GroupNum: 1}
		if list, _ := s.List(ctx, g1, 0, 10); !equalPIDs(pids(list), []types.PID{3, 1}) {
			t.Fatalf("group 0 = 1: %v", pids(list))
		}
		if _, pos, err := s.Find(ctx, g1, 1, 0); err != nil || pos != 1 {
			t.Fatalf("position in group: %d %v", pos, err)
		}
		if _, _, err := s.Find(ctx, g1, 2, 0); !errors.Is(err, ranking.ErrNotFound) {
			t.Fatalf("Find outside the group: %v", err)
		}
		if _, pos, err := s.Find(ctx, all(desc), 1, 0); err != nil || pos != 3 {
			t.Fatalf("position of PID 1: %d %v, want 3", pos, err)
		}
		if n, err := s.CountBetter(ctx, all(desc), 50); err != nil || n != 2 {
			t.Fatalf("CountBetter(50) = %d %v, want 2", n, err)
		}
		if n, err := s.CountBetter(ctx, ranking.Query{Category: desc, GroupIndex: 0, GroupNum: 2}, 50); err != nil || n != 1 {
			t.Fatalf("CountBetter(50) in group 2 = %d %v, want 1", n, err)
		}
		if n, err := s.Count(ctx, all(desc)); err != nil || n != 5 {
			t.Fatalf("Count = %d %v", n, err)
		}
		if n, err := s.Count(ctx, ranking.Query{Category: desc, GroupIndex: 1, GroupNum: 0}); err != nil || n != 0 {
			t.Fatalf("Count in group 1 = %d %v", n, err)
		}
		st, err := s.Stats(ctx, all(desc))
		if err != nil || st != (ranking.Stats{5, 290, 10, 90, 58}) {
			t.Fatalf("Stats = %v %v", st, err)
		}
		if st, err := s.Stats(ctx, all(asc)); err != nil || st != (ranking.Stats{}) {
			t.Fatalf("Stats of an empty category = %v %v", st, err)
		}
		// FindUnique: the first in rank order under unique id 0.
		if e, pos, err := s.FindUnique(ctx, all(desc), 0); err != nil || e.PID != 2 || pos != 0 {
			t.Fatalf("FindUnique = %d at %d, %v", e.PID, pos, err)
		}
		if _, _, err := s.FindUnique(ctx, all(desc), 77); !errors.Is(err, ranking.ErrNotFound) {
			t.Fatalf("FindUnique of an unknown id: %v", err)
		}
		// Ascending order, ties by time.
		s.AddCategory(ctx, asc)
		upload(t, s, asc, 1, 30, 2)
		upload(t, s, asc, 2, 20, 3)
		upload(t, s, asc, 3, 30, 1)
		if list, _ := s.List(ctx, all(asc), 0, 10); !equalPIDs(pids(list), []types.PID{2, 3, 1}) {
			t.Fatalf("ascending order: %v", pids(list))
		}
		if n, _ := s.CountBetter(ctx, all(asc), 30); n != 1 {
			t.Fatalf("ascending CountBetter(30) = %d", n)
		}
	})

	t.Run("attributes, deletes, common data", func(t *testing.T) {
		s := open(t)
		s.AddCategory(ctx, desc)
		s.AddCategory(ctx, asc)
		upload(t, s, desc, 1, 10, 0, 1, 1)
		upload(t, s, asc, 1, 10, 0, 1, 1)
		upload(t, s, desc, 2, 20, 0)
		n, err := s.ChangeAttributes(ctx, 1, 0, desc.ID, false, ranking.ChangeAttributesParam{Flag: ranking.ChangeGroups, Groups: []byte{7}})
		if err != nil || n != 1 {
			t.Fatalf("ChangeAttributes groups: %d %v", n, err)
		}
		if list, _ := s.List(ctx, ranking.Query{Category: desc, GroupIndex: 0, GroupNum: 7}, 0, 10); !equalPIDs(pids(list), []types.PID{1}) {
			t.Fatalf("after group change: %v", pids(list))
		}
		if n, _ := s.Count(ctx, ranking.Query{Category: desc, GroupIndex: 1, GroupNum: 1}); n != 0 {
			t.Fatalf("group 1 kept its old value (%d entries)", n)
		}
		n, err = s.ChangeAttributes(ctx, 1, 0, 0, true, ranking.ChangeAttributesParam{Flag: ranking.ChangeParam, Param: 99})
		if err != nil || n != 2 {
			t.Fatalf("ChangeAttributes param everywhere: %d %v", n, err)
		}
		for _, c := range []ranking.Category{desc, asc} {
			if e, _, _ := s.Find(ctx, all(c), 1, 0); e.Param != 99 {
				t.Fatalf("param in %d = %d", c.ID, e.Param)
			}
		}
		if n, err := s.ChangeAttributes(ctx, 1, 0, 0, true, ranking.ChangeAttributesParam{}); err != nil || n != 2 {
			t.Fatalf("ChangeAttributes with no flag: %d %v, want the 2 scores counted", n, err)
		}
		if n, err := s.ChangeAttributes(ctx, 3, 0, desc.ID, false, ranking.ChangeAttributesParam{Flag: ranking.ChangeParam}); err != nil || n != 0 {
			t.Fatalf("ChangeAttributes of no score: %d %v", n, err)
		}

		if _, err := s.CommonData(ctx, 1, 0); !errors.Is(err, ranking.ErrNotFound) {
			t.Fatalf("no common data: %v", err)
		}
		if err := s.PutCommonData(ctx, 1, 0, []byte("one"), at(1)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutCommonData(ctx, 1, 0, []byte("two"), at(2)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutCommonData(ctx, 2, 0, nil, at(2)); err != nil {
			t.Fatal(err)
		}
		if d, err := s.CommonData(ctx, 1, 0); err != nil || string(d) != "two" {
			t.Fatalf("CommonData = %q %v", d, err)
		}
		list, _ := s.List(ctx, all(desc), 0, 10)
		if len(list) != 2 || string(list[1].CommonData) != "two" || len(list[0].CommonData) != 0 {
			t.Fatalf("List with common data: %+v", list)
		}
		if e, _, _ := s.FindUnique(ctx, all(asc), 0); string(e.CommonData) != "two" {
			t.Fatalf("FindUnique common data %q", e.CommonData)
		}
		if ok, err := s.DeleteCommonData(ctx, 1, 0); err != nil || !ok {
			t.Fatalf("DeleteCommonData: %v %v", ok, err)
		}
		if ok, _ := s.DeleteCommonData(ctx, 1, 0); ok {
			t.Fatal("DeleteCommonData twice reported a deletion")
		}

		if ok, err := s.DeleteScore(ctx, 2, 0, desc.ID); err != nil || !ok {
			t.Fatalf("DeleteScore: %v %v", ok, err)
		}
		if ok, _ := s.DeleteScore(ctx, 2, 0, desc.ID); ok {
			t.Fatal("DeleteScore twice reported a deletion")
		}
		if n, err := s.DeleteAllScores(ctx, 1, 0); err != nil || n != 2 {
			t.Fatalf("DeleteAllScores: %d %v", n, err)
		}
		if n, _ := s.Count(ctx, all(desc)); n != 0 {
			t.Fatalf("%d scores left", n)
		}
	})
}

func equalPIDs(a, b []types.PID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
