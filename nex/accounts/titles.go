package accounts

import (
	"context"
	"database/sql"

	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The delivered messages' schema (messagedelivery.Store, internal/sqlstore's
// Messages): each message once, and the recipients it is kept for.
func init() { registerSchema("messages", messagesV1) }

const messagesV1 = `
CREATE TABLE md_messages (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	sender  INTEGER NOT NULL,
	class   TEXT NOT NULL,
	body    BLOB NOT NULL,
	created INTEGER NOT NULL
);
CREATE TABLE md_inbox (
	pid INTEGER NOT NULL,
	id  INTEGER NOT NULL,
	PRIMARY KEY (pid, id)
) WITHOUT ROWID;
`

// Messages returns the delivered messages (MessageDelivery) in s's database.
func (s *Store) Messages() *sqlstore.Messages {
	return sqlstore.NewMessages("accounts", plainDB{s.db})
}

// plainDB is the store's database as internal/sqlstore uses it, each call
// bounded by DefaultQueryTimeout.
type plainDB struct{ db *sql.DB }

// Do runs f on the pool.
func (b plainDB) Do(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	ctx, cancel := withTimeout(ctx, 0)
	defer cancel()
	return f(ctx, sqlstore.Std(b.db))
}

// Snapshot runs f in a read transaction.
func (b plainDB) Snapshot(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	ctx, cancel := withTimeout(ctx, 0)
	defer cancel()
	tx, err := b.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
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
func (b plainDB) Write(ctx context.Context, f func(ctx context.Context, tx sqlstore.Querier) error) error {
	ctx, cancel := withTimeout(ctx, 0)
	defer cancel()
	tx, err := beginWrite(ctx, b.db)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(ctx, sqlstore.Std(tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// The unique ids' schema (utility.Store, internal/sqlstore's UniqueIDs).
func init() { registerSchema("unique_ids", uniqueIDsV1) }

const uniqueIDsV1 = `
CREATE TABLE ut_unique_ids (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	password INTEGER NOT NULL,
	created  INTEGER NOT NULL
);
CREATE TABLE ut_associations (
	pid INTEGER NOT NULL,
	seq INTEGER NOT NULL,
	id  INTEGER NOT NULL,
	PRIMARY KEY (pid, seq)
) WITHOUT ROWID;
`

// UniqueIDs returns Utility's unique ids in s's database.
func (s *Store) UniqueIDs() *sqlstore.UniqueIDs {
	return sqlstore.NewUniqueIDs("accounts", plainDB{s.db})
}

// Storage Manager's schema (storagemanager.Store, internal/sqlstore's Slots).
func init() { registerSchema("storage_manager", storageManagerV1) }

const storageManagerV1 = `
CREATE TABLE sm_unique_ids (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	pid      INTEGER NOT NULL,
	slot     INTEGER NOT NULL,
	has_card INTEGER NOT NULL,
	card     INTEGER NOT NULL,
	created  INTEGER NOT NULL,
	UNIQUE (pid, slot, has_card, card)
);
`

// Slots returns Storage Manager's unique ids in s's database.
func (s *Store) Slots() *sqlstore.Slots { return sqlstore.NewSlots("accounts", plainDB{s.db}) }
