package pgstore

import "testing"

// TestRebind: the shared statements' ? placeholders become $1, $2, ... in
// order; a statement without any is returned as it is.
func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT blob FROM mm_gatherings WHERE gid = ?`, `SELECT blob FROM mm_gatherings WHERE gid = $1`},
		{`WHERE (count < ? OR (count = ? AND gid > ?)) LIMIT ? OFFSET ?`, `WHERE (count < $1 OR (count = $2 AND gid > $3)) LIMIT $4 OFFSET $5`},
		{`gid IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, `gid IN ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
