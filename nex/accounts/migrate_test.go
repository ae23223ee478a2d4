package accounts

import (
	"context"
	"errors"
	"testing"
)

func TestMigrateRecordsAndRefusesNewer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.SchemaVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v["accounts"] != 1 {
		t.Fatalf("accounts schema version %d, want 1 (all %v)", v["accounts"], v)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE schema_migrations SET version = 99 WHERE component = 'accounts'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, _, err := Open(ctx, dir); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open on a newer schema: %v, want ErrSchemaTooNew", err)
	}
}
