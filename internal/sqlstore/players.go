package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// What matchmaking keeps per player (matchmaking.PlayerStore): the notification
// data a player published for its friends (mm_notifications, one row per
// player and type) and its block list (mm_blocks, indexed both ways: the
// auto-matchmaking search asks who the joiner blocked and who blocked it).

// pidPlaceholders is "?, ?, ..." for n values and the values as arguments.
func pidPlaceholders(pids []types.PID) (string, []any) {
	args := make([]any, len(pids))
	for i, p := range pids {
		args[i] = int64(p)
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(pids)), ", "), args
}

// SetNotification implements matchmaking.PlayerStore.
func (m *Matchmaking) SetNotification(ctx context.Context, ev notifications.Event) error {
	if err := matchmaking.CheckNotification(&ev); err != nil {
		return err
	}
	return m.write(ctx, "matchmaking notification data", func(ctx context.Context, tx Querier) error {
		var n int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM mm_notifications WHERE pid = ? AND type <> ?`, int64(ev.Source), int64(ev.Type)).Scan(&n); err != nil {
			return err
		}
		if n >= matchmaking.MaxNotificationTypes {
			return fmt.Errorf("%w: PID %d already keeps notification data of %d types, at most %d", types.CoreInvalidArgument, ev.Source, n, matchmaking.MaxNotificationTypes)
		}
		_, err := tx.Exec(ctx, `INSERT INTO mm_notifications (pid, type, param1, param2, text) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (pid, type) DO UPDATE SET param1 = excluded.param1, param2 = excluded.param2, text = excluded.text`,
			int64(ev.Source), int64(ev.Type), int64(ev.Param1), int64(ev.Param2), ev.StrParam)
		return err
	})
}

// Notifications implements matchmaking.PlayerStore.
func (m *Matchmaking) Notifications(ctx context.Context, pids []types.PID, typs []uint32) ([]notifications.Event, error) {
	if len(pids) == 0 || len(typs) == 0 {
		return nil, nil
	}
	in, args := pidPlaceholders(pids)
	tin := strings.TrimSuffix(strings.Repeat("?, ", len(typs)), ", ")
	for _, t := range typs {
		args = append(args, int64(t))
	}
	var out []notifications.Event
	err := m.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT pid, type, param1, param2, text FROM mm_notifications WHERE pid IN (`+in+`) AND type IN (`+tin+`) ORDER BY pid, type`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var pid, typ, p1, p2 int64
			var text string
			if err := rows.Scan(&pid, &typ, &p1, &p2, &text); err != nil {
				return closeRows(rows, err)
			}
			out = append(out, notifications.Event{Source: types.PID(pid), Type: uint32(typ), Param1: uint64(p1), Param2: uint64(p2), StrParam: text})
		}
		return closeRows(rows, nil)
	})
	return out, Failure(m.store, "matchmaking friends' notification data", err)
}

// BlockList implements matchmaking.PlayerStore.
func (m *Matchmaking) BlockList(ctx context.Context, pid types.PID) ([]types.PID, error) {
	var out []types.PID
	err := m.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT blocked FROM mm_blocks WHERE pid = ? ORDER BY blocked`, int64(pid))
		if err != nil {
			return err
		}
		for rows.Next() {
			var b int64
			if err := rows.Scan(&b); err != nil {
				return closeRows(rows, err)
			}
			out = append(out, types.PID(b))
		}
		return closeRows(rows, nil)
	})
	return out, Failure(m.store, "matchmaking block list", err)
}

// Block implements matchmaking.PlayerStore.
func (m *Matchmaking) Block(ctx context.Context, pid types.PID, blocked []types.PID) error {
	if len(blocked) > matchmaking.MaxBlockList {
		return fmt.Errorf("%w: %d PIDs to block, at most %d", types.CoreInvalidArgument, len(blocked), matchmaking.MaxBlockList)
	}
	return m.write(ctx, "matchmaking block", func(ctx context.Context, tx Querier) error {
		for _, b := range blocked {
			if b == pid {
				return fmt.Errorf("%w: PID %d cannot block itself", types.CoreInvalidArgument, pid)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mm_blocks (pid, blocked) VALUES (?, ?) ON CONFLICT (pid, blocked) DO NOTHING`, int64(pid), int64(b)); err != nil {
				return err
			}
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM mm_blocks WHERE pid = ?`, int64(pid)).Scan(&n); err != nil {
			return err
		}
		if n > matchmaking.MaxBlockList {
			return fmt.Errorf("%w: PID %d would block %d players, at most %d", types.CoreInvalidArgument, pid, n, matchmaking.MaxBlockList)
		}
		return nil
	})
}

// Unblock implements matchmaking.PlayerStore.
func (m *Matchmaking) Unblock(ctx context.Context, pid types.PID, blocked []types.PID) error {
	if len(blocked) > matchmaking.MaxBlockList {
		return fmt.Errorf("%w: %d PIDs to unblock, at most %d", types.CoreInvalidArgument, len(blocked), matchmaking.MaxBlockList)
	}
	return m.write(ctx, "matchmaking unblock", func(ctx context.Context, tx Querier) error {
		if blocked == nil {
			_, err := tx.Exec(ctx, `DELETE FROM mm_blocks WHERE pid = ?`, int64(pid))
			return err
		}
		if len(blocked) == 0 {
			return nil
		}
		in, args := pidPlaceholders(blocked)
		_, err := tx.Exec(ctx, `DELETE FROM mm_blocks WHERE pid = ? AND blocked IN (`+in+`)`, append([]any{int64(pid)}, args...)...)
		return err
	})
}

// blockedWith is the condition "gid has no participant that pid blocked or
// that blocked pid" (its two arguments are pid twice).
const blockedWith = "gid NOT IN (SELECT p.gid FROM mm_blocks b JOIN mm_participants p ON p.pid = b.blocked WHERE b.pid = ?) AND " +
	"gid NOT IN (SELECT p.gid FROM mm_blocks b JOIN mm_participants p ON p.pid = b.pid WHERE b.blocked = ?)"

// blocks reports whether pid and a participant of gathering gid block one
// another.
func blocks(ctx context.Context, q Querier, pid types.PID, gid uint32) (bool, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM mm_participants p JOIN mm_blocks b
		ON (b.pid = ? AND b.blocked = p.pid) OR (b.blocked = ? AND b.pid = p.pid) WHERE p.gid = ?`,
		int64(pid), int64(pid), int64(gid)).Scan(&n)
	return n > 0, err
}
