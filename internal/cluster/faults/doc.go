// Package faults holds the topology fault test of docs/deploy.md ("Faults"): one
// authentication node, three secure nodes and PostgreSQL as separate processes on
// loopback (internal/cluster), 300 players logging in and matchmaking, then a
// secure node killed and PostgreSQL restarted while they play. The package has no
// code of its own; the test is in faults_test.go.
package faults
