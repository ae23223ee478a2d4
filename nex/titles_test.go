package nex

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/protocols/messaging"
	utilityproto "github.com/gamewire/gamewire/nex/protocols/utility"
	smproto "github.com/gamewire/gamewire/nex/protocols/utilitystoragemanager"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/nex/utility"
	"github.com/gamewire/gamewire/prudp"
)

// inbox is a client's MessageDelivery server: the messages the server hands
// over.
type inbox struct {
	messaging.UnimplementedMessageDelivery
	got chan types.AnyData
}

func (b *inbox) DeliverMessage(_ context.Context, _ *rmc.Call, m types.AnyData) error {
	b.got <- m
	return nil
}

// startTitles starts a server with the store's messages and matchmaking at a
// NEX version.
func startTitles(t *testing.T, version types.Version) (*Server, string, *accounts.Store) {
	t.Helper()
	store, _, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	mm, err := store.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mm.Close(); store.Close() })
	srv := &Server{Config: prudp.Config{Dialect: prudp.NEXV1}, Accounts: playerAccounts(), Matchmaking: mm,
		Messages: store.Messages(), Utility: &utility.Server{Store: store.UniqueIDs()}, NEXVersion: version}
	return srv, startServer(t, srv), store
}

// messenger logs pid in with a MessageDelivery server of its own.
func messenger(t *testing.T, ctx context.Context, addr string, pid int, version types.Version) (*Session, *inbox) {
	t.Helper()
	b := &inbox{got: make(chan types.AnyData, 8)}
	mux := rmc.NewMux()
	messaging.RegisterMessageDelivery(mux, b)
	sess, err := Login(ctx, addr, LoginConfig{User: fmt.Sprint(pid), Password: "pw", Config: prudp.Config{Dialect: prudp.NEXV1},
		Handler: mux, NEXVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSession(t, sess) })
	return sess, b
}

// send calls a MessageDelivery method, which is never answered.
func send(t *testing.T, ctx context.Context, s *Session, method uint32, params func(w *types.Writer)) {
	t.Helper()
	w := types.NewWriter(nil, s.RMC.Settings())
	params(&w)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	req := rmc.Request{Protocol: messaging.MessageDeliveryProtocolID, CallID: 0x7000_0000 + method, Method: method, Params: b}
	msg, err := req.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Conn.Send(ctx, 0, msg); err != nil {
		t.Fatal(err)
	}
}

func receive(t *testing.T, b *inbox) *messaging.TextMessage {
	t.Helper()
	select {
	case m := <-b.got:
		tm, ok := m.Object.(*messaging.TextMessage)
		if !ok {
			t.Fatalf("handed over a %s, want a TextMessage", m.ClassName())
		}
		return tm
	case <-time.After(10 * time.Second):
		t.Fatal("no message handed over")
	}
	return nil
}

// TestMessageDelivery: a message delivered to a player and to a list of
// players reaches each recipient online (the server calls
// DeliverMessage on their connection) with the id, sender and time the server
// gave it, and is kept for them in the store; NEX 3 (recipient id and type)
// and NEX 4 (MessageRecipient) layouts.
func TestMessageDelivery(t *testing.T) {
	for _, version := range []types.Version{31001, 40000} {
		t.Run(fmt.Sprint(version), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, addr, store := startTitles(t, version)
			a, _ := messenger(t, ctx, addr, 2000, version)
			_, bIn := messenger(t, ctx, addr, 2001, version)
			_, cIn := messenger(t, ctx, addr, 2002, version)

			to := func(typ messaging.RecipientType, id uint32) messaging.UserMessage {
				um := messaging.UserMessage{Sender: 9999, Subject: "hi", SenderName: "a",
					RecipientType: uint32(typ), RecipientID: id, Recipient: messaging.MessageRecipient{Type: uint32(typ)}}
				if typ == messaging.RecipientTypeGathering {
					um.Recipient.GID = id
				} else {
					um.Recipient.PID = types.PID(id)
				}
				return um
			}
			// To a principal.
			send(t, ctx, a, messaging.MessageDeliveryMethodDeliverMessage, func(w *types.Writer) {
				w.AnyData(types.AnyData{Object: &messaging.TextMessage{UserMessage: to(messaging.RecipientTypePrincipal, 2001), Body: "to b"}})
			})
			m := receive(t, bIn)
			if m.Body != "to b" || m.Sender != 2000 || m.ID == 0 || m.ReceptionTime == 0 || m.Subject != "hi" {
				t.Errorf("b got %+v", m)
			}
			// To a list of players.
			send(t, ctx, a, messaging.MessageDeliveryMethodDeliverMessageMultiTarget, func(w *types.Writer) {
				req := messaging.MessageDeliveryDeliverMessageMultiTargetRequest{Targets: []types.PID{2001, 2002},
					Message: types.AnyData{Object: &messaging.TextMessage{UserMessage: to(messaging.RecipientTypePrincipal, 0), Body: "to all"}}}
				req.Append(w)
			})
			mb, mc := receive(t, bIn), receive(t, cIn)
			if mb.Body != "to all" || mc.Body != "to all" || mb.ID != mc.ID || mb.ID <= m.ID || mc.Sender != 2000 {
				t.Errorf("multi-target: b %+v, c %+v", mb, mc)
			}
			// Kept for the recipients.
			kept, err := store.Messages().Inbox(ctx, 2001, 10)
			if err != nil || len(kept) != 2 || kept[0].ID != m.ID || kept[1].ID != mb.ID || kept[0].Sender != 2000 || kept[0].Class != "TextMessage" {
				t.Fatalf("b's inbox: %+v, %v", kept, err)
			}
			r := types.NewReader(kept[0].Body, messagedelivery.BodySettings)
			var stored messaging.TextMessage
			stored.Read(&r, "message")
			if err := r.Done(); err != nil || stored.Body != "to b" || stored.ID != m.ID || stored.Recipient.PID != 2001 {
				t.Errorf("stored message %+v, %v", stored, err)
			}
			if kept, err := store.Messages().Inbox(ctx, 2002, 10); err != nil || len(kept) != 1 {
				t.Errorf("c's inbox: %+v, %v", kept, err)
			}
		})
	}
}

// TestUtilityUniqueIDs: a unique id acquired with its password, associated with
// the player and read back in a later session, from the store; a wrong
// password is refused.
func TestUtilityUniqueIDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, addr, store := startTitles(t, 30500)
	a, _ := messenger(t, ctx, addr, 2010, 30500)
	u := utilityproto.UtilityClient{C: a.RMC}
	info, err := u.AcquireNexUniqueIdWithPassword(ctx)
	if err != nil || info.UniqueID == 0 || info.Password == 0 {
		t.Fatalf("acquire: %+v, %v", info, err)
	}
	plain, err := u.AcquireNexUniqueId(ctx)
	if err != nil || plain == info.UniqueID {
		t.Fatalf("acquire without password: %d, %v", plain, err)
	}
	wrong := info
	wrong.Password++
	if err := u.AssociateNexUniqueIdWithMyPrincipalId(ctx, wrong); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("wrong password: %v", err)
	}
	if err := u.AssociateNexUniqueIdsWithMyPrincipalId(ctx, []utilityproto.UniqueIdInfo{info, {UniqueID: plain}}); err != nil {
		t.Fatal(err)
	}
	closeSession(t, a)
	b, _ := messenger(t, ctx, addr, 2010, 30500)
	u = utilityproto.UtilityClient{C: b.RMC}
	got, err := u.GetAssociatedNexUniqueIdWithMyPrincipalId(ctx)
	if err != nil || got != info {
		t.Fatalf("read back %+v, %v; want %+v", got, err, info)
	}
	all, err := u.GetAssociatedNexUniqueIdsWithMyPrincipalId(ctx)
	if err != nil || len(all) != 2 || all[1].UniqueID != plain {
		t.Fatalf("read back all %+v, %v", all, err)
	}
	if kept, err := store.UniqueIDs().AssociatedUniqueIDs(ctx, 2010); err != nil || len(kept) != 2 || kept[0].ID != info.UniqueID {
		t.Fatalf("in the store: %+v, %v", kept, err)
	}
}

// TestStorageManager: with the Storage Manager variant, 110 is Storage Manager:
// a slot's unique id is created once and found again, a card's is its own, and
// the id names its player.
func TestStorageManager(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, _, err := accounts.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	srv := &Server{Config: prudp.Config{Dialect: prudp.NEXV1}, Accounts: playerAccounts(), Variants: []string{VariantStorageManager},
		Utility: &utility.Server{Store: store.UniqueIDs()}, StorageManager: &storagemanager.Server{Store: store.Slots()}}
	addr := startServer(t, srv)
	a, _ := messenger(t, ctx, addr, 2020, 0)
	sm := smproto.StorageManagerClient{C: a.RMC}
	id, first, err := sm.AcquireNexUniqueId(ctx, 1)
	if err != nil || !first || id == 0 {
		t.Fatalf("acquire: %d %v %v", id, first, err)
	}
	if again, first, err := sm.AcquireNexUniqueId(ctx, 1); err != nil || first || again != id {
		t.Fatalf("again: %d %v %v", again, first, err)
	}
	if _, _, err := sm.AcquireNexUniqueId(ctx, storagemanager.MaxSlot+1); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("slot out of range: %v", err)
	}
	card, err := sm.AcquireCardId(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cid, first, err := sm.ActivateWithCardId(ctx, 1, card)
	if err != nil || !first || cid == id {
		t.Fatalf("activate with card: %d %v %v", cid, first, err)
	}
	if pid, err := sm.NexUniqueIdToPrincipalId(ctx, cid); err != nil || pid != 2020 {
		t.Fatalf("owner: %d %v", pid, err)
	}
	if ids, err := sm.GetAssociatedNexUniqueIds(ctx); err != nil || len(ids) != 2 || ids[0] != id || ids[1] != cid {
		t.Fatalf("associated: %v %v", ids, err)
	}
}
