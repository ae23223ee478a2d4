package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex"
)

// loginCmd is `gamewire login`: the NEX client flow (nex.Login).
var loginCmd = &cobra.Command{
	Use:   "login ADDR",
	Short: "Log in to a NEX server (ticket granting, secure connection, Register)",
	Long: `login logs in to the NEX server whose authentication server is at ADDR:
Login, RequestTicket when the ticket is not for the secure server, a secure
connection with the ticket, Register; then prints the PID, the secure station
url, the public url and the connection id.

  gamewire login ADDR --user U --password P [--dialect nex-v1|nex-v0|nex-v0-friends] [--access-key K]`,
	Args: cobra.ExactArgs(1),
	RunE: runLogin,
}

var loginFlags struct {
	prudpFlags
	user, password string
	timeout        time.Duration
}

func init() {
	loginFlags.register(loginCmd)
	f := loginCmd.Flags()
	f.StringVar(&loginFlags.user, "user", "", "user name (NEX names normal accounts by their PID)")
	f.StringVar(&loginFlags.password, "password", "", "password (only derives the key that opens the ticket; never sent)")
	f.DurationVar(&loginFlags.timeout, "timeout", 30*time.Second, "give up after this long")
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
	sess, err := nex.Login(ctx, args[0], nex.LoginConfig{User: loginFlags.user, Password: loginFlags.password, Config: cfg, Logger: cfg.Logger})
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
