package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/types"
)

// Friends is the friends server's store logic (friends.Store), the same on
// both databases. Its tables (each store's schema, "friends" component):
//
//	friends_profiles (pid, data, updated)          a player's Profile as JSON
//	friends_links    (pid, friend, since)          a friendship, one row each way
//	friends_requests (id, sender, recipient, ...)  pending requests, one per pair and direction
//	friends_blocks   (pid, blocked, title, version, since)
//	friends_presence (pid, node, data, updated)    who is online, on which node
//	friends_notifications (id, pid, type, sender, text, at)  persistent notifications
//
// Times are Unix nanoseconds. Writes that check a limit lock the players
// involved first (lockPlayers: their profile rows, in PID order), so two
// concurrent accepts cannot both take a list's last place.
type Friends struct {
	db    DB
	store string
}

var _ friends.Store = (*Friends)(nil)

// NewFriends returns the friends store on db; store names it in error
// messages ("accounts", "pgstore").
func NewFriends(store string, db DB) *Friends { return &Friends{db: db, store: store} }

func (f *Friends) fail(what string, err error) error { return Failure(f.store, "friends: "+what, err) }

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// lockPlayers makes sure each of pids has a profile row and locks it for the
// transaction, in PID order (no deadlock between two writers).
func lockPlayers(ctx context.Context, tx Querier, pids ...types.PID) error {
	pids = slices.Clone(pids)
	slices.Sort(pids)
	for i, pid := range pids {
		if i > 0 && pids[i-1] == pid {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO friends_profiles (pid, data, updated) VALUES (?, '{}', 0)
			ON CONFLICT (pid) DO UPDATE SET updated = friends_profiles.updated`, int64(pid)); err != nil {
			return err
		}
	}
	return nil
}

// AreFriends implements friends.Friends.
func (f *Friends) AreFriends(ctx context.Context, a, b types.PID) (ok bool, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var n int64
		err := q.QueryRow(ctx, `SELECT COUNT(*) FROM friends_links WHERE pid = ? AND friend = ?`, int64(a), int64(b)).Scan(&n)
		ok = n > 0
		return err
	})
	return ok, f.fail("are friends", err)
}

// FriendsOf implements friends.Friends.
func (f *Friends) FriendsOf(ctx context.Context, pid types.PID) ([]types.PID, error) {
	links, err := f.Links(ctx, pid)
	if err != nil {
		return nil, err
	}
	out := make([]types.PID, len(links))
	for i, l := range links {
		out[i] = l.PID
	}
	return out, nil
}

// Links implements friends.Store.
func (f *Friends) Links(ctx context.Context, pid types.PID) (out []friends.Link, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out, err = readLinks(ctx, q, pid)
		return err
	})
	return out, f.fail("links", err)
}

func readLinks(ctx context.Context, q Querier, pid types.PID) ([]friends.Link, error) {
	rows, err := q.Query(ctx, `SELECT friend, since FROM friends_links WHERE pid = ? ORDER BY since, friend`, int64(pid))
	if err != nil {
		return nil, err
	}
	var out []friends.Link
	for rows.Next() {
		var p, since int64
		if err := rows.Scan(&p, &since); err != nil {
			return nil, closeRows(rows, err)
		}
		out = append(out, friends.Link{PID: types.PID(p), Since: fromNanos(since)})
	}
	return out, closeRows(rows, nil)
}

func count(ctx context.Context, q Querier, query string, args ...any) (int, error) {
	var n int64
	err := q.QueryRow(ctx, query, args...).Scan(&n)
	return int(n), err
}

// Profile implements friends.Store.
func (f *Friends) Profile(ctx context.Context, pid types.PID) (p friends.Profile, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		p, err = readProfile(ctx, q, pid)
		return err
	})
	return p, f.fail("profile", err)
}

func readProfile(ctx context.Context, q Querier, pid types.PID) (friends.Profile, error) {
	var p friends.Profile
	var data string
	err := q.QueryRow(ctx, `SELECT data FROM friends_profiles WHERE pid = ?`, int64(pid)).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return p, fmt.Errorf("profile of PID %d: %w", pid, err)
	}
	return p, nil
}

// inList is "col IN (?, ?, ...)" with the PIDs as arguments.
func inList(col string, pids []types.PID) (string, []any) {
	args := make([]any, len(pids))
	for i, p := range pids {
		args[i] = int64(p)
	}
	return col + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(pids)), ", ") + ")", args
}

// Profiles implements friends.Store.
func (f *Friends) Profiles(ctx context.Context, pids []types.PID) (map[types.PID]friends.Profile, error) {
	out := make(map[types.PID]friends.Profile, len(pids))
	if len(pids) == 0 {
		return out, nil
	}
	cond, args := inList("pid", pids)
	err := f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, `SELECT pid, data FROM friends_profiles WHERE `+cond, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var pid int64
			var data string
			var p friends.Profile
			if err := rows.Scan(&pid, &data); err != nil {
				return closeRows(rows, err)
			}
			if err := json.Unmarshal([]byte(data), &p); err != nil {
				return closeRows(rows, fmt.Errorf("profile of PID %d: %w", pid, err))
			}
			out[types.PID(pid)] = p
		}
		return closeRows(rows, nil)
	})
	return out, f.fail("profiles", err)
}

// UpdateProfile implements friends.Store.
func (f *Friends) UpdateProfile(ctx context.Context, pid types.PID, change func(p *friends.Profile) error) (p friends.Profile, err error) {
	err = f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if err := lockPlayers(ctx, tx, pid); err != nil {
			return err
		}
		if p, err = readProfile(ctx, tx, pid); err != nil {
			return err
		}
		if err := change(&p); err != nil {
			return err
		}
		data, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE friends_profiles SET data = ?, updated = ? WHERE pid = ?`, string(data), time.Now().UnixNano(), int64(pid))
		return err
	})
	return p, f.fail("update profile", err)
}

const requestCols = `id, sender, recipient, message, title, version, sent, expires, received`

func scanRequest(sc Row) (friends.Request, error) {
	var r friends.Request
	var id, sender, recipient, title, version, sent, expires, received int64
	err := sc.Scan(&id, &sender, &recipient, &r.Message, &title, &version, &sent, &expires, &received)
	r.ID, r.Sender, r.Recipient = uint64(id), types.PID(sender), types.PID(recipient)
	r.Game = friends.GameKey{TitleID: uint64(title), Version: uint16(version)}
	r.Sent, r.Expires, r.Received = fromNanos(sent), fromNanos(expires), received != 0
	return r, err
}

func readRequests(ctx context.Context, q Querier, where string, args ...any) ([]friends.Request, error) {
	rows, err := q.Query(ctx, `SELECT `+requestCols+` FROM friends_requests WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	var out []friends.Request
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			return nil, closeRows(rows, err)
		}
		out = append(out, r)
	}
	return out, closeRows(rows, nil)
}

// pending returns the unexpired request from sender to recipient, if any.
func pending(ctx context.Context, q Querier, sender, recipient types.PID, now time.Time) (*friends.Request, error) {
	rs, err := readRequests(ctx, q, `sender = ? AND recipient = ? AND expires > ?`, int64(sender), int64(recipient), now.UnixNano())
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return &rs[0], nil
}

func blocked(ctx context.Context, q Querier, by, pid types.PID) (bool, error) {
	n, err := count(ctx, q, `SELECT COUNT(*) FROM friends_blocks WHERE pid = ? AND blocked = ?`, int64(by), int64(pid))
	return n > 0, err
}

// befriend links a and b both ways and deletes their requests to each other,
// after checking neither list is full.
func befriend(ctx context.Context, tx Querier, a, b types.PID, now time.Time, l friends.Limits) (friends.Link, error) {
	for _, p := range []types.PID{a, b} {
		n, err := count(ctx, tx, `SELECT COUNT(*) FROM friends_links WHERE pid = ?`, int64(p))
		if err != nil {
			return friends.Link{}, err
		}
		if n >= l.MaxFriends {
			return friends.Link{}, fmt.Errorf("%w: PID %d has %d friends (at most %d)", types.FPDMyFriendListLimitExceed, p, n, l.MaxFriends)
		}
	}
	for _, pair := range [][2]types.PID{{a, b}, {b, a}} {
		if _, err := tx.Exec(ctx, `INSERT INTO friends_links (pid, friend, since) VALUES (?, ?, ?) ON CONFLICT (pid, friend) DO NOTHING`,
			int64(pair[0]), int64(pair[1]), now.UnixNano()); err != nil {
			return friends.Link{}, err
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM friends_requests WHERE (sender = ? AND recipient = ?) OR (sender = ? AND recipient = ?)`,
		int64(a), int64(b), int64(b), int64(a)); err != nil {
		return friends.Link{}, err
	}
	return friends.Link{PID: b, Since: now.UTC()}, nil
}

// SendRequest implements friends.Store.
func (f *Friends) SendRequest(ctx context.Context, r friends.Request, now time.Time, l friends.Limits) (out friends.Request, link *friends.Link, err error) {
	l = l.Resolved()
	if r.Sender == r.Recipient {
		return out, nil, fmt.Errorf("%w: PID %d cannot befriend itself", types.FPDInvalidPrincipalID, r.Sender)
	}
	err = f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		link = nil
		if err := lockPlayers(ctx, tx, r.Sender, r.Recipient); err != nil {
			return err
		}
		if n, err := count(ctx, tx, `SELECT COUNT(*) FROM friends_links WHERE pid = ? AND friend = ?`, int64(r.Sender), int64(r.Recipient)); err != nil {
			return err
		} else if n > 0 {
			return fmt.Errorf("%w: PID %d is a friend of PID %d already", types.FPDFriendAlreadyAdded, r.Recipient, r.Sender)
		}
		if b, err := blocked(ctx, tx, r.Recipient, r.Sender); err != nil {
			return err
		} else if b {
			return fmt.Errorf("%w: PID %d blocked PID %d", types.FPDFriendRequestBlocked, r.Recipient, r.Sender)
		}
		if b, err := blocked(ctx, tx, r.Sender, r.Recipient); err != nil {
			return err
		} else if b {
			return fmt.Errorf("%w: PID %d is on PID %d's block list", types.FPDBlacklistedByMe, r.Recipient, r.Sender)
		}
		back, err := pending(ctx, tx, r.Recipient, r.Sender, now)
		if err != nil {
			return err
		}
		if back != nil {
			// Both asked: they are friends.
			lk, err := befriend(ctx, tx, r.Sender, r.Recipient, now, l)
			if err != nil {
				return err
			}
			out, link = *back, &lk
			return nil
		}
		if n, err := count(ctx, tx, `SELECT COUNT(*) FROM friends_links WHERE pid = ?`, int64(r.Sender)); err != nil {
			return err
		} else if n >= l.MaxFriends {
			return fmt.Errorf("%w: PID %d has %d friends (at most %d)", types.FPDMyFriendListLimitExceed, r.Sender, n, l.MaxFriends)
		}
		// Expired requests do not count against the limits; a replaced
		// one neither.
		if n, err := count(ctx, tx, `SELECT COUNT(*) FROM friends_requests WHERE sender = ? AND recipient <> ? AND expires > ?`,
			int64(r.Sender), int64(r.Recipient), now.UnixNano()); err != nil {
			return err
		} else if n >= l.MaxSent {
			return fmt.Errorf("%w: PID %d has %d pending requests out (at most %d)", types.FPDRequestLimitExceed, r.Sender, n, l.MaxSent)
		}
		if n, err := count(ctx, tx, `SELECT COUNT(*) FROM friends_requests WHERE recipient = ? AND sender <> ? AND expires > ?`,
			int64(r.Recipient), int64(r.Sender), now.UnixNano()); err != nil {
			return err
		} else if n >= l.MaxReceived {
			return fmt.Errorf("%w: PID %d has %d pending requests in (at most %d)", types.FPDRequestLimitExceed, r.Recipient, n, l.MaxReceived)
		}
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO friends_requests (sender, recipient, message, title, version, sent, expires, received)
			VALUES (?, ?, ?, ?, ?, ?, ?, 0)
			ON CONFLICT (sender, recipient) DO UPDATE SET message = excluded.message, title = excluded.title,
				version = excluded.version, sent = excluded.sent, expires = excluded.expires, received = 0
			RETURNING id`, int64(r.Sender), int64(r.Recipient), r.Message, int64(r.Game.TitleID), int64(r.Game.Version),
			now.UnixNano(), nanos(r.Expires)).Scan(&id); err != nil {
			return err
		}
		out = r
		out.ID, out.Sent, out.Received = uint64(id), now.UTC(), false
		return nil
	})
	return out, link, f.fail("send request", err)
}

// Requests implements friends.Store.
func (f *Friends) Requests(ctx context.Context, pid types.PID, now time.Time) (sent, received []friends.Request, err error) {
	err = f.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		if sent, err = readRequests(ctx, q, `sender = ? AND expires > ?`, int64(pid), now.UnixNano()); err != nil {
			return err
		}
		received, err = readRequests(ctx, q, `recipient = ? AND expires > ?`, int64(pid), now.UnixNano())
		return err
	})
	return sent, received, f.fail("requests", err)
}

func readRequest(ctx context.Context, q Querier, id uint64) (friends.Request, error) {
	rs, err := readRequests(ctx, q, `id = ?`, int64(id))
	if err != nil {
		return friends.Request{}, err
	}
	if len(rs) == 0 {
		return friends.Request{}, fmt.Errorf("%w: no friend request %d", types.FPDInvalidMessageID, id)
	}
	return rs[0], nil
}

// AcceptRequest implements friends.Store.
func (f *Friends) AcceptRequest(ctx context.Context, pid types.PID, id uint64, now time.Time, l friends.Limits) (r friends.Request, link friends.Link, err error) {
	l = l.Resolved()
	err = f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if r, err = readRequest(ctx, tx, id); err != nil {
			return err
		}
		if r.Recipient != pid {
			return fmt.Errorf("%w: friend request %d is for PID %d", types.FPDMessageIsNotForMe, id, r.Recipient)
		}
		if !r.Expires.IsZero() && !now.Before(r.Expires) {
			return fmt.Errorf("%w: friend request %d expired %s", types.FPDInvalidMessageID, id, r.Expires.Format(time.RFC3339))
		}
		if err := lockPlayers(ctx, tx, r.Sender, r.Recipient); err != nil {
			return err
		}
		link, err = befriend(ctx, tx, r.Recipient, r.Sender, now, l)
		return err
	})
	return r, link, f.fail("accept request", err)
}

// DeleteRequest implements friends.Store.
func (f *Friends) DeleteRequest(ctx context.Context, pid types.PID, id uint64, sender bool) (r friends.Request, err error) {
	err = f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if r, err = readRequest(ctx, tx, id); err != nil {
			return err
		}
		if sender && r.Sender != pid {
			return fmt.Errorf("%w: friend request %d was sent by PID %d", types.FPDMessageIsNotMine, id, r.Sender)
		}
		if !sender && r.Recipient != pid {
			return fmt.Errorf("%w: friend request %d is for PID %d", types.FPDMessageIsNotForMe, id, r.Recipient)
		}
		_, err := tx.Exec(ctx, `DELETE FROM friends_requests WHERE id = ?`, int64(id))
		return err
	})
	return r, f.fail("delete request", err)
}

// MarkReceived implements friends.Store.
func (f *Friends) MarkReceived(ctx context.Context, pid types.PID, ids []uint64) error {
	err := f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		for _, id := range ids {
			if _, err := tx.Exec(ctx, `UPDATE friends_requests SET received = 1 WHERE id = ? AND recipient = ?`, int64(id), int64(pid)); err != nil {
				return err
			}
		}
		return nil
	})
	return f.fail("mark received", err)
}

// ExpireRequests implements friends.Store.
func (f *Friends) ExpireRequests(ctx context.Context, now time.Time) (n int64, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		n, err = q.Exec(ctx, `DELETE FROM friends_requests WHERE expires <= ?`, now.UnixNano())
		return err
	})
	return n, f.fail("expire requests", err)
}

func unfriend(ctx context.Context, tx Querier, a, b types.PID) (int64, error) {
	n, err := tx.Exec(ctx, `DELETE FROM friends_links WHERE (pid = ? AND friend = ?) OR (pid = ? AND friend = ?)`,
		int64(a), int64(b), int64(b), int64(a))
	if err != nil {
		return 0, err
	}
	m, err := tx.Exec(ctx, `DELETE FROM friends_requests WHERE (sender = ? AND recipient = ?) OR (sender = ? AND recipient = ?)`,
		int64(a), int64(b), int64(b), int64(a))
	return n + m, err
}

// RemoveFriend implements friends.Store.
func (f *Friends) RemoveFriend(ctx context.Context, pid, other types.PID) (ok bool, err error) {
	err = f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		n, err := unfriend(ctx, tx, pid, other)
		ok = n > 0
		return err
	})
	return ok, f.fail("remove friend", err)
}

// AddBlock implements friends.Store.
func (f *Friends) AddBlock(ctx context.Context, pid types.PID, b friends.Block, l friends.Limits) (friends.Block, error) {
	l = l.Resolved()
	if b.PID == pid || b.PID == 0 {
		return b, fmt.Errorf("%w: PID %d cannot block PID %d", types.FPDInvalidPrincipalID, pid, b.PID)
	}
	err := f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if err := lockPlayers(ctx, tx, pid); err != nil {
			return err
		}
		if n, err := count(ctx, tx, `SELECT COUNT(*) FROM friends_blocks WHERE pid = ? AND blocked <> ?`, int64(pid), int64(b.PID)); err != nil {
			return err
		} else if n >= l.MaxBlocks {
			return fmt.Errorf("%w: PID %d blocks %d players (at most %d)", types.FPDRequestLimitExceed, pid, n, l.MaxBlocks)
		}
		if _, err := unfriend(ctx, tx, pid, b.PID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO friends_blocks (pid, blocked, title, version, since) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (pid, blocked) DO UPDATE SET title = excluded.title, version = excluded.version`,
			int64(pid), int64(b.PID), int64(b.Game.TitleID), int64(b.Game.Version), nanos(b.Since))
		return err
	})
	return b, f.fail("add block", err)
}

// RemoveBlock implements friends.Store.
func (f *Friends) RemoveBlock(ctx context.Context, pid, other types.PID) (ok bool, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		n, err := q.Exec(ctx, `DELETE FROM friends_blocks WHERE pid = ? AND blocked = ?`, int64(pid), int64(other))
		ok = n > 0
		return err
	})
	return ok, f.fail("remove block", err)
}

// SetBlocks implements friends.Store.
func (f *Friends) SetBlocks(ctx context.Context, pid types.PID, list []types.PID, now time.Time, l friends.Limits) error {
	l = l.Resolved()
	if len(list) > l.MaxBlocks {
		return fmt.Errorf("%w: a block list of %d players (at most %d)", types.FPDRequestLimitExceed, len(list), l.MaxBlocks)
	}
	err := f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		old, err := readBlocks(ctx, tx, pid)
		if err != nil {
			return err
		}
		keep := map[types.PID]bool{}
		for _, p := range list {
			keep[p] = true
		}
		for _, b := range old {
			if !keep[b.PID] {
				if _, err := tx.Exec(ctx, `DELETE FROM friends_blocks WHERE pid = ? AND blocked = ?`, int64(pid), int64(b.PID)); err != nil {
					return err
				}
			}
		}
		for _, p := range list {
			if p == pid || p == 0 {
				continue
			}
			if _, err := unfriend(ctx, tx, pid, p); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO friends_blocks (pid, blocked, title, version, since) VALUES (?, ?, 0, 0, ?)
				ON CONFLICT (pid, blocked) DO NOTHING`, int64(pid), int64(p), now.UnixNano()); err != nil {
				return err
			}
		}
		return nil
	})
	return f.fail("set blocks", err)
}

func readBlocks(ctx context.Context, q Querier, pid types.PID) ([]friends.Block, error) {
	rows, err := q.Query(ctx, `SELECT blocked, title, version, since FROM friends_blocks WHERE pid = ? ORDER BY since, blocked`, int64(pid))
	if err != nil {
		return nil, err
	}
	var out []friends.Block
	for rows.Next() {
		var p, title, version, since int64
		if err := rows.Scan(&p, &title, &version, &since); err != nil {
			return nil, closeRows(rows, err)
		}
		out = append(out, friends.Block{PID: types.PID(p), Game: friends.GameKey{TitleID: uint64(title), Version: uint16(version)}, Since: fromNanos(since)})
	}
	return out, closeRows(rows, nil)
}

// Blocks implements friends.Store.
func (f *Friends) Blocks(ctx context.Context, pid types.PID) (out []friends.Block, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out, err = readBlocks(ctx, q, pid)
		return err
	})
	return out, f.fail("blocks", err)
}

// Blocked implements friends.Store.
func (f *Friends) Blocked(ctx context.Context, by, pid types.PID) (ok bool, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		ok, err = blocked(ctx, q, by, pid)
		return err
	})
	return ok, f.fail("blocked", err)
}

// SetPresence implements friends.Store.
func (f *Friends) SetPresence(ctx context.Context, pid types.PID, node string, p friends.Presence) error {
	data, err := json.Marshal(&p)
	if err != nil {
		return err
	}
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO friends_presence (pid, node, data, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT (pid) DO UPDATE SET node = excluded.node, data = excluded.data, updated = excluded.updated`,
			int64(pid), node, string(data), nanos(p.Updated))
		return err
	})
	return f.fail("set presence", err)
}

// ClearPresence implements friends.Store.
func (f *Friends) ClearPresence(ctx context.Context, pid types.PID, node string) (ok bool, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		n, err := q.Exec(ctx, `DELETE FROM friends_presence WHERE pid = ? AND node = ?`, int64(pid), node)
		ok = n > 0
		return err
	})
	return ok, f.fail("clear presence", err)
}

// Presences implements friends.Store.
func (f *Friends) Presences(ctx context.Context, pids []types.PID) (map[types.PID]friends.NodePresence, error) {
	out := make(map[types.PID]friends.NodePresence, len(pids))
	if len(pids) == 0 {
		return out, nil
	}
	cond, args := inList("pid", pids)
	err := f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, `SELECT pid, node, data FROM friends_presence WHERE `+cond, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var pid int64
			var np friends.NodePresence
			var data string
			if err := rows.Scan(&pid, &np.Node, &data); err != nil {
				return closeRows(rows, err)
			}
			if err := json.Unmarshal([]byte(data), &np.Presence); err != nil {
				return closeRows(rows, fmt.Errorf("presence of PID %d: %w", pid, err))
			}
			out[types.PID(pid)] = np
		}
		return closeRows(rows, nil)
	})
	return out, f.fail("presences", err)
}

// ClearNode implements friends.Store.
func (f *Friends) ClearNode(ctx context.Context, node string) (pids []types.PID, err error) {
	err = f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		pids = nil
		rows, err := tx.Query(ctx, `SELECT pid FROM friends_presence WHERE node = ?`, node)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p int64
			if err := rows.Scan(&p); err != nil {
				return closeRows(rows, err)
			}
			pids = append(pids, types.PID(p))
		}
		if err := closeRows(rows, nil); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM friends_presence WHERE node = ?`, node)
		return err
	})
	return pids, f.fail("clear node", err)
}

// AddNotification implements friends.Store.
func (f *Friends) AddNotification(ctx context.Context, n friends.Notification, max int) (friends.Notification, error) {
	if max <= 0 {
		return n, fmt.Errorf("%w: keeping at most %d notifications", types.FPDInvalidArgument, max)
	}
	err := f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO friends_notifications (pid, type, sender, text, at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			int64(n.PID), int64(n.Type), int64(n.From), n.Text, nanos(n.At)).Scan(&id); err != nil {
			return err
		}
		n.ID = uint64(id)
		// The newest max stay: delete below the max-th newest id.
		var cut int64
		err := tx.QueryRow(ctx, `SELECT id FROM friends_notifications WHERE pid = ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
			int64(n.PID), int64(max-1)).Scan(&cut)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM friends_notifications WHERE pid = ? AND id < ?`, int64(n.PID), cut)
		return err
	})
	return n, f.fail("add notification", err)
}

// Notifications implements friends.Store.
func (f *Friends) Notifications(ctx context.Context, pid types.PID) (out []friends.Notification, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out = nil
		rows, err := q.Query(ctx, `SELECT id, type, sender, text, at FROM friends_notifications WHERE pid = ? ORDER BY id`, int64(pid))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, typ, sender, at int64
			n := friends.Notification{PID: pid}
			if err := rows.Scan(&id, &typ, &sender, &n.Text, &at); err != nil {
				return closeRows(rows, err)
			}
			n.ID, n.Type, n.From, n.At = uint64(id), uint32(typ), types.PID(sender), fromNanos(at)
			out = append(out, n)
		}
		return closeRows(rows, nil)
	})
	return out, f.fail("notifications", err)
}

// DeleteNotifications implements friends.Store.
func (f *Friends) DeleteNotifications(ctx context.Context, pid types.PID, ids []uint64) (n int, err error) {
	err = f.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		n = 0
		for _, id := range ids {
			m, err := tx.Exec(ctx, `DELETE FROM friends_notifications WHERE id = ? AND pid = ?`, int64(id), int64(pid))
			if err != nil {
				return err
			}
			n += int(m)
		}
		return nil
	})
	return n, f.fail("delete notifications", err)
}

// ExpireNotifications implements friends.Store.
func (f *Friends) ExpireNotifications(ctx context.Context, before time.Time) (n int64, err error) {
	err = f.db.Do(ctx, func(ctx context.Context, q Querier) error {
		n, err = q.Exec(ctx, `DELETE FROM friends_notifications WHERE at < ?`, before.UnixNano())
		return err
	})
	return n, f.fail("expire notifications", err)
}
