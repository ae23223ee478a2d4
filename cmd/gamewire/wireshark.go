package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/desc/wireshark"
)

// newWiresharkPluginCmd is `gamewire wireshark-plugin [FILE]`: the Wireshark Lua
// dissector generated from the NEX descriptions (nex/desc/wireshark).
func newWiresharkPluginCmd() *cobra.Command {
	descs := &nexDescOptions{}
	cmd := &cobra.Command{
		Use:   "wireshark-plugin [FILE]",
		Short: "Write a Wireshark Lua dissector that names and decodes NEX RMC methods (from gamewire's descriptions)",
		Long: `wireshark-plugin writes a Lua dissector for Wireshark and tshark, generated from the
NEX protocol descriptions gamewire ships (gamewire nex protocols lists them; --proto-dir
adds NintendoClients' .proto files of DIR to them), to FILE or standard output. It reads PRUDP V1 and V0 over UDP with plaintext payloads, as
gamewire decode --write-decrypted writes a capture, joins reliable fragments, and
shows every RMC request and response with its protocol and method names and its
parameters or return values decoded.

  gamewire decode capture.pcap --keys keys.txt --write-decrypted plain.pcapng
  gamewire wireshark-plugin nex.lua
  tshark -X lua_script:nex.lua -r plain.pcapng -V
  tshark -X lua_script:nex.lua -o nexrmc.access_key:KEY -r plain.pcapng -V   (V0: 3DS)
  wireshark -X lua_script:nex.lua plain.pcapng     (or copy nex.lua to Wireshark's Lua plugins folder)

decode --wireshark-plugin FILE writes the same file.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			set, err := descs.set()
			if err != nil {
				return fmt.Errorf("wireshark-plugin: descriptions: %w", err)
			}
			if err := writeWiresharkPlugin(cmd, path, set); err != nil {
				return fmt.Errorf("wireshark-plugin: %w", err)
			}
			return nil
		},
	}
	descs.register(cmd.Flags())
	return cmd
}

// writeWiresharkPlugin writes the Lua dissector of set to path ("" or "-":
// standard output).
func writeWiresharkPlugin(cmd *cobra.Command, path string, set *desc.Set) error {
	var b bytes.Buffer
	if err := wireshark.Write(&b, set); err != nil {
		return err
	}
	if path == "" || path == "-" {
		_, err := cmd.OutOrStdout().Write(b.Bytes())
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
