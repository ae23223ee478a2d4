package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/prudp/wire/record"
)

// prudpHexOnlyFlags apply to PRUDP --hex decoding only: a capture file refuses them.
var prudpHexOnlyFlags = []string{"checksum", "rc4-key", "decrypt"}

// decodePRUDPOptions are the flags only PRUDP --hex decoding uses (docs/cli.md).
type decodePRUDPOptions struct {
	checksum int
	rc4Key   string
	decrypt  bool
}

// register adds the PRUDP --hex flags to decode's flag set f.
func (p *decodePRUDPOptions) register(f *pflag.FlagSet) {
	f.IntVar(&p.checksum, "checksum", 0, "Quazal checksum size for --hex: 1 or 4 (default: whichever verifies)")
	f.StringVar(&p.rc4Key, "rc4-key", "", `RC4 key for DATA payloads, fresh state per packet (text, or "hex:..." for bytes); adds plain_hex`)
	f.BoolVar(&p.decrypt, "decrypt", false, `decrypt DATA payloads with the dialect's default key ("CD&ML"); adds plain_hex`)
}

// decodePRUDP decodes the PRUDP packets in --hex, one record per packet.
func (o *decodeOptions) decodePRUDP(cmd *cobra.Command) error {
	raw, err := o.hexBytes()
	if err != nil {
		return err
	}
	if len(o.dialect) > 1 {
		return errors.New("decode: give --dialect once with --hex")
	}
	name := "auto"
	if len(o.dialect) == 1 {
		name = o.dialect[0]
	}
	opts := record.Options{Decrypt: o.prudp.decrypt}
	if cmd.Flags().Changed("rc4-key") {
		if opts.Decrypt {
			return errors.New("decode: give --rc4-key or --decrypt, not both")
		}
		if opts.RC4Key, err = parseKeyFlag(o.prudp.rc4Key); err != nil {
			return err
		}
	}
	d, err := record.Resolve(name, raw, o.accessKey, o.prudp.checksum)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	recs, decErr := record.DecodeAll(d, raw, opts)
	out := cmd.OutOrStdout()
	for i := range recs {
		if o.format == "json" {
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
