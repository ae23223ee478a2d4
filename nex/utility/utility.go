// Package utility implements the generic methods of the Utility protocol
// (protocol 110, nintendo-wiki "Utility (110)"): NEX unique ids (with and without
// a password) and their association with a principal, and the integer and string
// setting tables games read at start. The unique ids live in a Store (the
// SQLite and PostgreSQL stores' UniqueIDs; in memory when none is given).
// Server implements the generated handler interface (nex/protocols/utility).
package utility

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"

	utilityproto "github.com/gamewire/gamewire/nex/protocols/utility"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// ProtocolID is the Utility protocol's id.
const ProtocolID = utilityproto.UtilityProtocolID

// Method ids of the generic Utility methods (from the generated package,
// nex/protocols/utility, whose codecs the Server uses).
const (
	MethodAcquireNexUniqueID                         = utilityproto.UtilityMethodAcquireNexUniqueId
	MethodAcquireNexUniqueIDWithPassword             = utilityproto.UtilityMethodAcquireNexUniqueIdWithPassword
	MethodAssociateNexUniqueIDWithMyPrincipalID      = utilityproto.UtilityMethodAssociateNexUniqueIdWithMyPrincipalId
	MethodAssociateNexUniqueIDsWithMyPrincipalID     = utilityproto.UtilityMethodAssociateNexUniqueIdsWithMyPrincipalId
	MethodGetAssociatedNexUniqueIDWithMyPrincipalID  = utilityproto.UtilityMethodGetAssociatedNexUniqueIdWithMyPrincipalId
	MethodGetAssociatedNexUniqueIDsWithMyPrincipalID = utilityproto.UtilityMethodGetAssociatedNexUniqueIdsWithMyPrincipalId
	MethodGetIntegerSettings                         = utilityproto.UtilityMethodGetIntegerSettings
	MethodGetStringSettings                          = utilityproto.UtilityMethodGetStringSettings
)

// UniqueIDInfo is the UniqueIdInfo structure.
type UniqueIDInfo struct {
	ID       uint64 // nexUniqueId
	Password uint64 // nexUniqueIdPassword
}

// MaxAssociations bounds the unique ids one call associates with a player.
const MaxAssociations = 64

// Store keeps the unique ids issued and the players they are associated with.
type Store interface {
	// IssueUniqueID records a new unique id with its password (0: none) and
	// returns it.
	IssueUniqueID(ctx context.Context, password uint64) (uint64, error)
	// AssociateUniqueIDs replaces pid's associated unique ids with infos,
	// each of which must be issued with that password (else an error
	// wrapping Core::InvalidArgument, and nothing changes).
	AssociateUniqueIDs(ctx context.Context, pid types.PID, infos []UniqueIDInfo) error
	// AssociatedUniqueIDs returns pid's associated unique ids, in the order
	// they were associated.
	AssociatedUniqueIDs(ctx context.Context, pid types.PID) ([]UniqueIDInfo, error)
}

// Server answers the generic Utility methods. Register it with Register (or
// mux.HandleProtocol(utility.ProtocolID, srv)); game-specific extensions of the
// protocol can be registered per method with mux.Handle, which takes precedence.
// Fill the settings before serving; the zero value works (no settings, unique
// ids in memory).
type Server struct {
	// Store keeps the unique ids; nil keeps them in memory (Memory).
	Store Store
	// IntegerSettings and StringSettings are the tables GetIntegerSettings and
	// GetStringSettings answer, by setting index: constants of the game's
	// original server, configured per game. A missing index answers an empty
	// map.
	IntegerSettings map[uint32]map[uint16]int32
	StringSettings  map[uint32]map[uint16]string
	// Rand draws unique id passwords; default crypto/rand.
	Rand io.Reader

	mem Memory
}

var _ utilityproto.UtilityHandler = (*Server)(nil)

// Register registers s for Utility on mux.
func (s *Server) Register(mux *rmc.Mux) { utilityproto.RegisterUtility(mux, s) }

// ServeRMC implements rmc.Handler through the generated codec.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	return utilityproto.ServeUtility(s, ctx, c, out)
}

func (s *Server) store() Store {
	if s.Store != nil {
		return s.Store
	}
	return &s.mem
}

// Associated returns the unique ids associated with pid (nil on a store error).
func (s *Server) Associated(pid types.PID) []UniqueIDInfo {
	infos, _ := s.store().AssociatedUniqueIDs(context.Background(), pid)
	return infos
}

func (s *Server) acquire(ctx context.Context, withPassword bool) (UniqueIDInfo, error) {
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
	id, err := s.store().IssueUniqueID(ctx, pw)
	return UniqueIDInfo{ID: id, Password: pw}, err
}

func (s *Server) associate(ctx context.Context, c *rmc.Call, infos []utilityproto.UniqueIdInfo) error {
	if c.Peer.PID == 0 {
		return types.RendezVousNotAuthenticated
	}
	if len(infos) > MaxAssociations {
		return fmt.Errorf("%w: %d unique ids (at most %d)", types.CoreInvalidArgument, len(infos), MaxAssociations)
	}
	own := make([]UniqueIDInfo, len(infos))
	for i, u := range infos {
		own[i] = UniqueIDInfo{ID: u.UniqueID, Password: u.Password}
	}
	return s.store().AssociateUniqueIDs(ctx, c.Peer.PID, own)
}

func (s *Server) associated(ctx context.Context, c *rmc.Call) ([]utilityproto.UniqueIdInfo, error) {
	infos, err := s.store().AssociatedUniqueIDs(ctx, c.Peer.PID)
	out := make([]utilityproto.UniqueIdInfo, len(infos))
	for i, u := range infos {
		out[i] = utilityproto.UniqueIdInfo{UniqueID: u.ID, Password: u.Password}
	}
	return out, err
}

// AcquireNexUniqueId implements utilityproto.UtilityHandler.
func (s *Server) AcquireNexUniqueId(ctx context.Context, c *rmc.Call) (uint64, error) {
	u, err := s.acquire(ctx, false)
	return u.ID, err
}

// AcquireNexUniqueIdWithPassword implements utilityproto.UtilityHandler.
func (s *Server) AcquireNexUniqueIdWithPassword(ctx context.Context, c *rmc.Call) (utilityproto.UniqueIdInfo, error) {
	u, err := s.acquire(ctx, true)
	return utilityproto.UniqueIdInfo{UniqueID: u.ID, Password: u.Password}, err
}

// AssociateNexUniqueIdWithMyPrincipalId implements utilityproto.UtilityHandler.
func (s *Server) AssociateNexUniqueIdWithMyPrincipalId(ctx context.Context, c *rmc.Call, info utilityproto.UniqueIdInfo) error {
	return s.associate(ctx, c, []utilityproto.UniqueIdInfo{info})
}

// AssociateNexUniqueIdsWithMyPrincipalId implements utilityproto.UtilityHandler.
func (s *Server) AssociateNexUniqueIdsWithMyPrincipalId(ctx context.Context, c *rmc.Call, infos []utilityproto.UniqueIdInfo) error {
	return s.associate(ctx, c, infos)
}

// GetAssociatedNexUniqueIdWithMyPrincipalId implements
// utilityproto.UtilityHandler: the first associated id, zeros when none.
func (s *Server) GetAssociatedNexUniqueIdWithMyPrincipalId(ctx context.Context, c *rmc.Call) (utilityproto.UniqueIdInfo, error) {
	infos, err := s.associated(ctx, c)
	if err != nil || len(infos) == 0 {
		return utilityproto.UniqueIdInfo{}, err
	}
	return infos[0], nil
}

// GetAssociatedNexUniqueIdsWithMyPrincipalId implements utilityproto.UtilityHandler.
func (s *Server) GetAssociatedNexUniqueIdsWithMyPrincipalId(ctx context.Context, c *rmc.Call) ([]utilityproto.UniqueIdInfo, error) {
	return s.associated(ctx, c)
}

// GetIntegerSettings implements utilityproto.UtilityHandler (in key order).
func (s *Server) GetIntegerSettings(ctx context.Context, c *rmc.Call, index uint32) ([]types.Pair[uint16, int32], error) {
	return pairs(s.IntegerSettings[index]), nil
}

// GetStringSettings implements utilityproto.UtilityHandler (in key order).
func (s *Server) GetStringSettings(ctx context.Context, c *rmc.Call, index uint32) ([]types.Pair[uint16, string], error) {
	return pairs(s.StringSettings[index]), nil
}

// pairs returns a map's entries in key order, so responses are deterministic.
func pairs[V any](m map[uint16]V) []types.Pair[uint16, V] {
	out := make([]types.Pair[uint16, V], 0, len(m))
	for k, v := range m {
		out = append(out, types.Pair[uint16, V]{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b types.Pair[uint16, V]) int { return int(a.Key) - int(b.Key) })
	return out
}

// Memory is a Store in memory.
type Memory struct {
	mu     sync.Mutex
	next   uint64
	issued map[uint64]uint64 // unique id -> password
	assoc  map[types.PID][]UniqueIDInfo
}

// IssueUniqueID implements Store.
func (m *Memory) IssueUniqueID(_ context.Context, password uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.issued == nil {
		m.issued = make(map[uint64]uint64)
	}
	m.next++
	m.issued[m.next] = password
	return m.next, nil
}

// AssociateUniqueIDs implements Store.
func (m *Memory) AssociateUniqueIDs(_ context.Context, pid types.PID, infos []UniqueIDInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := CheckIssued(infos, func(id uint64) (uint64, bool) { pw, ok := m.issued[id]; return pw, ok }); err != nil {
		return err
	}
	if m.assoc == nil {
		m.assoc = make(map[types.PID][]UniqueIDInfo)
	}
	m.assoc[pid] = slices.Clone(infos)
	return nil
}

// AssociatedUniqueIDs implements Store.
func (m *Memory) AssociatedUniqueIDs(_ context.Context, pid types.PID) ([]UniqueIDInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.assoc[pid]), nil
}

// CheckIssued checks that each of infos was issued with its password
// (issued returns an id's password), for stores' AssociateUniqueIDs.
func CheckIssued(infos []UniqueIDInfo, issued func(id uint64) (uint64, bool)) error {
	for i, u := range infos {
		pw, ok := issued(u.ID)
		if !ok || pw != u.Password {
			return fmt.Errorf("%w: unique id %d (item %d) was not issued with that password", types.CoreInvalidArgument, u.ID, i)
		}
	}
	return nil
}
