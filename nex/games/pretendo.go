package games

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The facts copy of Pretendo Network's game servers: which (protocol, method)
// each title's server answers (testdata/pretendo-titles/README.md).
var (
	//go:embed testdata/pretendo-titles/titles.tsv
	pretendoTitlesTSV []byte
	//go:embed testdata/pretendo-titles/methods.tsv
	pretendoMethodsTSV []byte
)

// ErrPretendoTable reports a malformed row of the embedded Pretendo tables.
var ErrPretendoTable = errors.New("games: Pretendo table")

// PretendoTitle is one row of titles.tsv: a repository of Pretendo Network's
// game servers.
type PretendoTitle struct {
	Repo       string // the repository's name under github.com/PretendoNetwork
	Commit     string
	Title      string
	Platform   string
	ServerIDs  []uint32 // where a public source states them
	AccessKey  string
	NEXVersion string
	// Superseded: an older repository a current one replaces.
	Superseded bool
}

// PretendoMethod is one row of methods.tsv: a method a repository's server
// installs a handler for.
type PretendoMethod struct {
	Repo       string
	Server     string // "auth", "secure" or "hpp"
	ProtocolID uint16
	Protocol   string // the package's name: "Utility", "Storage Manager", "DataStore (Super Mario Maker)"
	MethodID   uint32
	Method     string
	Custom     bool // the game's own handler, not nex-protocols-common-go's
}

// PretendoMethods is a list of methods.tsv rows.
type PretendoMethods []PretendoMethod

func readTSV(name string, data []byte, cols int, row func(f []string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 || sc.Text() == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != cols {
			return fmt.Errorf("%w: %s line %d: %d columns, want %d", ErrPretendoTable, name, line, len(f), cols)
		}
		if err := row(f); err != nil {
			return fmt.Errorf("%w: %s line %d: %w", ErrPretendoTable, name, line, err)
		}
	}
	return sc.Err()
}

// ReadPretendoTitles returns the rows of the embedded titles.tsv.
func ReadPretendoTitles() ([]PretendoTitle, error) {
	var out []PretendoTitle
	err := readTSV("titles.tsv", pretendoTitlesTSV, 8, func(f []string) error {
		t := PretendoTitle{Repo: strings.TrimPrefix(f[0], "PretendoNetwork/"), Commit: f[1], Title: f[2], Platform: f[3],
			AccessKey: f[5], NEXVersion: f[6], Superseded: strings.HasPrefix(f[7], "status=superseded")}
		for _, s := range strings.Split(f[4], ";") {
			if s == "" {
				continue
			}
			id, err := strconv.ParseUint(s, 16, 32)
			if err != nil {
				return fmt.Errorf("game server id %q: %w", s, err)
			}
			t.ServerIDs = append(t.ServerIDs, uint32(id))
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// ReadPretendoMethods returns the rows of the embedded methods.tsv.
func ReadPretendoMethods() (PretendoMethods, error) {
	var out PretendoMethods
	err := readTSV("methods.tsv", pretendoMethodsTSV, 7, func(f []string) error {
		p, err := strconv.ParseUint(f[2], 10, 16)
		if err != nil {
			return fmt.Errorf("protocol id %q: %w", f[2], err)
		}
		m, err := strconv.ParseUint(f[4], 10, 32)
		if err != nil {
			return fmt.Errorf("method id %q: %w", f[4], err)
		}
		out = append(out, PretendoMethod{Repo: strings.TrimPrefix(f[0], "PretendoNetwork/"), Server: f[1],
			ProtocolID: uint16(p), Protocol: f[3], MethodID: uint32(m), Method: f[5], Custom: f[6] == "custom"})
		return nil
	})
	return out, err
}

// pretendoCompanions are repositories serving the same title as another: the
// title's methods are the union of both.
var pretendoCompanions = map[string][]string{
	"nintendo-badge-arcade-secure": {"nintendo-badge-arcade-authentication"},
}

// Of returns the distinct methods the server of repo (and its companion
// repositories) answers, keyed by (protocol id, protocol name, method id) as
// the table's README asks, in table order; an HPP row counts once with its
// PRUDP twin.
func (ms PretendoMethods) Of(repo string) PretendoMethods {
	repos := append([]string{repo}, pretendoCompanions[repo]...)
	type key struct {
		p    uint16
		name string
		m    uint32
	}
	seen := map[key]bool{}
	var out PretendoMethods
	for _, m := range ms {
		if !slices.Contains(repos, m.Repo) {
			continue
		}
		k := key{m.ProtocolID, m.Protocol, m.MethodID}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, m)
	}
	return out
}

// Variants returns the protocol names repo's methods carry that are a game's
// variant of a shared protocol id or a game-specific protocol: what
// Game.Variants lists.
func (ms PretendoMethods) Variants(repo string) []string {
	var out []string
	for _, m := range ms.Of(repo) {
		if IsVariant(m.Protocol) && !slices.Contains(out, m.Protocol) {
			out = append(out, m.Protocol)
		}
	}
	return out
}

// IsVariant reports whether a methods.tsv protocol name is a game's variant or
// a game-specific protocol rather than a generic one every title may use.
func IsVariant(protocol string) bool {
	switch protocol {
	case "Storage Manager", "Subscription", "Rating":
		return true
	}
	return strings.Contains(protocol, "(")
}
