package pia

import (
	"errors"
	"net"
	"testing"
)

// TestNonceInputsMatchBuildNonce checks the nonce input table against BuildNonce:
// for every version x network, changing an input the table lists changes the
// nonce, and changing one it does not list leaves it alone.
func TestNonceInputsMatchBuildNonce(t *testing.T) {
	for _, v := range testVersions {
		hl := v.HeaderLayout()
		if hl == HeaderUpTo5_6 {
			continue // no nonce
		}
		for _, n := range AllNetworks {
			if !NonceSupported(n, hl) {
				if n.NonceInputs(hl) != 0 {
					t.Errorf("%s %s: inputs %s for an undefined nonce", v, n, n.NonceInputs(hl))
				}
				continue
			}
			h := Header{Layout: hl, ConnectionID: 7, SourceVariableID: 0x1234}
			p := NonceParams{Network: n}
			src := Source{IP: testSource.IP}
			base, err := BuildNonce(p, &h, src)
			if err != nil {
				t.Fatalf("%s %s: %v", v, n, err)
			}
			uses := n.NonceInputs(hl)
			for _, tc := range []struct {
				in     NonceInput
				change func(*NonceParams, *Source)
			}{
				{NonceGatheringID, func(p *NonceParams, _ *Source) { p.GatheringID = 0x55 }},
				{NonceNetworkID, func(p *NonceParams, _ *Source) { p.NetworkID = 0x55 }},
				{NonceConnectionID, func(p *NonceParams, _ *Source) { p.OverrideConnectionID, p.ConnectionID = true, 0x55 }},
				{NonceSourceMAC, func(_ *NonceParams, s *Source) { s.MAC = [6]byte{5} }},
				{NonceSourceIP, func(_ *NonceParams, s *Source) { s.IP = testSource.IP.Next() }},
			} {
				pp, ss := p, src
				tc.change(&pp, &ss)
				got, err := BuildNonce(pp, &h, ss)
				if err != nil {
					t.Fatalf("%s %s %s: %v", v, n, tc.in, err)
				}
				if changed := got != base; changed != (uses&tc.in != 0) {
					t.Errorf("%s %s: changing %s changes the nonce: %v; the table says it is an input: %v", v, n, tc.in, changed, uses&tc.in != 0)
				}
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	key := make([]byte, 16)
	for _, tc := range []struct {
		name string
		cfg  EndpointConfig
		want error // nil: valid
	}{
		{"lan", EndpointConfig{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLAN}, SessionKey: key}, nil},
		{"no version", EndpointConfig{NonceParams: NonceParams{Network: NetworkLAN}}, ErrUnsupported},
		{"no network", EndpointConfig{Version: Version{5, 27}}, ErrUnsupported},
		{"nex on 6.x", EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkNEX}}, ErrUnsupported},
		{"short key", EndpointConfig{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLAN}, SessionKey: key[:8]}, ErrKey},
		{"gathering id on lan", EndpointConfig{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLAN, GatheringID: 1}}, ErrUnusedInput},
		{"network id on lan", EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkLAN, NetworkID: 1}}, ErrUnusedInput},
		{"connection id on 6.x", EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkLDN, OverrideConnectionID: true}}, ErrUnusedInput},
		{"mac on ldn 6.x", EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkLDN}, Source: Source{MAC: [6]byte{1}}}, ErrUnusedInput},
		{"mac on ldn 5.27", EndpointConfig{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLDN, NetworkID: 5}, Source: Source{MAC: [6]byte{1}}}, nil},
		{"network id on ldn 5.4 (no nonce)", EndpointConfig{Version: Version{5, 4}, NonceParams: NonceParams{Network: NetworkLDN, NetworkID: 5}}, ErrUnusedInput},
		{"constant id too wide for 5.4", EndpointConfig{Version: Version{5, 4}, NonceParams: NonceParams{Network: NetworkLAN}, ConstantID: 1 << 32}, ErrBadField},
	} {
		err := tc.cfg.Validate()
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	var ue *UnusedInputError
	err := EndpointConfig{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLAN, GatheringID: 1}}.Validate()
	if !errors.As(err, &ue) || ue.Input != NonceGatheringID || ue.Uses != NonceSourceIP|NonceConnectionID {
		t.Errorf("UnusedInputError %+v", ue)
	}
	cfg := EndpointConfig{Version: Version{5, 4}, NonceParams: NonceParams{Network: NetworkLAN}}
	if err := (PeerConfig{ConstantID: 1 << 32}).Validate(cfg); !errors.Is(err, ErrBadField) {
		t.Errorf("peer constant id: %v", err)
	}
	if err := (PeerConfig{MAC: [6]byte{1}}).Validate(cfg); !errors.Is(err, ErrUnusedInput) {
		t.Errorf("peer mac on lan: %v", err)
	}
}

func TestLayoutLimits(t *testing.T) {
	for _, tc := range []struct {
		v          Version
		typ        uint16
		port       uint32
		bits       uint
		unreliable uint16
	}{
		{Version{5, 4}, 0xFFFF, 0xFFFF, 32, 0x2000},
		{Version{5, 9}, 0xFF, 0xFF, 64, 0x68},
		{Version{5, 11}, 0xFF, 0xFF, 64, 0x68},
		{Version{5, 14}, 0xFF, 0xFFFFFF, 64, 0x68},
		{Version{6, 16}, 0xFF, 0xFFFFFF, 64, 0x68},
	} {
		l := tc.v.MessageLayout()
		if l.ProtocolTypeMax() != tc.typ || l.ProtocolPortMax() != tc.port || l.DestinationBits() != tc.bits || UnreliableProtocolType(tc.v) != tc.unreliable {
			t.Errorf("%s: type max 0x%x port max 0x%x bits %d unreliable 0x%x", tc.v, l.ProtocolTypeMax(), l.ProtocolPortMax(), l.DestinationBits(), UnreliableProtocolType(tc.v))
		}
		if l.HasStationBit(uint8(tc.bits-1)) != true || l.HasStationBit(uint8(tc.bits)) {
			t.Errorf("%s: station bits", tc.v)
		}
	}
}

// TestWildcardSourceRefused: a LAN (or LDN 6.x) endpoint on a wildcard address
// with no Source.IP would build nonces from 0.0.0.0; NewEndpoint refuses it.
func TestWildcardSourceRefused(t *testing.T) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, v := range []Version{{5, 27}, {6, 16}} {
		if _, err := NewEndpoint(conn, EndpointConfig{Version: v, NonceParams: NonceParams{Network: NetworkLAN}}); !errors.Is(err, ErrWildcardSource) {
			t.Errorf("%s lan: %v, want ErrWildcardSource", v, err)
		}
	}
	if _, err := NewEndpoint(conn, EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkLAN}, Source: Source{IP: testSource.IP}}); err != nil {
		t.Errorf("with Source.IP: %v", err)
	}
	if _, err := NewEndpoint(conn, EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkNPLN}}); err != nil {
		t.Errorf("npln does not use the IP: %v", err)
	}
}
