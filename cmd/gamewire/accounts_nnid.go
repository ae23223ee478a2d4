package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/types"
)

// newNNIDCmd is `gamewire accounts nnid`: the Nintendo Network IDs the
// account services (serve --account-listen) log Wii U consoles and Cemu in
// with (docs/accounts.md).
func newNNIDCmd(o *accountsOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nnid",
		Short: "Manage the NNIDs Wii U consoles and Cemu log in with (add, list, passwd, disable, enable)",
		Long: `nnid manages Nintendo Network IDs: the accounts the NNAS service of
serve --account-listen logs Wii U consoles and Cemu in with. Each NNID has a NEX
account of the same PID whose password the server makes (16 characters, handed
to the console in nex_token; the Kerberos keys follow it). The console's own
account password is kept only as a verifier.

  gamewire accounts nnid add NNID [--pid N] [--email A] [--country CC] [--region N]
                                  [--mii-name NAME] [--password P | --password-stdin]
  gamewire accounts nnid list
  gamewire accounts nnid passwd NNID [--password P | --password-stdin]
  gamewire accounts nnid disable|enable NNID

A disabled NNID gets no tokens (NNAS 0108) and its tokens are refused at NEX
login (RendezVous::AccountDisabled).`,
	}
	var pid uint64
	var n credentials.NNID
	add := &cobra.Command{Use: "add NNID", Short: "Add an NNID and its NEX account", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := credentials.CheckUserID(args[0]); err != nil {
				return err
			}
			password, err := o.readPassword(cmd)
			if err != nil {
				return err
			}
			return o.withCredentials(cmd, storeCreate, func(s credentials.Store) error {
				n.UserID, n.PID = args[0], types.PID(pid)
				// The verifier covers the PID: pick it first when not given.
				placeholder := credentials.Verifier{}
				created, err := s.CreateNNID(cmd.Context(), n, placeholder)
				if err != nil {
					return err
				}
				v, err := credentials.NewVerifier(credentials.PasswordHash(created.PID, password))
				if err == nil {
					err = s.SetNNIDPassword(cmd.Context(), created.PID, v)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added NNID %q PID %d (NEX account %d)\n", created.UserID, created.PID, created.PID)
				return nil
			})
		}}
	f := add.Flags()
	f.Uint64Var(&pid, "pid", 0, "principal id (default: the next free one)")
	f.StringVar(&n.Email, "email", "", "e-mail address shown in the profile")
	f.StringVar(&n.Country, "country", "US", "country (ISO 3166 alpha-2)")
	f.IntVar(&n.Region, "region", 2, "region bit (1 JPN, 2 USA, 4 EUR, 8 AUS, ...)")
	f.StringVar(&n.BirthDate, "birth-date", "2000-01-01", "birth date (YYYY-MM-DD)")
	f.StringVar(&n.MiiName, "mii-name", "Player", "Mii name shown in the profile")
	passwd := &cobra.Command{Use: "passwd NNID", Short: "Change an NNID's account password", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			password, err := o.readPassword(cmd)
			if err != nil {
				return err
			}
			return o.withCredentials(cmd, storeExisting, func(s credentials.Store) error {
				got, _, err := s.NNIDByUserID(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				v, err := credentials.NewVerifier(credentials.PasswordHash(got.PID, password))
				if err == nil {
					err = s.SetNNIDPassword(cmd.Context(), got.PID, v)
				}
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "changed the password of NNID %q PID %d\n", got.UserID, got.PID)
				}
				return err
			})
		}}
	for _, c := range []*cobra.Command{add, passwd} {
		c.Flags().StringVar(&o.password, "password", "", "the account password (visible in the process list; prefer the prompt or --password-stdin)")
		c.Flags().BoolVar(&o.passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	}
	level := func(use, short string, lvl int8) *cobra.Command {
		return &cobra.Command{Use: use + " NNID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return o.withCredentials(cmd, storeExisting, func(s credentials.Store) error {
					got, _, err := s.NNIDByUserID(cmd.Context(), args[0])
					if err == nil {
						err = s.SetAccessLevel(cmd.Context(), got.PID, lvl)
					}
					if err == nil {
						fmt.Fprintf(cmd.OutOrStdout(), "%sd NNID %q PID %d\n", use, got.UserID, got.PID)
					}
					return err
				})
			}}
	}
	list := &cobra.Command{Use: "list", Short: "List the NNIDs", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.withCredentials(cmd, storeReadOnly, func(s credentials.Store) error {
				list, err := s.NNIDs(cmd.Context())
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "PID\tNNID\tSTATE\tCOUNTRY\tCREATED")
				for _, n := range list {
					state := "active"
					if n.AccessLevel < 0 {
						state = "disabled"
					}
					fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", n.PID, displayName(n.UserID, maxNameColumn), state,
						displayName(n.Country, 8), n.Created.Format("2006-01-02T15:04:05Z"))
				}
				return w.Flush()
			})
		}}
	cmd.AddCommand(add, list, passwd, level("disable", "Disable an NNID (no tokens, logins refused)", -1),
		level("enable", "Enable a disabled NNID", 0))
	return cmd
}

// withCredentials opens the store and runs f on its NNIDs.
func (o *accountsOptions) withCredentials(cmd *cobra.Command, mode storeMode, f func(s credentials.Store) error) error {
	s, err := o.open(cmd, mode)
	if err != nil {
		return err
	}
	defer s.Close()
	cs, ok := s.(interface{ Credentials() *sqlstore.Credentials })
	if !ok {
		return errors.New("accounts: this store keeps no NNIDs")
	}
	return f(cs.Credentials())
}
