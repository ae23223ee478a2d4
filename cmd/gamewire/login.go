package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
)

// newLoginCmd is `gamewire login`: the NEX client flow (nex.Login).
func newLoginCmd() *cobra.Command {
	o := &loginOptions{}
	cmd := &cobra.Command{
		Use:   "login [--server ADDR]",
		Short: "Log in to a NEX server (ticket granting, secure connection, Register)",
		Long: `login logs in to the NEX server whose authentication server is at --server ADDR:
Login, RequestTicket when the ticket is not for the secure server, a secure
connection with the ticket, Register; then prints the PID, the secure station
url, the public url and the connection id.

  gamewire login --server ADDR --user U --password P [--dialect nex-v1|nex-v0|nex-v0-friends] [--access-key K]
  gamewire login --server ws://HOST:PORT/ --dialect nex-lite --user U --password P [--insecure-skip-verify]

With --dialect nex-lite (Switch) ADDR is a URL (ws://, wss://, tcp://, tls://) and the
Switch settings apply: 8-byte PIDs and the Switch key derivation. The older form
with ADDR as an argument (gamewire login ADDR ...) still works, with a note.`,
		Args: cobra.MaximumNArgs(1),
		RunE: withServer("login", &o.server, o.run),
	}
	o.registerLogin(cmd)
	addServerFlag(cmd, &o.server, nex.DefaultAddr, "the NEX authentication server, HOST:PORT (a URL with --dialect nex-lite)")
	addFormatFlag(cmd, &o.format)
	return cmd
}

// loginOptions are the flags of the NEX login flow: gamewire login's, which
// the clients of the NEX services (gamewire nex ...) share.
type loginOptions struct {
	prudpFlags
	user, password string
	timeout        time.Duration
	server         string     // login's --server (nex ranking and datastore have their own)
	format         formatFlag // login's --format
	insecure       bool
	flags          *pflag.FlagSet // where they were registered: was --password given?
	cmd            *cobra.Command // the command they belong to: where progress goes
}

// registerLogin adds the login flags to cmd.
func (o *loginOptions) registerLogin(cmd *cobra.Command) {
	o.register(cmd)
	o.cmd = cmd
	f := cmd.Flags()
	f.StringVar(&o.user, "user", "", "user name (NEX names normal accounts by their PID)")
	f.StringVar(&o.password, "password", "", "password (only derives the key that opens the ticket; never sent)")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up after this long")
	f.BoolVar(&o.insecure, "insecure-skip-verify", false, "nex-lite over wss:// or tls://: accept any server certificate")
	_ = cmd.MarkFlagRequired("user")
	// The login flow is Kerberos, which Hyperscape does not have (login).
	f.Lookup("dialect").Usage = "PRUDP dialect: nex-v1, nex-v0, nex-v0-friends, nex-lite (ADDR a ws/wss/tcp/tls URL) or quazal"
	o.flags = f
}

func (o *loginOptions) run(cmd *cobra.Command, addr string) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	sess, err := o.login(ctx, addr)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	out := cmd.OutOrStdout()
	if o.format.json() {
		err = writeJSON(out, struct {
			PID          uint64 `json:"pid"`
			Secure       string `json:"secure"`
			Public       string `json:"public"`
			ConnectionID uint32 `json:"connection_id"`
			Server       string `json:"server"`
		}{uint64(sess.PID), sess.SecureURL.String(), sess.PublicURL.String(), sess.ConnectionID, sess.BuildName})
	} else {
		fmt.Fprintf(out, "pid %d\nsecure %s\npublic %s\nconnection id %d\nserver %s\n",
			sess.PID, sess.SecureURL, sess.PublicURL, sess.ConnectionID, sess.BuildName)
	}
	closeSession(sess)
	return err
}

// login runs the NEX login flow at addr with o's settings.
func (o *loginOptions) login(ctx context.Context, addr string) (*nex.Session, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	if cfg.Dialect == prudp.Hyperscape {
		// The NEX secure server is entered with a Kerberos ticket; Hyperscape keys
		// its connections by the ECDH exchange instead (docs/prudp-hyperscape.md).
		return nil, errors.New("--dialect hyperscape: Hyperscape connections are keyed by ECDH, not by a Kerberos ticket, so the NEX login flow does not apply (use gamewire connect --dialect hyperscape --cert-pub F)")
	}
	lc := nex.LoginConfig{User: o.user, Password: o.password, Config: cfg, Logger: cfg.Logger}
	isURL := strings.Contains(addr, "://")
	switch {
	case cfg.Dialect == prudp.NEXLite && !isURL:
		return nil, fmt.Errorf("--dialect nex-lite logs in at a URL (ws://, wss://, tcp://, tls://), not %q", addr)
	case cfg.Dialect != prudp.NEXLite && isURL:
		return nil, fmt.Errorf("%s is a URL: NEX over WebSocket or TCP needs --dialect nex-lite", addr)
	case cfg.Dialect == prudp.NEXLite:
		// Switch servers: 8-byte PIDs and the Switch key derivation; both
		// servers sit behind the one URL, on virtual ports 1 and 2.
		lc.Config.Kerberos = kerberos.Switch
		lc.Config.Port = 1
		lc.Derivation = auth.DeriveSwitch
		lcfg := &lite.Config{Logger: cfg.Logger}
		if o.insecure {
			lcfg.TLS = &tls.Config{InsecureSkipVerify: true}
		}
		lc.Dial = func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
			return lite.Dial(ctx, url, c, lcfg)
		}
	}
	if o.flags != nil && !o.flags.Changed("password") {
		// Without it the ticket would be opened with the key of an empty
		// password, and the failure would read as a wrong password.
		return nil, errors.New("--password is missing: the password derives the key that opens the ticket (it is never sent); guest's is MMQea3n!fsik")
	}
	if o.cmd != nil {
		lc.Dial = withProgress(o.cmd.ErrOrStderr(), progressEvery(o.timeout), o.timeout, lc.Dial)
	}
	sess, err := nex.Login(ctx, addr, lc)
	if err != nil {
		if errors.Is(err, nex.ErrSecureRefused) {
			return nil, explainSecure(err, o.timeout)
		}
		return nil, explainRefusal(explainHandshake(err, addr, cfg, o.timeout))
	}
	return sess, nil
}

// explainRefusal adds what an operator can do to a login the server refused
// with a result that names no cause a user can fix.
func explainRefusal(err error) error {
	switch {
	case errors.Is(err, types.RendezVousMaxConnectionsReached):
		return fmt.Errorf("%w (the server has no secure node with room: with --role auth, is a `serve --role secure` node running on the same store? Its log says)", err)
	case errors.Is(err, types.CoreException):
		return fmt.Errorf("%w (the server failed to answer: its log names the cause, a database error for instance)", err)
	}
	return err
}

// explainSecure says why a secure connection that timed out may have stayed
// unanswered: the authentication server answered and issued a ticket, so the
// dialect and access key are right; the secure server drops a CONNECT whose
// ticket it cannot open.
func explainSecure(err error, timeout time.Duration) error {
	if !errors.Is(err, prudp.ErrHandshake) || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("the secure server did not answer within %v, after the authentication server issued a ticket: "+
		"it drops a CONNECT whose ticket it cannot open (a ticket for another server key, another Kerberos format or session "+
		"key size), and its address in the station url may not be reachable from here: %w", timeout, err)
}

// closeSession closes a session gracefully, 2 s at most.
func closeSession(sess *nex.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = sess.Close(ctx)
}
