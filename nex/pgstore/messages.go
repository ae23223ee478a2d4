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
