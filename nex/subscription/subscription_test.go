package subscription

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
	sub "github.com/gamewire/gamewire/nex/protocols/subscription"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// v33 are Pokémon X/Y's settings: NEX 3.3, 4-byte PIDs, no structure headers.
var v33 = types.Settings{PIDSize: 4, Version: 30300}

// call calls a method of srv as p, as a connection would.
func call(srv *Server, p *rmc.Peer, method uint32, params []byte) ([]byte, error) {
	return (&rmc.InMemory{Handler: srv, Peer: p}).Call(context.Background(), ProtocolID, method, params)
}

// fuzzCall is call for the fuzz targets: a result code is an answer; any
// other error is a malformed response.
func fuzzCall(t *testing.T, srv *Server, p *rmc.Peer, method uint32, params []byte) {
	t.Helper()
	var ce *rmc.CallError
	if _, err := call(srv, p, method, params); err != nil && !errors.As(err, &ce) {
		t.Fatal(err)
	}
}

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestWire: the bytes of a create and of the reads at NEX 3.3, written by
// hand from the nintendo-wiki page (the Data level and the structures have no
// header at this version).
func TestWire(t *testing.T) {
	srv := new(Server) // no Store: in memory
	me := &rmc.Peer{PID: 1000, Settings: v33}
	// CreateMySubscriptionData(7, {PID 9999 (replaced), qBuffer 01 02}, true).
	if r, err := call(srv, me, sub.SubscriptionMethodCreateMySubscriptionData, testutil.Unhex(t, "07000000 0f270000 0200 0102 01")); err != nil || len(r) != 0 {
		t.Fatalf("create: %v %x", err, r)
	}
	// GetSubscriptionData([1000, 5]): one entry, PID 1000.
	if r, err := call(srv, me, sub.SubscriptionMethodGetSubscriptionData, testutil.Unhex(t, "02000000 e8030000 05000000")); !bytes.Equal(r, testutil.Unhex(t, "01000000 e8030000 0200 0102")) {
		t.Fatalf("get: %v %x", err, r)
	}
	// Another player's active players: the entry and its flag.
	other := &rmc.Peer{PID: 1001, Settings: v33}
	if r, err := call(srv, other, sub.SubscriptionMethodGetActivePlayerSubscriptionData, testutil.Unhex(t, "00000000 00000000 00000000")); !bytes.Equal(r, testutil.Unhex(t, "01000000 e8030000 0200 0102 01")) {
		t.Fatalf("active: %v %x", err, r)
	}
	// GetPrivacyLevel: Uint32 1 by default.
	if r, err := call(srv, me, sub.SubscriptionMethodGetPrivacyLevel, nil); !bytes.Equal(r, testutil.Unhex(t, "01000000")) {
		t.Fatalf("privacy: %v %x", err, r)
	}
	// A truncated parameter, an unauthenticated caller.
	if _, err := call(srv, me, sub.SubscriptionMethodSetPrivacyLevel, testutil.Unhex(t, "0100")); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("truncated: %v", err)
	}
	if _, err := call(srv, &rmc.Peer{Settings: v33}, sub.SubscriptionMethodClearTarget, nil); !errors.Is(err, types.RendezVousNotAuthenticated) {
		t.Fatalf("no PID: %v", err)
	}
}

// TestActivePlayers: the window, the count the request asks for, the limit.
func TestActivePlayers(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	srv := &Server{Store: new(Memory), Now: clk.now, Config: Config{MaxActivePlayers: 3, ActiveWindow: 13 * time.Minute}}
	peer := func(pid types.PID) *rmc.Call { return &rmc.Call{Peer: &rmc.Peer{PID: pid, Settings: v33}} }
	for pid := types.PID(1); pid <= 5; pid++ {
		if err := srv.CreateMySubscriptionData(ctx, peer(pid), 0, sub.SubscriptionData{Content: []byte{byte(pid)}}, false); err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(3 * time.Minute)
	}
	// Now 15 minutes after the first: 1 (at 0) is out of the window, 2 (at 3)
	// in.
	got := func(u1, u2 uint32) []types.PID {
		t.Helper()
		act, err := srv.GetActivePlayerSubscriptionData(ctx, peer(4), u1, u2, 99)
		if err != nil {
			t.Fatal(err)
		}
		var out []types.PID
		for _, a := range act {
			out = append(out, a.PrincipalID)
		}
		return out
	}
	for _, c := range []struct {
		u1, u2 uint32
		want   []types.PID
	}{
		{0, 0, []types.PID{5, 3, 2}}, // the limit, without the caller (4)
		{1, 1, []types.PID{5, 3}},
		{0xffffffff, 0xffffffff, []types.PID{5, 3, 2}},
	} {
		if g := got(c.u1, c.u2); !equal(g, c.want) {
			t.Errorf("count %d+%d: %v, want %v", c.u1, c.u2, g, c.want)
		}
	}
	srv.Config.ActiveWindow = -1
	srv.Config.MaxActivePlayers = 10
	if g := got(0, 0); !equal(g, []types.PID{5, 3, 2, 1}) {
		t.Errorf("no window: %v", g)
	}
}

func equal(a, b []types.PID) bool { return bytes.Equal(pidBytes(a), pidBytes(b)) }

func pidBytes(ps []types.PID) []byte {
	var b []byte
	for _, p := range ps {
		b = append(b, byte(p>>24), byte(p>>16), byte(p>>8), byte(p))
	}
	return b
}

// TestLimits: PID 0 and too many players in a list are refused before the
// store; an update publishes; the configured default privacy level.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	level := uint32(4)
	srv := &Server{Store: new(Memory), Config: Config{MaxTargets: 1, DefaultPrivacyLevel: &level}}
	c := &rmc.Call{Peer: &rmc.Peer{PID: 7, Settings: v33}}
	if err := srv.AddTarget(ctx, c, []types.PID{0}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("PID 0: %v", err)
	}
	if err := srv.AddTarget(ctx, c, []types.PID{8, 8}); err != nil {
		t.Errorf("a duplicate counts once: %v", err)
	}
	if _, err := srv.ReplaceTargetAndGetSubscriptionData(ctx, c, []types.PID{8, 9}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("two targets: %v", err)
	}
	if err := srv.UpdateMySubscriptionData(ctx, c, sub.SubscriptionData{Content: make([]byte, DefaultMaxDataSize)}); err != nil {
		t.Errorf("an update publishes: %v", err)
	}
	if err := srv.UpdateMySubscriptionData(ctx, c, sub.SubscriptionData{Content: make([]byte, DefaultMaxDataSize+1)}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("over the default size: %v", err)
	}
	if ds, err := srv.GetSubscriptionData(ctx, c, []types.PID{7}); err != nil || len(ds) != 1 || len(ds[0].Content) != DefaultMaxDataSize {
		t.Errorf("published by the update: %v, %v", len(ds), err)
	}
	if l, err := srv.GetPrivacyLevel(ctx, c); l != 4 || err != nil {
		t.Errorf("configured default level %d, %v", l, err)
	}
}

// FuzzSubscriptionServe feeds arbitrary parameters to every method at NEX 3.3
// (and with structure headers): no panic, a well-formed response each time.
// The seeds are the requests TestWire writes (no capture of the game's
// traffic is public).
func FuzzSubscriptionServe(f *testing.F) {
	f.Add(uint8(1), []byte("\x07\x00\x00\x00\x0f\x27\x00\x00\x02\x00\x01\x02\x01"))
	f.Add(uint8(2), []byte("\x00\x00\x00\x00\x01\x00\xff"))
	f.Add(uint8(4), []byte("\x02\x00\x00\x00\xe8\x03\x00\x00\x05\x00\x00\x00"))
	f.Add(uint8(5), []byte("\x00\x00\x00\x00")) // an empty DeleteTarget before any target (a fuzzer's find)
	f.Add(uint8(9), []byte("\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(uint8(11), []byte("\x01\x00\x00\x00\xe8\x03\x00\x00"))
	f.Add(uint8(12), []byte("\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, method uint8, params []byte) {
		srv := &Server{Store: new(Memory), Config: Config{MaxTargets: 4, MaxDataSize: 16}}
		st := v33
		if method&0x80 != 0 {
			st = types.Settings{PIDSize: 8, StructureHeader: true, Version: 40000}
		}
		p := &rmc.Peer{PID: 1, Settings: st}
		fuzzCall(t, srv, p, sub.SubscriptionMethodCreateMySubscriptionData, nil)
		fuzzCall(t, srv, p, uint32(method&0x7f%15), params)
	})
}
