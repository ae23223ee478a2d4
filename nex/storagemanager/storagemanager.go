// Package storagemanager serves Storage Manager, Mario Kart 7's and Puyo Puyo!!
// 20th Anniversary's protocol on Utility's id 110 (its description:
// nex/desc/defs/utility_storage_manager.nexd): a player's unique ids, one per
// save slot (0 to MaxSlot) and card, created by the first call that asks and
// kept in a Store.
package storagemanager

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"

	proto "github.com/gamewire/gamewire/nex/protocols/utilitystoragemanager"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// MaxSlot is the highest save slot (Pretendo's servers allow 0 to 4).
const MaxSlot = 4

// Store keeps the unique ids of players' slots and cards.
type Store interface {
	// SlotUniqueID returns pid's unique id for slot on card (nil: no card),
	// creating it when there is none (first).
	SlotUniqueID(ctx context.Context, pid types.PID, slot uint8, card *uint64) (id uint32, first bool, err error)
	// SlotOwner returns the player a unique id belongs to; an unknown id is
	// an error wrapping Core::InvalidArgument.
	SlotOwner(ctx context.Context, id uint32) (types.PID, error)
	// SlotUniqueIDs returns pid's unique ids in the order they were created.
	SlotUniqueIDs(ctx context.Context, pid types.PID) ([]uint32, error)
}

// Server answers Storage Manager.
type Server struct {
	Store Store
	// Rand draws card ids; default crypto/rand.
	Rand io.Reader
}

var _ proto.StorageManagerHandler = (*Server)(nil)

// Register registers s for Storage Manager on mux (protocol 110).
func (s *Server) Register(mux *rmc.Mux) { proto.RegisterStorageManager(mux, s) }

func (s *Server) slot(c *rmc.Call, slot uint8) error {
	if c.Peer.PID == 0 {
		return types.RendezVousNotAuthenticated
	}
	if slot > MaxSlot {
		return fmt.Errorf("%w: slot %d (0 to %d)", types.CoreInvalidArgument, slot, MaxSlot)
	}
	return nil
}

// AcquireNexUniqueId implements proto.StorageManagerHandler.
func (s *Server) AcquireNexUniqueId(ctx context.Context, c *rmc.Call, slot uint8) (uint32, bool, error) {
	if err := s.slot(c, slot); err != nil {
		return 0, false, err
	}
	return s.Store.SlotUniqueID(ctx, c.Peer.PID, slot, nil)
}

// NexUniqueIdToPrincipalId implements proto.StorageManagerHandler.
func (s *Server) NexUniqueIdToPrincipalId(ctx context.Context, c *rmc.Call, id uint32) (types.PID, error) {
	return s.Store.SlotOwner(ctx, id)
}

// GetAssociatedNexUniqueIds implements proto.StorageManagerHandler.
func (s *Server) GetAssociatedNexUniqueIds(ctx context.Context, c *rmc.Call) ([]uint32, error) {
	return s.Store.SlotUniqueIDs(ctx, c.Peer.PID)
}

// AcquireCardId implements proto.StorageManagerHandler: a new random card id
// of 63 bits. Card ids are not kept: a unique id is per player, slot and
// card, so two players drawing the same card id share nothing.
func (s *Server) AcquireCardId(ctx context.Context, c *rmc.Call) (uint64, error) {
	r := s.Rand
	if r == nil {
		r = rand.Reader
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("storagemanager: card id: %w", err)
	}
	return binary.LittleEndian.Uint64(b[:]) >> 1, nil
}

// ActivateWithCardId implements proto.StorageManagerHandler.
func (s *Server) ActivateWithCardId(ctx context.Context, c *rmc.Call, slot uint8, card uint64) (uint32, bool, error) {
	if err := s.slot(c, slot); err != nil {
		return 0, false, err
	}
	return s.Store.SlotUniqueID(ctx, c.Peer.PID, slot, &card)
}
