// Package metrics exports the counters of the PRUDP engine
// (prudp.Server.Stats) and of the Lite stream transport (lite.Listener.Stats)
// as Prometheus collectors, for `gamewire serve --metrics` (docs/cli.md).
// The transport packages import no metrics system; a program that wants
// another one reads the same Stats.
package metrics
