package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/games/smm"
	"github.com/gamewire/gamewire/nex/types"
)

// SMM runs the suite of Super Mario Maker's store (nex/games/smm.Store) on a
// fresh store from open: custom rankings and their places, raters' counters,
// buffer queues bounded by keep, course records (first clear kept, best
// score replaced only by a better one) and deletion reasons.
func SMM(t *testing.T, open func(t *testing.T) smm.Store) {
	ctx := context.Background()
	t.Run("custom ranking", func(t *testing.T) {
		s := open(t)
		if err := s.RateCustomRanking(ctx, 1001, 0, []smm.Rate{{DataID: 10, Score: 1}, {DataID: 11, Score: 1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.RateCustomRanking(ctx, 1002, 0, []smm.Rate{{DataID: 11, Score: 2}, {DataID: 12, Score: 1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.RateCustomRanking(ctx, 1002, 5, []smm.Rate{{DataID: 10, Score: 7}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.CustomRanking(ctx, 0, []uint64{11, 10, 12, 99})
		want := []smm.Ranked{{DataID: 11, Score: 3, Order: 1}, {DataID: 10, Score: 1, Order: 2}, {DataID: 12, Score: 1, Order: 2}, {DataID: 99}}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("CustomRanking: %v %v, want %v", got, err, want)
		}
		top, err := s.TopCustomRanking(ctx, 0, 0, 10)
		want = []smm.Ranked{{DataID: 11, Score: 3, Order: 1}, {DataID: 10, Score: 1, Order: 2}, {DataID: 12, Score: 1, Order: 2}}
		if err != nil || !slices.Equal(top, want) {
			t.Fatalf("TopCustomRanking: %v %v, want %v", top, err, want)
		}
		if top, err := s.TopCustomRanking(ctx, 0, 1, 1); err != nil || len(top) != 1 || top[0].DataID != 10 || top[0].Order != 2 {
			t.Fatalf("TopCustomRanking offset 1 limit 1: %v %v", top, err)
		}
		if top, err := s.TopCustomRanking(ctx, 5, 0, 10); err != nil || len(top) != 1 || top[0] != (smm.Ranked{DataID: 10, Score: 7, Order: 1}) {
			t.Fatalf("TopCustomRanking application 5: %v %v", top, err)
		}
		for _, c := range []struct {
			pid  uint32
			app  uint32
			want uint32
		}{{1001, 0, 2}, {1002, 0, 2}, {1002, 5, 1}, {1003, 0, 0}} {
			if n, err := s.RateCount(ctx, types.PID(c.pid), c.app); err != nil || n != c.want {
				t.Fatalf("RateCount(%d, %d) = %d %v, want %d", c.pid, c.app, n, err, c.want)
			}
		}
		if err := s.ResetRateCount(ctx, 1002, 0); err != nil {
			t.Fatal(err)
		}
		if n, err := s.RateCount(ctx, 1002, 0); err != nil || n != 0 {
			t.Fatalf("RateCount after reset: %d %v", n, err)
		}
		if n, err := s.RateCount(ctx, 1002, 5); err != nil || n != 1 {
			t.Fatalf("RateCount of another application after reset: %d %v", n, err)
		}
	})
	t.Run("buffer queues", func(t *testing.T) {
		s := open(t)
		q, other := smm.QueueID{DataID: 10, Slot: 0}, smm.QueueID{DataID: 10, Slot: 1}
		if b, err := s.BufferQueue(ctx, q); err != nil || len(b) != 0 {
			t.Fatalf("empty queue: %q %v", b, err)
		}
		for i := range 5 {
			if err := s.AddToBufferQueue(ctx, q, fmt.Appendf(nil, "b%d", i), 3); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddToBufferQueue(ctx, other, []byte("x"), 3); err != nil {
			t.Fatal(err)
		}
		b, err := s.BufferQueue(ctx, q)
		if err != nil || !slices.EqualFunc(b, [][]byte{[]byte("b2"), []byte("b3"), []byte("b4")}, slices.Equal) {
			t.Fatalf("queue after 5 adds keeping 3: %q %v", b, err)
		}
		if b, err := s.BufferQueue(ctx, other); err != nil || len(b) != 1 || string(b[0]) != "x" {
			t.Fatalf("other slot: %q %v", b, err)
		}
	})
	t.Run("course records", func(t *testing.T) {
		s := open(t)
		t0 := time.Unix(1700000000, 0)
		if _, err := s.CourseRecord(ctx, 10, 0); !errors.Is(err, smm.ErrNotFound) {
			t.Fatalf("CourseRecord before any: %v", err)
		}
		r, err := s.UploadCourseRecord(ctx, 10, 0, 1001, 5000, t0)
		if err != nil || r.FirstPID != 1001 || r.BestPID != 1001 || r.BestScore != 5000 || !r.Created.Equal(t0) {
			t.Fatalf("first clear: %+v %v", r, err)
		}
		// A worse time changes nothing; a better one takes the best.
		if r, err = s.UploadCourseRecord(ctx, 10, 0, 1002, 6000, t0.Add(time.Minute)); err != nil || r.BestPID != 1001 || r.BestScore != 5000 {
			t.Fatalf("worse clear: %+v %v", r, err)
		}
		if r, err = s.UploadCourseRecord(ctx, 10, 0, 1003, 4000, t0.Add(2*time.Minute)); err != nil || r.BestPID != 1003 || r.BestScore != 4000 || r.FirstPID != 1001 {
			t.Fatalf("better clear: %+v %v", r, err)
		}
		got, err := s.CourseRecord(ctx, 10, 0)
		want := smm.CourseRecord{DataID: 10, Slot: 0, FirstPID: 1001, BestPID: 1003, BestScore: 4000, Created: t0, Updated: t0.Add(2 * time.Minute)}
		if err != nil || got.DataID != want.DataID || got.FirstPID != want.FirstPID || got.BestPID != want.BestPID || got.BestScore != want.BestScore ||
			!got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) {
			t.Fatalf("CourseRecord: %+v %v, want %+v", got, err, want)
		}
		if _, err := s.CourseRecord(ctx, 10, 1); !errors.Is(err, smm.ErrNotFound) {
			t.Fatalf("CourseRecord of another slot: %v", err)
		}
	})
	t.Run("deletion reasons", func(t *testing.T) {
		s := open(t)
		if err := s.SetDeletionReason(ctx, []uint64{10, 11}, 3); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDeletionReason(ctx, []uint64{11}, 4); err != nil {
			t.Fatal(err)
		}
		if r, err := s.DeletionReasons(ctx, []uint64{10, 11, 12}); err != nil || !slices.Equal(r, []uint32{3, 4, 0}) {
			t.Fatalf("DeletionReasons: %v %v", r, err)
		}
	})
}
