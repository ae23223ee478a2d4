package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gamewire/gamewire/pia"
	"github.com/spf13/cobra"
)

// piaCmd is `gamewire pia`: key helpers for Pia sessions (docs/pia.md).
var piaCmd = &cobra.Command{
	Use:   "pia",
	Short: "Pia key helpers and a Pia station on UDP (listen, send)",
}

var piaKeyFlags struct {
	network     string
	gameKey     string
	gameKeyText string
	param       string
	ssid        string
	game        string
	seed        string
	table       string
	size        int
}

var piaSessionKeyCmd = &cobra.Command{
	Use:   "session-key",
	Short: "Derive a Pia session key (LDN up to 5.44 from --param, LDN 6.x from --ssid, LAN from --param HEX)",
	Long: `session-key derives the Pia session key ("Session Key" in specs/pia.md):

  gamewire pia session-key --network ldn --game-key HEX --param N       LDN up to 5.44 (SEAD RNG, AES)
  gamewire pia session-key --network ldn --game-key HEX --ssid HEX      LDN 6.16-6.30 (AES of the SSID)
  gamewire pia session-key --network lan --game-key HEX --param HEX     LAN (HMAC-SHA256 of the session key param)

--game-key-text takes the game key as text (Pokemon Sword/Shield's key is 16 characters).
NEX session keys come from matchmaking and NPLN derivation is not in the specs.`,
	Args: cobra.NoArgs,
	RunE: runPiaSessionKey,
}

var piaGameKeyCmd = &cobra.Command{
	Use:   "game-key",
	Short: "Generate an ENL game key from a seed and table (--game splatoon2|smm2, or --seed N --table HEX,...)",
	Args:  cobra.NoArgs,
	RunE:  runPiaGameKey,
}

var piaNetworkIDCmd = &cobra.Command{
	Use:   "ldn-network-id",
	Short: "Derive an LDN 6.x network id as CRC-32 of SSID bytes 1-15 (public research, not the specs)",
	Args:  cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		ssid, err := piaSSID()
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "0x%08x\n", pia.LDNNetworkIDFromSSID(ssid))
		return nil
	},
}

func init() {
	f := piaSessionKeyCmd.Flags()
	f.StringVar(&piaKeyFlags.network, "network", "ldn", "network: ldn or lan")
	f.StringVar(&piaKeyFlags.gameKey, "game-key", "", "game-specific key in hex")
	f.StringVar(&piaKeyFlags.gameKeyText, "game-key-text", "", "game-specific key as text")
	f.StringVar(&piaKeyFlags.param, "param", "", "LDN: session param (decimal or 0x hex); LAN: session key param in hex (32 bytes)")
	f.StringVar(&piaKeyFlags.ssid, "ssid", "", "LDN 6.x: the network SSID, 32 hex digits")
	g := piaGameKeyCmd.Flags()
	g.StringVar(&piaKeyFlags.game, "game", "", "published ENL inputs: splatoon2 or smm2")
	g.StringVar(&piaKeyFlags.seed, "seed", "", "ENL seed (decimal or 0x hex)")
	g.StringVar(&piaKeyFlags.table, "table", "", "ENL table: comma-separated 32-bit numbers (decimal or 0x hex)")
	g.IntVar(&piaKeyFlags.size, "size", 16, "key size in bytes (multiple of 4)")
	piaNetworkIDCmd.Flags().StringVar(&piaKeyFlags.ssid, "ssid", "", "the network SSID, 32 hex digits")
	piaCmd.AddCommand(piaSessionKeyCmd, piaGameKeyCmd, piaNetworkIDCmd)
	rootCmd.AddCommand(piaCmd)
}

func piaGameKey() ([]byte, error) {
	switch {
	case piaKeyFlags.gameKey != "" && piaKeyFlags.gameKeyText != "":
		return nil, errors.New("pia: give --game-key or --game-key-text, not both")
	case piaKeyFlags.gameKeyText != "":
		return []byte(piaKeyFlags.gameKeyText), nil
	case piaKeyFlags.gameKey != "":
		k, err := parseHex(piaKeyFlags.gameKey)
		if err != nil {
			return nil, fmt.Errorf("pia: --game-key: %w (use --game-key-text for a text key)", err)
		}
		return k, nil
	}
	return nil, errors.New("pia: --game-key HEX or --game-key-text TEXT is required")
}

func piaSSID() ([16]byte, error) {
	var ssid [16]byte
	b, err := parseHex(piaKeyFlags.ssid)
	if err != nil || len(b) != 16 {
		return ssid, fmt.Errorf("pia: --ssid %q: want 32 hex digits", piaKeyFlags.ssid)
	}
	copy(ssid[:], b)
	return ssid, nil
}

func runPiaSessionKey(cmd *cobra.Command, args []string) error {
	n, err := pia.ParseNetwork(piaKeyFlags.network)
	if err != nil {
		return err
	}
	gameKey, err := piaGameKey()
	if err != nil {
		return err
	}
	var key []byte
	switch n {
	case pia.NetworkLDN:
		switch {
		case piaKeyFlags.ssid != "" && piaKeyFlags.param != "":
			return errors.New("pia: LDN takes --param (up to 5.44) or --ssid (6.x), not both")
		case piaKeyFlags.ssid != "":
			ssid, err := piaSSID()
			if err != nil {
				return err
			}
			key, err = pia.LDNSessionKey6(gameKey, ssid[:])
			if err != nil {
				return err
			}
		case piaKeyFlags.param != "":
			param, err := piaParseNumber(piaKeyFlags.param)
			if err != nil {
				return fmt.Errorf("pia: --param: %w", err)
			}
			if key, err = pia.LDNSessionKey5(gameKey, param); err != nil {
				return err
			}
		default:
			return errors.New("pia: LDN needs --param N (up to 5.44) or --ssid HEX (6.x)")
		}
	case pia.NetworkLAN:
		param, err := parseHex(piaKeyFlags.param)
		if err != nil || len(param) == 0 {
			return fmt.Errorf("pia: LAN needs --param HEX (the session key param): %q", piaKeyFlags.param)
		}
		if key, err = pia.LANSessionKey(gameKey, param); err != nil {
			return err
		}
	case pia.NetworkNEX:
		return errors.New("pia: NEX session keys are given by the game server during matchmaking; nothing to derive")
	default:
		return fmt.Errorf("pia: no session-key derivation is specified for %s", n)
	}
	fmt.Fprintln(cmd.OutOrStdout(), hex.EncodeToString(key))
	return nil
}

func runPiaGameKey(cmd *cobra.Command, args []string) error {
	var seed uint32
	var table []uint32
	switch {
	case piaKeyFlags.game != "":
		for _, p := range pia.ENLPresets {
			if strings.EqualFold(p.Name, piaKeyFlags.game) {
				seed, table = p.Seed, p.Table
			}
		}
		if table == nil {
			names := make([]string, 0, len(pia.ENLPresets))
			for _, p := range pia.ENLPresets {
				names = append(names, p.Name)
			}
			return fmt.Errorf("pia: --game %q: known games are %s", piaKeyFlags.game, strings.Join(names, ", "))
		}
	case piaKeyFlags.seed != "" && piaKeyFlags.table != "":
		var err error
		if seed, err = piaParseNumber(piaKeyFlags.seed); err != nil {
			return fmt.Errorf("pia: --seed: %w", err)
		}
		for i, s := range strings.Split(piaKeyFlags.table, ",") {
			v, err := piaParseNumber(s)
			if err != nil {
				return fmt.Errorf("pia: --table entry %d: %w", i, err)
			}
			table = append(table, v)
		}
	default:
		return errors.New("pia: give --game NAME, or --seed N and --table LIST")
	}
	key, err := pia.ENLGameKey(seed, table, piaKeyFlags.size)
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), hex.EncodeToString(key))
	return nil
}
