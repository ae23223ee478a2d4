package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp/wire/record"
)

// newDecodeCmd is `gamewire decode`. Its contract is documented in docs/cli.md.
// The flags shared by every input live here; each kind of input (a PRUDP packet in
// hex, a Pia packet in hex, a capture file) adds its own flags and its decoder in a
// file of its own: decode_prudp.go, decode_pia.go, decode_capture.go; --game is
// games.go's.
func newDecodeCmd() *cobra.Command {
	o := &decodeOptions{}
	cmd := &cobra.Command{
		Use:   "decode [CAPTURE]",
		Short: "Decode packets given in hex, or a pcap/pcapng capture, into readable records",
		Long: `decode prints one record per packet (or reassembled message) it finds.

  gamewire decode --hex HEX [--dialect ` + dialectChoices + `]
                  [--access-key K] [--checksum 1|4] [--rc4-key K | --decrypt] [--format text|json]
  gamewire decode --hex HEX --pia-version V --pia-network nex|ldn|lan|npln --pia-key HEX ...
  gamewire decode CAPTURE.pcap[ng] [--access-key K | --keys FILE] [--dialect PORT=NAME] [--stats]
                  [-V] [--write-decrypted OUT.pcapng]   (CAPTURE "-" reads standard input)
                  [--game NAME|ID] [--variant SUFFIX] [--nex-version V]
                  [--nex-gates auto|console|nintendoclients]
                  [--wireshark-plugin OUT.lua] [--proto-dir DIR]

NEX RMC calls in a capture are named and their parameters and return values decoded
by the protocol descriptions (gamewire nex protocols lists them; --proto-dir adds
NintendoClients' .proto files of DIR to them); --game picks the
game's variant of the protocols and its NEX version (by default the flow's access
key names the game); --nex-version overrides that version, --nex-gates fixes the
reading of the NEX 3.4 fields the consoles and NintendoClients place differently
(by default each flow learns it, as serve does). A keys file's "password PID P"
line for a player opens that player's ticket in the capture's Login exchange and decrypts their secure connection.
--wireshark-plugin writes a Lua dissector of the same descriptions for tshark and
Wireshark to read the --write-decrypted pcapng (docs/dissector.md).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.hex, "hex", "", "packet bytes in hex (spaces and colons allowed)")
	f.StringVar(&o.format, "format", "text", "output format: text or json (JSON Lines)")
	f.StringArrayVar(&o.dialect, "dialect", nil, "PRUDP dialect for --hex ("+dialectChoices+"), or PORT=NAME for a capture (repeatable)")
	f.StringVar(&o.accessKey, "access-key", "", "PRUDP access key (checksums, signatures)")
	o.capture.register(f)
	o.registerPia(f)
	o.prudp.register(f)
	o.hookGame(cmd)
	hookVariantHelp(cmd)
	return cmd
}

// dialectChoices are the --dialect names --hex accepts, from the list record.Resolve
// checks, so the help cannot omit one.
var dialectChoices = strings.Join(record.Names, "|")

// decodeOptions are decode's flags: those every input shares, and each
// input's own.
type decodeOptions struct {
	hex       string
	format    string
	dialect   []string
	accessKey string
	game      string // --game (games.go)

	capture captureOptions     // a capture file (decode_capture.go)
	pia     piaSessionFlags    // a Pia packet in hex (decode_pia.go)
	prudp   decodePRUDPOptions // PRUDP packets in hex (decode_prudp.go)
}

func (o *decodeOptions) run(cmd *cobra.Command, args []string) error {
	switch o.format {
	case "text", "json":
	default:
		return errors.New("decode: --format must be text or json, not " + o.format)
	}
	if err := checkInputFlags(cmd, args); err != nil {
		return err
	}
	switch {
	case len(args) == 1:
		return o.decodeCapture(cmd, args[0])
	case piaRequested(cmd):
		return o.decodePia(cmd)
	case o.hex != "":
		return o.decodePRUDP(cmd)
	default:
		return errors.New("decode: give --hex HEX or a capture file (see gamewire decode --help)")
	}
}

// parseHex decodes hex digits, ignoring spaces, colons, tabs, line breaks and an
// optional 0x prefix (--hex, keys, SSIDs).
func parseHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "0x")
	s = strings.NewReplacer(" ", "", ":", "", "\n", "", "\t", "").Replace(s)
	return hex.DecodeString(s)
}

// hexBytes decodes the bytes given with --hex.
func (o *decodeOptions) hexBytes() ([]byte, error) {
	b, err := parseHex(o.hex)
	if err != nil {
		return nil, fmt.Errorf("decode: --hex: %w", err)
	}
	return b, nil
}
