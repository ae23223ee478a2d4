package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/pia"
	"github.com/spf13/cobra"
)

// piaFlags holds the decode flags of a Pia packet (docs/pia.md).
var piaFlags struct {
	version      string
	network      string
	key          string
	networkID    string
	srcMAC       string
	srcIP        string
	gatheringID  string
	connectionID string
}

func init() {
	f := decodeCmd.Flags()
	f.StringVar(&piaFlags.version, "pia-version", "", "decode --hex as a Pia packet of this version (5.27, 6.16, ... or auto from the version bits)")
	f.StringVar(&piaFlags.network, "pia-network", "", "Pia network for the nonce: nex, ldn, lan or npln (default ldn, or nex with --gathering-id)")
	f.StringVar(&piaFlags.key, "pia-key", "", "Pia session key, 32 hex digits (see gamewire pia session-key)")
	f.StringVar(&piaFlags.networkID, "pia-network-id", "", "LDN session id (up to 5.44), LDN/NPLN network id (6.x); decimal or 0x hex")
	f.StringVar(&piaFlags.srcMAC, "src-mac", "", "source MAC address (LDN up to 5.44), 12 hex digits with or without colons")
	f.StringVar(&piaFlags.srcIP, "src-ip", "", "source IP address (LAN, LDN 6.x)")
	f.StringVar(&piaFlags.gatheringID, "gathering-id", "", "NEX gathering id (NEX nonce); decimal or 0x hex")
	f.StringVar(&piaFlags.connectionID, "connection-id", "", "override the connection byte of the nonce (default: from the header); decimal or 0x hex")
}

// piaRequested reports whether the decode flags ask for a Pia packet.
func piaRequested(cmd *cobra.Command) bool { return cmd.Flags().Changed("pia-version") }

// decodePia decodes the Pia packet in --hex.
func decodePia(cmd *cobra.Command) error {
	if decodeFlags.hex == "" {
		return fmt.Errorf("decode: --pia-version needs --hex")
	}
	raw, err := hexFlag()
	if err != nil {
		return err
	}
	cfg, src, err := piaConfigFromFlags()
	if err != nil {
		return err
	}
	rec, derr := pia.Describe(raw, cfg, src)
	out := cmd.OutOrStdout()
	if decodeFlags.format == "json" {
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

func piaConfigFromFlags() (pia.Config, pia.Source, error) {
	var cfg pia.Config
	var src pia.Source
	if v := strings.TrimSpace(piaFlags.version); v != "auto" && v != "" {
		ver, err := pia.ParseVersion(v)
		if err != nil {
			return cfg, src, fmt.Errorf("decode: --pia-version: %w", err)
		}
		cfg.Version = ver
	}
	network := piaFlags.network
	if network == "" {
		network = "ldn"
		if piaFlags.gatheringID != "" {
			network = "nex"
		}
	}
	n, err := pia.ParseNetwork(network)
	if err != nil {
		return cfg, src, fmt.Errorf("decode: --pia-network: %w", err)
	}
	cfg.Network = n
	if piaFlags.key != "" {
		if cfg.SessionKey, err = parseHex(piaFlags.key); err != nil {
			return cfg, src, fmt.Errorf("decode: --pia-key: %w", err)
		}
		if len(cfg.SessionKey) != 16 {
			return cfg, src, fmt.Errorf("decode: --pia-key: %d bytes, want 16 (32 hex digits)", len(cfg.SessionKey))
		}
	}
	if piaFlags.networkID != "" {
		if cfg.NetworkID, err = piaParseNumber(piaFlags.networkID); err != nil {
			return cfg, src, fmt.Errorf("decode: --pia-network-id: %w", err)
		}
	}
	if piaFlags.gatheringID != "" {
		if cfg.GatheringID, err = piaParseNumber(piaFlags.gatheringID); err != nil {
			return cfg, src, fmt.Errorf("decode: --gathering-id: %w", err)
		}
	}
	if piaFlags.connectionID != "" {
		v, err := piaParseNumber(piaFlags.connectionID)
		if err != nil || v > 0xFF {
			return cfg, src, fmt.Errorf("decode: --connection-id %q: want a number 0..255", piaFlags.connectionID)
		}
		cfg.OverrideConnectionID, cfg.ConnectionID = true, uint8(v)
	}
	if piaFlags.srcMAC != "" {
		if src.MAC, err = piaParseMAC(piaFlags.srcMAC); err != nil {
			return cfg, src, fmt.Errorf("decode: --src-mac: %w", err)
		}
	}
	if piaFlags.srcIP != "" {
		if src.IP, err = netip.ParseAddr(piaFlags.srcIP); err != nil {
			return cfg, src, fmt.Errorf("decode: --src-ip: %w", err)
		}
	}
	return cfg, src, nil
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
