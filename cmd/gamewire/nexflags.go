package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// The flags that say how NEX structures are coded, one vocabulary on every
// command that codes them (serve, nex call, decode; docs/cli.md): --nex-version
// and --nex-gates.

// nexGatesUsage is the part of --nex-gates' help every command shares; each
// adds what auto means for it.
const nexGatesUsage = "reading of the disputed NEX 3.4 gates (MatchmakeSession.progress_score, " +
	"MatchmakeSessionSearchCriteria.vacant_participants, NotificationEvent.param3): auto, console or nintendoclients " +
	"(docs/nex.md \"Disputed gates\"); auto: "

// registerNEXGates adds --nex-gates (default auto) to f; auto says what the
// auto reading is on this command.
func registerNEXGates(f *pflag.FlagSet, p *string, auto string) {
	f.StringVar(p, "nex-gates", types.GatesAuto.String(), nexGatesUsage+auto)
}

// parseNEXGates reads --nex-gates.
func parseNEXGates(s string) (types.Gates, error) {
	g, err := types.ParseGates(s)
	if err != nil {
		return 0, fmt.Errorf("--nex-gates: %w", err)
	}
	return g, nil
}

// parseNEXVersion reads --nex-version: a NEX version such as 3.4, 3.5.1 or
// 30400, from NEX 2 on; "" is 0 (not given).
func parseNEXVersion(s string) (types.Version, error) {
	if s == "" {
		return 0, nil
	}
	v, err := desc.ParseVersion(s)
	if err != nil || v < types.Version2 || v >= 100000 {
		return 0, fmt.Errorf("--nex-version %q: want a NEX version such as 3.4, 3.5.1 or 30400", s)
	}
	return v, nil
}

// parseNEXFlags reads --nex-version and --nex-gates together (the clients and
// decode; serve also weighs --game's version).
func parseNEXFlags(version, gates string) (types.Version, types.Gates, error) {
	v, err := parseNEXVersion(version)
	if err != nil {
		return 0, 0, err
	}
	g, err := parseNEXGates(gates)
	if err != nil {
		return 0, 0, err
	}
	return v, g, nil
}
