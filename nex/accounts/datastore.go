package accounts

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// The datastore component's schema. Tags and access recipients are kept
// twice: as JSON in the object's row (what reads return, in order) and as rows
// of their own (what searches look up through an index).
func init() { registerSchema("datastore", datastoreV1, datastoreV2) }

const datastoreV1 = `
CREATE TABLE datastore_objects (
	data_id          INTEGER PRIMARY KEY AUTOINCREMENT,
	owner            INTEGER NOT NULL,
	size             INTEGER NOT NULL,
	name             TEXT NOT NULL,
	data_type        INTEGER NOT NULL,
	meta_binary      BLOB NOT NULL,
	permission       INTEGER NOT NULL,
	recipients       TEXT NOT NULL,
	del_permission   INTEGER NOT NULL,
	del_recipients   TEXT NOT NULL,
	flag             INTEGER NOT NULL,
	period           INTEGER NOT NULL,
	refer_data_id    INTEGER NOT NULL,
	tags             TEXT NOT NULL,
	status           INTEGER NOT NULL,
	referred_cnt     INTEGER NOT NULL,
	created          INTEGER NOT NULL,
	updated          INTEGER NOT NULL,
	referred         INTEGER NOT NULL,
	expire           INTEGER NOT NULL,
	access_password  INTEGER NOT NULL,
	update_password  INTEGER NOT NULL,
	version          INTEGER NOT NULL,
	pending          INTEGER NOT NULL,
	persistence_slot INTEGER NOT NULL,
	ratings          TEXT NOT NULL
);
CREATE INDEX datastore_objects_owner ON datastore_objects (owner, data_type, data_id);
CREATE INDEX datastore_objects_type ON datastore_objects (data_type, data_id);
CREATE INDEX datastore_objects_created ON datastore_objects (created, data_id);
CREATE INDEX datastore_objects_updated ON datastore_objects (updated, data_id);
CREATE UNIQUE INDEX datastore_objects_slot ON datastore_objects (owner, persistence_slot) WHERE persistence_slot != 65535;
CREATE TABLE datastore_tags (
	data_id INTEGER NOT NULL,
	tag     TEXT NOT NULL,
	PRIMARY KEY (data_id, tag)
);
CREATE INDEX datastore_tags_tag ON datastore_tags (tag, data_id);
CREATE TABLE datastore_recipients (
	data_id INTEGER NOT NULL,
	pid     INTEGER NOT NULL,
	PRIMARY KEY (data_id, pid)
);
CREATE INDEX datastore_recipients_pid ON datastore_recipients (pid, data_id);
CREATE TABLE datastore_uploads (
	token   TEXT PRIMARY KEY,
	data_id INTEGER NOT NULL,
	version INTEGER NOT NULL,
	size    INTEGER NOT NULL,
	expires INTEGER NOT NULL,
	used    INTEGER NOT NULL
);
CREATE INDEX datastore_uploads_object ON datastore_uploads (data_id, version, used);
`

// datastoreV2 adds the rating logs (one row per rater and rating slot: what
// GetRatingWithLog answers and rating locks are decided on) and the
// notifications of new arrivals (GetNewArrivedNotifications).
const datastoreV2 = `
CREATE TABLE datastore_rating_logs (
	data_id      INTEGER NOT NULL,
	slot         INTEGER NOT NULL,
	pid          INTEGER NOT NULL,
	value        INTEGER NOT NULL,
	rated_at     INTEGER NOT NULL,
	lock_expires INTEGER NOT NULL,
	resets       INTEGER NOT NULL,
	PRIMARY KEY (data_id, slot, pid)
);
CREATE TABLE datastore_notifications (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	recipient INTEGER NOT NULL,
	data_id   INTEGER NOT NULL,
	created   INTEGER NOT NULL
);
CREATE INDEX datastore_notifications_recipient ON datastore_notifications (recipient, id);
CREATE INDEX datastore_notifications_object ON datastore_notifications (data_id);
`

// DataStoreStore is the SQLite implementation of datastore.Store, in the
// account store's database.
type DataStoreStore struct {
	db *sql.DB
	// Timeout bounds each call; default DefaultQueryTimeout.
	Timeout time.Duration
}

var _ datastore.Store = (*DataStoreStore)(nil)

// DataStore returns the DataStore metadata store in s's database.
func (s *Store) DataStore() *DataStoreStore { return &DataStoreStore{db: s.db} }

const objectColumns = `o.data_id, o.owner, o.size, o.name, o.data_type, o.meta_binary, o.permission, o.recipients,
	o.del_permission, o.del_recipients, o.flag, o.period, o.refer_data_id, o.tags, o.status, o.referred_cnt, o.created,
	o.updated, o.referred, o.expire, o.access_password, o.update_password, o.version, o.pending, o.persistence_slot, o.ratings`

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func scanObject(sc interface{ Scan(...any) error }) (datastore.Object, error) {
	var o datastore.Object
	var id, owner, accessPW, updatePW int64
	var recips, delRecips, tags, ratings string
	var created, updated, referred, expire int64
	if err := sc.Scan(&id, &owner, &o.Size, &o.Name, &o.DataType, &o.MetaBinary, &o.Permission.Permission, &recips,
		&o.DelPermission.Permission, &delRecips, &o.Flag, &o.Period, &o.ReferDataID, &tags, &o.Status, &o.ReferredCnt,
		&created, &updated, &referred, &expire, &accessPW, &updatePW, &o.Version, &o.Pending, &o.PersistenceSlot, &ratings); err != nil {
		return o, err
	}
	o.DataID, o.Owner, o.AccessPassword, o.UpdatePassword = uint64(id), types.PID(owner), uint64(accessPW), uint64(updatePW)
	o.Created, o.Updated, o.Referred, o.Expire = fromUnixNano(created), fromUnixNano(updated), fromUnixNano(referred), fromUnixNano(expire)
	for _, j := range []struct {
		s string
		v any
	}{{recips, &o.Permission.RecipientIDs}, {delRecips, &o.DelPermission.RecipientIDs}, {tags, &o.Tags}, {ratings, &o.Ratings}} {
		if err := json.Unmarshal([]byte(j.s), j.v); err != nil {
			return o, fmt.Errorf("object %d: corrupt column: %w", id, err)
		}
	}
	return o, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// objectValues are the columns after data_id, in objectColumns' order.
func objectValues(o *datastore.Object) []any {
	return []any{int64(o.Owner), o.Size, o.Name, o.DataType, nonNil(o.MetaBinary), o.Permission.Permission,
		jsonText(nonNil(o.Permission.RecipientIDs)), o.DelPermission.Permission, jsonText(nonNil(o.DelPermission.RecipientIDs)),
		o.Flag, o.Period, o.ReferDataID, jsonText(nonNil(o.Tags)), o.Status, o.ReferredCnt, unixNano(o.Created),
		unixNano(o.Updated), unixNano(o.Referred), unixNano(o.Expire), int64(o.AccessPassword), int64(o.UpdatePassword),
		o.Version, o.Pending, o.PersistenceSlot, jsonText(nonNil(o.Ratings))}
}

// writeIndexRows replaces the tag and recipient rows of an object.
func writeIndexRows(ctx context.Context, tx *writeTx, o *datastore.Object) error {
	id := int64(o.DataID)
	if _, err := tx.ExecContext(ctx, `DELETE FROM datastore_tags WHERE data_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM datastore_recipients WHERE data_id = ?`, id); err != nil {
		return err
	}
	for _, t := range o.Tags {
		if _, err := tx.ExecContext(ctx, `INSERT INTO datastore_tags (data_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, t); err != nil {
			return err
		}
	}
	for _, p := range o.Permission.RecipientIDs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO datastore_recipients (data_id, pid) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, int64(p)); err != nil {
			return err
		}
	}
	return nil
}

func deleteObjectRows(ctx context.Context, tx *writeTx, id uint64) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM datastore_objects WHERE data_id = ?`, int64(id))
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	for _, q := range []string{`DELETE FROM datastore_tags WHERE data_id = ?`, `DELETE FROM datastore_recipients WHERE data_id = ?`,
		`DELETE FROM datastore_uploads WHERE data_id = ?`, `DELETE FROM datastore_rating_logs WHERE data_id = ?`,
		`DELETE FROM datastore_notifications WHERE data_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, int64(id)); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// CreateObject implements datastore.Store.
func (d *DataStoreStore) CreateObject(ctx context.Context, o *datastore.Object, deleteLast bool) ([]datastore.Object, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, d.db)
	if err != nil {
		return nil, fmt.Errorf("accounts: create object: %w", err)
	}
	defer tx.Rollback()
	var deleted []datastore.Object
	if o.PersistenceSlot != datastore.NoPersistenceSlot {
		prev, err := scanObject(tx.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM datastore_objects o WHERE o.owner = ? AND o.persistence_slot = ? AND o.persistence_slot != 65535`,
			int64(o.Owner), o.PersistenceSlot))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, fmt.Errorf("accounts: create object: persistence slot: %w", err)
		case deleteLast:
			if _, err := deleteObjectRows(ctx, tx, prev.DataID); err != nil {
				return nil, fmt.Errorf("accounts: create object: replace slot: %w", err)
			}
			deleted = append(deleted, prev)
		default:
			if _, err := tx.ExecContext(ctx, `UPDATE datastore_objects SET persistence_slot = 65535 WHERE data_id = ?`, int64(prev.DataID)); err != nil {
				return nil, fmt.Errorf("accounts: create object: free slot: %w", err)
			}
		}
	}
	cols := strings.ReplaceAll(strings.TrimPrefix(objectColumns, "o.data_id, "), "o.", "")
	vals := objectValues(o)
	if o.DataID != 0 {
		// A chosen id (PostMetaBinaryWithDataId): AUTOINCREMENT moves its
		// sequence past it, so later ids never meet it.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM datastore_objects WHERE data_id = ?`, int64(o.DataID)).Scan(&n); err != nil {
			return nil, fmt.Errorf("accounts: create object: %w", err)
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: object %d", datastore.ErrExists, o.DataID)
		}
		cols = "data_id, " + cols
		vals = append([]any{int64(o.DataID)}, vals...)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO datastore_objects (`+cols+`) VALUES (?`+strings.Repeat(", ?", len(vals)-1)+`)`, vals...)
	if err != nil {
		return nil, fmt.Errorf("accounts: create object: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("accounts: create object: %w", err)
	}
	o.DataID = uint64(id)
	if err := writeIndexRows(ctx, tx, o); err != nil {
		return nil, fmt.Errorf("accounts: create object: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("accounts: create object: %w", err)
	}
	return deleted, nil
}

func (d *DataStoreStore) one(ctx context.Context, what, where string, args ...any) (datastore.Object, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	o, err := scanObject(d.db.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM datastore_objects o WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("%w: %s", datastore.ErrNotFound, what)
	}
	if err != nil {
		return o, fmt.Errorf("accounts: read %s: %w", what, err)
	}
	return o, nil
}

// Object implements datastore.Store.
func (d *DataStoreStore) Object(ctx context.Context, id uint64) (datastore.Object, error) {
	return d.one(ctx, fmt.Sprintf("object %d", id), `o.data_id = ?`, int64(id))
}

// ObjectInSlot implements datastore.Store.
func (d *DataStoreStore) ObjectInSlot(ctx context.Context, owner types.PID, slot uint16) (datastore.Object, error) {
	return d.one(ctx, fmt.Sprintf("persistence slot %d of PID %d", slot, owner), `o.owner = ? AND o.persistence_slot = ? AND o.persistence_slot != 65535`, int64(owner), slot)
}

// Update implements datastore.Store.
func (d *DataStoreStore) Update(ctx context.Context, id uint64, f func(o *datastore.Object) error) (datastore.Object, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, d.db)
	if err != nil {
		return datastore.Object{}, fmt.Errorf("accounts: update object %d: %w", id, err)
	}
	defer tx.Rollback()
	o, err := updateObject(ctx, tx, id, f)
	if err != nil {
		return o, err
	}
	if err := tx.Commit(); err != nil {
		return o, fmt.Errorf("accounts: update object %d: %w", id, err)
	}
	return o, nil
}

// updateObject is Update inside tx.
func updateObject(ctx context.Context, tx *writeTx, id uint64, f func(o *datastore.Object) error) (datastore.Object, error) {
	o, err := scanObject(tx.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM datastore_objects o WHERE o.data_id = ?`, int64(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("%w: object %d", datastore.ErrNotFound, id)
	}
	if err != nil {
		return o, fmt.Errorf("accounts: update object %d: %w", id, err)
	}
	before := o
	before.Tags = slices.Clone(o.Tags)
	before.Permission.RecipientIDs = slices.Clone(o.Permission.RecipientIDs)
	if err := f(&o); err != nil {
		return o, err
	}
	o.DataID = id
	cols := strings.Split(strings.ReplaceAll(strings.TrimPrefix(objectColumns, "o.data_id, "), "o.", ""), ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i]) + " = ?"
	}
	if _, err := tx.ExecContext(ctx, `UPDATE datastore_objects SET `+strings.Join(cols, ", ")+` WHERE data_id = ?`,
		append(objectValues(&o), int64(id))...); err != nil {
		return o, fmt.Errorf("accounts: update object %d: %w", id, err)
	}
	if !slices.Equal(before.Tags, o.Tags) || !slices.Equal(before.Permission.RecipientIDs, o.Permission.RecipientIDs) {
		if err := writeIndexRows(ctx, tx, &o); err != nil {
			return o, fmt.Errorf("accounts: update object %d: %w", id, err)
		}
	}
	return o, nil
}

// UpdateObjects implements datastore.Store.
func (d *DataStoreStore) UpdateObjects(ctx context.Context, ids []uint64, f func(i int, o *datastore.Object) error) error {
	targets := make([]datastore.RatingTarget, len(ids))
	for i, id := range ids {
		targets[i].DataID = id
	}
	return d.batch(ctx, 0, targets, false, func(i int, o *datastore.Object, _ *datastore.RatingLog) error { return f(i, o) })
}

// Rate implements datastore.Store.
func (d *DataStoreStore) Rate(ctx context.Context, rater types.PID, targets []datastore.RatingTarget, f func(i int, o *datastore.Object, log *datastore.RatingLog) error) error {
	return d.batch(ctx, rater, targets, true, f)
}

// batch updates each target's object in one transaction, with the rater's
// rating log of its slot when withLog.
func (d *DataStoreStore) batch(ctx context.Context, rater types.PID, targets []datastore.RatingTarget, withLog bool,
	f func(i int, o *datastore.Object, log *datastore.RatingLog) error) error {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, d.db)
	if err != nil {
		return fmt.Errorf("accounts: update objects: %w", err)
	}
	defer tx.Rollback()
	for i, t := range targets {
		var log datastore.RatingLog
		if withLog {
			log, err = scanRatingLog(tx.QueryRowContext(ctx, `SELECT value, rated_at, lock_expires, resets FROM datastore_rating_logs
				WHERE data_id = ? AND slot = ? AND pid = ?`, int64(t.DataID), t.Slot, int64(rater)))
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("accounts: read rating log: %w", err)
			}
		}
		_, err := updateObject(ctx, tx, t.DataID, func(o *datastore.Object) error { return f(i, o, &log) })
		if err != nil {
			return &datastore.ItemError{Index: i, Err: err}
		}
		if withLog && log.Rated {
			if _, err := tx.ExecContext(ctx, `INSERT INTO datastore_rating_logs (data_id, slot, pid, value, rated_at, lock_expires, resets)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (data_id, slot, pid) DO UPDATE SET value = excluded.value,
				rated_at = excluded.rated_at, lock_expires = excluded.lock_expires, resets = excluded.resets`,
				int64(t.DataID), t.Slot, int64(rater), log.Value, unixNano(log.At), unixNano(log.LockExpires), log.Resets); err != nil {
				return fmt.Errorf("accounts: write rating log: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("accounts: update objects: %w", err)
	}
	return nil
}

func scanRatingLog(sc interface{ Scan(...any) error }) (datastore.RatingLog, error) {
	var l datastore.RatingLog
	var at, lock int64
	if err := sc.Scan(&l.Value, &at, &lock, &l.Resets); err != nil {
		return datastore.RatingLog{}, err
	}
	l.Rated, l.At, l.LockExpires = true, fromUnixNano(at), fromUnixNano(lock)
	return l, nil
}

// RatingLog implements datastore.Store.
func (d *DataStoreStore) RatingLog(ctx context.Context, id uint64, slot int8, rater types.PID) (datastore.RatingLog, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	l, err := scanRatingLog(d.db.QueryRowContext(ctx, `SELECT value, rated_at, lock_expires, resets FROM datastore_rating_logs
		WHERE data_id = ? AND slot = ? AND pid = ?`, int64(id), slot, int64(rater)))
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("%w: rating log of object %d slot %d by PID %d", datastore.ErrNotFound, id, slot, rater)
	}
	if err != nil {
		return l, fmt.Errorf("accounts: read rating log: %w", err)
	}
	return l, nil
}

// Perpetuate implements datastore.Store.
func (d *DataStoreStore) Perpetuate(ctx context.Context, owner types.PID, slot uint16, id uint64, deleteLast bool) ([]datastore.Object, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, d.db)
	if err != nil {
		return nil, fmt.Errorf("accounts: perpetuate: %w", err)
	}
	defer tx.Rollback()
	if id != 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM datastore_objects WHERE data_id = ? AND owner = ?`, int64(id), int64(owner)).Scan(&n); err != nil {
			return nil, fmt.Errorf("accounts: perpetuate: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: object %d of PID %d", datastore.ErrNotFound, id, owner)
		}
	}
	var deleted []datastore.Object
	prev, err := scanObject(tx.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM datastore_objects o WHERE o.owner = ? AND o.persistence_slot = ? AND o.persistence_slot != 65535`,
		int64(owner), slot))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if id == 0 {
			return nil, fmt.Errorf("%w: persistence slot %d of PID %d", datastore.ErrNotFound, slot, owner)
		}
	case err != nil:
		return nil, fmt.Errorf("accounts: perpetuate: %w", err)
	case prev.DataID == id:
		return nil, tx.Commit() // already there
	case deleteLast:
		if _, err := deleteObjectRows(ctx, tx, prev.DataID); err != nil {
			return nil, fmt.Errorf("accounts: perpetuate: replace slot: %w", err)
		}
		deleted = append(deleted, prev)
	default:
		if _, err := tx.ExecContext(ctx, `UPDATE datastore_objects SET persistence_slot = 65535 WHERE data_id = ?`, int64(prev.DataID)); err != nil {
			return nil, fmt.Errorf("accounts: perpetuate: free slot: %w", err)
		}
	}
	if id != 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE datastore_objects SET persistence_slot = ? WHERE data_id = ?`, slot, int64(id)); err != nil {
			return nil, fmt.Errorf("accounts: perpetuate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("accounts: perpetuate: %w", err)
	}
	return deleted, nil
}

// AddNotifications implements datastore.Store.
func (d *DataStoreStore) AddNotifications(ctx context.Context, id uint64, recipients []types.PID, at time.Time, keep int) error {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, d.db)
	if err != nil {
		return fmt.Errorf("accounts: add notifications: %w", err)
	}
	defer tx.Rollback()
	for _, r := range recipients {
		if _, err := tx.ExecContext(ctx, `INSERT INTO datastore_notifications (recipient, data_id, created) VALUES (?, ?, ?)`,
			int64(r), int64(id), unixNano(at)); err != nil {
			return fmt.Errorf("accounts: add notifications: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM datastore_notifications WHERE recipient = ? AND id <=
			(SELECT id FROM datastore_notifications WHERE recipient = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`, int64(r), int64(r), keep); err != nil {
			return fmt.Errorf("accounts: prune notifications: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("accounts: add notifications: %w", err)
	}
	return nil
}

func scanNotification(sc interface{ Scan(...any) error }) (datastore.Notification, error) {
	var n datastore.Notification
	var id, recipient, dataID, created int64
	err := sc.Scan(&id, &recipient, &dataID, &created)
	n.ID, n.Recipient, n.DataID, n.Created = uint64(id), types.PID(recipient), uint64(dataID), fromUnixNano(created)
	return n, err
}

// Notifications implements datastore.Store.
func (d *DataStoreStore) Notifications(ctx context.Context, recipient types.PID, after uint64, limit int) ([]datastore.Notification, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	if after > math.MaxInt64 {
		return nil, nil
	}
	rows, err := d.db.QueryContext(ctx, `SELECT id, recipient, data_id, created FROM datastore_notifications
		WHERE recipient = ? AND id > ? ORDER BY id LIMIT ?`, int64(recipient), int64(after), limit)
	if err != nil {
		return nil, fmt.Errorf("accounts: read notifications: %w", err)
	}
	defer rows.Close()
	var out []datastore.Notification
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, fmt.Errorf("accounts: read notifications: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: read notifications: %w", err)
	}
	return out, nil
}

// LatestNotification implements datastore.Store.
func (d *DataStoreStore) LatestNotification(ctx context.Context, recipient types.PID) (datastore.Notification, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	n, err := scanNotification(d.db.QueryRowContext(ctx, `SELECT id, recipient, data_id, created FROM datastore_notifications
		WHERE recipient = ? ORDER BY id DESC LIMIT 1`, int64(recipient)))
	if errors.Is(err, sql.ErrNoRows) {
		return n, fmt.Errorf("%w: notifications of PID %d", datastore.ErrNotFound, recipient)
	}
	if err != nil {
		return n, fmt.Errorf("accounts: read notifications: %w", err)
	}
	return n, nil
}

// DeleteObject implements datastore.Store.
func (d *DataStoreStore) DeleteObject(ctx context.Context, id uint64) error {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, d.db)
	if err != nil {
		return fmt.Errorf("accounts: delete object %d: %w", id, err)
	}
	defer tx.Rollback()
	n, err := deleteObjectRows(ctx, tx, id)
	if err != nil {
		return fmt.Errorf("accounts: delete object %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: object %d", datastore.ErrNotFound, id)
	}
	return tx.Commit()
}

// searchWhere builds the WHERE clause of a search: live objects the viewer
// may read, then q's filters.
func searchWhere(q datastore.SearchQuery) (string, []any) {
	var b strings.Builder
	args := []any{}
	b.WriteString(`o.pending = 0 AND (o.expire = 0 OR o.expire > ?)
		AND (o.owner = ? OR o.permission = 0 OR (o.permission = 2 AND EXISTS
			(SELECT 1 FROM datastore_recipients r WHERE r.data_id = o.data_id AND r.pid = ?)))`)
	args = append(args, q.Now.UnixNano(), int64(q.Viewer), int64(q.Viewer))
	in := func(col string, n int) {
		b.WriteString(" AND " + col + " IN (?" + strings.Repeat(", ?", n-1) + ")")
	}
	if len(q.Owners) > 0 {
		in("o.owner", len(q.Owners))
		for _, p := range q.Owners {
			args = append(args, int64(p))
		}
	}
	if len(q.DataTypes) > 0 {
		in("o.data_type", len(q.DataTypes))
		for _, t := range q.DataTypes {
			args = append(args, t)
		}
	}
	for _, c := range []struct {
		cond string
		t    time.Time
	}{{"o.created >= ?", q.CreatedAfter}, {"o.created <= ?", q.CreatedBefore}, {"o.updated >= ?", q.UpdatedAfter}, {"o.updated <= ?", q.UpdatedBefore}} {
		if !c.t.IsZero() {
			b.WriteString(" AND " + c.cond)
			args = append(args, c.t.UnixNano())
		}
	}
	if q.ReferDataID != 0 {
		b.WriteString(" AND o.refer_data_id = ?")
		args = append(args, q.ReferDataID)
	}
	for _, t := range q.Tags {
		b.WriteString(" AND o.data_id IN (SELECT t.data_id FROM datastore_tags t WHERE t.tag = ?)")
		args = append(args, t)
	}
	return b.String(), args
}

// Search implements datastore.Store.
func (d *DataStoreStore) Search(ctx context.Context, q datastore.SearchQuery) ([]datastore.Object, uint32, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	where, args := searchWhere(q)
	order := "o.data_id"
	switch q.Order {
	case datastore.OrderCreated:
		order = "o.created, o.data_id"
	case datastore.OrderUpdated:
		order = "o.updated, o.data_id"
	}
	if q.Descending {
		order = strings.ReplaceAll(order, ",", " DESC,") + " DESC"
	}
	rows, err := d.db.QueryContext(ctx, `SELECT `+objectColumns+` FROM datastore_objects o WHERE `+where+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, int64(q.Limit), int64(q.Offset))...)
	if err != nil {
		return nil, 0, fmt.Errorf("accounts: search objects: %w", err)
	}
	defer rows.Close()
	var out []datastore.Object
	for rows.Next() {
		o, err := scanObject(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("accounts: search objects: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("accounts: search objects: %w", err)
	}
	var total int64
	if q.CountTotal {
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM datastore_objects o WHERE `+where, args...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("accounts: count objects: %w", err)
		}
	}
	return out, uint32(total), nil
}

// AddUpload implements datastore.Store.
func (d *DataStoreStore) AddUpload(ctx context.Context, u datastore.Upload) error {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	if _, err := d.db.ExecContext(ctx, `INSERT INTO datastore_uploads (token, data_id, version, size, expires, used) VALUES (?, ?, ?, ?, ?, 0)`,
		u.Token, int64(u.DataID), u.Version, u.Size, u.Expires.UnixNano()); err != nil {
		return fmt.Errorf("accounts: record upload: %w", err)
	}
	return nil
}

func scanUpload(sc interface{ Scan(...any) error }) (datastore.Upload, error) {
	var u datastore.Upload
	var id, exp int64
	err := sc.Scan(&u.Token, &id, &u.Version, &u.Size, &exp, &u.Used)
	u.DataID, u.Expires = uint64(id), time.Unix(0, exp)
	return u, err
}

// Upload implements datastore.Store.
func (d *DataStoreStore) Upload(ctx context.Context, token string) (datastore.Upload, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	u, err := scanUpload(d.db.QueryRowContext(ctx, `SELECT token, data_id, version, size, expires, used FROM datastore_uploads WHERE token = ?`, token))
	if errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("%w: upload", datastore.ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("accounts: read upload: %w", err)
	}
	return u, nil
}

// FinishUpload implements datastore.Store.
func (d *DataStoreStore) FinishUpload(ctx context.Context, token string, now time.Time) error {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, d.db)
	if err != nil {
		return fmt.Errorf("accounts: finish upload: %w", err)
	}
	defer tx.Rollback()
	u, err := scanUpload(tx.QueryRowContext(ctx, `SELECT token, data_id, version, size, expires, used FROM datastore_uploads WHERE token = ?`, token))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: upload", datastore.ErrNotFound)
	case err != nil:
		return fmt.Errorf("accounts: finish upload: %w", err)
	case u.Used:
		return datastore.ErrUploadUsed
	case !now.Before(u.Expires):
		return datastore.ErrUploadExpired
	}
	if _, err := tx.ExecContext(ctx, `UPDATE datastore_uploads SET used = 1 WHERE token = ?`, token); err != nil {
		return fmt.Errorf("accounts: finish upload: %w", err)
	}
	return tx.Commit()
}

// FinishedUpload implements datastore.Store.
func (d *DataStoreStore) FinishedUpload(ctx context.Context, id uint64, version uint32) (datastore.Upload, error) {
	ctx, cancel := withTimeout(ctx, d.Timeout)
	defer cancel()
	u, err := scanUpload(d.db.QueryRowContext(ctx, `SELECT token, data_id, version, size, expires, used FROM datastore_uploads
		WHERE data_id = ? AND version = ? AND used = 1 ORDER BY rowid DESC LIMIT 1`, int64(id), version))
	if errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("%w: upload of object %d version %d", datastore.ErrNotFound, id, version)
	}
	if err != nil {
		return u, fmt.Errorf("accounts: read upload: %w", err)
	}
	return u, nil
}
