package pia_test

import (
	"encoding/hex"
	"fmt"

	"github.com/gamewire/gamewire/pia"
)

// Open the published Pokemon BDSP packet (Pia 5.27-5.44, LDN, 8-byte tag, footer).
func ExampleCodec_Open() {
	raw, _ := hex.DecodeString("32ab98648900000001ab358028000504100d649b1ec312c65bc4bc05c88237c05acc7a796988059a6f997bede1c55e308972518adcbd59256ebdf3d5f6aa69c780284c11")
	key, _ := hex.DecodeString("1cd8384ae3cc5198402f8d5291eb054c")
	v, _ := pia.DetectVersion(raw)
	c, err := pia.NewCodec(pia.Config{
		Version:     v,
		NonceParams: pia.NonceParams{Network: pia.NetworkLDN, NetworkID: 0x19EC1D90},
		SessionKey:  key,
	})
	if err != nil {
		panic(err)
	}
	var p pia.Packet
	src := pia.Source{MAC: [6]byte{0x48, 0xf1, 0xeb, 0x20, 0x9b, 0x22}}
	if err := c.Open(&p, raw, src); err != nil {
		panic(err)
	}
	m := p.Messages[0]
	fmt.Printf("header version %d, packet id %d, footer %x\n", p.Header.Version, p.Header.PacketID, p.Footer)
	fmt.Printf("%s port %d to stations %v: %x\n", pia.ProtocolName(v, m.ProtocolType), m.ProtocolPort, len(m.DestinationStations(nil, v.MessageLayout())), m.Payload)
	// Output:
	// header version 9, packet id 5, footer 80284c11
	// unreliable port 0 to stations 32: 0400020000
}

// Derive an LDN (up to 5.44) session key from the game key and session param.
func ExampleLDNSessionKey5() {
	gameKey, _ := hex.DecodeString("9900bd0cdcfa65639918bd0fc7fa6577")
	key, _ := pia.LDNSessionKey5(gameKey, 0x36dee059)
	fmt.Printf("%x\n", key)
	// Output: 7b182cb087eeabd228a2efd91a8be147
}
