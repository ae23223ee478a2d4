package pia

import (
	"errors"
	"fmt"
	"strings"
)

// This file holds the per-version facts a configuration is checked against (field
// widths, the unreliable protocol's id, the inputs of each network's nonce) and the
// Validate methods of the configuration types, so that a library user gets the
// checks `gamewire pia listen/send` and `gamewire decode` make.

// ErrUnusedInput is returned by the Validate methods when a configuration sets a
// nonce input that its network does not use: the peers would agree without it,
// and whoever set it believes it matters.
var ErrUnusedInput = errors.New("nonce input not used by this network")

// ErrWildcardSource is returned by NewEndpoint when the socket is bound to a
// wildcard address, EndpointConfig.Source.IP is not given, and the network's nonces
// use this station's IP (LAN; LDN from 6.16): they would use 0.0.0.0 and no peer
// could open the packets.
var ErrWildcardSource = errors.New("wildcard address and no source IP for the nonce")

// ProtocolTypeMax is the largest protocol type layout l carries: 16 bits up to 5.4,
// 8 bits later ("Messages" in the wiki).
func (l MessageLayout) ProtocolTypeMax() uint16 {
	if l == MessageUpTo5_4 {
		return 0xFFFF
	}
	return 0xFF
}

// ProtocolPortMax is the largest protocol port layout l carries: 16 bits up to 5.4,
// 8 bits in 5.6-5.12, 24 bits from 5.14.
func (l MessageLayout) ProtocolPortMax() uint32 {
	switch l {
	case MessageUpTo5_4:
		return 0xFFFF
	case Message5_6, Message5_11:
		return 0xFF
	}
	return 0xFFFFFF
}

// DestinationBits is the width of the destination and source constant id fields:
// 32 up to 5.4, 64 later. A constant id must fit it, and a multicast bitmap has
// one bit per station index below it.
func (l MessageLayout) DestinationBits() uint {
	if l == MessageUpTo5_4 {
		return 32
	}
	return 64
}

// HasStationBit reports whether station index idx has a bit in the multicast
// destination bitmap of layout l (0-31 up to 5.4, 0-63 later).
func (l MessageLayout) HasStationBit(idx uint8) bool { return uint(idx) < l.DestinationBits() }

// UnreliableProtocolType is the protocol type of the unreliable protocol in v:
// 0x2000 up to 5.4 (16-bit ids), 0x68 later (PretendoNetwork/nintendo-wiki
// docs/pia/protocols/index.md). It is the simplest protocol a game sends raw
// payloads on, and the default of `gamewire pia listen/send`.
func UnreliableProtocolType(v Version) uint16 {
	if v.MessageLayout() == MessageUpTo5_4 {
		return 0x2000
	}
	return 0x68
}

// NonceInput is a set of inputs of a network's nonce ("Nonce" in the wiki).
type NonceInput uint8

// The nonce inputs.
const (
	NonceGatheringID  NonceInput = 1 << iota // NonceParams.GatheringID (NEX)
	NonceNetworkID                           // NonceParams.NetworkID (LDN session or network id, NPLN)
	NonceConnectionID                        // the connection byte (NonceParams.ConnectionID overrides it)
	NonceSourceMAC                           // Source.MAC: the sender's MAC (LDN up to 5.44)
	NonceSourceIP                            // Source.IP: the sender's IP (LAN; LDN from 6.16)
)

var nonceInputNames = []string{"gathering id", "network id", "connection id", "source MAC", "source IP"}

func (in NonceInput) String() string {
	var names []string
	for i, name := range nonceInputNames {
		if in&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// NonceInputs returns the inputs of network n's nonce in header layout l, as
// BuildNonce uses them. Up to 5.6 there is no nonce (AES-ECB); a network without a
// nonce for l has none either (see NonceSupported).
func (n Network) NonceInputs(l HeaderLayout) NonceInput {
	if l == HeaderUpTo5_6 || !NonceSupported(n, l) {
		return 0
	}
	pre6 := l != Header6_16
	switch n {
	case NetworkNEX:
		return NonceGatheringID | NonceConnectionID
	case NetworkLDN:
		if pre6 {
			return NonceNetworkID | NonceSourceMAC | NonceConnectionID
		}
		return NonceNetworkID | NonceSourceIP
	case NetworkLAN:
		if pre6 {
			return NonceSourceIP | NonceConnectionID
		}
		return NonceSourceIP
	case NetworkNPLN:
		return NonceNetworkID
	}
	return 0
}

// Validate checks that the nonce parameters suit version v: a network is given and
// has a nonce for v's header layout, and no input is set that the network's nonce
// does not use (ErrUnusedInput). BuildNonce and NewCodec are lenient about unused
// inputs (a decoder may try one configuration on many packets); Validate is strict.
func (p NonceParams) Validate(v Version) error {
	if p.Network == 0 {
		return fmt.Errorf("pia: %w: no network (nex, ldn, lan or npln)", ErrUnsupported)
	}
	hl := v.HeaderLayout()
	if !NonceSupported(p.Network, hl) {
		return fmt.Errorf("pia: %w: the %s network has no nonce defined for Pia %s (NEX up to 5.44, NPLN from 6.16)", ErrUnsupported, p.Network, v)
	}
	uses := p.Network.NonceInputs(hl)
	for _, in := range []struct {
		input NonceInput
		set   bool
	}{{NonceGatheringID, p.GatheringID != 0}, {NonceNetworkID, p.NetworkID != 0}, {NonceConnectionID, p.OverrideConnectionID}} {
		if in.set && uses&in.input == 0 {
			return unusedInput(in.input, p.Network, v, uses)
		}
	}
	return nil
}

// validateSource checks a station's source address inputs against the network.
func validateSource(what string, s Source, n Network, v Version) error {
	uses := n.NonceInputs(v.HeaderLayout())
	if s.MAC != [6]byte{} && uses&NonceSourceMAC == 0 {
		return fmt.Errorf("%s: %w", what, unusedInput(NonceSourceMAC, n, v, uses))
	}
	return nil
}

func unusedInput(in NonceInput, n Network, v Version, uses NonceInput) error {
	return &UnusedInputError{Input: in, Network: n, Version: v, Uses: uses}
}

// UnusedInputError says which nonce input a configuration sets that its network
// does not use; errors.Is(err, ErrUnusedInput) holds.
type UnusedInputError struct {
	Input   NonceInput // the input that is set
	Network Network
	Version Version
	Uses    NonceInput // what the network's nonce uses
}

func (e *UnusedInputError) Error() string {
	return fmt.Sprintf("pia: %v: %s in a %s session of Pia %s (its nonce uses: %s)", ErrUnusedInput, e.Input, e.Network, e.Version, e.Uses)
}

// Is makes errors.Is(err, ErrUnusedInput) hold.
func (e *UnusedInputError) Is(target error) bool { return target == ErrUnusedInput }

// Validate checks c as NewCodec does (a version, a network with a nonce for it, a
// 16-byte session key if any) and NonceParams.Validate's stricter rules.
func (c Config) Validate() error {
	if c.Version.Major == 0 {
		return fmt.Errorf("pia: %w: no Pia version", ErrUnsupported)
	}
	if err := c.NonceParams.Validate(c.Version); err != nil {
		return err
	}
	if c.SessionKey != nil && len(c.SessionKey) != 16 {
		return fmt.Errorf("pia: %w: session key of %d bytes, want 16", ErrKey, len(c.SessionKey))
	}
	return nil
}

// Validate checks c as NewEndpoint does and more: Config.Validate's rules, a
// source MAC only where the nonce uses it (LDN up to 5.44), and a constant id that
// fits the message fields of the version.
func (c EndpointConfig) Validate() error {
	cc := Config{Version: c.Version, NonceParams: c.NonceParams, SessionKey: c.SessionKey}
	if err := cc.Validate(); err != nil {
		return err
	}
	if err := validateSource("source", c.Source, c.NonceParams.Network, c.Version); err != nil {
		return err
	}
	if bits := c.Version.MessageLayout().DestinationBits(); bits < 64 && c.ConstantID>>bits != 0 {
		return fmt.Errorf("pia: %w: constant id 0x%x does not fit the %d-bit fields of Pia %s", ErrBadField, c.ConstantID, bits, c.Version)
	}
	return nil
}

// Validate checks a peer's configuration for an endpoint of cfg's session: a MAC
// only where the nonce uses it, and a constant id that fits the message fields.
func (p PeerConfig) Validate(cfg EndpointConfig) error {
	if err := validateSource("peer", Source{MAC: p.MAC}, cfg.NonceParams.Network, cfg.Version); err != nil {
		return err
	}
	if bits := cfg.Version.MessageLayout().DestinationBits(); bits < 64 && p.ConstantID>>bits != 0 {
		return fmt.Errorf("pia: peer: %w: constant id 0x%x does not fit the %d-bit fields of Pia %s", ErrBadField, p.ConstantID, bits, cfg.Version)
	}
	return nil
}
