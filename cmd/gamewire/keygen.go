package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// newKeygenCmd is `gamewire keygen`: key material for dialects that need it.
func newKeygenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Generate key material (Hyperscape certification keys, Kerberos password keys, Switch ID token issuers)",
	}
	cmd.AddCommand(newKeygenKerberosCmd(), newKeygenHyperscapeCmd(), newKeygenSwitchIssuerCmd(), newKeygenSwitchTokenCmd())
	return cmd
}

// newKeygenHyperscapeCmd is `gamewire keygen hyperscape --out DIR`.
func newKeygenHyperscapeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "hyperscape [--out DIR]",
		Short: "Write a Hyperscape certification key pair (P-256) as PEM files",
		Long: `keygen hyperscape writes a new P-256 certification key pair to DIR (default: the
data directory's hyperscape/ folder, $XDG_DATA_HOME/gamewire/hyperscape or
~/.local/share/gamewire/hyperscape, so that no key lands in a source tree):

  key.pem      PKCS#8 private key, mode 0600 ("PRIVATE KEY"; what
               openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out key.pem writes)
  key.pub.pem  PKIX public key ("PUBLIC KEY"; what
               openssl ec -in key.pem -pubout -out key.pub.pem writes)

The server signs its ephemeral CONNECT key with key.pem (serve --cert-key);
clients verify with key.pub.pem (connect --cert-pub). Existing files are
never overwritten.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				dir, err := accounts.DefaultDir()
				if err != nil {
					return fmt.Errorf("keygen hyperscape: no --out and no data directory: %w", err)
				}
				out = filepath.Join(dir, "hyperscape")
			}
			key, err := hyperscape.GenerateCertKey()
			if err != nil {
				return fmt.Errorf("keygen hyperscape: %w", err)
			}
			priv, pub, err := hyperscape.WriteKeyPair(out, key)
			if err != nil {
				return fmt.Errorf("keygen hyperscape: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "private key: %s\npublic key:  %s\n", priv, pub)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write key.pem and key.pub.pem to, created if missing (default: the data directory's hyperscape/)")
	return cmd
}

// keygenKerberosOptions are the flags of keygen kerberos.
type keygenKerberosOptions struct {
	pid      uint64
	password string
	platform string
}

// newKeygenKerberosCmd is `gamewire keygen kerberos --pid N --password P`.
func newKeygenKerberosCmd() *cobra.Command {
	o := &keygenKerberosOptions{}
	cmd := &cobra.Command{
		Use:   "kerberos --pid N --password P [--platform 3ds|switch]",
		Short: "Print the Kerberos key derived from an account's password, in hex",
		Long: `keygen kerberos prints the 16-byte Kerberos key of an account (nintendo-wiki "Kerberos Authentication",
"Key Derivation"), for keys files and server configuration:

  --platform 3ds     3DS / Wii U and Quazal: MD5 applied 65000 + pid % 1024 times (default)
  --platform switch  Switch: MD5(MD5(password) || LE64(pid))`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("pid") || !cmd.Flags().Changed("password") {
				return errors.New("keygen kerberos: --pid and --password are required")
			}
			var key [16]byte
			switch o.platform {
			case "3ds", "wiiu", "quazal":
				key = kerberos.DeriveKey(o.password, o.pid)
			case "switch":
				key = kerberos.DeriveKeySwitch(o.password, o.pid)
			default:
				return fmt.Errorf("keygen kerberos: --platform must be 3ds or switch, not %q", o.platform)
			}
			fmt.Fprintln(cmd.OutOrStdout(), hex.EncodeToString(key[:]))
			return nil
		},
	}
	kf := cmd.Flags()
	kf.Uint64Var(&o.pid, "pid", 0, "principal id of the account")
	kf.StringVar(&o.password, "password", "", "the account's password")
	kf.StringVar(&o.platform, "platform", "3ds", "key derivation: 3ds (also Wii U, Quazal) or switch")
	return cmd
}
