package wire

import (
	"errors"
	"slices"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

func TestAggregateAckNew(t *testing.T) {
	b, err := AppendAggregateAck(nil, 1, 0x0203, []uint16{5, 0xfffe})
	if err != nil {
		t.Fatal(err)
	}
	if want := testutil.Unhex(t, "01020302 0500 feff"); string(b) != string(want) {
		t.Fatalf("encoded %x, want %x", b, want)
	}
	a, err := ParseAggregateAck(b)
	if err != nil {
		t.Fatal(err)
	}
	if a.SubstreamID != 1 || a.Seq != 0x0203 || !slices.Equal(a.AppendTo(nil), []uint16{5, 0xfffe}) {
		t.Errorf("decoded %+v %v", a, a.AppendTo(nil))
	}
	for i := range len(b) {
		if _, err := ParseAggregateAck(b[:i]); !errors.Is(err, ErrTruncated) {
			t.Errorf("prefix %d: %v", i, err)
		}
	}
	if _, err := ParseAggregateAck(append(b, 0)); !errors.Is(err, ErrTrailingData) {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := AppendAggregateAck(nil, 0, 0, make([]uint16, 256)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("256 ids: %v", err)
	}
}

func TestAggregateAckOld(t *testing.T) {
	b := AppendAggregateAckOld(nil, []uint16{9, 11})
	a, err := ParseAggregateAckOld(b, 7)
	if err != nil {
		t.Fatal(err)
	}
	if a.Seq != 7 || a.Len() != 2 || a.At(0) != 9 || a.At(1) != 11 {
		t.Errorf("decoded %+v", a)
	}
	if _, err := ParseAggregateAckOld(b[:3], 7); !errors.Is(err, ErrTruncated) {
		t.Errorf("odd length: %v", err)
	}
}

func TestHyperscapeConnect(t *testing.T) {
	var client HyperscapeConnect
	for i := range client.PublicKey {
		client.PublicKey[i] = byte(i)
	}
	server := client
	server.PublicKeySignature = []byte("der signature bytes")
	server.Tag = make([]byte, 32)
	for _, tc := range []struct {
		name   string
		c      HyperscapeConnect
		server bool
	}{{"client", client, false}, {"server", server, true}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.c.Append(nil, tc.server)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseHyperscapeConnect(b, tc.server)
			if err != nil {
				t.Fatal(err)
			}
			if got.PublicKey != tc.c.PublicKey || string(got.PublicKeySignature) != string(tc.c.PublicKeySignature) || string(got.Tag) != string(tc.c.Tag) {
				t.Errorf("decoded %+v", got)
			}
			for i := range len(b) {
				if _, err := ParseHyperscapeConnect(b[:i], tc.server); !errors.Is(err, ErrTruncated) {
					t.Errorf("prefix %d: %v", i, err)
				}
			}
			if _, err := ParseHyperscapeConnect(append(b, 1), tc.server); !errors.Is(err, ErrTrailingData) {
				t.Errorf("trailing: %v", err)
			}
		})
	}
	// A length field larger than the input is refused without allocating for it.
	huge := testutil.Unhex(t, "ffffffff00")
	if _, err := ParseHyperscapeConnect(huge, true); !errors.Is(err, ErrTruncated) {
		t.Errorf("huge buffer length: %v", err)
	}
	// Through the dialect: the connection signature is a header field, the key the payload.
	pl, _ := client.Append(nil, false)
	p := Packet{Type: TypeConnect, Flags: FlagReliable | FlagNeedAck, Src: VPort{3, 1}, Dst: VPort{3, 15}, Payload: pl}
	p.SetConnSignature32(0x01020304)
	enc, err := NewHyperscape().Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := NewHyperscape().Parse(enc)
	if err != nil || q.ConnSignature32() != 0x01020304 {
		t.Fatalf("%v %#x", err, q.ConnSignature32())
	}
	if c, err := ParseHyperscapeConnect(q.Payload, q.Flags.Has(FlagAck)); err != nil || c.PublicKey != client.PublicKey {
		t.Errorf("%v", err)
	}
}
