package accounts

// The NAT reports' schema (matchmaking.NATStore, internal/sqlstore's nat.go),
// a component of its own: per PID, the NAT mapping and filtering the player
// last reported through NAT Traversal, its round-trip time to the server, the
// traversal results it reported, and the secure node and connection that
// reported them (indexed: a connection's end deletes its rows).
func init() { registerSchema("matchmaking_nat", natV1) }

const natV1 = `
CREATE TABLE mm_nat (
	pid       INTEGER PRIMARY KEY,
	node      TEXT NOT NULL,
	conn      INTEGER NOT NULL,
	mapping   INTEGER NOT NULL,
	filtering INTEGER NOT NULL,
	rtt       INTEGER NOT NULL,
	successes INTEGER NOT NULL,
	failures  INTEGER NOT NULL
);
CREATE INDEX mm_nat_conn ON mm_nat (node, conn);
`
