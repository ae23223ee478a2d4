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

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// ProtocolID is the Utility protocol's id.
const ProtocolID uint16 = 110

// Method ids of the generic Utility methods.
const (
	MethodAcquireNexUniqueID                         uint32 = 1
	MethodAcquireNexUniqueIDWithPassword             uint32 = 2
	MethodAssociateNexUniqueIDWithMyPrincipalID      uint32 = 3
	MethodAssociateNexUniqueIDsWithMyPrincipalID     uint32 = 4
	MethodGetAssociatedNexUniqueIDWithMyPrincipalID  uint32 = 5
	MethodGetAssociatedNexUniqueIDsWithMyPrincipalID uint32 = 6
	MethodGetIntegerSettings                         uint32 = 7
	MethodGetStringSettings                          uint32 = 8
)

// UniqueIDInfo is the UniqueIdInfo structure.
type UniqueIDInfo struct {
	ID       uint64 // nexUniqueId
	Password uint64 // nexUniqueIdPassword
}

// Append appends u as a structure.
func (u UniqueIDInfo) Append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U64(u.ID)
	w.U64(u.Password)
	w.EndStructure(m)
}

// ReadUniqueIDInfo reads a UniqueIdInfo structure.
func ReadUniqueIDInfo(r *types.Reader, field string) UniqueIDInfo {
	m := r.EnterStructure(field)
	u := UniqueIDInfo{ID: r.U64("nexUniqueId"), Password: r.U64("nexUniqueIdPassword")}
	r.LeaveStructure(m)
	return u
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

// ServeRMC implements rmc.Handler.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	r := c.Reader()
	w := types.NewWriter(out, c.Peer.Settings)
	switch c.Method {
	case MethodAcquireNexUniqueID, MethodAcquireNexUniqueIDWithPassword:
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		u, err := s.acquire(c.Method == MethodAcquireNexUniqueIDWithPassword)
		if err != nil {
			return out, err
		}
		if c.Method == MethodAcquireNexUniqueID {
			w.U64(u.ID)
		} else {
			u.Append(&w)
		}
	case MethodAssociateNexUniqueIDWithMyPrincipalID, MethodAssociateNexUniqueIDsWithMyPrincipalID:
		var infos []UniqueIDInfo
		if c.Method == MethodAssociateNexUniqueIDWithMyPrincipalID {
			infos = []UniqueIDInfo{ReadUniqueIDInfo(&r, "uniqueIdInfo")}
		} else {
			infos = types.ReadList(&r, "uniqueIdInfo", ReadUniqueIDInfo)
		}
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if c.Peer.PID == 0 {
			return out, types.RendezVousNotAuthenticated
		}
		if err := s.associate(c.Peer.PID, infos); err != nil {
			return out, err
		}
	case MethodGetAssociatedNexUniqueIDWithMyPrincipalID, MethodGetAssociatedNexUniqueIDsWithMyPrincipalID:
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		infos := s.Associated(c.Peer.PID)
		if c.Method == MethodGetAssociatedNexUniqueIDWithMyPrincipalID {
			var first UniqueIDInfo
			if len(infos) > 0 {
				first = infos[0]
			}
			first.Append(&w)
		} else {
			types.WriteList(&w, infos, func(w *types.Writer, u UniqueIDInfo) { u.Append(w) })
		}
	case MethodGetIntegerSettings:
		idx := r.U32("integerSettingIndex")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		writeMap(&w, s.IntegerSettings[idx], (*types.Writer).S32)
	case MethodGetStringSettings:
		idx := r.U32("stringSettingIndex")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		writeMap(&w, s.StringSettings[idx], (*types.Writer).String)
	default:
		return out, types.CoreNotImplemented
	}
	return w.Bytes()
}

// writeMap writes a Map<Uint16, V> in key order, so responses are deterministic.
func writeMap[V any](w *types.Writer, m map[uint16]V, value func(w *types.Writer, v V)) {
	keys := make([]uint16, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	types.WriteList(w, keys, func(w *types.Writer, k uint16) {
		w.U16(k)
		value(w, m[k])
	})
}

func badRequest(err error) error { return fmt.Errorf("%w: %w", types.CoreInvalidArgument, err) }
