package record

import (
	"testing"

	"github.com/gamewire/gamewire/prudp/wire"
)

// TestVerifySignatureKeyUnknown: with the session key possibly unknown, a games-mode V0
// DATA signature that does not verify is Unchecked (it covers the session key), a
// friends-mode one is Failed (it covers only the payload); with the state complete
// both are Failed, and both verify when right.
func TestVerifySignatureKeyUnknown(t *testing.T) {
	sk := []byte("0123456789abcdef")
	for _, tc := range []struct {
		mode         wire.SignatureMode
		keyUnknown   bool
		tamper       bool
		want         Verdict
		withSessionK bool
	}{
		{wire.ModeGames, false, false, Verified, true},
		{wire.ModeGames, true, true, Unchecked, false},
		{wire.ModeGames, false, true, Failed, true},
		{wire.ModeFriends, false, false, Verified, false},
		{wire.ModeFriends, true, true, Failed, false},
	} {
		d := wire.NewV0("6f599f81", tc.mode)
		p := wire.Packet{Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 2,
			Src: wire.VPort{Stream: wire.StreamRVSecure, Port: 15}, Dst: wire.VPort{Stream: wire.StreamRVSecure, Port: 1},
			Payload: []byte("payload")}
		p.SetSignature32(d.PacketSignature(&p, sk, 0))
		raw, err := d.Append(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		if tc.tamper {
			raw[len(raw)-2] ^= 1 // a payload byte: the checksum byte follows it
		}
		q, n, err := d.Parse(raw)
		if err != nil && !tc.tamper {
			t.Fatal(err)
		}
		st := &SignatureState{KeyUnknown: tc.keyUnknown}
		if tc.withSessionK {
			st.SessionKey = sk
		}
		if got := ProfileOf(d.Name()).VerifySignature(d, &q, raw[:n], st); got != tc.want {
			t.Errorf("%s key unknown %v tampered %v: %v, want %v", d.Name(), tc.keyUnknown, tc.tamper, got, tc.want)
		}
	}
}
