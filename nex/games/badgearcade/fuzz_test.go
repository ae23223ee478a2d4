package badgearcade_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/nex/games/badgearcade"
	sba "github.com/gamewire/gamewire/nex/protocols/securebadgearcade"
	sh "github.com/gamewire/gamewire/nex/protocols/shopbadgearcade"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// memStore is badgearcade.Store in memory, for the fuzz target.
type memStore struct {
	mu   sync.Mutex
	logs map[types.PID][]badgearcade.PlayLog
}

func (m *memStore) AddPlayLog(ctx context.Context, l badgearcade.PlayLog, keep int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ls := append(m.logs[l.PID], l)
	m.logs[l.PID] = ls[max(0, len(ls)-keep):]
	return nil
}

func (m *memStore) PlayLogs(ctx context.Context, pid types.PID, limit int) ([]badgearcade.PlayLog, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.logs[pid], nil
}

// FuzzBadgeArcadeCalls sends arbitrary parameters to Shop_BadgeArcade's
// methods and to GetMaintenanceStatus: each call is answered, never a panic,
// and a stored play log is within the limits. Seeds: the parameters the game
// sends, as the generated client encodes them at NEX 3.7 (no public capture
// of the game exists).
func FuzzBadgeArcadeCalls(f *testing.F) {
	settings := types.Settings{StructureHeader: true, Version: 30716}
	seed := func(protocol uint16, method uint32, a interface{ Append(*types.Writer) }) {
		w := types.NewWriter(nil, settings)
		a.Append(&w)
		b, err := w.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(protocol == sba.SecureConnectionBadgeArcadeProtocolID, method, b)
	}
	seed(sh.ShopBadgeArcadeProtocolID, sh.ShopBadgeArcadeMethodGetRivToken, &sh.ShopBadgeArcadeGetRivTokenRequest{ItemCode: "PLAYS5", ReferenceID: []byte{0xde, 0xad}})
	seed(sh.ShopBadgeArcadeProtocolID, sh.ShopBadgeArcadeMethodPostPlayLog, &sh.ShopBadgeArcadePostPlayLogRequest{
		Param: sh.ShopPostPlayLogParam{Unknown1: []uint32{1, 2, 3}, Timestamp: types.MakeDateTime(2026, 11, 27, 12, 0, 0), Unknown2: "log"}})
	seed(sba.SecureConnectionBadgeArcadeProtocolID, sba.SecureConnectionBadgeArcadeMethodGetMaintenanceStatus, &sba.SecureConnectionBadgeArcadeGetMaintenanceStatusRequest{})
	store := &memStore{logs: map[types.PID][]badgearcade.PlayLog{}}
	mux := rmc.NewMux()
	if err := badgearcade.Register(mux, &badgearcade.Server{Store: store}); err != nil {
		f.Fatal(err)
	}
	peer := &rmc.Peer{PID: 2000, Settings: settings}
	f.Fuzz(func(t *testing.T, secure bool, method uint32, params []byte) {
		protocol := sh.ShopBadgeArcadeProtocolID
		if secure {
			protocol = sba.SecureConnectionBadgeArcadeProtocolID
			method = sba.SecureConnectionBadgeArcadeMethodGetMaintenanceStatus
		}
		req, err := (&rmc.Request{Protocol: protocol, CallID: 9, Method: method % 4, Params: params}).Append(nil)
		if err != nil {
			t.Skip()
		}
		out, err := rmc.Dispatch(context.Background(), mux, peer, req, nil, nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		resp, _, err := rmc.ParseResponse(out)
		if err != nil || resp.CallID != 9 || (resp.IsError() && !strings.HasPrefix(resp.Result.Name(), "Core::")) {
			t.Fatalf("answer %x: %+v %v", out, resp, err)
		}
		logs, _ := store.PlayLogs(context.Background(), 2000, 0)
		for _, l := range logs {
			if len(l.Unknown1) > badgearcade.MaxPlayLogValues || len(l.Unknown2) > badgearcade.MaxPlayLogString {
				t.Fatalf("stored an oversized play log: %d values, %d bytes", len(l.Unknown1), len(l.Unknown2))
			}
		}
	})
}
