package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/nodes"
)

// MailStore is what the mailbox suite needs of a store.
type MailStore interface {
	nodes.Mailbox
	nodes.Directory
}

// Mailbox runs the suite of nodes.Mailbox and nodes.Directory against fresh
// stores made by open.
func Mailbox(t *testing.T, open func(t *testing.T) MailStore) {
	ctx := context.Background()
	t.Run("mail comes out in order, per node, once", func(t *testing.T) {
		s := open(t)
		if got, err := s.Take(ctx, "a", 10); err != nil || len(got) != 0 {
			t.Fatalf("Take on an empty mailbox: %v, %v", got, err)
		}
		var want []nodes.Message
		for i := range 5 {
			m := nodes.Message{PID: uint64(1000 + i), Kind: "k", Payload: []byte{byte(i), 0, 0xff}}
			want = append(want, m)
			if err := s.Post(ctx, "a", m); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Post(ctx, "b", nodes.Message{Kind: "other", Payload: []byte("b")}, nodes.Message{Kind: "empty"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Take(ctx, "a", 3)
		if err != nil {
			t.Fatal(err)
		}
		rest, err := s.Take(ctx, "a", 10)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rest...)
		if len(got) != 5 {
			t.Fatalf("took %d messages of a, want 5", len(got))
		}
		for i := range got {
			if got[i].PID != want[i].PID || got[i].Kind != want[i].Kind || string(got[i].Payload) != string(want[i].Payload) {
				t.Fatalf("message %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		if again, err := s.Take(ctx, "a", 10); err != nil || len(again) != 0 {
			t.Fatalf("Take after all was taken: %v, %v", again, err)
		}
		b, err := s.Take(ctx, "b", 10)
		if err != nil || len(b) != 2 || b[0].Kind != "other" || string(b[0].Payload) != "b" || b[1].Kind != "empty" || len(b[1].Payload) != 0 {
			t.Fatalf("node b's mail: %+v, %v", b, err)
		}
		if err := s.Post(ctx, "a", nodes.Message{Kind: "big", Payload: make([]byte, nodes.MaxMailPayload+1)}); err == nil {
			t.Fatal("Post of an oversized payload succeeded")
		}
	})
	t.Run("concurrent posters and one taker lose nothing and keep each poster's order", func(t *testing.T) {
		s := open(t)
		const posters, each = 4, 25
		var wg sync.WaitGroup
		for p := range posters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if err := s.Post(ctx, "n", nodes.Message{PID: uint64(p), Kind: "seq", Payload: []byte{byte(i)}}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		next := make([]int, posters)
		total := 0
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for finished := false; ; {
			select {
			case <-done:
				finished = true
			default:
			}
			got, err := s.Take(ctx, "n", 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range got {
				if int(m.Payload[0]) != next[m.PID] {
					t.Fatalf("poster %d: message %d came when %d was next", m.PID, m.Payload[0], next[m.PID])
				}
				next[m.PID]++
				total++
			}
			if finished && len(got) == 0 {
				break
			}
		}
		if total != posters*each {
			t.Fatalf("took %d messages, want %d", total, posters*each)
		}
	})
	t.Run("stations by player and node", func(t *testing.T) {
		s := open(t)
		urls := []string{"prudp:/address=192.0.2.1;port=1;PID=7", "prudp:/address=10.0.0.2;port=2;PID=7\nodd"}
		if err := s.SetStations(ctx, "n1", 7, urls); err != nil {
			t.Fatal(err)
		}
		if err := s.SetStations(ctx, "n2", 7, urls[:1]); err != nil {
			t.Fatal(err)
		}
		if err := s.SetStations(ctx, "n2", 8, urls[:1]); err != nil {
			t.Fatal(err)
		}
		got, err := s.StationsOf(ctx, 7)
		if err != nil || len(got) != 2 || got[0].Node != "n1" || got[1].Node != "n2" || !slices.Equal(got[0].URLs, urls) || !slices.Equal(got[1].URLs, urls[:1]) {
			t.Fatalf("StationsOf(7) = %+v, %v", got, err)
		}
		// A re-registration replaces; no urls removes.
		if err := s.SetStations(ctx, "n1", 7, urls[1:]); err != nil {
			t.Fatal(err)
		}
		if err := s.SetStations(ctx, "n2", 7, nil); err != nil {
			t.Fatal(err)
		}
		got, err = s.StationsOf(ctx, 7)
		if err != nil || len(got) != 1 || !slices.Equal(got[0].URLs, urls[1:]) {
			t.Fatalf("StationsOf(7) after the updates = %+v, %v", got, err)
		}
		if err := s.ClearStations(ctx, "n2"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.StationsOf(ctx, 8); err != nil || len(got) != 0 {
			t.Fatalf("StationsOf(8) after node n2 was cleared = %+v, %v", got, err)
		}
		if got, err := s.StationsOf(ctx, 7); err != nil || len(got) != 1 || got[0].Node != "n1" {
			t.Fatalf("node n1's record went with n2's: %+v, %v", got, err)
		}
		if !strings.Contains(fmt.Sprint(got), "odd") {
			t.Fatalf("a url with a newline was not kept whole: %v", got)
		}
	})
}

// MailboxListener checks that a nodes.Listener wakes the node a message was
// posted for, and only that node.
func MailboxListener(t *testing.T, s MailStore) {
	l, ok := s.(nodes.Listener)
	if !ok {
		t.Skip("the store does not implement nodes.Listener")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wake, err := l.Listen(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Post(ctx, "b", nodes.Message{Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Post(ctx, "a", nodes.Message{Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-ctx.Done():
		t.Fatal("no wake-up for mail posted to the node")
	}
	if got, err := s.Take(ctx, "a", 10); err != nil || len(got) != 1 {
		t.Fatalf("Take after the wake-up: %+v, %v", got, err)
	}
	cancel()
	for range wake {
	}
}
