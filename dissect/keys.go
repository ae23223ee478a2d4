package dissect

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/pia"
)

// Keys holds what the dissector needs to verify and decrypt traffic. The text
// format read by ParseKeys is documented in docs/dissector.md:
//
//	# comment
//	access-key KEY                PRUDP access key (tried on every flow, in order)
//	password PID PASSWORD         Kerberos password of a PID (rest of the line)
//	kerberos-key PID HEX          Kerberos key of a PID, already derived
//	session-key HEX               secure-connection session key (16 or 32 bytes)
//	hyperscape-key HEX            Hyperscape AES-128 shared key of a connection (16 bytes; repeatable)
//	compression on|off|auto       NEX payloads carry the compression-ratio byte (default auto)
//	pia-key HEX                   Pia session key (16 bytes)
//	pia-game-key HEX              Pia game key: with one of the next three, derives a session key
//	pia-session-param N           LDN up to 5.44: SEAD-random session param (decimal or 0x hex)
//	pia-ssid HEX                  LDN 6.x: the network's 16-byte SSID
//	pia-lan-param HEX             LAN: the session key param
//	pia-version N                 Pia version, e.g. 5.18 or 518
//	pia-network nex|ldn|lan|npln  Pia network kind
//	pia-network-id N              LDN/LAN/NPLN network id (decimal or 0x hex)
//	pia-gathering-id N            NEX gathering id (the NEX network's nonce)
type Keys struct {
	AccessKeys     []string
	Passwords      map[uint64]string
	KerberosKeys   map[uint64][]byte
	SessionKeys    [][]byte
	HyperscapeKeys [][]byte // tried in order on each Hyperscape flow
	// Compression says whether NEX (V0, V1) payloads carry the compression
	// ratio byte: "on", "off", or "" (auto: a flow is taken to use it from its
	// first payload that is a non-zero ratio followed by a zlib stream).
	// Quazal payloads always carry it.
	Compression string
	Pia         PiaKeys
}

// PiaKeys holds Pia keys and network parameters.
type PiaKeys struct {
	SessionKeys  [][]byte
	GameKey      []byte
	Version      string
	Network      string
	NetworkID    uint32
	HasNetworkID bool
	GatheringID  uint32
	// Session-key derivation inputs, used with GameKey ("Session Key" in NintendoClients wiki "Pia Protocol").
	SessionParams []uint32
	SSIDs         [][]byte
	LANParams     [][]byte
}

// LoadKeys reads a keys file.
func LoadKeys(path string) (*Keys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	k, err := ParseKeys(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParseKeys parses the keys file format. Errors wrap ErrKeysFile and name the line.
func ParseKeys(r io.Reader) (*Keys, error) {
	k := &Keys{Passwords: map[uint64]string{}, KerberosKeys: map[uint64][]byte{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		kw, rest, _ := strings.Cut(text, " ")
		kw = strings.ToLower(strings.TrimSpace(kw))
		rest = strings.TrimSpace(stripComment(rest))
		if rest == "" {
			return nil, fmt.Errorf("%w: line %d (%s): missing value", ErrKeysFile, line, kw)
		}
		known, err := k.set(kw, rest)
		if !known {
			known, err = k.Pia.set(kw, rest)
		}
		if !known {
			return nil, fmt.Errorf("%w: line %d: unknown keyword %q", ErrKeysFile, line, kw)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: line %d (%s): %v", ErrKeysFile, line, kw, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %v", ErrKeysFile, line+1, err)
	}
	return k, nil
}

// set applies one line of a PRUDP keyword; known is false for a keyword that is
// not one of them.
func (k *Keys) set(kw, rest string) (known bool, err error) {
	switch kw {
	case "access-key":
		k.AccessKeys = append(k.AccessKeys, rest)
	case "password", "kerberos-key":
		pidText, val, ok := strings.Cut(rest, " ")
		if !ok {
			return true, errors.New("want PID and a value")
		}
		pid, err := strconv.ParseUint(pidText, 0, 64)
		if err != nil {
			return true, fmt.Errorf("PID %q is not a number", pidText)
		}
		val = strings.TrimSpace(val)
		if kw == "password" {
			k.Passwords[pid] = val
			return true, nil
		}
		key, err := parseHexKey(val, 16)
		if err != nil {
			return true, err
		}
		k.KerberosKeys[pid] = key
	case "session-key":
		key, err := parseHexKey(rest, 16, 32)
		if err != nil {
			return true, err
		}
		k.SessionKeys = append(k.SessionKeys, key)
	case "hyperscape-key":
		key, err := parseHexKey(rest, 16)
		if err != nil {
			return true, err
		}
		k.HyperscapeKeys = append(k.HyperscapeKeys, key)
	case "compression":
		switch rest {
		case "on", "off":
			k.Compression = rest
		case "auto":
			k.Compression = ""
		default:
			return true, fmt.Errorf("%q is not on, off or auto", rest)
		}
	default:
		return false, nil
	}
	return true, nil
}

// set applies one line of a Pia keyword; known is false for a keyword that is
// not one of them.
func (p *PiaKeys) set(kw, rest string) (known bool, err error) {
	u32 := func() (uint32, error) {
		v, err := strconv.ParseUint(rest, 0, 32)
		if err != nil {
			return 0, fmt.Errorf("%q is not a 32-bit number", rest)
		}
		return uint32(v), nil
	}
	switch kw {
	case "pia-key":
		key, err := parseHexKey(rest, 16)
		if err != nil {
			return true, err
		}
		p.SessionKeys = append(p.SessionKeys, key)
	case "pia-game-key":
		key, err := parseHexKey(rest, 16)
		if err != nil {
			return true, err
		}
		p.GameKey = key
	case "pia-version":
		p.Version = rest
	case "pia-network":
		switch rest {
		case "nex", "ldn", "lan", "npln":
			p.Network = rest
		default:
			return true, fmt.Errorf("network %q is not nex, ldn, lan or npln", rest)
		}
	case "pia-network-id":
		id, err := u32()
		if err != nil {
			return true, err
		}
		p.NetworkID, p.HasNetworkID = id, true
	case "pia-session-param":
		v, err := u32()
		if err != nil {
			return true, err
		}
		p.SessionParams = append(p.SessionParams, v)
	case "pia-ssid":
		v, err := parseHexKey(rest, 16)
		if err != nil {
			return true, err
		}
		p.SSIDs = append(p.SSIDs, v)
	case "pia-lan-param":
		v, err := parseHexKey(rest, 1, 2, 4, 8, 16, 32, 64)
		if err != nil {
			return true, err
		}
		p.LANParams = append(p.LANParams, v)
	case "pia-gathering-id":
		id, err := u32()
		if err != nil {
			return true, err
		}
		p.GatheringID = id
	default:
		return false, nil
	}
	return true, nil
}

// stripComment removes a trailing " # comment" (a '#' preceded by a space).
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	if i := strings.Index(s, "\t#"); i >= 0 {
		return s[:i]
	}
	return s
}

// parseHexKey decodes hex (spaces and colons allowed) of one of the given lengths.
func parseHexKey(s string, lengths ...int) ([]byte, error) {
	clean := strings.NewReplacer(" ", "", ":", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(clean)
	if err != nil {
		return nil, fmt.Errorf("%q is not hex: %v", s, err)
	}
	for _, n := range lengths {
		if len(b) == n {
			return b, nil
		}
	}
	want := make([]string, len(lengths))
	for i, n := range lengths {
		want[i] = strconv.Itoa(n)
	}
	return nil, fmt.Errorf("key is %d bytes, want %s", len(b), strings.Join(want, " or "))
}

// accessKeys lists the access keys to try, always ending with the empty key
// (sum 0), under which Quazal's non-RV stream types and keyless tests verify.
func (k *Keys) accessKeys() []string {
	out := make([]string, 0, len(k.AccessKeys)+1)
	out = append(out, k.AccessKeys...)
	for _, a := range out {
		if a == "" {
			return out
		}
	}
	return append(out, "")
}

// sessionKeys returns the Pia session keys to try: those given, then those
// derived from the game key ("Session Key" in NintendoClients wiki "Pia Protocol"). Derivation
// errors name the input.
func (p *PiaKeys) sessionKeys() ([][]byte, error) {
	out := append([][]byte(nil), p.SessionKeys...)
	if p.GameKey == nil {
		if len(p.SessionParams)+len(p.SSIDs)+len(p.LANParams) > 0 {
			return nil, fmt.Errorf("%w: pia-session-param, pia-ssid and pia-lan-param need pia-game-key", ErrKeysFile)
		}
		return out, nil
	}
	for _, sp := range p.SessionParams {
		k, err := pia.LDNSessionKey5(p.GameKey, sp)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	for _, ssid := range p.SSIDs {
		k, err := pia.LDNSessionKey6(p.GameKey, ssid)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	for _, lp := range p.LANParams {
		k, err := pia.LANSessionKey(p.GameKey, lp)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}
