package matchmaking_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// callPeer sends one request as p, in p's settings, and returns the
// response's reader.
func (h *harness) callPeer(t *testing.T, p *rmc.Peer, protocol uint16, method uint32, params func(w *types.Writer)) (types.Reader, error) {
	t.Helper()
	w := types.NewWriter(nil, p.Settings)
	params(&w)
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	req := rmc.Request{Protocol: protocol, CallID: 1, Method: method, Params: w.B}
	msg, _ := req.Append(nil)
	mux := rmc.NewMux()
	h.srv.Register(mux)
	out, err := rmc.Dispatch(context.Background(), mux, p, msg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := rmc.ParseResponse(out)
	if err != nil {
		t.Fatal(err)
	}
	if resp.IsError() {
		return types.Reader{}, resp.Result
	}
	return types.NewReader(resp.Data, p.Settings), nil
}

// intruderSettings are the connections an intruder tries from: NEX 4.0
// (criteria with m_ExcludeUserPasswordSet and m_ExcludeSystemPasswordSet,
// sent false) and NEX 3.5 (revision-0 criteria, which carry no exclude flags,
// as NintendoClients sends them by default).
var intruderSettings = []types.Settings{{StructureHeader: true, PIDSize: 8}, {StructureHeader: true}}

// TestPrivateSessionEntry: a session with a user or a system password is
// entered by no method without that password. The owner (PID 1, NEX 4.0)
// makes one session with a user password and one with a system password; the
// intruder (PID 2, each of intruderSettings) tries every path into a
// gathering and ends, each time, alone in a session of its own or refused.
func TestPrivateSessionEntry(t *testing.T) {
	for _, ist := range intruderSettings {
		t.Run(notifications.DefaultVersion(ist).String(), func(t *testing.T) { testPrivateSessionEntry(t, ist) })
	}
}

func testPrivateSessionEntry(t *testing.T, ist types.Settings) {
	h := newHarness(t, types.Settings{StructureHeader: true, PIDSize: 8})
	ext := matchmaking.ProtocolMatchmakeExtension
	intruder := &rmc.Peer{PID: 2, Settings: ist, Addr: netip.MustParseAddrPort("127.0.0.1:1002"), Conn: &fakeConn{}}
	h.hub.Add(intruder)

	user := room()
	user.UserPassword, user.UserPasswordEnabled = "pw", true
	userGID, _ := h.createSession(t, 1, user)
	systemGID, _ := h.createSession(t, 1, room())
	r := h.mustCall(t, 1, ext, matchmaking.MethodGenerateMatchmakeSessionSystemPassword, func(w *types.Writer) { w.U32(systemGID) })
	if pw := r.String("password"); pw == "" {
		t.Fatal("no system password generated")
	}
	private := map[uint32]bool{userGID: true, systemGID: true}

	intruderRoom := room()
	holder := func() types.AnyDataHolder {
		hd, err := intruderRoom.Holder(ist)
		if err != nil {
			t.Fatal(err)
		}
		return hd
	}
	// Criteria as the intruder's version writes them: the exclude flags
	// false, or (revision 0) absent.
	crit := []matchmaking.SearchCriteria{{GameMode: "2", MatchmakeSystemType: "1", VacantOnly: true, ExcludeLocked: true}}

	// The auto-matchmake paths: each must leave the intruder in a session of
	// its own, which it then leaves.
	auto := []struct {
		name   string
		method uint32
		params func(w *types.Writer)
		read   func(r *types.Reader) matchmaking.MatchmakeSession
	}{
		{"AutoMatchmake_Postpone", matchmaking.MethodAutoMatchmakePostpone, func(w *types.Writer) {
			w.AnyDataHolder(holder())
			w.String("")
		}, nil},
		{"AutoMatchmakeWithSearchCriteria_Postpone", matchmaking.MethodAutoMatchmakeWithSearchCriteriaPostpone, func(w *types.Writer) {
			types.WriteList(w, crit, func(w *types.Writer, c matchmaking.SearchCriteria) { c.Append(w) })
			w.AnyDataHolder(holder())
			w.String("")
		}, nil},
		{"AutoMatchmakeWithGatheringId_Postpone", matchmaking.MethodAutoMatchmakeWithGatheringIDPostpone, func(w *types.Writer) {
			types.WriteList(w, []uint32{userGID, systemGID}, (*types.Writer).U32)
			w.AnyDataHolder(holder())
			w.String("")
		}, nil},
		{"AutoMatchmakeWithParam_Postpone", matchmaking.MethodAutoMatchmakeWithParamPostpone, func(w *types.Writer) {
			p := matchmaking.AutoMatchmakeParam{Session: intruderRoom, ParticipationCount: 1, SearchCriteria: crit,
				TargetGIDs: []uint32{userGID, systemGID}}
			p.Append(w)
		}, func(r *types.Reader) matchmaking.MatchmakeSession {
			ms := matchmaking.ReadMatchmakeSession(r, "session")
			return ms
		}},
	}
	for _, a := range auto {
		r, err := h.callPeer(t, intruder, ext, a.method, a.params)
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		var ms matchmaking.MatchmakeSession
		if a.read != nil {
			ms = a.read(&r)
		} else {
			ms, _, err = matchmaking.ParseHolder(r.AnyDataHolder("joinedGathering"), ist)
			if err != nil {
				t.Fatalf("%s: %v", a.name, err)
			}
		}
		if private[ms.ID] || ms.ParticipationCount != 1 {
			t.Fatalf("%s: the intruder is in session %d (%d participants); passworded are %v", a.name, ms.ID, ms.ParticipationCount, private)
		}
		if _, err := h.callPeer(t, intruder, matchmaking.ProtocolMatchMakingExt, matchmaking.MethodEndParticipation, func(w *types.Writer) {
			w.U32(ms.ID)
			w.String("")
		}); err != nil {
			t.Fatal(err)
		}
	}

	// The join paths by id, without the password: refused.
	joins := []struct {
		name     string
		protocol uint16
		method   uint32
		params   func(w *types.Writer, gid uint32)
	}{
		{"Participate", matchmaking.ProtocolMatchMaking, matchmaking.MethodParticipate, func(w *types.Writer, gid uint32) { w.U32(gid); w.String("") }},
		{"JoinMatchmakeSession", ext, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer, gid uint32) { w.U32(gid); w.String("") }},
		{"JoinMatchmakeSessionEx", ext, matchmaking.MethodJoinMatchmakeSessionEx, func(w *types.Writer, gid uint32) {
			w.U32(gid)
			w.String("")
			w.Bool(false)
			w.U16(1)
		}},
		{"JoinMatchmakeSessionWithParam", ext, matchmaking.MethodJoinMatchmakeSessionWithParam, func(w *types.Writer, gid uint32) {
			p := matchmaking.JoinParam{GID: gid, UserPassword: "guess", SystemPassword: "guess", ParticipationCount: 1}
			p.Append(w)
		}},
	}
	for _, j := range joins {
		for gid, want := range map[uint32]error{userGID: matchmaking.ResultUserPasswordUnmatch, systemGID: matchmaking.ResultSystemPasswordUnmatch} {
			if _, err := h.callPeer(t, intruder, j.protocol, j.method, func(w *types.Writer) { j.params(w, gid) }); !errors.Is(err, want) {
				t.Fatalf("%s into %d without its password: %v, want %v", j.name, gid, err, want)
			}
		}
	}
	// Invitations (Match Making 5-10) are not implemented: no way in there.
	for _, m := range []uint32{5, 6} {
		if _, err := h.callPeer(t, intruder, matchmaking.ProtocolMatchMaking, m, func(w *types.Writer) { w.U32(userGID); w.String("") }); !errors.Is(err, types.CoreNotImplemented) {
			t.Fatalf("Match Making method %d: %v, want Core::NotImplemented", m, err)
		}
	}
	for gid := range private {
		r := h.mustCall(t, 1, matchmaking.ProtocolMatchMaking, matchmaking.MethodGetParticipants, func(w *types.Writer) { w.U32(gid) })
		if pids := types.ReadList(&r, "p", (*types.Reader).PID); len(pids) != 1 || pids[0] != 1 {
			t.Fatalf("session %d has participants %v, want only its owner", gid, pids)
		}
	}
}

// foundSessions asks for gathering gid, owned by owner with member among its
// participants, by every method that returns sessions, as pid; it returns
// what each method answered for gid.
func (h *harness) foundSessions(t *testing.T, pid types.PID, gid uint32, owner, member types.PID) map[string]matchmaking.MatchmakeSession {
	t.Helper()
	ext, mm := matchmaking.ProtocolMatchmakeExtension, matchmaking.ProtocolMatchMaking
	plain := func(r *types.Reader, _ string) matchmaking.MatchmakeSession {
		ms := matchmaking.ReadMatchmakeSession(r, "session")
		return ms
	}
	held := func(r *types.Reader, _ string) matchmaking.MatchmakeSession {
		ms, _, err := matchmaking.ParseHolder(r.AnyDataHolder("h"), h.st)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	rr := func(w *types.Writer) { w.B, _ = types.ResultRange{Size: 10}.Append(w.B, w.S) }
	crit := func(w *types.Writer) { c := matchmaking.SearchCriteria{GameMode: "2"}; c.Append(w) }
	calls := []struct {
		name     string
		protocol uint16
		method   uint32
		params   func(w *types.Writer)
		read     func(r *types.Reader) []matchmaking.MatchmakeSession
	}{
		{"FindMatchmakeSessionBySingleGatheringId", ext, matchmaking.MethodFindMatchmakeSessionBySingleGatheringID,
			func(w *types.Writer) { w.U32(gid) }, func(r *types.Reader) []matchmaking.MatchmakeSession {
				return []matchmaking.MatchmakeSession{plain(r, "")}
			}},
		{"FindMatchmakeSessionByGatheringIdDetail", ext, matchmaking.MethodFindMatchmakeSessionByGatheringIDDetail,
			func(w *types.Writer) { w.U32(gid) }, func(r *types.Reader) []matchmaking.MatchmakeSession {
				return []matchmaking.MatchmakeSession{plain(r, "")}
			}},
		{"FindMatchmakeSessionByGatheringId", ext, matchmaking.MethodFindMatchmakeSessionByGatheringID,
			func(w *types.Writer) { types.WriteList(w, []uint32{gid}, (*types.Writer).U32) },
			func(r *types.Reader) []matchmaking.MatchmakeSession { return types.ReadList(r, "l", plain) }},
		{"FindMatchmakeSessionByOwner", ext, matchmaking.MethodFindMatchmakeSessionByOwner,
			func(w *types.Writer) { w.PID(owner); rr(w) },
			func(r *types.Reader) []matchmaking.MatchmakeSession { return types.ReadList(r, "l", plain) }},
		{"FindMatchmakeSessionByParticipant", ext, matchmaking.MethodFindMatchmakeSessionByParticipant, func(w *types.Writer) {
			m := w.BeginStructure(0)
			types.WriteList(w, []types.PID{member}, (*types.Writer).PID)
			w.U32(0)
			b := w.BeginStructure(0)
			w.U32(0)
			w.EndStructure(b)
			w.EndStructure(m)
		}, func(r *types.Reader) []matchmaking.MatchmakeSession {
			return types.ReadList(r, "l", func(r *types.Reader, _ string) matchmaking.MatchmakeSession {
				m := r.EnterStructure("result")
				r.PID("pid")
				ms := plain(r, "")
				r.LeaveStructure(m)
				return ms
			})
		}},
		{"BrowseMatchmakeSession", ext, matchmaking.MethodBrowseMatchmakeSession, func(w *types.Writer) { crit(w); rr(w) },
			func(r *types.Reader) []matchmaking.MatchmakeSession { return types.ReadList(r, "l", held) }},
		{"BrowseMatchmakeSessionNoHolder", ext, matchmaking.MethodBrowseMatchmakeSessionNoHolder, func(w *types.Writer) { crit(w); rr(w) },
			func(r *types.Reader) []matchmaking.MatchmakeSession { return types.ReadList(r, "l", plain) }},
		{"GetPlayingSession", ext, matchmaking.MethodGetPlayingSession, func(w *types.Writer) { types.WriteList(w, []types.PID{member}, (*types.Writer).PID) },
			func(r *types.Reader) []matchmaking.MatchmakeSession {
				return types.ReadList(r, "l", func(r *types.Reader, _ string) matchmaking.MatchmakeSession {
					m := r.EnterStructure("s")
					r.PID("pid")
					ms := held(r, "")
					r.LeaveStructure(m)
					return ms
				})
			}},
		{"FindBySingleID", mm, matchmaking.MethodFindBySingleID, func(w *types.Writer) { w.U32(gid) },
			func(r *types.Reader) []matchmaking.MatchmakeSession {
				r.Bool("bResult")
				return []matchmaking.MatchmakeSession{held(r, "")}
			}},
		{"FindByID", mm, matchmaking.MethodFindByID, func(w *types.Writer) { types.WriteList(w, []uint32{gid}, (*types.Writer).U32) },
			func(r *types.Reader) []matchmaking.MatchmakeSession { return types.ReadList(r, "l", held) }},
		{"FindByOwner", mm, matchmaking.MethodFindByOwner, func(w *types.Writer) { w.PID(owner); rr(w) },
			func(r *types.Reader) []matchmaking.MatchmakeSession { return types.ReadList(r, "l", held) }},
		{"FindByParticipants", mm, matchmaking.MethodFindByParticipants, func(w *types.Writer) { types.WriteList(w, []types.PID{member}, (*types.Writer).PID) },
			func(r *types.Reader) []matchmaking.MatchmakeSession { return types.ReadList(r, "l", held) }},
	}
	out := map[string]matchmaking.MatchmakeSession{}
	for _, c := range calls {
		r := h.mustCall(t, pid, c.protocol, c.method, c.params)
		list := c.read(&r)
		if err := r.Done(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, ms := range list {
			if ms.ID == gid {
				out[c.name] = ms
			}
		}
		if _, ok := out[c.name]; !ok {
			t.Fatalf("%s as %d: gathering %d not among %d sessions", c.name, pid, gid, len(list))
		}
	}
	return out
}

// TestSessionSecrets: the session key reaches the participants only, and the
// user password its owner only, by every method that returns a session.
func TestSessionSecrets(t *testing.T) {
	h := newHarness(t, types.Settings{StructureHeader: true, PIDSize: 8})
	ext := matchmaking.ProtocolMatchmakeExtension
	s := room()
	s.UserPassword, s.UserPasswordEnabled = "pw", true
	gid, key := h.createSession(t, 1, s)
	h.mustCall(t, 3, ext, matchmaking.MethodJoinMatchmakeSessionWithParam, func(w *types.Writer) {
		p := matchmaking.JoinParam{GID: gid, UserPassword: "pw", ParticipationCount: 1}
		p.Append(w)
	})
	for _, tc := range []struct {
		pid      types.PID
		key      []byte
		password string
	}{
		{1, key, "pw"}, // the owner
		{3, key, ""},   // a participant
		{4, nil, ""},   // neither
	} {
		for method, ms := range h.foundSessions(t, tc.pid, gid, 1, 3) {
			if string(ms.SessionKey) != string(tc.key) || ms.UserPassword != tc.password {
				t.Errorf("%s as PID %d: session key %x, user password %q; want %x and %q", method, tc.pid, ms.SessionKey, ms.UserPassword, tc.key, tc.password)
			}
		}
	}
}

// TestOwnership: ownership moves only by the owner's own migration or by the
// server when the owner leaves. UpdateSessionHost with isMigrateOwner from a
// participant that does not own the session is refused (and changes
// nothing); without it any participant may take the host role.
func TestOwnership(t *testing.T) {
	h := newHarness(t, types.Settings{StructureHeader: true, PIDSize: 8})
	ext, mm := matchmaking.ProtocolMatchmakeExtension, matchmaking.ProtocolMatchMaking
	gid, _ := h.createSession(t, 1, room())
	h.mustCall(t, 2, ext, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer) { w.U32(gid); w.String("") })
	state := func() (owner, host types.PID) {
		t.Helper()
		r := h.mustCall(t, 1, ext, matchmaking.MethodFindMatchmakeSessionBySingleGatheringID, func(w *types.Writer) { w.U32(gid) })
		ms := matchmaking.ReadMatchmakeSession(&r, "session")
		return ms.Owner, ms.Host
	}
	refused := []struct {
		name     string
		pid      types.PID
		protocol uint16
		method   uint32
		params   func(w *types.Writer)
	}{
		{"UpdateSessionHost(isMigrateOwner) by a participant", 2, mm, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(true) }},
		{"UpdateSessionHost(isMigrateOwner) by an outsider", 4, mm, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(true) }},
		{"UpdateSessionHost by an outsider", 4, mm, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(false) }},
		{"UpdateSessionHostV1 by an outsider", 4, mm, matchmaking.MethodUpdateSessionHostV1, func(w *types.Writer) { w.U32(gid) }},
		{"MigrateGatheringOwnership by a participant", 2, mm, matchmaking.MethodMigrateGatheringOwnership, func(w *types.Writer) {
			w.U32(gid)
			types.WriteList(w, []types.PID{2}, (*types.Writer).PID)
			w.Bool(true)
		}},
		{"MigrateGatheringOwnershipV1 by a participant", 2, mm, matchmaking.MethodMigrateGatheringOwnershipV1, func(w *types.Writer) {
			w.U32(gid)
			types.WriteList(w, []types.PID{2}, (*types.Writer).PID)
		}},
		{"UpdateGatheringOwnership by a participant", 2, mm, matchmaking.MethodUpdateGatheringOwnership, func(w *types.Writer) { w.U32(gid); w.Bool(true) }},
		{"UpdateMatchmakeSession by a participant", 2, ext, matchmaking.MethodUpdateMatchmakeSession, func(w *types.Writer) {
			s := room()
			s.ID, s.Owner = gid, 2
			w.AnyDataHolder(h.holder(s))
		}},
		{"UnregisterGathering by a participant", 2, mm, matchmaking.MethodUnregisterGathering, func(w *types.Writer) { w.U32(gid) }},
	}
	for _, c := range refused {
		if _, err := h.call(t, c.pid, c.protocol, c.method, c.params); !errors.Is(err, matchmaking.ResultPermissionDenied) {
			t.Fatalf("%s: %v, want RendezVous::PermissionDenied", c.name, err)
		}
		if owner, host := state(); owner != 1 || host != 1 {
			t.Fatalf("after %s: owner %d host %d, want 1 and 1", c.name, owner, host)
		}
	}
	// The host role without ownership: any participant.
	h.mustCall(t, 2, mm, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(false) })
	if owner, host := state(); owner != 1 || host != 2 {
		t.Fatalf("participant took the host role: owner %d host %d, want 1 and 2", owner, host)
	}
	// The owner takes the host role back, keeping ownership.
	h.mustCall(t, 1, mm, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(true) })
	if owner, host := state(); owner != 1 || host != 1 {
		t.Fatalf("owner took the host role: owner %d host %d, want 1 and 1", owner, host)
	}
	// The owner leaves: the server hands ownership to the remaining participant.
	h.mustCall(t, 1, matchmaking.ProtocolMatchMakingExt, matchmaking.MethodEndParticipation, func(w *types.Writer) { w.U32(gid); w.String("") })
	if owner, host := state(); owner != 2 || host != 2 {
		t.Fatalf("owner left: owner %d host %d, want 2 and 2", owner, host)
	}
}
