package pgtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStart starts a server, creates a database and queries it with psql (the
// package itself does not depend on a driver).
func TestStart(t *testing.T) {
	s := Start(t)
	dsn := s.NewDatabase(t)
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("no psql")
	}
	out, err := exec.Command(psql, dsn, "-Atc", "SELECT 40 + 2").CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != "42" {
		t.Fatalf("psql answered %q, want 42", out)
	}
}
