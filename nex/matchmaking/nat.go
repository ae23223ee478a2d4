package matchmaking

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// NAT-aware matchmaking (docs/nex.md "NAT-aware matchmaking"): players report
// their NAT mapping and filtering through NAT Traversal (protocol 3); a store
// that keeps those reports (NATStore) orders the sessions an auto-matchmake
// may join so that the joiner lands, where it can, in a session whose owner
// (or every participant) it can reach peer to peer (nattraversal.Reach). This
// file is the one seam between matchmaking and NAT: the handlers call
// autoMatchmakeStore and rankNAT, and nothing else of matchmaking knows NAT.

// NATPolicy says how auto-matchmaking weighs the NAT properties players
// reported. The zero value is NATPrefer, the default.
type NATPolicy uint8

// NAT policies.
const (
	// NATPrefer orders the sessions that fit: those whose owner can reach
	// the joiner first, then those where either side's NAT is unknown, then
	// the unreachable; within each, the usual order (fullest, then oldest).
	// No match is ever refused because of NAT.
	NATPrefer NATPolicy = iota
	// NATOff ignores NAT: the usual order only, as before NAT was reported.
	NATOff
	// NATStrict is NATPrefer that also leaves out the sessions known to be
	// unreachable: when only those fit, the joiner gets a session of its own.
	NATStrict
)

// NATPolicies lists the policies' names, as ParseNATPolicy reads them.
var NATPolicies = []string{"off", "prefer", "strict"}

// String names p as ParseNATPolicy reads it.
func (p NATPolicy) String() string {
	switch p {
	case NATOff:
		return "off"
	case NATPrefer:
		return "prefer"
	case NATStrict:
		return "strict"
	}
	return fmt.Sprintf("NATPolicy(%d)", uint8(p))
}

// ParseNATPolicy reads "off", "prefer" or "strict" (any case).
func ParseNATPolicy(s string) (NATPolicy, error) {
	for _, p := range []NATPolicy{NATOff, NATPrefer, NATStrict} {
		if strings.EqualFold(s, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("NAT matchmaking policy %q: want one of %s", s, strings.Join(NATPolicies, ", "))
}

// NATOrder is how auto-matchmaking orders its candidates by NAT.
type NATOrder struct {
	Policy NATPolicy
	// AllParticipants judges a session by the worst reachability between
	// the joiner and any of its participants (games whose sessions are a
	// full mesh of peers); otherwise by its owner's alone (the host the
	// joiner connects to first).
	AllParticipants bool
}

// String prints o as ParseNATOrder reads it ("prefer", "strict,all").
func (o NATOrder) String() string {
	if o.AllParticipants {
		return o.Policy.String() + ",all"
	}
	return o.Policy.String()
}

// ParseNATOrder reads a policy (ParseNATPolicy), optionally followed by ",all"
// for AllParticipants: "prefer", "strict,all".
func ParseNATOrder(s string) (NATOrder, error) {
	policy, all, _ := strings.Cut(s, ",")
	p, err := ParseNATPolicy(policy)
	if err != nil {
		return NATOrder{}, err
	}
	switch {
	case all == "" && !strings.Contains(s, ","):
		return NATOrder{Policy: p}, nil
	case strings.EqualFold(all, "all"):
		return NATOrder{Policy: p, AllParticipants: true}, nil
	}
	return NATOrder{}, fmt.Errorf("NAT matchmaking %q: after the policy only \",all\" (judge every participant) may follow", s)
}

// NATWindow is how many of the sessions that fit an auto-matchmake, in the
// usual order, a store weighs by NAT: the choice is the best of them. It
// bounds the work of one auto-matchmake whatever the number of sessions.
const NATWindow = 64

// NATRecord is what a player last reported through NAT Traversal, kept per
// PID (a later report replaces an earlier one) with the connection that
// reported it, so that the record goes when that connection ends.
type NATRecord struct {
	PID  types.PID
	Node string // the secure node (Server.Node)
	Conn uint64 // the connection there, as Participant.Conn
	nattraversal.Properties
	// Successes and Failures count the traversal results the player reported
	// (ReportNATTraversalResult): kept for operators, not used to order.
	Successes, Failures uint32
}

// NATChoice says how NAT weighed in one auto-matchmake.
type NATChoice struct {
	// Reach is how the joiner stands to the session it joined (Reachable
	// for a created session: it is its own).
	Reach nattraversal.Reachability
	// Passed is how many sessions that came before the chosen one in the
	// usual order were passed over for a better reachability.
	Passed int
	// Refused is how many sessions that fit NATStrict left out as
	// unreachable. They rank last, so it is not 0 only when no other session
	// took the joiner: then it has a session of its own.
	Refused int
}

// NATStore is a Store that keeps the NAT reports (visible to every secure
// node sharing it) and orders auto-matchmaking's candidates by them.
// Disconnect and ResetNode forget the records of the connections they end.
type NATStore interface {
	// SetNAT keeps r's properties for r.PID (its counts are not changed).
	SetNAT(ctx context.Context, r NATRecord) error
	// AddNATResult counts one traversal result of r.PID's (a record with
	// unknown properties is made when the player reported none).
	AddNATResult(ctx context.Context, r NATRecord, success bool) error
	// NAT returns pid's record; ok is false when there is none.
	NAT(ctx context.Context, pid types.PID) (r NATRecord, ok bool, err error)
	// AutoMatchmakeNAT is AutoMatchmake choosing, among the first NATWindow
	// sessions that fit, by o (NATChoice says how).
	AutoMatchmakeNAT(ctx context.Context, criteria []SearchCriteria, s MatchmakeSession, p Participant, o NATOrder) (Change, bool, NATChoice, error)
	// RankNAT orders gids for joiner pid by o: stable within a reachability,
	// NATStrict without the unreachable ones. Gatherings that do not exist
	// are judged by an unknown owner.
	RankNAT(ctx context.Context, pid types.PID, gids []uint32, o NATOrder) ([]uint32, error)
}

// natStore returns the store's NATStore when NAT orders auto-matchmaking.
func (s *Server) natStore() (NATStore, bool) {
	if s.NAT.Policy == NATOff {
		return nil, false
	}
	ns, ok := s.Store.(NATStore)
	return ns, ok
}

// ReportNAT keeps the NAT properties p reported for auto-matchmaking: it is
// NAT Traversal's OnProperties on the secure server. Without a NATStore it
// does nothing.
func (s *Server) ReportNAT(ctx context.Context, p *rmc.Peer, props nattraversal.Properties) error {
	ns, ok := s.Store.(NATStore)
	if !ok {
		return nil
	}
	if err := ns.SetNAT(ctx, NATRecord{PID: p.PID, Node: s.node(), Conn: s.connID(p), Properties: props}); err != nil {
		return storeErr(err)
	}
	return nil
}

// ReportNATResult counts a traversal result (NAT Traversal's OnResult).
func (s *Server) ReportNATResult(ctx context.Context, p *rmc.Peer, success bool) error {
	ns, ok := s.Store.(NATStore)
	if !ok {
		return nil
	}
	if err := ns.AddNATResult(ctx, NATRecord{PID: p.PID, Node: s.node(), Conn: s.connID(p)}, success); err != nil {
		return storeErr(err)
	}
	return nil
}

// NATStats returns how many auto-matchmakes NAT steered: joined a session
// other than the usual first (preferred), and left out sessions that fit
// (strict; refused counts the auto-matchmakes, not the sessions).
func (s *Server) NATStats() (preferred, refused uint64) {
	return s.natPreferred.Load(), s.natRefused.Load()
}

// autoMatchmakeStore runs the store's auto-matchmake, ordered by NAT when the
// policy and the store allow; created says it created the session.
func (s *Server) autoMatchmakeStore(ctx context.Context, crit []SearchCriteria, ms MatchmakeSession, p Participant) (Change, bool, error) {
	ns, ok := s.natStore()
	if !ok {
		return s.Store.AutoMatchmake(ctx, crit, ms, p)
	}
	ch, created, choice, err := ns.AutoMatchmakeNAT(ctx, crit, ms, p, s.NAT)
	if err != nil {
		return ch, false, err
	}
	s.logNATChoice(ctx, p.PID, ch.Session.ID, created, choice)
	return ch, created, nil
}

// rankNAT orders the gatherings an auto-matchmake may join by NAT (the
// caller's list, or its friends' sessions), when the policy and store allow.
func (s *Server) rankNAT(ctx context.Context, pid types.PID, gids []uint32) ([]uint32, error) {
	ns, ok := s.natStore()
	if !ok || len(gids) == 0 {
		return gids, nil
	}
	ranked, err := ns.RankNAT(ctx, pid, gids, s.NAT)
	if err != nil {
		return nil, storeErr(err)
	}
	// Counted as AutoMatchmakeNAT's choices are: refused when strict left
	// nothing to try (a session is created), preferred when another
	// gathering than the caller's first is tried first.
	if len(ranked) == 0 {
		s.natRefused.Add(1)
	} else if ranked[0] != gids[0] {
		s.natPreferred.Add(1)
	}
	return ranked, nil
}

func (s *Server) logNATChoice(ctx context.Context, pid types.PID, gid uint32, created bool, c NATChoice) {
	if c.Passed == 0 && c.Refused == 0 {
		return
	}
	if c.Refused > 0 {
		s.natRefused.Add(1)
	}
	if c.Passed > 0 {
		s.natPreferred.Add(1)
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex matchmaking: NAT-aware choice", slog.Uint64("pid", uint64(pid)),
			slog.Uint64("gid", uint64(gid)), slog.Bool("created", created), slog.String("reach", c.Reach.String()),
			slog.Int("passed", c.Passed), slog.Int("refused", c.Refused), slog.String("policy", s.NAT.Policy.String()))
	}
}
