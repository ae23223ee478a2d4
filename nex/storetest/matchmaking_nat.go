package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/types"
)

// Reported NAT properties the NAT cases use (mapping/filtering).
var (
	natOpen      = nattraversal.Properties{Mapping: nattraversal.MappingEndpointIndependent, Filtering: nattraversal.FilteringPortIndependent, RTT: 20}
	natCone      = nattraversal.Properties{Mapping: nattraversal.MappingEndpointIndependent, Filtering: nattraversal.FilteringPortDependent, RTT: 30}
	natSymmetric = nattraversal.Properties{Mapping: nattraversal.MappingEndpointDependent, Filtering: nattraversal.FilteringPortDependent, RTT: 40}
	natSymLoose  = nattraversal.Properties{Mapping: nattraversal.MappingEndpointDependent, Filtering: nattraversal.FilteringPortIndependent, RTT: 50}
)

func natStore(t *testing.T, m matchmaking.Store) matchmaking.NATStore {
	t.Helper()
	ns, ok := m.(matchmaking.NATStore)
	if !ok {
		t.Fatalf("%T does not keep NAT reports (matchmaking.NATStore)", m)
	}
	return ns
}

func setNAT(t *testing.T, ns matchmaking.NATStore, p matchmaking.Participant, props nattraversal.Properties) {
	t.Helper()
	if err := ns.SetNAT(context.Background(), matchmaking.NATRecord{PID: p.PID, Node: p.Node, Conn: p.Conn, Properties: props}); err != nil {
		t.Fatal(err)
	}
}

// natRecords: a report is kept per PID (a later one replaces it, traversal
// results are counted beside it, also before any report), read back as
// written, and forgotten when the connection that made it ends (Disconnect)
// or its node resets, not when another connection of the node ends.
func natRecords(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	ns := natStore(t, m)
	if _, ok, err := ns.NAT(ctx, 1); err != nil || ok {
		t.Fatalf("record before any report: %v %v", ok, err)
	}
	setNAT(t, ns, Participant(1), natSymmetric)
	setNAT(t, ns, Participant(1), natCone)
	if err := ns.AddNATResult(ctx, matchmaking.NATRecord{PID: 1, Node: "n1", Conn: 1}, true); err != nil {
		t.Fatal(err)
	}
	if err := ns.AddNATResult(ctx, matchmaking.NATRecord{PID: 1, Node: "n1", Conn: 1}, false); err != nil {
		t.Fatal(err)
	}
	setNAT(t, ns, Participant(1), natOpen)
	want := matchmaking.NATRecord{PID: 1, Node: "n1", Conn: 1, Properties: natOpen, Successes: 1, Failures: 1}
	if r, ok, err := ns.NAT(ctx, 1); err != nil || !ok || !reflect.DeepEqual(r, want) {
		t.Fatalf("record %+v %v %v, want %+v", r, ok, err, want)
	}
	// A result before any report: unknown properties.
	if err := ns.AddNATResult(ctx, matchmaking.NATRecord{PID: 2, Node: "n1", Conn: 2}, false); err != nil {
		t.Fatal(err)
	}
	want2 := matchmaking.NATRecord{PID: 2, Node: "n1", Conn: 2, Failures: 1}
	if r, ok, err := ns.NAT(ctx, 2); err != nil || !ok || !reflect.DeepEqual(r, want2) {
		t.Fatalf("result only: %+v %v %v", r, ok, err)
	}
	// Values the page does not name are kept as reported.
	setNAT(t, ns, matchmaking.Participant{PID: 3, Node: "n2", Conn: 3}, nattraversal.Properties{Mapping: 0xFFFFFFFF, Filtering: 7, RTT: 0xFFFFFFFF})
	if r, _, err := ns.NAT(ctx, 3); err != nil || r.Mapping != 0xFFFFFFFF || r.Filtering != 7 || r.RTT != 0xFFFFFFFF {
		t.Fatalf("unnamed values: %+v %v", r, err)
	}
	if _, err := m.Disconnect(ctx, "n1", 2); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ns.NAT(ctx, 2); ok {
		t.Fatal("record kept after its connection ended")
	}
	if _, ok, _ := ns.NAT(ctx, 1); !ok {
		t.Fatal("another connection's end removed a record")
	}
	if _, err := m.ResetNode(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ns.NAT(ctx, 1); ok {
		t.Fatal("record kept after its node reset")
	}
	if _, ok, _ := ns.NAT(ctx, 3); !ok {
		t.Fatal("another node's reset removed a record")
	}
}

// natOrdering: three sessions fit, in the usual order A (fullest; owner
// behind a symmetric NAT), C (owner unknown), B (owner endpoint-independent
// with port-independent filtering). A joiner behind a symmetric NAT with
// port-independent filtering reaches B's owner only: off joins A, prefer and
// strict join B; with B gone, C (unknown before unreachable); with A alone,
// prefer still joins A and strict creates a session. Judged by every
// participant, a session with a reachable owner and an unreachable member is
// unreachable. A joiner whose NAT reaches everyone takes the usual first.
// RankNAT orders a list alike.
func natOrdering(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	ns := natStore(t, m)
	create := func(owner types.PID, props nattraversal.Properties, report bool) uint32 {
		t.Helper()
		c, err := m.Create(ctx, Session(4), Participant(owner))
		if err != nil {
			t.Fatal(err)
		}
		if report {
			setNAT(t, ns, Participant(owner), props)
		}
		return c.Session.ID
	}
	a := create(10, natSymmetric, true)
	if _, err := m.Join(ctx, a, Participant(13), matchmaking.Passwords{}); err != nil {
		t.Fatal(err)
	}
	c := create(12, nattraversal.Properties{}, false)
	b := create(11, natOpen, true)
	joiner := Participant(20)
	setNAT(t, ns, joiner, natSymLoose)
	type want struct {
		gid            uint32 // 0: created
		reach          nattraversal.Reachability
		passed, refuse int
	}
	auto := func(name string, o matchmaking.NATOrder, w want) {
		t.Helper()
		ch, created, choice, err := ns.AutoMatchmakeNAT(ctx, nil, Session(4), joiner, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if created != (w.gid == 0) || (w.gid != 0 && ch.Session.ID != w.gid) {
			t.Fatalf("%s: session %d (created %v), want %d", name, ch.Session.ID, created, w.gid)
		}
		if choice.Reach != w.reach || choice.Passed != w.passed || choice.Refused != w.refuse {
			t.Fatalf("%s: choice %+v, want %+v", name, choice, w)
		}
		// Leave again (a created session goes with its only participant).
		if _, err := m.Leave(ctx, ch.Session.ID, joiner.PID); err != nil {
			t.Fatalf("%s: leave: %v", name, err)
		}
	}
	off := matchmaking.NATOrder{Policy: matchmaking.NATOff}
	prefer := matchmaking.NATOrder{Policy: matchmaking.NATPrefer}
	strict := matchmaking.NATOrder{Policy: matchmaking.NATStrict}
	auto("off", off, want{gid: a})
	if ch, created, err := m.AutoMatchmake(ctx, nil, Session(4), joiner); err != nil || created || ch.Session.ID != a {
		t.Fatalf("AutoMatchmake: %d %v %v, want %d", ch.Session.ID, created, err, a)
	} else if _, err := m.Leave(ctx, a, joiner.PID); err != nil {
		t.Fatal(err)
	}
	auto("prefer", prefer, want{gid: b, reach: nattraversal.Reachable, passed: 2})
	auto("strict", strict, want{gid: b, reach: nattraversal.Reachable, passed: 2})

	ranked, err := ns.RankNAT(ctx, joiner.PID, []uint32{a, c, b, 999999}, prefer)
	if want := []uint32{b, c, 999999, a}; err != nil || !reflect.DeepEqual(ranked, want) {
		t.Fatalf("RankNAT prefer %v %v, want %v", ranked, err, want)
	}
	ranked, err = ns.RankNAT(ctx, joiner.PID, []uint32{a, c, b, 999999}, strict)
	if want := []uint32{b, c, 999999}; err != nil || !reflect.DeepEqual(ranked, want) {
		t.Fatalf("RankNAT strict %v %v, want %v", ranked, err, want)
	}
	if ranked, err := ns.RankNAT(ctx, joiner.PID, []uint32{a, c, b}, off); err != nil || !reflect.DeepEqual(ranked, []uint32{a, c, b}) {
		t.Fatalf("RankNAT off %v %v", ranked, err)
	}
	if _, err := ns.RankNAT(ctx, joiner.PID, make([]uint32, matchmaking.MaxBrowseResults+1), prefer); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("RankNAT of too many: %v", err)
	}

	// B's owner reported a symmetric NAT since: C (unknown) comes first.
	setNAT(t, ns, Participant(11), natSymmetric)
	auto("prefer, unknown", prefer, want{gid: c, reach: nattraversal.ReachUnknown, passed: 1})
	auto("strict, unknown", strict, want{gid: c, reach: nattraversal.ReachUnknown, passed: 1})
	// C closes: only unreachable sessions fit.
	if _, err := m.Update(ctx, c, func(s *matchmaking.MatchmakeSession, _ []matchmaking.Participant) error {
		s.OpenParticipation = false
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	auto("prefer, unreachable only", prefer, want{gid: a, reach: nattraversal.Unreachable})
	auto("strict, unreachable only", strict, want{gid: 0, reach: nattraversal.Reachable, refuse: 2})

	// Every participant: B's owner is reachable again, but a member of B
	// is not.
	setNAT(t, ns, Participant(11), natOpen)
	if _, err := m.Join(ctx, b, Participant(14), matchmaking.Passwords{}); err != nil {
		t.Fatal(err)
	}
	setNAT(t, ns, Participant(14), natSymmetric)
	// B now has two participants, as A: the usual order is A, B (by id).
	auto("owner only", prefer, want{gid: b, reach: nattraversal.Reachable, passed: 1})
	auto("all participants", matchmaking.NATOrder{Policy: matchmaking.NATPrefer, AllParticipants: true}, want{gid: a, reach: nattraversal.Unreachable})
	auto("all participants, strict", matchmaking.NATOrder{Policy: matchmaking.NATStrict, AllParticipants: true}, want{gid: 0, reach: nattraversal.Reachable, refuse: 2})
	// The joiner with no report of its own reaches B's owner, whose NAT
	// reaches every station, and nobody else for sure.
	if _, err := m.Disconnect(ctx, joiner.Node, joiner.Conn); err != nil {
		t.Fatal(err)
	}
	auto("unknown joiner", prefer, want{gid: b, reach: nattraversal.Reachable, passed: 1})
	// A joiner whose own NAT reaches every station takes the usual first.
	setNAT(t, ns, joiner, natOpen)
	auto("open joiner", prefer, want{gid: a, reach: nattraversal.Reachable})
	auto("open joiner, all participants, strict", matchmaking.NATOrder{Policy: matchmaking.NATStrict, AllParticipants: true}, want{gid: a, reach: nattraversal.Reachable})
}

// natAcrossNodes: a report made through one handle (one secure node) orders
// the auto-matchmakes of another sharing the database.
func natAcrossNodes(t *testing.T, m1, m2 matchmaking.Store) {
	ctx := context.Background()
	ns1, ns2 := natStore(t, m1), natStore(t, m2)
	first, err := m1.Create(ctx, Session(4), matchmaking.Participant{PID: 1, Node: "n1", Conn: 1})
	if err != nil {
		t.Fatal(err)
	}
	second, err := m1.Create(ctx, Session(4), matchmaking.Participant{PID: 2, Node: "n1", Conn: 2})
	if err != nil {
		t.Fatal(err)
	}
	setNAT(t, ns1, matchmaking.Participant{PID: 1, Node: "n1", Conn: 1}, natSymmetric)
	setNAT(t, ns1, matchmaking.Participant{PID: 2, Node: "n1", Conn: 2}, natCone)
	joiner := matchmaking.Participant{PID: 3, Node: "n2", Conn: 1}
	setNAT(t, ns2, joiner, natCone)
	if r, ok, err := ns2.NAT(ctx, 1); err != nil || !ok || r.Properties != natSymmetric {
		t.Fatalf("node 2 reads node 1's report: %+v %v %v", r, ok, err)
	}
	ch, created, choice, err := ns2.AutoMatchmakeNAT(ctx, nil, Session(4), joiner, matchmaking.NATOrder{})
	if err != nil || created || ch.Session.ID != second.Session.ID || choice.Passed != 1 {
		t.Fatalf("joined %d (created %v, %+v, %v), want %d past %d", ch.Session.ID, created, choice, err, second.Session.ID, first.Session.ID)
	}
}

// natWindowBound: auto-matchmaking weighs the first NATWindow sessions that
// fit, no more. With NATWindow+6 sessions whose owners the joiner cannot
// reach but one, the reachable one just past the window is not found (the
// first session is joined, as without NAT); once the first session closes,
// the reachable one is the window's last and is joined.
func natWindowBound(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	ns := natStore(t, m)
	var gids []uint32
	for i := range matchmaking.NATWindow + 6 {
		owner := Participant(types.PID(100 + i))
		c, err := m.Create(ctx, Session(4), owner)
		if err != nil {
			t.Fatal(err)
		}
		gids = append(gids, c.Session.ID)
		props := natSymmetric
		if i == matchmaking.NATWindow {
			props = natOpen
		}
		setNAT(t, ns, owner, props)
	}
	joiner := Participant(20)
	setNAT(t, ns, joiner, natCone)
	ch, _, choice, err := ns.AutoMatchmakeNAT(ctx, nil, Session(4), joiner, matchmaking.NATOrder{})
	if err != nil || ch.Session.ID != gids[0] || choice.Reach != nattraversal.Unreachable || choice.Passed != 0 {
		t.Fatalf("joined %d (%+v, %v), want the first, %d", ch.Session.ID, choice, err, gids[0])
	}
	if _, err := m.Leave(ctx, gids[0], joiner.PID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Update(ctx, gids[0], func(s *matchmaking.MatchmakeSession, _ []matchmaking.Participant) error {
		s.OpenParticipation = false
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ch, _, choice, err = ns.AutoMatchmakeNAT(ctx, nil, Session(4), joiner, matchmaking.NATOrder{})
	want := gids[matchmaking.NATWindow]
	if err != nil || ch.Session.ID != want || choice.Reach != nattraversal.Reachable || choice.Passed != matchmaking.NATWindow-1 {
		t.Fatalf("joined %d (%+v, %v), want %d", ch.Session.ID, choice, err, want)
	}
}

// natConcurrent: 64 clients, each having reported one of the nine
// mapping/filtering pairs, auto-matchmake at once with NATPrefer, spread over
// the handles: as without NAT, exactly 8 full sessions (prefer orders, it
// never refuses), never an over-filled one, nobody in two.
func natConcurrent(t *testing.T, stores ...matchmaking.Store) {
	for i := range 64 {
		p := Participant(types.PID(1000 + i))
		setNAT(t, natStore(t, stores[i%len(stores)]), p, nattraversal.Properties{Mapping: uint32(i % 3), Filtering: uint32(i / 3 % 3)})
	}
	autoMatchmakeConcurrentBy(t, func(m matchmaking.Store, s matchmaking.MatchmakeSession, p matchmaking.Participant) (matchmaking.Change, bool, error) {
		c, created, _, err := m.(matchmaking.NATStore).AutoMatchmakeNAT(context.Background(), nil, s, p, matchmaking.NATOrder{})
		return c, created, err
	}, stores...)
}
