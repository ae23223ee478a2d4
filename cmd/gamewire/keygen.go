package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp/hyperscape"
)

// keygenCmd is `gamewire keygen`: key material for dialects that need it.
var keygenCmd = &cobra.Command{
	Use:   "keygen",
	Short: "Generate key material (hyperscape: the server's certification key pair)",
}

var keygenHyperscapeOut string

// keygenHyperscapeCmd is `gamewire keygen hyperscape --out DIR`.
var keygenHyperscapeCmd = &cobra.Command{
	Use:   "hyperscape --out DIR",
	Short: "Write a Hyperscape certification key pair (P-256) as PEM files",
	Long: `keygen hyperscape writes a new P-256 certification key pair to DIR:

  key.pem      PKCS#8 private key, mode 0600 ("PRIVATE KEY"; what
               openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out key.pem writes)
  key.pub.pem  PKIX public key ("PUBLIC KEY"; what
               openssl ec -in key.pem -pubout -out key.out writes)

The server signs its ephemeral CONNECT key with key.pem (serve --cert-key);
clients verify with key.pub.pem (connect --cert-pub). Existing files are
never overwritten.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		if keygenHyperscapeOut == "" {
			return errors.New("keygen hyperscape: --out DIR is required")
		}
		key, err := hyperscape.GenerateCertKey()
		if err != nil {
			return fmt.Errorf("keygen hyperscape: %w", err)
		}
		priv, pub, err := hyperscape.WriteKeyPair(keygenHyperscapeOut, key)
		if err != nil {
			return fmt.Errorf("keygen hyperscape: %w", err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "private key: %s\npublic key:  %s\n", priv, pub)
		return nil
	},
}

func init() {
	keygenHyperscapeCmd.Flags().StringVar(&keygenHyperscapeOut, "out", "", "directory to write key.pem and key.pub.pem to (created if missing)")
	keygenCmd.AddCommand(keygenHyperscapeCmd)
	rootCmd.AddCommand(keygenCmd)
}
