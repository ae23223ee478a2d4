package pgstore

// The NAT reports' schema (matchmaking.NATStore, internal/sqlstore's nat.go),
// the same shape as nex/accounts' SQLite one: per PID, the NAT mapping and
// filtering the player last reported through NAT Traversal, its round-trip
// time to the server, the traversal results it reported, and the secure node
// and connection that reported them (indexed: a connection's end deletes its
// rows).
func init() { registerSchema("matchmaking_nat", natV1) }

const natV1 = `
CREATE TABLE mm_nat (
	pid       BIGINT PRIMARY KEY,
	node      TEXT NOT NULL,
	conn      BIGINT NOT NULL,
	mapping   BIGINT NOT NULL,
	filtering BIGINT NOT NULL,
	rtt       BIGINT NOT NULL,
	successes BIGINT NOT NULL,
	failures  BIGINT NOT NULL
);
CREATE INDEX mm_nat_conn ON mm_nat (node, conn);
`
