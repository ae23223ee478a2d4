package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gamewire/gamewire/pia"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newPiaCmd is `gamewire pia`: key helpers for Pia sessions (docs/pia.md) and a
// Pia station on UDP (pia_endpoint.go).
func newPiaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pia",
		Short: "Pia key helpers and a Pia station on UDP (listen, send)",
		// The group parses no flags of its own, so that a mistyped subcommand is
		// reported as such rather than as an unknown flag of the group
		// (`pia sned --count 3`).
		DisableFlagParsing: true,
		RunE:               runCommandGroup,
	}
	cmd.AddCommand(newPiaSessionKeyCmd(), newPiaGameKeyCmd(), newPiaNetworkIDCmd(), newPiaListenCmd(), newPiaSendCmd())
	return cmd
}

// runCommandGroup runs a command that only groups subcommands: without
// arguments (or with -h/--help) it prints its help; anything else names a
// subcommand it does not have, which is an error.
func runCommandGroup(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, applied only on the root's path
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	names := make([]string, 0, len(cmd.Commands()))
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return fmt.Errorf("%s; its commands are %s", msg, strings.Join(names, ", "))
}

// piaKeyOptions are the flags of the key helpers (session-key, game-key,
// ldn-network-id); each uses some of them.
type piaKeyOptions struct {
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

func newPiaSessionKeyCmd() *cobra.Command {
	o := &piaKeyOptions{}
	cmd := &cobra.Command{
		Use:   "session-key",
		Short: "Derive a Pia session key (LDN up to 5.44 from --param, LDN 6.x from --ssid, LAN from --param HEX)",
		Long: `session-key derives the Pia session key ("Session Key" in the Pia Protocol wiki):

  gamewire pia session-key --network ldn --game-key HEX --param N       LDN up to 5.44 (SEAD RNG, AES)
  gamewire pia session-key --network ldn --game-key HEX --ssid HEX      LDN 6.16-6.30 (AES of the SSID)
  gamewire pia session-key --network ldn6 --game-key HEX --ssid HEX     the same; ldn5 insists on --param
  gamewire pia session-key --network lan --game-key HEX --param HEX     LAN (HMAC-SHA256 of the session key param)

--game-key-text takes the game key as text (Pokemon Sword/Shield's key is 16 characters).
NEX session keys come from matchmaking and NPLN derivation is not in the specs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.runSessionKey(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.network, "network", "ldn", "network: ldn, ldn5 (up to 5.44, --param), ldn6 (6.x, --ssid) or lan")
	f.StringVar(&o.gameKey, "game-key", "", "game-specific key in hex")
	f.StringVar(&o.gameKeyText, "game-key-text", "", "game-specific key as text")
	f.StringVar(&o.param, "param", "", "LDN: session param (decimal or 0x hex); LAN: session key param in hex (32 bytes)")
	f.StringVar(&o.ssid, "ssid", "", "LDN 6.x: the network SSID, 32 hex digits")
	return cmd
}

func newPiaGameKeyCmd() *cobra.Command {
	o := &piaKeyOptions{}
	cmd := &cobra.Command{
		Use:   "game-key",
		Short: "Generate an ENL game key from a seed and table (--game splatoon2|smm2 [--seed N], or --seed N --table HEX,...)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.runGameKey(cmd) },
	}
	g := cmd.Flags()
	g.StringVar(&o.game, "game", "", "published ENL inputs: splatoon2 or smm2")
	g.StringVar(&o.seed, "seed", "", "ENL seed (decimal or 0x hex); with --game it replaces the game's seed")
	g.StringVar(&o.table, "table", "", "ENL table: comma-separated 32-bit numbers (decimal or 0x hex)")
	g.IntVar(&o.size, "size", 16, "key size in bytes (multiple of 4)")
	return cmd
}

func newPiaNetworkIDCmd() *cobra.Command {
	o := &piaKeyOptions{}
	cmd := &cobra.Command{
		Use:   "ldn-network-id",
		Short: "Derive an LDN 6.x network id as CRC-32 of SSID bytes 1-15 (public research, not the specs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ssid, err := o.parseSSID()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "0x%08x\n", pia.LDNNetworkIDFromSSID(ssid))
			return nil
		},
	}
	cmd.Flags().StringVar(&o.ssid, "ssid", "", "the network SSID, 32 hex digits")
	return cmd
}

func (o *piaKeyOptions) parseGameKey() ([]byte, error) {
	switch {
	case o.gameKey != "" && o.gameKeyText != "":
		return nil, errors.New("pia: give --game-key or --game-key-text, not both")
	case o.gameKeyText != "":
		return []byte(o.gameKeyText), nil
	case o.gameKey != "":
		k, err := parseHex(o.gameKey)
		if err != nil {
			return nil, fmt.Errorf("pia: --game-key: %w (use --game-key-text for a text key)", err)
		}
		return k, nil
	}
	return nil, errors.New("pia: --game-key HEX or --game-key-text TEXT is required")
}

func (o *piaKeyOptions) parseSSID() ([16]byte, error) {
	var ssid [16]byte
	b, err := parseHex(o.ssid)
	if err != nil || len(b) != 16 {
		return ssid, fmt.Errorf("pia: --ssid %q: want 32 hex digits", o.ssid)
	}
	copy(ssid[:], b)
	return ssid, nil
}

func (o *piaKeyOptions) runSessionKey(cmd *cobra.Command) error {
	// ldn5 and ldn6 name the LDN derivation of a Pia generation (docs/cli.md).
	network := strings.ToLower(strings.TrimSpace(o.network))
	switch {
	case network == "ldn5" && o.ssid != "":
		return errors.New("pia: --network ldn5 (up to 5.44) derives from --param, not --ssid")
	case network == "ldn6" && o.param != "":
		return errors.New("pia: --network ldn6 (6.16-6.30) derives from --ssid, not --param")
	case network == "ldn5" && o.param == "":
		return errors.New("pia: --network ldn5 needs --param N (the session param)")
	case network == "ldn6" && o.ssid == "":
		return errors.New("pia: --network ldn6 needs --ssid HEX (the network SSID)")
	case network == "ldn5" || network == "ldn6":
		network = "ldn"
	}
	n, err := pia.ParseNetwork(network)
	if err != nil {
		return fmt.Errorf("%w (session-key also takes ldn5 and ldn6)", err)
	}
	gameKey, err := o.parseGameKey()
	if err != nil {
		return err
	}
	var key []byte
	switch n {
	case pia.NetworkLDN:
		switch {
		case o.ssid != "" && o.param != "":
			return errors.New("pia: LDN takes --param (up to 5.44) or --ssid (6.x), not both")
		case o.ssid != "":
			ssid, err := o.parseSSID()
			if err != nil {
				return err
			}
			key, err = pia.LDNSessionKey6(gameKey, ssid[:])
			if err != nil {
				return err
			}
		case o.param != "":
			param, err := piaParseNumber(o.param)
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
		param, err := parseHex(o.param)
		if err != nil || len(param) == 0 {
			return fmt.Errorf("pia: LAN needs --param HEX (the session key param): %q", o.param)
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

func (o *piaKeyOptions) runGameKey(cmd *cobra.Command) error {
	var seed uint32
	var table []uint32
	switch {
	case o.game != "" && o.table != "":
		return errors.New("pia: give --game NAME or --table LIST, not both")
	case o.game != "":
		for _, p := range pia.ENLPresets {
			if strings.EqualFold(p.Name, o.game) {
				seed, table = p.Seed, p.Table
			}
		}
		if table == nil {
			names := make([]string, 0, len(pia.ENLPresets))
			for _, p := range pia.ENLPresets {
				names = append(names, p.Name)
			}
			return fmt.Errorf("pia: --game %q: known games are %s", o.game, strings.Join(names, ", "))
		}
		if o.seed != "" {
			var err error
			if seed, err = piaParseNumber(o.seed); err != nil {
				return fmt.Errorf("pia: --seed: %w", err)
			}
		}
	case o.seed != "" && o.table != "":
		var err error
		if seed, err = piaParseNumber(o.seed); err != nil {
			return fmt.Errorf("pia: --seed: %w", err)
		}
		for i, s := range strings.Split(o.table, ",") {
			v, err := piaParseNumber(s)
			if err != nil {
				return fmt.Errorf("pia: --table entry %d: %w", i, err)
			}
			table = append(table, v)
		}
	case o.seed != "":
		return errors.New("pia: --seed needs a table: --table LIST, or --game NAME for a published game's table")
	default:
		return errors.New("pia: give --game NAME (optionally with --seed N), or --seed N and --table LIST")
	}
	key, err := pia.ENLGameKey(seed, table, o.size)
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), hex.EncodeToString(key))
	return nil
}

// piaSessionFlags are the flags that describe a Pia session and the sender its
// nonces use: one set, one name per thing, shared by `decode --hex` and `pia
// listen/send`. The names carry the pia- prefix where decode needs it to tell
// Pia from PRUDP; piaFlagAliases keeps the names listen and send had before.
type piaSessionFlags struct {
	version, network, key                string
	networkID, gatheringID, connectionID string
	srcMAC, srcIP                        string
}

// piaFlagAliases maps the former names of listen's and send's session flags to
// the shared ones. They are kept for one release (docs/cli.md).
var piaFlagAliases = map[string]string{
	"version":     "pia-version",
	"network":     "pia-network",
	"session-key": "pia-key",
	"network-id":  "pia-network-id",
	"mac":         "src-mac",
	"source-ip":   "src-ip",
}

// register adds the session flags to fs; station says whether they describe
// this station (listen, send) or a captured packet's sender (decode).
func (f *piaSessionFlags) register(fs *pflag.FlagSet, station bool) {
	fs.StringVar(&f.version, "pia-version", "", "Pia version of the session (5.27, 6.16, ...)")
	fs.StringVar(&f.network, "pia-network", "", "network of the session's nonces: nex, ldn, lan or npln")
	fs.StringVar(&f.key, "pia-key", "", "session key, 32 hex digits (gamewire pia session-key)")
	fs.StringVar(&f.networkID, "pia-network-id", "", "ldn, npln: LDN session id (up to 5.44) or LDN/NPLN network id (6.x); decimal or 0x hex")
	fs.StringVar(&f.gatheringID, "gathering-id", "", "nex: NEX gathering id; decimal or 0x hex")
	fs.StringVar(&f.connectionID, "connection-id", "", "override the connection byte of the nonce (default: from the header); decimal or 0x hex")
	who := "the packet's sender"
	if station {
		who = "this station (the sender of its packets)"
	}
	fs.StringVar(&f.srcMAC, "src-mac", "", "ldn up to 5.44: the MAC address of "+who+", 12 hex digits with or without colons")
	fs.StringVar(&f.srcIP, "src-ip", "", "lan, ldn 6.x: the IP address of "+who+" as nonces use it")
	if station {
		fs.Lookup("pia-version").Usage += "; required"
		fs.Lookup("pia-network").Usage += "; required"
		fs.Lookup("pia-key").Usage += "; without it packets are unencrypted"
		fs.Lookup("src-ip").Usage += " (default: the socket's local address)"
		fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
			if to, ok := piaFlagAliases[name]; ok {
				return pflag.NormalizedName(to)
			}
			return pflag.NormalizedName(name)
		})
	}
}

// piaSession is what the session flags describe.
type piaSession struct {
	cfg pia.Config // Version is zero for --pia-version auto
	src pia.Source
}

// parse checks the session flags. A version of "auto" (when allowed) leaves
// cfg.Version zero; network "" takes defaultNetwork ("" makes it required).
// Nonce inputs the network does not use are refused (pia.NonceParams.Validate).
// Errors name the flag and carry no command prefix.
func (f *piaSessionFlags) parse(allowAuto bool, defaultNetwork string) (piaSession, error) {
	var s piaSession
	cfg := &s.cfg
	switch v := strings.TrimSpace(f.version); {
	case v == "" && !allowAuto:
		return s, errors.New("--pia-version is required: the session's Pia version, for example 5.27 or 6.16")
	case v == "" || v == "auto" && allowAuto:
	default:
		ver, err := pia.ParseVersion(v)
		if err != nil {
			return s, fmt.Errorf("--pia-version: %w", err)
		}
		cfg.Version = ver
	}
	network := strings.TrimSpace(f.network)
	if network == "" {
		if network = defaultNetwork; network == "" {
			return s, errors.New("--pia-network is required: nex, ldn, lan or npln")
		}
	}
	n, err := pia.ParseNetwork(network)
	if err != nil {
		return s, fmt.Errorf("--pia-network: %w", err)
	}
	cfg.Network = n
	if f.key != "" {
		if cfg.SessionKey, err = parseHex(f.key); err != nil {
			return s, fmt.Errorf("--pia-key: %w", err)
		}
		if len(cfg.SessionKey) != 16 {
			return s, fmt.Errorf("--pia-key: %d bytes, want 16 (32 hex digits)", len(cfg.SessionKey))
		}
	}
	if f.networkID != "" {
		if cfg.NetworkID, err = piaParseNumber(f.networkID); err != nil {
			return s, fmt.Errorf("--pia-network-id: %w", err)
		}
	}
	if f.gatheringID != "" {
		if cfg.GatheringID, err = piaParseNumber(f.gatheringID); err != nil {
			return s, fmt.Errorf("--gathering-id: %w", err)
		}
	}
	if f.connectionID != "" {
		c, err := piaParseNumber(f.connectionID)
		if err != nil || c > 0xFF {
			return s, fmt.Errorf("--connection-id %q: want a number 0..255", f.connectionID)
		}
		cfg.OverrideConnectionID, cfg.ConnectionID = true, uint8(c)
	}
	if f.srcMAC != "" {
		if s.src.MAC, err = piaParseMAC(f.srcMAC); err != nil {
			return s, fmt.Errorf("--src-mac: %w", err)
		}
	}
	if f.srcIP != "" {
		if s.src.IP, err = netip.ParseAddr(strings.TrimSpace(f.srcIP)); err != nil {
			return s, fmt.Errorf("--src-ip: %w", err)
		}
	}
	if cfg.Version.Major != 0 {
		if err := (pia.EndpointConfig{Version: cfg.Version, NonceParams: cfg.NonceParams, Source: pia.Source{MAC: s.src.MAC}}).Validate(); err != nil {
			return s, piaFlagError(err)
		}
	}
	return s, nil
}

// piaInputFlags names the flag of each nonce input, for errors.
var piaInputFlags = map[pia.NonceInput]string{
	pia.NonceGatheringID: "--gathering-id", pia.NonceNetworkID: "--pia-network-id",
	pia.NonceConnectionID: "--connection-id", pia.NonceSourceMAC: "--src-mac", pia.NonceSourceIP: "--src-ip",
}

// piaFlagError names the flag behind a pia Validate error about the session.
func piaFlagError(err error) error {
	var ue *pia.UnusedInputError
	switch {
	case errors.As(err, &ue):
		return fmt.Errorf("%s: %w", piaInputFlags[ue.Input], err)
	case errors.Is(err, pia.ErrUnsupported):
		return fmt.Errorf("--pia-network: %w", err)
	}
	return err
}
