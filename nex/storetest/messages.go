package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/types"
)

// Messages runs the suite of messagedelivery.Store against fresh stores made
// by open.
func Messages(t *testing.T, open func(t *testing.T) messagedelivery.Store) {
	ctx := context.Background()
	t.Run("a message is kept for each recipient with the id its body carries", func(t *testing.T) {
		s := open(t)
		if got, err := s.Inbox(ctx, 2000, 10); err != nil || len(got) != 0 {
			t.Fatalf("empty inbox: %v, %v", got, err)
		}
		var ids []uint32
		for i := range 3 {
			id, err := s.DeliverMessage(ctx, 1000, []types.PID{2000, 3000}, "TextMessage", func(id uint32) ([]byte, error) {
				return fmt.Appendf(nil, "message %d id %d", i, id), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if id == 0 || len(ids) > 0 && id <= ids[len(ids)-1] {
				t.Fatalf("id %d after %v", id, ids)
			}
			ids = append(ids, id)
		}
		for _, pid := range []types.PID{2000, 3000} {
			got, err := s.Inbox(ctx, pid, 10)
			if err != nil || len(got) != 3 {
				t.Fatalf("inbox of %d: %v, %v", pid, got, err)
			}
			for i, m := range got {
				if m.ID != ids[i] || m.Sender != 1000 || m.Class != "TextMessage" || string(m.Body) != fmt.Sprintf("message %d id %d", i, ids[i]) || m.Created.IsZero() {
					t.Errorf("inbox of %d, message %d: %+v (body %q)", pid, i, m, m.Body)
				}
			}
		}
		if got, err := s.Inbox(ctx, 1000, 10); err != nil || len(got) != 0 {
			t.Errorf("the sender's inbox: %v, %v", got, err)
		}
		if got, err := s.Inbox(ctx, 2000, 2); err != nil || len(got) != 2 || got[1].ID != ids[1] {
			t.Errorf("inbox limited to 2: %v, %v", got, err)
		}
	})
	t.Run("a body that fails stores nothing", func(t *testing.T) {
		s := open(t)
		boom := errors.New("boom")
		if _, err := s.DeliverMessage(ctx, 1, []types.PID{2}, "BinaryMessage", func(uint32) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
			t.Fatalf("error %v, want boom", err)
		}
		if got, err := s.Inbox(ctx, 2, 10); err != nil || len(got) != 0 {
			t.Errorf("inbox after a failed delivery: %v, %v", got, err)
		}
	})
}
