package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/coverage"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// gamesCheckOptions are the flags of games check.
type gamesCheckOptions struct {
	server, user, password string
	timeout                time.Duration
	all                    bool
}

// newGamesCheckCmd is `gamewire games check [GAME...]`: the coverage checker
// (nex/coverage).
func newGamesCheckCmd() *cobra.Command {
	o := &gamesCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check [GAME...]",
		Short: "Call every method a title's Pretendo Network server answers and count those served",
		Long: `check measures how much of a title gamewire serves. For each GAME (a name, game
server id or Pretendo repository; default every title Pretendo Network runs a NEX
server for) it starts gamewire serve --game GAME in this process on 127.0.0.1 with
a fresh database, logs in as guest, and calls every (protocol, method) that
title's Pretendo server answers (the facts in nex/games/testdata/pretendo-titles),
with parameters encoded from the method's description (defaults, else zero
values; a method no description covers is called with none). A method answered
with anything but Core::NotImplemented counts as served. It prints served/total
per title, the methods missing, and the totals.

--server ADDR checks a running server instead (its authentication address; the
game's dialect and access key; --user and --password, default guest's).

  gamewire games check "mario kart 7"
  gamewire games check                       (all 42 titles)
  gamewire games check splatoon --server 127.0.0.1:60000 --user guest --password 'MMQea3n!fsik'`,
		RunE: func(cmd *cobra.Command, args []string) error { return runGamesCheck(cmd, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.server, "server", "", "check the server whose authentication server is at ADDR instead of an in-process one")
	f.StringVar(&o.user, "user", "guest", "user to log in as")
	f.StringVar(&o.password, "password", guestPassword, "the user's password")
	f.DurationVar(&o.timeout, "timeout", coverage.DefaultCallTimeout, "give up on a call after this long")
	f.BoolVarP(&o.all, "verbose", "v", false, "also list every method with its answer")
	return cmd
}

// guestPassword is the password of the guest account serve creates.
const guestPassword = "MMQea3n!fsik"

func runGamesCheck(cmd *cobra.Command, o *gamesCheckOptions, args []string) error {
	methods, err := games.ReadPretendoMethods()
	if err != nil {
		return fmt.Errorf("games check: %w", err)
	}
	var list []games.Game
	if len(args) == 0 {
		for _, g := range games.Table {
			if g.Pretendo != "" {
				list = append(list, g)
			}
		}
	}
	for _, a := range args {
		g, err := games.Find(a)
		if err != nil {
			return fmt.Errorf("games check: %w", err)
		}
		if g.Pretendo == "" {
			return fmt.Errorf("games check: %s: Pretendo Network runs no server for it, so there is nothing to check against", g.Name)
		}
		list = append(list, g)
	}
	if o.server != "" && len(list) != 1 {
		return fmt.Errorf("games check: --server checks one game; name it")
	}
	out := cmd.OutOrStdout()
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TITLE\tSERVED\tMISSING")
	served, total, full := 0, 0, 0
	for _, g := range list {
		rep, err := o.check(cmd, g, methods)
		if err != nil {
			return fmt.Errorf("games check: %s: %w", g.Name, err)
		}
		s, n := rep.Served(), len(rep.Outcomes)
		served, total = served+s, total+n
		if s == n {
			full++
		}
		var miss []string
		for _, m := range rep.Missing() {
			miss = append(miss, methodLabel(m))
		}
		fmt.Fprintf(w, "%s\t%d/%d\t%s\n", g.Name, s, n, strings.Join(miss, ", "))
		if o.all {
			for _, m := range rep.Outcomes {
				ans := "ok"
				switch {
				case m.NoAnswer:
					ans = "taken (no answer, as described)"
				case m.Err != nil:
					ans = m.Err.Error()
				case m.Result != "":
					ans = m.Result
				}
				enc := ""
				if !m.Encoded {
					enc = " (no description: called without parameters)"
				}
				fmt.Fprintf(w, "  %s\t%s%s\t\n", methodLabel(m), ans, enc)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "total: %d of %d (title, method) pairs served; %d of %d titles fully served\n", served, total, full, len(list))
	return nil
}

// methodLabel names a method as the Pretendo table does, with its ids.
func methodLabel(o coverage.Outcome) string {
	m := o.Method
	return fmt.Sprintf("%s.%s (%d.%d)", m.Protocol, m.Method, m.ProtocolID, m.MethodID)
}

// check measures g on --server, or on an in-process serve --game.
func (o *gamesCheckOptions) check(cmd *cobra.Command, g games.Game, methods games.PretendoMethods) (coverage.Report, error) {
	cfg := prudp.Config{Dialect: g.Dialect, AccessKey: g.AccessKey}
	cc := coverage.Config{Addr: o.server, CallTimeout: o.timeout,
		Login: nex.LoginConfig{User: o.user, Password: o.password, Config: cfg, NEXVersion: nexVersionOf(g)}}
	if o.server == "" {
		addr, stop, err := startGameServer(cmd.Context(), g)
		if err != nil {
			return coverage.Report{}, err
		}
		defer stop()
		cc.Addr = addr
	}
	return coverage.Check(cmd.Context(), cc, g, methods)
}

// startGameServer runs gamewire serve --game in this process, on free
// 127.0.0.1 ports with a fresh data directory, and returns its authentication
// address and a function that stops it and removes the directory.
func startGameServer(ctx context.Context, g games.Game) (string, func(), error) {
	dir, err := os.MkdirTemp("", "gamewire-check-")
	if err != nil {
		return "", nil, err
	}
	auth, err := freeAddr("udp")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	sec, err := freeAddr("udp")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	ds, err := freeAddr("tcp")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	id := g.Pretendo // names the game uniquely, whether or not its server id is public
	ctx, cancel := context.WithCancel(ctx)
	serve := newServeCmd()
	log := &lockedBuffer{}
	serve.SetOut(log)
	serve.SetErr(log)
	// The check logs in with a password, as no console does: tokens are
	// optional (NEX 2 and 4 games require them by default, docs/accounts.md).
	serve.SetArgs([]string{"--game", id, "--listen", auth, "--secure-listen", sec, "--datastore-listen", ds, "--data", dir, "--token", "optional"})
	done := make(chan error, 1)
	go func() { done <- serve.ExecuteContext(ctx) }()
	stop := func() {
		cancel()
		<-done
		os.RemoveAll(dir)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "NEX services"); {
		select {
		case err := <-done:
			cancel()
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("serve --game %s: %w\n%s", id, err, log.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("serve --game %s did not start within 30s:\n%s", id, log.String())
		}
	}
	return auth, stop, nil
}

// nexVersionOf is the NEX version a client of g speaks, 0 when not known.
func nexVersionOf(g games.Game) types.Version { return types.Version(g.NEXVersion) }

// freeAddr returns a 127.0.0.1 address with a port free a moment ago.
func freeAddr(network string) (string, error) {
	if network == "udp" {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.LocalAddr().String(), nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
