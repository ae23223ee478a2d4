package pgstore

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The credentials component (internal/sqlstore's Credentials, shared with
// nex/accounts): NNIDs linked to NEX accounts and the token secret every node
// on this database shares.
func init() { registerSchema("credentials", credentialsV1) }

const credentialsV1 = `
CREATE TABLE nnids (
	pid          BIGINT PRIMARY KEY,
	user_id      TEXT NOT NULL,
	pw_salt      BYTEA NOT NULL,
	pw_hash      BYTEA NOT NULL,
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
	mii_data     BYTEA NOT NULL,
	access_level INTEGER NOT NULL,
	created      BIGINT NOT NULL,
	updated      BIGINT NOT NULL
);
CREATE UNIQUE INDEX nnids_user_id ON nnids (lower(user_id));
CREATE TABLE credential_secrets (
	name   TEXT PRIMARY KEY,
	secret BYTEA NOT NULL
);
`

// Credentials returns the NNID store (credentials.Store) on s's database.
func (s *Store) Credentials() *sqlstore.Credentials {
	return sqlstore.NewCredentials("pgstore", pgDB{s.pool}, sqlstore.CredentialsDialect{
		Created: func(t time.Time) any { return t },
		IsUnique: func(err error) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == "23505"
		},
	})
}
