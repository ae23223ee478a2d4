package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/types"
)

// newAccountsCmd is `gamewire accounts`: the NEX server's account store (nex/accounts).
func newAccountsCmd() *cobra.Command {
	o := &accountsOptions{}
	cmd := &cobra.Command{
		Use:   "accounts",
		Short: "Manage the NEX server's accounts (add, list, passwd)",
		Long: `accounts manages the SQLite account store a NEX server reads (docs/nex.md).
The data directory is created on first use, with the special accounts
(Quazal Authentication, Quazal Rendez-Vous, guest with its published password, ...).
Only keys derived from passwords are stored; passwords are never printed.

  gamewire accounts add    [--data DIR] [--pid N] [--name NAME] [--password P | --password-stdin]
  gamewire accounts list   [--data DIR]
  gamewire accounts passwd [--data DIR] NAME|PID [--password P | --password-stdin]
  gamewire accounts nnid add|list|passwd|disable|enable ...   (NNIDs: docs/accounts.md)

Without --password, the password is asked for on the terminal. With --store
postgres://..., the commands work on the PostgreSQL database serve --store uses
(docs/deploy.md) instead.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.data, "data", "", "data directory (default $XDG_DATA_HOME/gamewire or ~/.local/share/gamewire)")
	pf.StringVar(&o.store, "store", "", "the PostgreSQL database serve --store uses (postgres://...) instead of SQLite in --data")

	add := &cobra.Command{Use: "add", Short: "Add an account", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.runAdd(cmd) }}
	add.Flags().Uint64Var(&o.pid, "pid", 0, "principal id (default: the next free one, from 1000)")
	add.Flags().StringVar(&o.name, "name", "", "user name (default: the PID in decimal, as NEX names accounts)")
	passwd := &cobra.Command{Use: "passwd NAME|PID", Short: "Change an account's password", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.runPasswd(cmd, args[0]) }}
	for _, c := range []*cobra.Command{add, passwd} {
		c.Flags().StringVar(&o.password, "password", "", "the password (visible in the process list; prefer the prompt or --password-stdin)")
		c.Flags().BoolVar(&o.passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	}
	list := &cobra.Command{Use: "list", Short: "List the accounts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.runList(cmd) }}
	exportKey := &cobra.Command{Use: "export-key [NAME|PID]", Args: cobra.MaximumNArgs(1),
		Short: "Print an account's Kerberos key as a keys-file line (default: the secure server's)",
		Long: `export-key prints the Kerberos key of an account (by default Quazal Rendez-Vous,
PID 2: the secure server, whose key opens every ticket a client presents) as a
line of a gamewire decode --keys file:

  gamewire accounts export-key >> keys.txt
  gamewire decode capture.pcap --keys keys.txt

With it the dissector opens the ticket in each secure CONNECT, takes the session
key and decrypts every secure connection of the capture. The key is a secret: it
lets whoever holds it read and forge the server's tickets. --switch prints the
key of the Switch derivation (PRUDP Lite servers).`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.runExportKey(cmd, args) }}
	exportKey.Flags().BoolVar(&o.switchKey, "switch", false, "the key of the Switch derivation (kerberos.DeriveKeySwitch) instead of NEX's")
	addFormatFlag(list, &o.format)
	cmd.AddCommand(add, list, passwd, newNNIDCmd(o), exportKey)
	return cmd
}

// runExportKey prints an account's Kerberos key as a keys-file line.
func (o *accountsOptions) runExportKey(cmd *cobra.Command, args []string) error {
	s, err := o.open(cmd, storeReadOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := cmd.Context()
	var a auth.Account
	switch {
	case len(args) == 0:
		a, err = s.AccountByPID(ctx, auth.PIDQuazalRendezVous)
	default:
		if pid, perr := strconv.ParseUint(args[0], 10, 64); perr == nil {
			if a, err = s.AccountByPID(ctx, types.PID(pid)); errors.Is(err, auth.ErrNoAccount) {
				a, err = s.AccountByName(ctx, args[0])
			}
		} else {
			a, err = s.AccountByName(ctx, args[0])
		}
	}
	if err != nil {
		return fmt.Errorf("accounts export-key: %w", err)
	}
	d, what := auth.DeriveNEX, "NEX"
	if o.switchKey {
		d, what = auth.DeriveSwitch, "Switch"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "# the Kerberos key (%s derivation) of PID %d %q; a secret: it opens and forges this server's tickets\nkerberos-key %d %x\n",
		what, a.PID, a.Name, a.PID, a.Key(d))
	return nil
}

// accountsOptions are the flags of accounts and its subcommands: --data and
// --store are the group's (persistent), the rest its subcommands'.
type accountsOptions struct {
	data          string
	store         string
	pid           uint64
	name          string
	password      string
	passwordStdin bool
	format        formatFlag // list's --format
	switchKey     bool
}

// openStore opens (creating it on first use) the account store in dir, or in
// accounts.DefaultDir when dir is empty: what accounts --data and serve --data share.
// Warnings about the store's file modes go to standard error.
func openStore(ctx context.Context, dir string) (s *accounts.Store, created bool, err error) {
	return openStoreWith(ctx, dir, &accounts.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
}

func openStoreWith(ctx context.Context, dir string, opts *accounts.Options) (s *accounts.Store, created bool, err error) {
	if dir == "" {
		if dir, err = accounts.DefaultDir(); err != nil {
			return nil, false, err
		}
	}
	s, created, err = accounts.OpenWith(ctx, dir, opts)
	if errors.Is(err, accounts.ErrNoStore) {
		err = fmt.Errorf("%w (gamewire accounts add creates one; check --data)", err)
	}
	return s, created, err
}

// storeMode is how a subcommand opens the store: reading commands never create
// one (a mistyped --data is an error, not a new empty store).
type storeMode int

const (
	storeCreate   storeMode = iota // add: create the store on first use
	storeExisting                  // passwd: change an existing store
	storeReadOnly                  // list: read only
)

// accountManager is what add, list and passwd need of a store (accounts.Store,
// pgstore.Store).
type accountManager interface {
	Add(ctx context.Context, n accounts.NewAccount) (auth.Account, error)
	SetPassword(ctx context.Context, nameOrPID, password string) (auth.Account, error)
	List(ctx context.Context) ([]accounts.Info, error)
	auth.Accounts
	Close() error
}

func (o *accountsOptions) open(cmd *cobra.Command, mode storeMode) (accountManager, error) {
	if st := o.store; st != "" {
		if !isPostgres(st) {
			return nil, fmt.Errorf("--store %q: want a postgres:// or postgresql:// URL (the SQLite store is chosen with --data)", st)
		}
		if mode == storeReadOnly {
			s, err := pgstore.OpenExisting(cmd.Context(), st) // list changes nothing, not even the schema
			return s, pgHint(st, err)
		}
		s, err := pgstore.Open(cmd.Context(), st) // applies the schema's migrations, as serve does
		return s, pgHint(st, err)
	}
	opts := &accounts.Options{
		ReadOnly: mode == storeReadOnly,
		NoCreate: mode == storeExisting,
		Logger:   slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)),
	}
	s, created, err := openStoreWith(cmd.Context(), o.data, opts)
	if err != nil {
		return nil, err
	}
	if created {
		fmt.Fprintf(cmd.ErrOrStderr(), "created account store %s\n", s.Path())
	}
	return s, nil
}

// readPassword takes the password from --password, --password-stdin or a
// terminal prompt (asked twice, not echoed).
func (o *accountsOptions) readPassword(cmd *cobra.Command) (string, error) {
	switch {
	case o.password != "" && o.passwordStdin:
		return "", errors.New("give --password or --password-stdin, not both")
	case o.password != "":
		return o.password, accounts.CheckPassword(o.password)
	case o.passwordStdin:
		// Read at most one byte past the longest password and its line end: a
		// huge standard input is refused, not read into memory.
		in := io.LimitReader(cmd.InOrStdin(), accounts.MaxPasswordLen+3)
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read password from stdin: %w", err)
		}
		password := strings.TrimRight(line, "\r\n")
		return password, accounts.CheckPassword(password)
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", errors.New("no password: give --password, --password-stdin, or run on a terminal")
	}
	ask := func(prompt string) (string, error) {
		fmt.Fprint(cmd.ErrOrStderr(), prompt)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(cmd.ErrOrStderr())
		return string(b), err
	}
	p1, err := ask("Password: ")
	if err != nil {
		return "", err
	}
	p2, err := ask("Again: ")
	if err != nil {
		return "", err
	}
	if p1 != p2 {
		return "", errors.New("the passwords differ")
	}
	return p1, accounts.CheckPassword(p1)
}

func (o *accountsOptions) runAdd(cmd *cobra.Command) error {
	if err := accounts.CheckName(o.name); err != nil {
		return err // before asking for a password
	}
	return o.changeAccount(cmd, storeCreate, "added account", func(s accountManager, password string) (auth.Account, error) {
		return s.Add(cmd.Context(), accounts.NewAccount{PID: types.PID(o.pid), Name: o.name, Password: password})
	})
}

func (o *accountsOptions) runPasswd(cmd *cobra.Command, nameOrPID string) error {
	return o.changeAccount(cmd, storeExisting, "changed the password of", func(s accountManager, password string) (auth.Account, error) {
		a, err := s.SetPassword(cmd.Context(), nameOrPID, password)
		if errors.Is(err, auth.ErrNoAccount) {
			return a, fmt.Errorf("accounts passwd: no account is named %q or has that PID (gamewire accounts list shows them; accounts add creates one): %w", nameOrPID, err)
		}
		return a, err
	})
}

// changeAccount is what add and passwd share: it reads the password (before opening
// the store, so a refused password creates nothing), applies change, and prints
// what was done to which account.
func (o *accountsOptions) changeAccount(cmd *cobra.Command, mode storeMode, did string, change func(s accountManager, password string) (auth.Account, error)) error {
	password, err := o.readPassword(cmd)
	if err != nil {
		return err
	}
	s, err := o.open(cmd, mode)
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := change(s, password)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s PID %d name %q\n", did, a.PID, a.Name) // %q escapes control characters
	return nil
}

// maxNameColumn is the widest name accounts list prints (names may be up to
// accounts.MaxNameLen bytes, and a store written by another program longer).
const maxNameColumn = 40

// displayName makes a name safe for a terminal and at most width runes wide: a
// name with a control character, an invisible format character (a bidirectional
// override) or bytes that are not UTF-8 is printed quoted with Go escapes
// ("\x1b[31m"), and a name too long is cut with "…".
func displayName(name string, width int) string {
	safe := utf8.ValidString(name)
	for _, r := range name {
		if !unicode.IsPrint(r) {
			safe = false
			break
		}
	}
	if !safe {
		name = strconv.Quote(name)
	}
	if utf8.RuneCountInString(name) > width {
		runes := []rune(name)
		name = string(runes[:width-1]) + "…"
	}
	return name
}

func (o *accountsOptions) runList(cmd *cobra.Command) error {
	s, err := o.open(cmd, storeReadOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	list, err := s.List(cmd.Context())
	if err != nil {
		return err
	}
	if o.format.json() {
		for _, a := range list {
			kind := "user"
			if a.Special {
				kind = "special"
			}
			if err := writeJSON(cmd.OutOrStdout(), map[string]any{"pid": a.PID, "name": a.Name, "kind": kind, "created": a.Created}); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PID\tNAME\tKIND\tCREATED")
	for _, a := range list {
		kind := "user"
		if a.Special {
			kind = "special"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", a.PID, displayName(a.Name, maxNameColumn), kind, displayName(a.Created, maxNameColumn))
	}
	return w.Flush()
}
