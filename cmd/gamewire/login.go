package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
)

// loginCmd is `gamewire login`: the NEX client flow (nex.Login).
var loginCmd = &cobra.Command{
	Use:   "login ADDR",
	Short: "Log in to a NEX server (ticket granting, secure connection, Register)",
	Long: `login logs in to the NEX server whose authentication server is at ADDR:
Login, RequestTicket when the ticket is not for the secure server, a secure
connection with the ticket, Register; then prints the PID, the secure station
url, the public url and the connection id.

  gamewire login ADDR --user U --password P [--dialect nex-v1|nex-v0|nex-v0-friends] [--access-key K]
  gamewire login ws://HOST:PORT/ --dialect nex-lite --user U --password P [--insecure-skip-verify]

With --dialect nex-lite (Switch) ADDR is a URL (ws://, wss://, tcp://, tls://) and the
Switch settings apply: 8-byte PIDs and the Switch key derivation.`,
	Args: cobra.ExactArgs(1),
	RunE: runLogin,
}

var loginFlags struct {
	prudpFlags
	user, password string
	timeout        time.Duration
	insecure       bool
}

func init() {
	loginFlags.register(loginCmd)
	f := loginCmd.Flags()
	f.StringVar(&loginFlags.user, "user", "", "user name (NEX names normal accounts by their PID)")
	f.StringVar(&loginFlags.password, "password", "", "password (only derives the key that opens the ticket; never sent)")
	f.DurationVar(&loginFlags.timeout, "timeout", 30*time.Second, "give up after this long")
	f.BoolVar(&loginFlags.insecure, "insecure-skip-verify", false, "nex-lite over wss:// or tls://: accept any server certificate")
	_ = loginCmd.MarkFlagRequired("user")
	rootCmd.AddCommand(loginCmd)
}

func runLogin(cmd *cobra.Command, args []string) error {
	cfg, err := loginFlags.config()
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), loginFlags.timeout)
	defer cancel()
	if cfg.Dialect == prudp.Hyperscape {
		// The NEX secure server is entered with a Kerberos ticket; Hyperscape keys
		// its connections by the ECDH exchange instead (docs/prudp-hyperscape.md).
		return errors.New("login: --dialect hyperscape: Hyperscape connections are keyed by ECDH, not by a Kerberos ticket, so the NEX login flow does not apply (use gamewire connect --dialect hyperscape --cert-pub F)")
	}
	lc := nex.LoginConfig{User: loginFlags.user, Password: loginFlags.password, Config: cfg, Logger: cfg.Logger}
	isURL := strings.Contains(args[0], "://")
	switch {
	case cfg.Dialect == prudp.NEXLite && !isURL:
		return fmt.Errorf("login: --dialect nex-lite logs in at a URL (ws://, wss://, tcp://, tls://), not %q", args[0])
	case cfg.Dialect != prudp.NEXLite && isURL:
		return fmt.Errorf("login: %s is a URL: NEX over WebSocket or TCP needs --dialect nex-lite", args[0])
	case cfg.Dialect == prudp.NEXLite:
		// Switch servers: 8-byte PIDs and the Switch key derivation; both
		// servers sit behind the one URL, on virtual ports 1 and 2.
		lc.Config.Kerberos = kerberos.Switch
		lc.Config.Port = 1
		lc.Derivation = auth.DeriveSwitch
		lcfg := &lite.Config{Logger: cfg.Logger}
		if loginFlags.insecure {
			lcfg.TLS = &tls.Config{InsecureSkipVerify: true}
		}
		lc.Dial = func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
			return lite.Dial(ctx, url, c, lcfg)
		}
	}
	sess, err := nex.Login(ctx, args[0], lc)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "pid %d\nsecure %s\npublic %s\nconnection id %d\nserver %s\n",
		sess.PID, sess.SecureURL, sess.PublicURL, sess.ConnectionID, sess.BuildName)
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer ccancel()
	_ = sess.Close(cctx)
	return nil
}
