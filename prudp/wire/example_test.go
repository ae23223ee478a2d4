package wire_test

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/prudp/wire"
)

// Decode the published Ghost Recon Online CONNECT and verify its checksum.
func ExampleQuazal_Parse() {
	b, _ := hex.DecodeString("3f31311f7856341201000100267f5e")
	d := wire.NewQuazal("8dtRv2oj", wire.QuazalOptions{})
	p, n, err := d.Parse(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Type, p.Flags, p.Src, "->", p.Dst, "seq", p.Seq, "bytes", n)
	fmt.Printf("connection signature %#x\n", p.ConnSignature32())

	// One flipped bit: the packet still decodes, and the error says where and why.
	b[14] ^= 1
	_, _, err = d.Parse(b)
	fmt.Println(errors.Is(err, wire.ErrBadChecksum), err)
	// Output:
	// CONNECT RELIABLE|NEED_ACK OldRVSec:15 -> OldRVSec:1 seq 1 bytes 15
	// connection signature 0x7f260001
	// true prudp quazal: checksum at offset 14: checksum mismatch (got 0x5f, want 0x5e)
}

// Build, sign and verify a V1 DATA packet, the engine's send and receive paths.
func ExampleV1_SignPacket() {
	d := wire.NewV1("3d37fbdb")
	sessionKey := make([]byte, 32)
	connSig := make([]byte, 16)
	p := wire.Packet{
		Src: wire.VPort{Stream: wire.StreamRVSecure, Port: 15}, Dst: wire.VPort{Stream: wire.StreamRVSecure, Port: 1},
		Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck | wire.FlagHasSize,
		Seq: 2, Payload: []byte("rmc bytes"),
	}
	buf, err := d.Append(make([]byte, 0, 1500), &p) // options: the spec's (fragment id)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := d.SignPacket(buf, sessionKey, connSig); err != nil {
		fmt.Println(err)
		return
	}

	q, n, _ := d.Parse(buf)
	ok, _ := d.VerifyPacket(buf[:n], sessionKey, connSig)
	fmt.Println(q.Type, q.Seq, string(q.Payload), "signature ok:", ok)
	// Output:
	// DATA 2 rmc bytes signature ok: true
}

// Several packets in one datagram: parse in a loop on the bytes consumed.
func ExampleDialect_parseLoop() {
	d := wire.NewV1("3d37fbdb")
	var datagram []byte
	for seq := uint16(1); seq <= 3; seq++ {
		p := wire.Packet{Type: wire.TypePing, Flags: wire.FlagNeedAck, Seq: seq}
		datagram, _ = d.Append(datagram, &p)
	}
	for off := 0; off < len(datagram); {
		p, n, err := d.Parse(datagram[off:])
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(p.Type, p.Seq)
		off += n
	}
	// Output:
	// PING 1
	// PING 2
	// PING 3
}
