package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/types"
)

// newKeygenSwitchIssuerCmd is `gamewire keygen switch-issuer --out DIR`: an
// RS256 key that signs Switch-style ID tokens, and the key set serve pins.
func newKeygenSwitchIssuerCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "switch-issuer --out DIR",
		Short: "Write a key that signs Switch ID tokens (issuer.pem) and its key set (jwks.json)",
		Long: `keygen switch-issuer writes a new RSA-2048 key for signing Switch-style BaaS ID
tokens (RS256 JWTs, nintendo-wiki "BaaS") to DIR:

  issuer.pem  PKCS#8 private key with its key id (Key-Id header), mode 0600
  jwks.json   the public key as a JSON Web Key Set: what serve --switch-jwks pins

For tests and private servers whose BaaS stand-in is gamewire itself; mint tokens
with gamewire keygen switch-token. Existing files are never overwritten.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("keygen switch-issuer: --out DIR is required")
			}
			iss, err := credentials.NewIssuer("")
			if err != nil {
				return fmt.Errorf("keygen switch-issuer: %w", err)
			}
			priv, err := iss.MarshalPrivateKey()
			if err != nil {
				return fmt.Errorf("keygen switch-issuer: %w", err)
			}
			jwks, err := iss.JWKS()
			if err != nil {
				return fmt.Errorf("keygen switch-issuer: %w", err)
			}
			if err := os.MkdirAll(out, 0o700); err != nil {
				return fmt.Errorf("keygen switch-issuer: %w", err)
			}
			kp, jp := filepath.Join(out, "issuer.pem"), filepath.Join(out, "jwks.json")
			for _, f := range []struct {
				path string
				data []byte
				mode os.FileMode
			}{{kp, priv, 0o600}, {jp, append(jwks, '\n'), 0o644}} {
				fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
				if err != nil {
					return fmt.Errorf("keygen switch-issuer: %w", err)
				}
				_, err = fh.Write(f.data)
				if cerr := fh.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return fmt.Errorf("keygen switch-issuer: %w", err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "issuer key: %s (key id %s)\nkey set:    %s\n", kp, iss.KID, jp)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write issuer.pem and jwks.json to (created if missing)")
	return cmd
}

// newKeygenSwitchTokenCmd is `gamewire keygen switch-token`: an ID token
// signed with a switch-issuer key.
func newKeygenSwitchTokenCmd() *cobra.Command {
	var key, pid, title, iss, aud string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "switch-token --key DIR/issuer.pem --pid N --title-id HEX",
		Short: "Print a Switch ID token (RS256 JWT) for a user and title",
		Long: `keygen switch-token prints an ID token as a Switch game presents it to NEX
(AuthenticationInfo token type 2): sub the user id (the PID, 16 hex digits),
aud ed9e2f05d286f7b8, typ id_token, nintendo.ai the title id, signed with a key
from gamewire keygen switch-issuer.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if key == "" || pid == "" || title == "" {
				return errors.New("keygen switch-token: --key, --pid and --title-id are required")
			}
			b, err := os.ReadFile(key)
			if err != nil {
				return fmt.Errorf("keygen switch-token: %w", err)
			}
			issuer, err := credentials.ParseIssuer(b, iss)
			if err != nil {
				return fmt.Errorf("keygen switch-token: %w", err)
			}
			issuer.Audience = aud
			p, err := strconv.ParseUint(pid, 10, 64)
			if err != nil {
				return fmt.Errorf("keygen switch-token: --pid %q: want a decimal PID", pid)
			}
			t, err := strconv.ParseUint(title, 16, 64)
			if err != nil {
				return fmt.Errorf("keygen switch-token: --title-id %q: want 16 hex digits", title)
			}
			tok, err := issuer.Mint(types.PID(p), t, time.Now(), ttl)
			if err != nil {
				return fmt.Errorf("keygen switch-token: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&key, "key", "", "the issuer key (issuer.pem from keygen switch-issuer)")
	f.StringVar(&pid, "pid", "", "the user's PID in decimal (the token's sub, in hex)")
	f.StringVar(&title, "title-id", "", "the title id (16 hex digits; the token's nintendo.ai)")
	f.StringVar(&iss, "issuer", "", "the token's iss")
	f.StringVar(&aud, "audience", credentials.DefaultAudience, "the token's aud")
	f.DurationVar(&ttl, "ttl", 3*time.Hour, "how long the token is valid")
	return cmd
}
