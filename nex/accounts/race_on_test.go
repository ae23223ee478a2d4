//go:build race

package accounts

// raceEnabled: the race detector slows the pure-Go SQLite about tenfold, so the
// large-table tests use fewer rows (the query plans they check do not change).
const raceEnabled = true
