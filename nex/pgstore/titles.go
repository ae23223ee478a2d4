package pgstore

import "github.com/gamewire/gamewire/internal/sqlstore"

// The delivered messages' schema (messagedelivery.Store, internal/sqlstore's
// Messages), the same shape as nex/accounts' SQLite one.
func init() { registerSchema("messages", messagesV1) }

const messagesV1 = `
CREATE TABLE md_messages (
	id      BIGSERIAL PRIMARY KEY,
	sender  BIGINT NOT NULL,
	class   TEXT NOT NULL,
	body    BYTEA NOT NULL,
	created BIGINT NOT NULL
);
CREATE TABLE md_inbox (
	pid BIGINT NOT NULL,
	id  BIGINT NOT NULL,
	PRIMARY KEY (pid, id)
);
`

// Messages returns the delivered messages (MessageDelivery) on s's database.
func (s *Store) Messages() *sqlstore.Messages {
	return sqlstore.NewMessages("pgstore", pgDB{s.pool})
}

// The unique ids' schema (utility.Store, internal/sqlstore's UniqueIDs).
func init() { registerSchema("unique_ids", uniqueIDsV1) }

const uniqueIDsV1 = `
CREATE TABLE ut_unique_ids (
	id       BIGSERIAL PRIMARY KEY,
	password BIGINT NOT NULL,
	created  BIGINT NOT NULL
);
CREATE TABLE ut_associations (
	pid BIGINT NOT NULL,
	seq INTEGER NOT NULL,
	id  BIGINT NOT NULL,
	PRIMARY KEY (pid, seq)
);
`

// UniqueIDs returns Utility's unique ids on s's database.
func (s *Store) UniqueIDs() *sqlstore.UniqueIDs {
	return sqlstore.NewUniqueIDs("pgstore", pgDB{s.pool})
}

// Storage Manager's schema (storagemanager.Store, internal/sqlstore's Slots).
func init() { registerSchema("storage_manager", storageManagerV1) }

const storageManagerV1 = `
CREATE TABLE sm_unique_ids (
	id       BIGSERIAL PRIMARY KEY,
	pid      BIGINT NOT NULL,
	slot     INTEGER NOT NULL,
	has_card INTEGER NOT NULL,
	card     BIGINT NOT NULL,
	created  BIGINT NOT NULL,
	UNIQUE (pid, slot, has_card, card)
);
`

// Slots returns Storage Manager's unique ids on s's database.
func (s *Store) Slots() *sqlstore.Slots { return sqlstore.NewSlots("pgstore", pgDB{s.pool}) }
