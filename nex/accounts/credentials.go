package accounts

import (
	"strings"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The credentials component's schema (internal/sqlstore's Credentials, shared
// with nex/pgstore): NNIDs linked to NEX accounts (same PID) with the
// verifier of the console's account password and the server-issued NEX
// password, and the token secret. Times are Unix seconds.
func init() { registerSchema("credentials", credentialsV1) }

const credentialsV1 = `
CREATE TABLE nnids (
	pid          INTEGER PRIMARY KEY,
	user_id      TEXT NOT NULL,
	pw_salt      BLOB NOT NULL,
	pw_hash      BLOB NOT NULL,
	pw_iter      INTEGER NOT NULL,
	nex_password TEXT NOT NULL,
	email        TEXT NOT NULL,
	birth_date   TEXT NOT NULL,
	country      TEXT NOT NULL,
	region       INTEGER NOT NULL,
	gender       TEXT NOT NULL,
	language     TEXT NOT NULL,
	tz_name      TEXT NOT NULL,
	mii_name     TEXT NOT NULL,
	mii_data     BLOB NOT NULL,
	access_level INTEGER NOT NULL,
	created      INTEGER NOT NULL,
	updated      INTEGER NOT NULL
);
CREATE UNIQUE INDEX nnids_user_id ON nnids (lower(user_id));
CREATE TABLE credential_secrets (
	name   TEXT PRIMARY KEY,
	secret BLOB NOT NULL
);
`

// Credentials returns the NNID store (credentials.Store) in s's database.
func (s *Store) Credentials() *sqlstore.Credentials {
	return sqlstore.NewCredentials("accounts", dsDB{&DataStoreStore{db: s.db}}, sqlstore.CredentialsDialect{
		Created:  func(t time.Time) any { return t.UTC().Format(time.RFC3339) },
		IsUnique: func(err error) bool { return strings.Contains(err.Error(), "UNIQUE constraint failed") },
	})
}
