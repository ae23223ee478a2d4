// Package pgstore is gamewire's PostgreSQL store, for a game run by several
// machines (secure nodes sharing one database). It holds what nex/accounts holds in
// SQLite for a single process, with the same behaviour: the same account rules and
// errors, and the same versioned schema components (each applied in its own
// transaction on Open, and a database written by a newer gamewire refused).
//
// The driver is github.com/jackc/pgx/v5 (a connection pool); every query runs with
// the caller's context, and Open sets a statement timeout on every connection so a
// query never runs for hours.
package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gamewire/gamewire/internal/schema"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/types"
)

// DefaultStatementTimeout bounds every statement the store runs (PostgreSQL's
// statement_timeout on each pooled connection).
const DefaultStatementTimeout = 10 * time.Second

// ErrSchemaTooNew is returned by Open when a component's recorded schema version
// is past the steps this build knows.
var ErrSchemaTooNew = accounts.ErrSchemaTooNew

// Store is the PostgreSQL store. It is safe for concurrent use by many goroutines
// and many processes.
type Store struct {
	pool *pgxpool.Pool
}

var _ auth.Accounts = (*Store)(nil)

// components are the store's schema components (internal/schema).
var components schema.Registry

// registerSchema adds a component's migration steps (schema.Registry.Register).
func registerSchema(component string, steps ...string) { components.Register(component, steps...) }

func init() { registerSchema("accounts", accountsV1) }

const accountsV1 = `
CREATE TABLE accounts (
	pid        BIGINT PRIMARY KEY,
	name       TEXT NOT NULL,
	key_nex    BYTEA NOT NULL,
	key_switch BYTEA NOT NULL,
	special    BOOLEAN NOT NULL DEFAULT false,
	created    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_name_ci ON accounts (lower(name));
`

// Open connects to the database named by dsn (a postgres:// URL or libpq
// key=value string), applies the schema migrations and seeds the special
// accounts.
func Open(ctx context.Context, dsn string) (*Store, error) {
	s, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	if err := s.seed(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// ErrNotMigrated is returned by OpenExisting when the database's schema is
// not the one this build writes.
var ErrNotMigrated = errors.New("pgstore: the database's schema is not this build's")

// OpenExisting connects to the database named by dsn without changing it
// (no migration, no seeding), for tools that only read (gamewire accounts
// list). It fails with ErrNotMigrated when a component's schema is missing or
// older than this build's (serve --store applies them), or ErrSchemaTooNew.
func OpenExisting(ctx context.Context, dsn string) (*Store, error) {
	s, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	have := map[string]int{}
	rows, err := s.pool.Query(ctx, `SELECT component, version FROM schema_migrations`)
	if err == nil {
		for rows.Next() {
			var name string
			var v int
			if err = rows.Scan(&name, &v); err != nil {
				break
			}
			have[name] = v
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		s.pool.Close()
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
			return nil, fmt.Errorf("%w: %s has no gamewire schema (serve --store creates it)", ErrNotMigrated, redact(dsn))
		}
		return nil, fmt.Errorf("pgstore: read the schema version: %w", err)
	}
	for _, c := range components.Components() {
		switch v := have[c.Name]; {
		case v > len(c.Steps):
			s.pool.Close()
			return nil, fmt.Errorf("%w: %s is at version %d, this build knows %d", ErrSchemaTooNew, c.Name, v, len(c.Steps))
		case v < len(c.Steps):
			s.pool.Close()
			return nil, fmt.Errorf("%w: %s is at version %d, this build's is %d (serve --store migrates it)", ErrNotMigrated, c.Name, v, len(c.Steps))
		}
	}
	return s, nil
}

// connect opens the pool for dsn with the store's session settings.
func connect(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: parse %s: %w", redact(dsn), err)
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["statement_timeout"]; !ok {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.Itoa(int(DefaultStatementTimeout / time.Millisecond))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect %s: %w", redact(dsn), err)
	}
	return &Store{pool: pool}, nil
}

// Redact returns dsn with its password, if any, replaced by "xxxxx", for
// messages and logs.
func Redact(dsn string) string { return redact(dsn) }

// redact hides a password in a DSN for error messages.
func redact(dsn string) string {
	if u, err := pgconn.ParseConfig(dsn); err == nil && u.Password != "" {
		return strings.ReplaceAll(dsn, u.Password, "xxxxx")
	}
	return dsn
}

// Close closes the pool.
func (s *Store) Close() error { s.pool.Close(); return nil }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	return s.pool.QueryRow(ctx, `SELECT 1`).Scan(&n)
}

// Pool returns the connection pool, for components built on the same database.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// migrationLock is the advisory lock key serializing migrations across processes
// (several nodes starting at once).
const migrationLock = 0x67616d6577697265 // "gamewire"

func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("pgstore: migrate: lock: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		component TEXT PRIMARY KEY,
		version   INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("pgstore: create schema_migrations: %w", err)
	}
	for _, c := range components.Components() {
		if err := migrateComponent(ctx, conn.Conn(), c.Name, c.Steps); err != nil {
			return err
		}
	}
	return nil
}

func migrateComponent(ctx context.Context, conn *pgx.Conn, name string, steps []string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate %s: %w", name, err)
	}
	defer tx.Rollback(context.Background())
	var have int
	switch err := tx.QueryRow(ctx, `SELECT version FROM schema_migrations WHERE component = $1`, name).Scan(&have); {
	case err == nil:
	case errors.Is(err, pgx.ErrNoRows):
		have = 0
	default:
		return fmt.Errorf("pgstore: migrate %s: %w", name, err)
	}
	if have > len(steps) {
		return fmt.Errorf("%w: %s is at version %d, this build knows %d", ErrSchemaTooNew, name, have, len(steps))
	}
	if have == len(steps) {
		return nil
	}
	for i := have; i < len(steps); i++ {
		if _, err := tx.Exec(ctx, steps[i]); err != nil {
			return fmt.Errorf("pgstore: migrate %s to version %d: %w", name, i+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (component, version) VALUES ($1, $2)
		ON CONFLICT (component) DO UPDATE SET version = excluded.version`, name, len(steps)); err != nil {
		return fmt.Errorf("pgstore: migrate %s: record version: %w", name, err)
	}
	return tx.Commit(ctx)
}

// SchemaVersions returns the version each component's schema is at.
func (s *Store) SchemaVersions(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT component, version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: read schema versions: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			return nil, fmt.Errorf("pgstore: read schema versions: %w", err)
		}
		out[c] = v
	}
	return out, rows.Err()
}

func (s *Store) seed(ctx context.Context) error {
	for _, sp := range auth.SpecialAccounts {
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM accounts WHERE pid = $1`, int64(sp.PID)).Scan(&n); err != nil {
			return fmt.Errorf("pgstore: check special account %d: %w", sp.PID, err)
		}
		if n > 0 {
			continue
		}
		password := auth.GuestPassword
		if sp.PID != auth.PIDGuest {
			password = randomPassword()
		}
		a := auth.NewAccount(sp.PID, sp.Name, password)
		if _, err := s.pool.Exec(ctx,
			`INSERT INTO accounts (pid, name, key_nex, key_switch, special) VALUES ($1, $2, $3, $4, true)
			 ON CONFLICT DO NOTHING`,
			int64(a.PID), a.Name, a.KeyNEX[:], a.KeySwitch[:]); err != nil {
			return fmt.Errorf("pgstore: seed special account %d %q: %w", sp.PID, sp.Name, err)
		}
	}
	return nil
}

func randomPassword() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Add creates an account (accounts.Store.Add's rules and errors).
func (s *Store) Add(ctx context.Context, n accounts.NewAccount) (auth.Account, error) {
	if err := accounts.CheckPassword(n.Password); err != nil {
		return auth.Account{}, err
	}
	if n.PID > accounts.MaxPID {
		return auth.Account{}, fmt.Errorf("%w: %d is larger than %d", accounts.ErrBadPID, n.PID, accounts.MaxPID)
	}
	if err := accounts.CheckName(n.Name); err != nil {
		return auth.Account{}, err
	}
	return s.add(ctx, n)
}

// addLock is the advisory lock key that serializes Add across processes, so two
// nodes never pick the same next PID.
const addLock = 0x67770001

func (s *Store) add(ctx context.Context, n accounts.NewAccount) (auth.Account, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return auth.Account{}, fmt.Errorf("pgstore: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(addLock)); err != nil {
		return auth.Account{}, fmt.Errorf("pgstore: add: lock: %w", err)
	}
	pid := n.PID
	if pid == 0 {
		var max *int64
		if err := tx.QueryRow(ctx, `SELECT max(pid) FROM accounts WHERE NOT special`).Scan(&max); err != nil {
			return auth.Account{}, fmt.Errorf("pgstore: pick a PID: %w", err)
		}
		pid = accounts.FirstUserPID
		if max != nil && types.PID(*max) >= pid {
			pid = types.PID(*max) + 1
		}
	}
	name := n.Name
	if name == "" {
		name = strconv.FormatUint(uint64(pid), 10)
	}
	var byPID, byName int
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM accounts WHERE pid = $1), (SELECT count(*) FROM accounts WHERE lower(name) = lower($2))`,
		int64(pid), name).Scan(&byPID, &byName); err != nil {
		return auth.Account{}, fmt.Errorf("pgstore: %w", err)
	}
	if err := accounts.Taken(byPID > 0, byName > 0, pid, name); err != nil {
		return auth.Account{}, err
	}
	a := auth.NewAccount(pid, name, n.Password)
	if _, err := tx.Exec(ctx,
		`INSERT INTO accounts (pid, name, key_nex, key_switch, special) VALUES ($1, $2, $3, $4, false)`,
		int64(a.PID), a.Name, a.KeyNEX[:], a.KeySwitch[:]); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "accounts_name_ci" {
			return auth.Account{}, fmt.Errorf("%w: name %q is taken", accounts.ErrExists, name)
		}
		return auth.Account{}, fmt.Errorf("pgstore: add %d %q: %w", pid, name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return auth.Account{}, fmt.Errorf("pgstore: %w", err)
	}
	return a, nil
}

// SetPassword replaces the keys of the account named by nameOrPID.
func (s *Store) SetPassword(ctx context.Context, nameOrPID, password string) (auth.Account, error) {
	if err := accounts.CheckPassword(password); err != nil {
		return auth.Account{}, err
	}
	a, err := s.Find(ctx, nameOrPID)
	if err != nil {
		return auth.Account{}, err
	}
	a = auth.NewAccount(a.PID, a.Name, password)
	if _, err := s.pool.Exec(ctx, `UPDATE accounts SET key_nex = $1, key_switch = $2 WHERE pid = $3`,
		a.KeyNEX[:], a.KeySwitch[:], int64(a.PID)); err != nil {
		return auth.Account{}, fmt.Errorf("pgstore: set password of %d: %w", a.PID, err)
	}
	return a, nil
}

// Find returns the account with the given name, or with the given PID in decimal.
func (s *Store) Find(ctx context.Context, nameOrPID string) (auth.Account, error) {
	return accounts.FindIn(ctx, s, nameOrPID)
}

// List returns every account in PID order.
func (s *Store) List(ctx context.Context) ([]accounts.Info, error) {
	rows, err := s.pool.Query(ctx, `SELECT pid, name, special, created FROM accounts ORDER BY pid`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	defer rows.Close()
	var out []accounts.Info
	for rows.Next() {
		var i accounts.Info
		var pid int64
		var created time.Time
		if err := rows.Scan(&pid, &i.Name, &i.Special, &created); err != nil {
			return nil, fmt.Errorf("pgstore: list: %w", err)
		}
		i.PID = types.PID(pid)
		i.Created = created.UTC().Format(time.RFC3339)
		out = append(out, i)
	}
	return out, rows.Err()
}

func (s *Store) one(ctx context.Context, where string, arg any, what string) (auth.Account, error) {
	var a auth.Account
	var pid int64
	var kn, ks []byte
	err := s.pool.QueryRow(ctx, `SELECT pid, name, key_nex, key_switch FROM accounts WHERE `+where, arg).Scan(&pid, &a.Name, &kn, &ks)
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Account{}, fmt.Errorf("%w: %s", auth.ErrNoAccount, what)
	}
	if err != nil {
		return auth.Account{}, fmt.Errorf("pgstore: look up %s: %w", what, err)
	}
	return accounts.AccountFromRow(pid, a.Name, kn, ks, what)
}

// AccountByName implements auth.Accounts (case-insensitive).
func (s *Store) AccountByName(ctx context.Context, name string) (auth.Account, error) {
	if strings.ContainsRune(name, 0) {
		return auth.Account{}, fmt.Errorf("%w: name %q", auth.ErrNoAccount, name)
	}
	return s.one(ctx, `lower(name) = lower($1)`, name, fmt.Sprintf("name %q", name))
}

// AccountByPID implements auth.Accounts.
func (s *Store) AccountByPID(ctx context.Context, pid types.PID) (auth.Account, error) {
	if pid > accounts.MaxPID {
		return auth.Account{}, fmt.Errorf("%w: PID %d", auth.ErrNoAccount, pid)
	}
	return s.one(ctx, `pid = $1`, int64(pid), fmt.Sprintf("PID %d", pid))
}

// SecureKey returns the Kerberos key of the secure server's account (PID 2) under
// derivation d.
func (s *Store) SecureKey(ctx context.Context, d auth.KeyDerivation) ([]byte, error) {
	a, err := s.AccountByPID(ctx, auth.PIDQuazalRendezVous)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), a.Key(d)...), nil
}
