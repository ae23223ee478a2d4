// Package utility implements the generic methods of the Utility protocol
// (protocol 110, nintendo-wiki "Utility (110)"): NEX unique ids (with and without
// a password) and their association with a principal, and the integer and string
// setting tables games read at start. State is kept in memory.
package utility

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"

	gen "github.com/gamewire/gamewire/nex/protocols/utility"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// ProtocolID is the Utility protocol's id.
const ProtocolID = gen.UtilityProtocolID

// Method ids of the generic Utility methods (from the generated package,
// nex/protocols/utility, whose codecs the Server uses).
const (
	MethodAcquireNexUniqueID                         = gen.UtilityMethodAcquireNexUniqueId
	MethodAcquireNexUniqueIDWithPassword             = gen.UtilityMethodAcquireNexUniqueIdWithPassword
	MethodAssociateNexUniqueIDWithMyPrincipalID      = gen.UtilityMethodAssociateNexUniqueIdWithMyPrincipalId
	MethodAssociateNexUniqueIDsWithMyPrincipalID     = gen.UtilityMethodAssociateNexUniqueIdsWithMyPrincipalId
	MethodGetAssociatedNexUniqueIDWithMyPrincipalID  = gen.UtilityMethodGetAssociatedNexUniqueIdWithMyPrincipalId
	MethodGetAssociatedNexUniqueIDsWithMyPrincipalID = gen.UtilityMethodGetAssociatedNexUniqueIdsWithMyPrincipalId
	MethodGetIntegerSettings                         = gen.UtilityMethodGetIntegerSettings
	MethodGetStringSettings                          = gen.UtilityMethodGetStringSettings
)

// UniqueIDInfo is the UniqueIdInfo structure.
type UniqueIDInfo struct {
	ID       uint64 // unique_id
	Password uint64
}

func (u UniqueIDInfo) wire() gen.UniqueIdInfo {
	return gen.UniqueIdInfo{UniqueID: u.ID, Password: u.Password}
}

func uniqueIDFrom(u gen.UniqueIdInfo) UniqueIDInfo {
	return UniqueIDInfo{ID: u.UniqueID, Password: u.Password}
}

// Server answers the generic Utility methods. Register it with
// mux.HandleProtocol(utility.ProtocolID, srv); game-specific extensions of the
// protocol can be registered per method with mux.Handle, which takes precedence.
// Fill the settings before serving; the zero value works (no settings).
type Server struct {
	// IntegerSettings and StringSettings are the tables GetIntegerSettings and
	// GetStringSettings answer, by setting index. A missing index answers an
	// empty map.
	IntegerSettings map[uint32]map[uint16]int32
	StringSettings  map[uint32]map[uint16]string
	// Rand draws unique id passwords; default crypto/rand.
	Rand io.Reader

	mu     sync.Mutex
	next   uint64
	issued map[uint64]uint64 // unique id -> password
	assoc  map[types.PID][]UniqueIDInfo
}

// Associated returns the unique ids associated with pid.
func (s *Server) Associated(pid types.PID) []UniqueIDInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.assoc[pid])
}

func (s *Server) acquire(withPassword bool) (UniqueIDInfo, error) {
	var pw uint64
	if withPassword {
		rnd := s.Rand
		if rnd == nil {
			rnd = rand.Reader
		}
		var b [8]byte
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return UniqueIDInfo{}, fmt.Errorf("utility: unique id password: %w", err)
		}
		pw = binary.LittleEndian.Uint64(b[:])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issued == nil {
		s.issued = make(map[uint64]uint64)
		s.assoc = make(map[types.PID][]UniqueIDInfo)
	}
	s.next++
	s.issued[s.next] = pw
	return UniqueIDInfo{ID: s.next, Password: pw}, nil
}

// associate replaces pid's associations with infos, each of which must be an
// issued id with its password.
func (s *Server) associate(pid types.PID, infos []UniqueIDInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, u := range infos {
		pw, ok := s.issued[u.ID]
		if !ok || pw != u.Password {
			return fmt.Errorf("%w: unique id %d (item %d) was not issued with that password", types.CoreInvalidArgument, u.ID, i)
		}
	}
	if s.assoc == nil {
		s.assoc = make(map[types.PID][]UniqueIDInfo)
	}
	s.assoc[pid] = slices.Clone(infos)
	return nil
}

// ServeRMC implements rmc.Handler: the generated Utility dispatcher decodes
// the parameters and calls the handler methods below.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	return gen.ServeUtility(handler{s}, ctx, c, out)
}

// handler is the Server as the generated gen.UtilityHandler.
type handler struct{ s *Server }

var _ gen.UtilityHandler = handler{}

func (h handler) AcquireNexUniqueId(ctx context.Context, c *rmc.Call) (uint64, error) {
	u, err := h.s.acquire(false)
	return u.ID, err
}

func (h handler) AcquireNexUniqueIdWithPassword(ctx context.Context, c *rmc.Call) (gen.UniqueIdInfo, error) {
	u, err := h.s.acquire(true)
	return u.wire(), err
}

func (h handler) AssociateNexUniqueIdWithMyPrincipalId(ctx context.Context, c *rmc.Call, info gen.UniqueIdInfo) error {
	return h.associate(c, []gen.UniqueIdInfo{info})
}

func (h handler) AssociateNexUniqueIdsWithMyPrincipalId(ctx context.Context, c *rmc.Call, infos []gen.UniqueIdInfo) error {
	return h.associate(c, infos)
}

func (h handler) associate(c *rmc.Call, infos []gen.UniqueIdInfo) error {
	if c.Peer.PID == 0 {
		return types.RendezVousNotAuthenticated
	}
	us := make([]UniqueIDInfo, len(infos))
	for i, u := range infos {
		us[i] = uniqueIDFrom(u)
	}
	return h.s.associate(c.Peer.PID, us)
}

func (h handler) GetAssociatedNexUniqueIdWithMyPrincipalId(ctx context.Context, c *rmc.Call) (gen.UniqueIdInfo, error) {
	var first UniqueIDInfo
	if infos := h.s.Associated(c.Peer.PID); len(infos) > 0 {
		first = infos[0]
	}
	return first.wire(), nil
}

func (h handler) GetAssociatedNexUniqueIdsWithMyPrincipalId(ctx context.Context, c *rmc.Call) ([]gen.UniqueIdInfo, error) {
	infos := h.s.Associated(c.Peer.PID)
	out := make([]gen.UniqueIdInfo, len(infos))
	for i, u := range infos {
		out[i] = u.wire()
	}
	return out, nil
}

func (h handler) GetIntegerSettings(ctx context.Context, c *rmc.Call, index uint32) ([]types.Pair[uint16, int32], error) {
	return sortedPairs(h.s.IntegerSettings[index]), nil
}

func (h handler) GetStringSettings(ctx context.Context, c *rmc.Call, index uint32) ([]types.Pair[uint16, string], error) {
	return sortedPairs(h.s.StringSettings[index]), nil
}

// sortedPairs is a Map<Uint16, V> in key order, so responses are deterministic.
func sortedPairs[V any](m map[uint16]V) []types.Pair[uint16, V] {
	keys := make([]uint16, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]types.Pair[uint16, V], len(keys))
	for i, k := range keys {
		out[i] = types.Pair[uint16, V]{Key: k, Value: m[k]}
	}
	return out
}
