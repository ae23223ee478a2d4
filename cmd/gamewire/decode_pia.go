package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/pia"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// registerPia adds decode's Pia flags to f: the shared session flag set (pia.go).
func (o *decodeOptions) registerPia(f *pflag.FlagSet) {
	o.pia.register(f, false)
	f.Lookup("pia-version").Usage = "decode --hex as a Pia packet of this version (5.27, 6.16, ... or auto from the version bits)"
	f.Lookup("pia-network").Usage += " (default ldn, or nex with --gathering-id)"
}

// piaSessionFlagNames are the names of the shared Pia session flags.
var piaSessionFlagNames = []string{"pia-version", "pia-network", "pia-key", "pia-network-id", "gathering-id", "connection-id", "src-mac", "src-ip"}

// piaRequested reports whether the decode flags ask for a Pia packet: any Pia
// flag does, so that one given without --pia-version is an error, not ignored.
func piaRequested(cmd *cobra.Command) bool {
	for _, n := range piaSessionFlagNames {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

// decodePia decodes the Pia packet in --hex.
func (o *decodeOptions) decodePia(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("pia-version") {
		for _, n := range piaSessionFlagNames {
			if cmd.Flags().Changed(n) {
				return fmt.Errorf("decode: --%s is a Pia flag: give --pia-version V (or auto) to decode --hex as Pia", n)
			}
		}
	}
	if o.hex == "" {
		return fmt.Errorf("decode: --pia-version needs --hex")
	}
	raw, err := o.hexBytes()
	if err != nil {
		return err
	}
	network := "ldn"
	if o.pia.gatheringID != "" {
		network = "nex"
	}
	s, err := o.pia.parse(true, network)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	rec, derr := pia.Describe(raw, s.cfg, s.src)
	out := cmd.OutOrStdout()
	if o.format == "json" {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
	} else {
		fmt.Fprint(out, rec.Text())
	}
	if derr != nil {
		return fmt.Errorf("decode: %w", derr)
	}
	return nil
}

// piaParseNumber parses a decimal or 0x-prefixed hex number of up to 32 bits
// (a leading zero does not mean octal).
func piaParseNumber(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	base := 10
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s, base = s[2:], 16
	}
	v, err := strconv.ParseUint(s, base, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a 32-bit decimal or 0x hex number", s)
	}
	return uint32(v), nil
}

// piaParseMAC parses 12 hex digits, with or without ':' or '-' separators.
func piaParseMAC(s string) ([6]byte, error) {
	var mac [6]byte
	clean := strings.NewReplacer(":", "", "-", "").Replace(strings.TrimSpace(s))
	b, err := hex.DecodeString(clean)
	if err != nil || len(b) != 6 {
		return mac, fmt.Errorf("%q is not a MAC address (12 hex digits)", s)
	}
	copy(mac[:], b)
	return mac, nil
}
