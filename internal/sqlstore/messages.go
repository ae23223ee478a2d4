package sqlstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/types"
)

// Messages is messagedelivery.Store: md_messages holds each delivered message
// once (its id from the table's sequence), md_inbox which recipient it is kept
// for, keyed (pid, id) so a player's inbox is one index range.
type Messages struct {
	db    Pool
	write func(ctx context.Context, f func(ctx context.Context, tx Querier) error) error
	store string
}

var _ messagedelivery.Store = (*Messages)(nil)

// NewMessages returns the messages of db; store names it in errors.
func NewMessages(store string, db DB) *Messages {
	return &Messages{db: db, write: db.Write, store: store}
}

// DeliverMessage implements messagedelivery.Store.
func (m *Messages) DeliverMessage(ctx context.Context, sender types.PID, recipients []types.PID, class string, body func(id uint32) ([]byte, error)) (uint32, error) {
	var id uint32
	err := m.write(ctx, func(ctx context.Context, tx Querier) error {
		var n int64
		if err := tx.QueryRow(ctx, `INSERT INTO md_messages (sender, class, body, created) VALUES (?, ?, ?, ?) RETURNING id`,
			int64(sender), class, []byte{}, time.Now().UnixNano()).Scan(&n); err != nil {
			return err
		}
		if n <= 0 || n > math.MaxUint32 {
			return fmt.Errorf("message id %d out of the protocol's range", n)
		}
		id = uint32(n)
		b, err := body(id)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE md_messages SET body = ? WHERE id = ?`, b, n); err != nil {
			return err
		}
		for _, r := range recipients {
			if _, err := tx.Exec(ctx, `INSERT INTO md_inbox (pid, id) VALUES (?, ?)`, int64(r), n); err != nil {
				return err
			}
		}
		return nil
	})
	return id, Failure(m.store, "deliver a message", err)
}

// Inbox implements messagedelivery.Store.
func (m *Messages) Inbox(ctx context.Context, pid types.PID, limit int) ([]messagedelivery.Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []messagedelivery.Message
	err := m.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT m.id, m.sender, m.class, m.body, m.created FROM md_inbox i
			JOIN md_messages m ON m.id = i.id WHERE i.pid = ? ORDER BY i.id LIMIT ?`, int64(pid), limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				id, sender, created int64
				msg                 messagedelivery.Message
			)
			if err := rows.Scan(&id, &sender, &msg.Class, &msg.Body, &created); err != nil {
				return closeRows(rows, err)
			}
			msg.ID, msg.Sender, msg.Created = uint32(id), types.PID(sender), time.Unix(0, created)
			out = append(out, msg)
		}
		return closeRows(rows, nil)
	})
	return out, Failure(m.store, "read an inbox", err)
}
