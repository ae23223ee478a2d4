package accounts

import (
	"context"
	"database/sql"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/datastore"
)

// The datastore component's schema (its statements and the Go around them are
// internal/sqlstore's, shared with nex/pgstore). Tags and access recipients are kept
// twice: as JSON in the object's row (what reads return, in order) and as rows
// of their own (what searches look up through an index).
func init() { registerSchema("datastore", datastoreV1, datastoreV2, datastoreV3) }

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

// datastoreV3 indexes what the sweeper looks for (datastore.Store.Sweep):
// pending objects by age and unused uploads by expiry (the conditions
// written as the sweep's statements write them, so the planner sees they
// match).
const datastoreV3 = `
CREATE INDEX datastore_objects_pending ON datastore_objects (created) WHERE pending = true;
CREATE INDEX datastore_uploads_expires ON datastore_uploads (expires) WHERE used = false;
`

// DataStoreStore is the SQLite implementation of datastore.Store, in the
// account store's database.
type DataStoreStore struct {
	*sqlstore.DataStore
	db *sql.DB
	// Timeout bounds each call; default DefaultQueryTimeout.
	Timeout time.Duration
}

var _ datastore.Store = (*DataStoreStore)(nil)

// sqliteDataStore is what SQLite does its own way: no row locks (a write
// transaction holds the database) and uploads in rowid order.
var sqliteDataStore = sqlstore.DataStoreDialect{UploadOrder: "rowid"}

// DataStore returns the DataStore metadata store in s's database.
func (s *Store) DataStore() *DataStoreStore {
	d := &DataStoreStore{db: s.db}
	d.DataStore = sqlstore.NewDataStore("accounts", dsDB{d}, sqliteDataStore)
	return d
}

// dsDB is the store's database as internal/sqlstore uses it (its
// sqlstore.DB); each call is bounded by Timeout.
type dsDB struct{ d *DataStoreStore }

// Do runs f on the pool.
func (b dsDB) Do(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	ctx, cancel := withTimeout(ctx, b.d.Timeout)
	defer cancel()
	return f(ctx, sqlstore.Std(b.d.db))
}

// Snapshot runs f in a read transaction.
func (b dsDB) Snapshot(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	ctx, cancel := withTimeout(ctx, b.d.Timeout)
	defer cancel()
	tx, err := b.d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(ctx, sqlstore.Std(tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// Write runs f in a write transaction (beginWrite).
func (b dsDB) Write(ctx context.Context, f func(ctx context.Context, tx sqlstore.Querier) error) error {
	ctx, cancel := withTimeout(ctx, b.d.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, b.d.db)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(ctx, sqlstore.Std(tx)); err != nil {
		return err
	}
	return tx.Commit()
}
