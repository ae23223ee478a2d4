package accounts

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/gamewire/gamewire/internal/schema"
)

// The store's schema is split into components (accounts, and each NEX service that
// keeps state in the same database), each with its own ordered list of migration
// steps. A file adding a component registers it from init with registerSchema; Open
// applies, in one transaction per component, every step after the version recorded
// in schema_migrations, and refuses a database whose recorded version is newer than
// the steps this build knows (a newer gamewire wrote it).

// components are the store's schema components (internal/schema).
var components schema.Registry

// registerSchema adds a component's migration steps (schema.Registry.Register).
func registerSchema(component string, steps ...string) { components.Register(component, steps...) }

// ErrSchemaTooNew is returned by Open when the database was written by a newer
// gamewire (a component's recorded version is past this build's steps).
var ErrSchemaTooNew = fmt.Errorf("accounts: database schema is newer than this gamewire")

// SchemaVersions returns the version each component's schema is at.
func (s *Store) SchemaVersions(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT component, version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("accounts: read schema versions: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			return nil, fmt.Errorf("accounts: read schema versions: %w", err)
		}
		out[c] = v
	}
	return out, rows.Err()
}

// migrate brings every registered component's schema up to date.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		component TEXT PRIMARY KEY,
		version   INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("accounts: create schema_migrations in %s: %w", s.path, err)
	}
	for _, c := range components.Components() {
		if err := s.migrateComponent(ctx, c.Name, c.Steps); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) migrateComponent(ctx context.Context, name string, steps []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("accounts: migrate %s: %w", name, err)
	}
	defer tx.Rollback()
	var have int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM schema_migrations WHERE component = ?`, name).Scan(&have); err {
	case nil:
	case sql.ErrNoRows:
		have = 0
	default:
		return fmt.Errorf("accounts: migrate %s: %w", name, err)
	}
	if have > len(steps) {
		return fmt.Errorf("%w: %s is at version %d, this build knows %d (%s)", ErrSchemaTooNew, name, have, len(steps), s.path)
	}
	if have == len(steps) {
		return nil
	}
	for i := have; i < len(steps); i++ {
		if _, err := tx.ExecContext(ctx, steps[i]); err != nil {
			return fmt.Errorf("accounts: migrate %s to version %d: %w", name, i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (component, version) VALUES (?, ?)
		ON CONFLICT (component) DO UPDATE SET version = excluded.version`, name, len(steps)); err != nil {
		return fmt.Errorf("accounts: migrate %s: record version: %w", name, err)
	}
	return tx.Commit()
}
