package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/types"
)

// Slots is storagemanager.Store: sm_unique_ids holds one unique id per
// (pid, slot, card), card -1 with has_card 0 for none (a card id is a uint64
// kept as its int64 bits).
type Slots struct {
	db    DB
	store string
}

var _ storagemanager.Store = (*Slots)(nil)

// NewSlots returns the slot unique ids of db; store names it in errors.
func NewSlots(store string, db DB) *Slots { return &Slots{db: db, store: store} }

// SlotUniqueID implements storagemanager.Store.
func (s *Slots) SlotUniqueID(ctx context.Context, pid types.PID, slot uint8, card *uint64) (uint32, bool, error) {
	hasCard, c := 0, int64(-1)
	if card != nil {
		hasCard, c = 1, int64(*card)
	}
	var (
		id    int64
		first bool
	)
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		err := tx.QueryRow(ctx, `SELECT id FROM sm_unique_ids WHERE pid = ? AND slot = ? AND has_card = ? AND card = ?`,
			int64(pid), int(slot), hasCard, c).Scan(&id)
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		first = true
		return tx.QueryRow(ctx, `INSERT INTO sm_unique_ids (pid, slot, has_card, card, created) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			int64(pid), int(slot), hasCard, c, time.Now().UnixNano()).Scan(&id)
	})
	if err == nil && (id <= 0 || id > math.MaxUint32) {
		err = fmt.Errorf("unique id %d out of the protocol's range", id)
	}
	return uint32(id), first, Failure(s.store, "acquire a slot's unique id", err)
}

// SlotOwner implements storagemanager.Store.
func (s *Slots) SlotOwner(ctx context.Context, id uint32) (types.PID, error) {
	var pid int64
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		return q.QueryRow(ctx, `SELECT pid FROM sm_unique_ids WHERE id = ?`, int64(id)).Scan(&pid)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%w: no unique id %d", types.CoreInvalidArgument, id)
	}
	return types.PID(pid), Failure(s.store, "find a unique id's player", err)
}

// SlotUniqueIDs implements storagemanager.Store.
func (s *Slots) SlotUniqueIDs(ctx context.Context, pid types.PID) ([]uint32, error) {
	var out []uint32
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT id FROM sm_unique_ids WHERE pid = ? ORDER BY id`, int64(pid))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return closeRows(rows, err)
			}
			out = append(out, uint32(id))
		}
		return closeRows(rows, nil)
	})
	return out, Failure(s.store, "list a player's unique ids", err)
}
