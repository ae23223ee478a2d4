package accounts

import "github.com/gamewire/gamewire/internal/sqlstore"

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

// dbOf is s's database as internal/sqlstore uses it, each call bounded by
// DefaultQueryTimeout (as credentials.go does).
func dbOf(s *Store) sqlstore.DB { return dsDB{&DataStoreStore{db: s.db}} }

// Messages returns the delivered messages (MessageDelivery) in s's database.
func (s *Store) Messages() *sqlstore.Messages {
	return sqlstore.NewMessages("accounts", dbOf(s))
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
	return sqlstore.NewUniqueIDs("accounts", dbOf(s))
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
func (s *Store) Slots() *sqlstore.Slots { return sqlstore.NewSlots("accounts", dbOf(s)) }
