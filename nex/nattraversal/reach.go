package nattraversal

import (
	"fmt"

	natproto "github.com/gamewire/gamewire/nex/protocols/nattraversal"
)

// NAT mapping values, as ReportNATProperties' natmapping and the station url's
// natm carry them (nintendo-wiki "NEX Types", StationURL "NAT Mapping"). The
// behaviours are those of RFC 4787 section 4.1: endpoint-independent mapping
// keeps one public address and port for every destination; endpoint-dependent
// mapping (RFC 4787's address-dependent and address-and-port-dependent
// mapping, a "symmetric" NAT) takes a new one per destination.
// The values are the description's (nex/desc/defs/nattraversal.nexd, NATMapping).
const (
	MappingUnknown             = uint32(natproto.NATMappingUnknown)
	MappingEndpointIndependent = uint32(natproto.NATMappingEndpointIndependent)
	MappingEndpointDependent   = uint32(natproto.NATMappingEndpointDependent)
)

// NAT filtering values, as ReportNATProperties' natfiltering and the station
// url's natf carry them (nintendo-wiki "NEX Types", "NAT Filtering"). In RFC
// 4787 section 5's terms, port-independent filtering lets in packets from any
// port of an address the station has sent to (endpoint-independent or
// address-dependent filtering); port-dependent filtering only from the exact
// address and port (address-and-port-dependent filtering).
// The values are the description's (NATFiltering).
const (
	FilteringUnknown         = uint32(natproto.NATFilteringUnknown)
	FilteringPortIndependent = uint32(natproto.NATFilteringPortIndependent)
	FilteringPortDependent   = uint32(natproto.NATFilteringPortDependent)
)

// maxNATValue is the largest mapping or filtering value the page names.
const maxNATValue = 2

// Properties are the NAT mapping and filtering a station reported
// (ReportNATProperties), and the round-trip time it measured to the server
// (milliseconds).
type Properties struct {
	Mapping, Filtering, RTT uint32
}

// Known reports whether both the mapping and the filtering are values the
// page names other than unknown.
func (p Properties) Known() bool {
	return known(p.Mapping) && known(p.Filtering)
}

func known(v uint32) bool { return v != 0 && v <= maxNATValue }

// String prints p as "EIM/PIF" ("?" for an unknown or unnamed value).
func (p Properties) String() string {
	m, f := "?", "?"
	switch p.Mapping {
	case MappingEndpointIndependent:
		m = "EIM"
	case MappingEndpointDependent:
		m = "EDM"
	}
	switch p.Filtering {
	case FilteringPortIndependent:
		f = "PIF"
	case FilteringPortDependent:
		f = "PDF"
	}
	return m + "/" + f
}

// Reachability is whether two stations can set up a peer-to-peer connection
// by hole punching, judged from their NAT properties (Reach).
type Reachability uint8

// Reachability values, best first: Unknown sorts between the two certain
// answers.
const (
	Reachable Reachability = iota
	ReachUnknown
	Unreachable
)

// String names r.
func (r Reachability) String() string {
	switch r {
	case Reachable:
		return "reachable"
	case ReachUnknown:
		return "unknown"
	case Unreachable:
		return "unreachable"
	}
	return fmt.Sprintf("Reachability(%d)", uint8(r))
}

// Reach says whether stations a and b can reach each other by UDP hole
// punching, both sending to the public address the server saw of the other
// (RFC 5128 section 3.3), with neither port prediction nor a relay. The rule,
// for two known stations (docs/nex.md "NAT-aware matchmaking" has the table):
//
//   - both endpoint-independent mapping: reachable. Each sends to the other's
//     real public endpoint, which opens its own filter for the answer, whatever
//     the filtering.
//   - both endpoint-dependent mapping (two symmetric NATs): unreachable. Each
//     one's packets to the other leave from a port the other cannot know.
//   - one of each: reachable exactly when the endpoint-independent side has
//     port-independent filtering. It has sent to the other's address, so the
//     other's packet from its new port gets in, and the answer goes to that
//     port; with port-dependent filtering that packet is dropped, and the
//     other's filter drops everything sent to the address the server saw.
//
// The rule is symmetric. A value that is unknown (0, or one the page does not
// name) stands for every value it could be: the answer is Reachable or
// Unreachable when all of them agree, ReachUnknown otherwise. So a station
// with endpoint-independent mapping and port-independent filtering reaches
// every station, known or not.
func Reach(a, b Properties) Reachability {
	var seen [3]bool
	for _, am := range completions(a.Mapping) {
		for _, af := range completions(a.Filtering) {
			for _, bm := range completions(b.Mapping) {
				for _, bf := range completions(b.Filtering) {
					seen[reachKnown(am, af, bm, bf)] = true
				}
			}
		}
	}
	switch {
	case seen[Reachable] && !seen[Unreachable]:
		return Reachable
	case seen[Unreachable] && !seen[Reachable]:
		return Unreachable
	}
	return ReachUnknown
}

// completions lists the values an observed mapping or filtering may be.
func completions(v uint32) []uint32 {
	if known(v) {
		return []uint32{v}
	}
	return []uint32{1, 2}
}

// reachKnown is Reach's rule for two stations with known properties.
func reachKnown(am, af, bm, bf uint32) Reachability {
	switch {
	case am == MappingEndpointIndependent && bm == MappingEndpointIndependent:
		return Reachable
	case am == MappingEndpointDependent && bm == MappingEndpointDependent:
		return Unreachable
	case am == MappingEndpointIndependent && af == FilteringPortIndependent,
		bm == MappingEndpointIndependent && bf == FilteringPortIndependent:
		return Reachable
	}
	return Unreachable
}
