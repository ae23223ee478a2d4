package matchmaking_test

import (
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// fakeConn records what the hub sends to one connection.
type fakeConn struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (c *fakeConn) Send(_ context.Context, _ uint8, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, append([]byte(nil), data...))
	return nil
}

// events decodes the notifications sent so far and forgets them.
func (c *fakeConn) events(t *testing.T, st types.Settings, v types.Version) []notifications.Event {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []notifications.Event
	for _, m := range c.msgs {
		req, _, err := rmc.ParseRequest(m)
		if err != nil || req.Protocol != notifications.Protocol {
			t.Fatalf("server call %x: %v", m, err)
		}
		r := types.NewReader(req.Params, st)
		ev := notifications.ReadEvent(&r)
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	c.msgs = nil
	return out
}

type harness struct {
	srv   *matchmaking.Server
	hub   *notifications.Hub
	peers map[types.PID]*rmc.Peer
	conns map[types.PID]*fakeConn
	st    types.Settings
	v     types.Version
}

func newHarness(t *testing.T, st types.Settings) *harness {
	store, _, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	mm, err := store.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mm.Close(); store.Close() })
	hub := &notifications.Hub{}
	h := &harness{srv: &matchmaking.Server{Store: mm, Hub: hub}, hub: hub, peers: map[types.PID]*rmc.Peer{},
		conns: map[types.PID]*fakeConn{}, st: st, v: notifications.DefaultVersion(st)}
	for pid := types.PID(1); pid <= 4; pid++ {
		c := &fakeConn{}
		p := &rmc.Peer{PID: pid, Settings: st, Addr: netip.MustParseAddrPort("127.0.0.1:1000"), Conn: c}
		hub.Add(p)
		h.peers[pid], h.conns[pid] = p, c
	}
	return h
}

// call sends one request as pid and returns the response's reader.
func (h *harness) call(t *testing.T, pid types.PID, protocol uint16, method uint32, params func(w *types.Writer)) (types.Reader, error) {
	t.Helper()
	return h.callPeer(t, h.peers[pid], protocol, method, params)
}

func (h *harness) mustCall(t *testing.T, pid types.PID, protocol uint16, method uint32, params func(w *types.Writer)) types.Reader {
	t.Helper()
	r, err := h.call(t, pid, protocol, method, params)
	if err != nil {
		t.Fatalf("protocol %d method %d: %v", protocol, method, err)
	}
	return r
}

// createSession creates ms as pid (CreateMatchmakeSession, NEX 3.4 or later)
// and returns its id and session key.
func (h *harness) createSession(t *testing.T, pid types.PID, ms matchmaking.MatchmakeSession) (uint32, []byte) {
	t.Helper()
	r := h.mustCall(t, pid, matchmaking.ProtocolMatchmakeExtension, matchmaking.MethodCreateMatchmakeSession, func(w *types.Writer) {
		w.AnyDataHolder(h.holder(ms))
		w.String("")
		w.U16(1)
	})
	gid, key := r.U32("gid"), r.Buffer("sessionKey")
	if err := r.Done(); err != nil {
		t.Fatalf("CreateMatchmakeSession: %v", err)
	}
	return gid, key
}

func room() matchmaking.MatchmakeSession {
	return matchmaking.MatchmakeSession{Gathering: matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 3, Flags: matchmaking.FlagMigrateOwner},
		GameMode: 2, Attributes: []uint32{5, 0, 0, 0, 0, 0}, OpenParticipation: true, MatchmakeSystemType: 1}
}

func (h *harness) holder(ms matchmaking.MatchmakeSession) types.AnyDataHolder {
	hd, _ := ms.Holder(h.st)
	return hd
}

func TestServerMethods(t *testing.T) {
	for _, st := range []types.Settings{{}, {StructureHeader: true}, {StructureHeader: true, PIDSize: 8}} {
		t.Run(notifications.DefaultVersion(st).String(), func(t *testing.T) { testServerMethods(t, st) })
	}
}

func testServerMethods(t *testing.T, st types.Settings) {
	h := newHarness(t, st)
	ext := matchmaking.ProtocolMatchmakeExtension
	// CreateMatchmakeSession, JoinMatchmakeSession: the same session key.
	r := h.mustCall(t, 1, ext, matchmaking.MethodCreateMatchmakeSession, func(w *types.Writer) {
		w.AnyDataHolder(h.holder(room()))
		w.String("made")
		if h.v >= types.Version3_4 {
			w.U16(1)
		}
	})
	gid := r.U32("gid")
	key := r.Buffer("sessionKey")
	if err := r.Done(); err != nil || gid == 0 || len(key) != 32 {
		t.Fatalf("create: gid %d key %x %v", gid, key, err)
	}
	r = h.mustCall(t, 2, ext, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer) { w.U32(gid); w.String("hi") })
	if k := r.Buffer("sessionKey"); string(k) != string(key) {
		t.Fatalf("join: key %x, want %x", k, key)
	}
	if evs := h.conns[1].events(t, st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeNewParticipant || evs[0].Param2 != 2 || evs[0].StrParam != "hi" {
		t.Fatalf("owner's events %+v", evs)
	}
	// A second join of the same PID, and joins of unknown sessions.
	if _, err := h.call(t, 2, ext, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer) { w.U32(gid); w.String("") }); !errors.Is(err, matchmaking.ResultAlreadyParticipatedGathering) {
		t.Fatalf("double join: %v", err)
	}
	if _, err := h.call(t, 2, ext, matchmaking.MethodJoinMatchmakeSessionEx, func(w *types.Writer) {
		w.U32(gid + 9)
		w.String("")
		w.Bool(false)
		if h.v >= types.Version3_4 {
			w.U16(1)
		}
	}); !errors.Is(err, matchmaking.ResultSessionVoid) {
		t.Fatalf("JoinEx unknown: %v", err)
	}

	// Attribute updates by the owner; by another participant refused.
	h.mustCall(t, 1, ext, matchmaking.MethodModifyCurrentGameAttribute, func(w *types.Writer) { w.U32(gid); w.U32(1); w.U32(7) })
	if _, err := h.call(t, 2, ext, matchmaking.MethodUpdateMatchmakeSessionAttribute, func(w *types.Writer) {
		w.U32(gid)
		types.WriteList(w, []uint32{1}, (*types.Writer).U32)
	}); !errors.Is(err, matchmaking.ResultPermissionDenied) {
		t.Fatalf("attributes by a participant: %v", err)
	}
	if _, err := h.call(t, 1, ext, matchmaking.MethodModifyCurrentGameAttribute, func(w *types.Writer) { w.U32(gid); w.U32(6); w.U32(1) }); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("attribute index 6: %v", err)
	}
	h.mustCall(t, 2, ext, matchmaking.MethodUpdateApplicationBuffer, func(w *types.Writer) { w.U32(gid); w.Buffer([]byte("state")) })
	if _, err := h.call(t, 2, ext, matchmaking.MethodUpdateApplicationBuffer, func(w *types.Writer) {
		w.U32(gid)
		w.Buffer(make([]byte, matchmaking.MaxApplicationBuffer+1))
	}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("oversized buffer: %v", err)
	}
	if h.v >= types.Version3_4 {
		h.mustCall(t, 1, ext, matchmaking.MethodUpdateProgressScore, func(w *types.Writer) { w.U32(gid); w.U8(40) })
	}
	r = h.mustCall(t, 3, ext, matchmaking.MethodFindMatchmakeSessionBySingleGatheringID, func(w *types.Writer) { w.U32(gid) })
	ms := matchmaking.ReadMatchmakeSession(&r, "session")
	if err := r.Done(); err != nil || ms.Attributes[1] != 7 || string(ms.ApplicationBuffer) != "state" || ms.ParticipationCount != 2 {
		t.Fatalf("find: %+v %v", ms, err)
	}

	// UpdateMatchmakeSessionPart changes only the fields its flag names.
	h.mustCall(t, 1, ext, matchmaking.MethodUpdateMatchmakeSessionPart, func(w *types.Writer) {
		p := matchmaking.UpdateParam{GID: gid, ModificationFlag: matchmaking.ModifyDescription | matchmaking.ModifyMaxParticipants,
			Description: "renamed", MaxParticipants: 3, GameMode: 99}
		p.Append(w)
	})
	if _, err := h.call(t, 1, ext, matchmaking.MethodUpdateMatchmakeSessionPart, func(w *types.Writer) {
		p := matchmaking.UpdateParam{GID: gid, ModificationFlag: matchmaking.ModifyMaxParticipants, MaxParticipants: 1}
		p.Append(w)
	}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("maximum below the participants: %v", err)
	}
	// GetState / SetState (Match Making).
	h.mustCall(t, 1, matchmaking.ProtocolMatchMaking, matchmaking.MethodSetState, func(w *types.Writer) { w.U32(gid); w.U32(4) })
	r = h.mustCall(t, 2, matchmaking.ProtocolMatchMaking, matchmaking.MethodGetState, func(w *types.Writer) { w.U32(gid) })
	if ok, state := r.Bool("r"), r.U32("s"); !ok || state != 4 {
		t.Fatalf("GetState: %v %d", ok, state)
	}
	r = h.mustCall(t, 3, ext, matchmaking.MethodFindMatchmakeSessionByParticipant, func(w *types.Writer) {
		m := w.BeginStructure(0)
		types.WriteList(w, []types.PID{2, 4}, (*types.Writer).PID)
		w.U32(0)
		b := w.BeginStructure(0)
		w.U32(0)
		w.EndStructure(b)
		w.EndStructure(m)
	})
	if n := r.U32("count"); n != 1 {
		t.Fatalf("sessions of participants 2 and 4: %d, want 1", n)
	}
	r.EnterStructure("result")
	if pid := r.PID("pid"); pid != 2 {
		t.Fatalf("FindMatchmakeSessionByParticipant: PID %d", pid)
	}
	if ms := matchmaking.ReadMatchmakeSession(&r, "session"); ms.Description != "renamed" || ms.GameMode != 2 || ms.MaxParticipants != 3 {
		t.Fatalf("after UpdateMatchmakeSessionPart: %+v", ms)
	}

	// Browse with criteria: attribute 0 = 5 matches, 6 does not.
	browse := func(attr string) []matchmaking.MatchmakeSession {
		r := h.mustCall(t, 3, ext, matchmaking.MethodBrowseMatchmakeSessionNoHolder, func(w *types.Writer) {
			c := matchmaking.SearchCriteria{Attributes: []string{attr}, GameMode: "2"}
			c.Append(w)
			b, _ := types.ResultRange{Size: 10}.Append(w.B, w.S)
			w.B = b
		})
		list := types.ReadList(&r, "l", func(r *types.Reader, _ string) matchmaking.MatchmakeSession {
			ms := matchmaking.ReadMatchmakeSession(r, "session")
			return ms
		})
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		return list
	}
	if got := browse("5"); len(got) != 1 || got[0].ID != gid {
		t.Fatalf("browse attribute 5: %v", got)
	}
	if got := browse("6"); len(got) != 0 {
		t.Fatalf("browse attribute 6: %v", got)
	}
	// Playing sessions of 2 and of the caller.
	r = h.mustCall(t, 3, ext, matchmaking.MethodGetSimplePlayingSession, func(w *types.Writer) {
		types.WriteList(w, []types.PID{2}, (*types.Writer).PID)
		w.Bool(true)
	})
	if n := r.U32("count"); n != 1 {
		t.Fatalf("%d simple playing sessions, want 1", n)
	}
	// A player named twice, or named and the caller included, is listed once
	// (NintendoClients' interop test asks for itself and include_login_user).
	for _, c := range []struct {
		caller types.PID
		pids   []types.PID
	}{{3, []types.PID{2, 2}}, {2, []types.PID{2}}} {
		r = h.mustCall(t, c.caller, ext, matchmaking.MethodGetSimplePlayingSession, func(w *types.Writer) {
			types.WriteList(w, c.pids, (*types.Writer).PID)
			w.Bool(true)
		})
		if n := r.U32("count"); n != 1 {
			t.Fatalf("caller %d, PIDs %v: %d simple playing sessions, want 1", c.caller, c.pids, n)
		}
	}

	// A system password: a join without it is refused.
	r = h.mustCall(t, 1, ext, matchmaking.MethodGenerateMatchmakeSessionSystemPassword, func(w *types.Writer) { w.U32(gid) })
	pw := r.String("password")
	join := func(system string) error {
		_, err := h.call(t, 3, ext, matchmaking.MethodJoinMatchmakeSessionWithParam, func(w *types.Writer) {
			p := matchmaking.JoinParam{GID: gid, SystemPassword: system, ParticipationCount: 1}
			p.Append(w)
		})
		return err
	}
	if err := join("wrong"); pw == "" || !errors.Is(err, matchmaking.ResultSystemPasswordUnmatch) {
		t.Fatalf("password %q, join with a wrong one: %v", pw, err)
	}
	if err := join(pw); err != nil {
		t.Fatalf("join with the system password: %v", err)
	}
	// Full now (3 of 3).
	if _, err := h.call(t, 4, matchmaking.ProtocolMatchMaking, matchmaking.MethodParticipate, func(w *types.Writer) { w.U32(gid); w.String("") }); !errors.Is(err, matchmaking.ResultSessionFull) {
		t.Fatalf("participate in a full session: %v", err)
	}
	// Match Making: participants, host change, ownership migration, cancel.
	r = h.mustCall(t, 4, matchmaking.ProtocolMatchMaking, matchmaking.MethodGetParticipants, func(w *types.Writer) { w.U32(gid) })
	if pids := types.ReadList(&r, "p", (*types.Reader).PID); len(pids) != 3 {
		t.Fatalf("participants %v", pids)
	}
	for pid := types.PID(1); pid <= 3; pid++ {
		h.conns[pid].events(t, st, h.v)
	}
	h.mustCall(t, 2, matchmaking.ProtocolMatchMaking, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(false) })
	if evs := h.conns[3].events(t, st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeHostChanged || evs[0].Source != 2 {
		t.Fatalf("host change events %+v", evs)
	}
	h.conns[2].events(t, st, h.v) // 2 heard of its own host change too
	h.mustCall(t, 1, matchmaking.ProtocolMatchMaking, matchmaking.MethodMigrateGatheringOwnership, func(w *types.Writer) {
		w.U32(gid)
		types.WriteList(w, []types.PID{3}, (*types.Writer).PID)
		w.Bool(true)
	})
	if evs := h.conns[2].events(t, st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeOwnershipChanged || evs[0].Param2 != 3 {
		t.Fatalf("ownership events %+v", evs)
	}
	h.conns[3].events(t, st, h.v) // the new owner heard it too
	h.mustCall(t, 1, matchmaking.ProtocolMatchMaking, matchmaking.MethodCancelParticipation, func(w *types.Writer) { w.U32(gid); w.String("later") })
	if evs := h.conns[3].events(t, st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeParticipationCancelled || evs[0].StrParam != "later" {
		t.Fatalf("cancel events %+v", evs)
	}
	// The owner (3) unregisters: 2 hears 109000; the session is gone.
	h.conns[2].events(t, st, h.v)
	h.mustCall(t, 3, matchmaking.ProtocolMatchMaking, matchmaking.MethodUnregisterGathering, func(w *types.Writer) { w.U32(gid) })
	if evs := h.conns[2].events(t, st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeGatheringUnregistered || evs[0].Param1 != uint64(gid) {
		t.Fatalf("unregister events %+v", evs)
	}
	r = h.mustCall(t, 2, matchmaking.ProtocolMatchMaking, matchmaking.MethodFindBySingleID, func(w *types.Writer) { w.U32(gid) })
	if r.Bool("bResult") {
		t.Fatal("unregistered gathering still found")
	}

	// With parameters: create, then auto-matchmake joins it.
	r = h.mustCall(t, 1, ext, matchmaking.MethodCreateMatchmakeSessionWithParam, func(w *types.Writer) {
		p := matchmaking.CreateParam{Session: room(), ParticipationCount: 1}
		p.Append(w)
	})
	created := matchmaking.ReadMatchmakeSession(&r, "session")
	r = h.mustCall(t, 2, ext, matchmaking.MethodAutoMatchmakeWithParamPostpone, func(w *types.Writer) {
		p := matchmaking.AutoMatchmakeParam{Session: room(), ParticipationCount: 1,
			SearchCriteria: []matchmaking.SearchCriteria{{GameMode: "2", VacantOnly: true, ExcludeLocked: true}}}
		p.Append(w)
	})
	joined := matchmaking.ReadMatchmakeSession(&r, "session")
	if err := r.Done(); err != nil || joined.ID != created.ID || joined.ParticipationCount != 2 {
		t.Fatalf("auto-matchmake with param: %+v %v (created %d)", joined.Gathering, err, created.ID)
	}
	r = h.mustCall(t, 3, ext, matchmaking.MethodAutoMatchmakeWithGatheringIDPostpone, func(w *types.Writer) {
		types.WriteList(w, []uint32{created.ID}, (*types.Writer).U32)
		w.AnyDataHolder(h.holder(room()))
		w.String("")
	})
	hd := r.AnyDataHolder("joinedGathering")
	if ms, _, err := matchmaking.ParseHolder(hd, h.st); err != nil || ms.ID != created.ID {
		t.Fatalf("auto-matchmake with gathering id: %+v %v", ms.Gathering, err)
	}
	r = h.mustCall(t, 4, ext, matchmaking.MethodFindMatchmakeSessionByOwner, func(w *types.Writer) {
		w.PID(1)
		b, _ := types.ResultRange{Size: 10}.Append(w.B, w.S)
		w.B = b
	})
	if n := r.U32("count"); n != 1 {
		t.Fatalf("sessions owned by 1: %d", n)
	}
	r = h.mustCall(t, 4, matchmaking.ProtocolMatchMakingExt, matchmaking.MethodExtGetParticipantsURLs, func(w *types.Writer) {
		types.WriteList(w, []uint32{created.ID, 999}, (*types.Writer).U32)
	})
	if n := r.U32("count"); n != 1 {
		t.Fatalf("gathering urls of %d gatherings, want 1", n)
	}
	// Methods this server does not implement say so.
	if _, err := h.call(t, 1, ext, 23, func(w *types.Writer) {}); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("UpdatePrivacySetting: %v", err)
	}
}

// failingDisconnect is a store whose Disconnect fails a number of times first,
// as a database being restarted does.
type failingDisconnect struct {
	matchmaking.Store
	failures atomic.Int32
	calls    atomic.Int32
}

func (f *failingDisconnect) Disconnect(ctx context.Context, node string, conn uint64) ([]matchmaking.Change, error) {
	f.calls.Add(1)
	if f.failures.Add(-1) >= 0 {
		return nil, errors.New("database restarting")
	}
	return f.Store.Disconnect(ctx, node, conn)
}

// TestDisconnectRetries: a connection ends while the store cannot be written;
// Disconnected retries until it can, so the other participant is told and the
// gathering does not keep the one who left.
func TestDisconnectRetries(t *testing.T) {
	st := types.Settings{StructureHeader: true}
	h := newHarness(t, st)
	flaky := &failingDisconnect{Store: h.srv.Store}
	flaky.failures.Store(2)
	h.srv.Store = flaky
	ext := matchmaking.ProtocolMatchmakeExtension
	gid, _ := h.createSession(t, 1, room())
	h.mustCall(t, 2, ext, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer) { w.U32(gid); w.String("") })
	h.conns[1].events(t, st, h.v)
	h.srv.Disconnected(context.Background(), h.peers[2])
	if n := flaky.calls.Load(); n != 3 {
		t.Fatalf("Disconnect called %d times, want 3 (two failures, then success)", n)
	}
	var evs []notifications.Event
	for deadline := time.Now().Add(5 * time.Second); len(evs) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		evs = h.conns[1].events(t, st, h.v)
	}
	if len(evs) != 1 || evs[0].Type != notifications.TypeParticipantDisconnected || evs[0].Param2 != 2 {
		t.Fatalf("owner's events after the other's disconnect: %+v", evs)
	}
	r := h.mustCall(t, 1, matchmaking.ProtocolMatchMakingExt, matchmaking.MethodExtGetParticipants, func(w *types.Writer) { w.U32(gid); w.Bool(true) })
	if pids := types.ReadList(&r, "pids", (*types.Reader).PID); len(pids) != 1 || pids[0] != 1 {
		t.Fatalf("participants after the disconnect: %v", pids)
	}
}
