package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp/wire/record"
)

// prudpHexOnlyFlags apply to PRUDP --hex decoding only: a capture file refuses them.
var prudpHexOnlyFlags = []string{"checksum", "rc4-key", "decrypt"}

// decodePRUDPFlags are the flags only PRUDP --hex decoding uses (docs/cli.md).
var decodePRUDPFlags struct {
	checksum int
	rc4Key   string
	decrypt  bool
}

func init() {
	f := decodeCmd.Flags()
	f.IntVar(&decodePRUDPFlags.checksum, "checksum", 0, "Quazal checksum size for --hex: 1 or 4 (default: whichever verifies)")
	f.StringVar(&decodePRUDPFlags.rc4Key, "rc4-key", "", `RC4 key for DATA payloads, fresh state per packet (text, or "hex:..." for bytes); adds plain_hex`)
	f.BoolVar(&decodePRUDPFlags.decrypt, "decrypt", false, `decrypt DATA payloads with the dialect's default key ("CD&ML"); adds plain_hex`)
}

// decodePRUDP decodes the PRUDP packets in --hex, one record per packet.
func decodePRUDP(cmd *cobra.Command) error {
	raw, err := hexFlag()
	if err != nil {
		return err
	}
	if len(decodeFlags.dialect) > 1 {
		return errors.New("decode: give --dialect once with --hex")
	}
	name := "auto"
	if len(decodeFlags.dialect) == 1 {
		name = decodeFlags.dialect[0]
	}
	opts := record.Options{Decrypt: decodePRUDPFlags.decrypt}
	if cmd.Flags().Changed("rc4-key") {
		if opts.Decrypt {
			return errors.New("decode: give --rc4-key or --decrypt, not both")
		}
		if opts.RC4Key, err = parseKeyFlag(decodePRUDPFlags.rc4Key); err != nil {
			return err
		}
	}
	d, err := record.Resolve(name, raw, decodeFlags.accessKey, decodePRUDPFlags.checksum)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	recs, decErr := record.DecodeAll(d, raw, opts)
	out := cmd.OutOrStdout()
	for i := range recs {
		if decodeFlags.format == "json" {
			line, err := json.Marshal(&recs[i])
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s\n", line)
		} else {
			fmt.Fprintln(out, recs[i].Text())
		}
	}
	if decErr != nil {
		return fmt.Errorf("decode: %w", decErr)
	}
	return nil
}

// parseKeyFlag reads a key given as text or as "hex:..." bytes.
func parseKeyFlag(s string) ([]byte, error) {
	if h, ok := strings.CutPrefix(s, "hex:"); ok {
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("decode: --rc4-key: %w", err)
		}
		return b, nil
	}
	if s == "" {
		return nil, errors.New("decode: --rc4-key is empty")
	}
	return []byte(s), nil
}
