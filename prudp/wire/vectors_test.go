package wire

import (
	"bytes"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
	"github.com/gamewire/gamewire/prudp/crypt"
)

// TestVectors decodes every packet of testdata/prudp/vectors.json to the facts written
// beside it, verifies checksum and signature, and re-encodes it to the same bytes.
func TestVectors(t *testing.T) {
	vec := loadVectors(t)
	tests := []struct {
		name    string
		dialect Dialect
		want    Packet
		check   func(t *testing.T, p Packet, b []byte)
	}{
		{
			// The GRO page's annotation says SYN with checksum 0x73; the bytes are a
			// CONNECT whose checksum 0x5e verifies. The bytes win.
			name:    "quazal-gro-connect",
			dialect: NewQuazal("8dtRv2oj", QuazalOptions{}),
			want: Packet{
				Src: VPort{StreamOldRVSec, 15}, Dst: VPort{StreamOldRVSec, 1},
				Type: TypeConnect, Flags: FlagReliable | FlagNeedAck,
				SessionID: 0x1f, Seq: 1,
				Signature:     [16]byte{0x78, 0x56, 0x34, 0x12},
				ConnSignature: [16]byte{0x01, 0x00, 0x26, 0x7f},
				Payload:       []byte{},
				Checksum:      0x5e,
			},
			check: func(t *testing.T, p Packet, b []byte) {
				if got := KeySum("8dtRv2oj") & 0xff; got != 0xe3 {
					t.Errorf("checksum base %#x, want 0xe3", got)
				}
				if p.Signature32() != 0x12345678 || p.ConnSignature32() != 0x7f260001 {
					t.Errorf("signature %#x conn %#x", p.Signature32(), p.ConnSignature32())
				}
			},
		},
		{
			name:    "quazal-gro-do-join-request",
			dialect: NewQuazal("", QuazalOptions{}),
			want: Packet{
				Src: VPort{StreamDO, 1}, Dst: VPort{StreamDO, 1},
				Type: TypeData, Flags: FlagReliable | FlagNeedAck | FlagHasSize,
				SessionID: 0x25, Seq: 3, FragmentID: 0,
				Signature: [16]byte{0x78, 0x56, 0x34, 0x12},
			},
			check: func(t *testing.T, p Packet, b []byte) {
				if len(p.Payload) != 0x21 {
					t.Fatalf("payload %d bytes, want 0x21", len(p.Payload))
				}
				if p.Payload[0] != 0x02 {
					t.Errorf("compression ratio byte %#x, want 0x02", p.Payload[0])
				}
				plain, err := crypt.Decompress(p.Payload, 1<<16)
				if err != nil {
					t.Fatal(err)
				}
				if len(plain) != 39 {
					t.Errorf("inflated to %d bytes, want 39", len(plain))
				}
				// The stream rule matters: with a key, a DO packet still verifies (base 0).
				if _, _, err := NewQuazal("8dtRv2oj", QuazalOptions{}).Parse(b); err != nil {
					t.Errorf("DO packet with a key: %v", err)
				}
			},
		},
		{
			name:    "quazal-scbl-syn",
			dialect: NewQuazal("yl4NG7qZ", QuazalOptions{}),
			want: Packet{
				Src: VPort{StreamOldRVSec, 15}, Dst: VPort{StreamOldRVSec, 1},
				Type: TypeSyn, Flags: FlagNeedAck,
				Payload: []byte{}, Checksum: 0x40,
			},
			check: func(t *testing.T, p Packet, b []byte) {
				if got := KeySum("yl4NG7qZ") & 0xff; got != 0xb0 {
					t.Errorf("checksum base %#x, want 0xb0", got)
				}
			},
		},
		{
			name:    "v1-terraria-syn",
			dialect: NewV1("3d37fbdb"),
			want: Packet{
				Src: VPort{StreamRVSecure, 15}, Dst: VPort{StreamRVSecure, 1},
				Type: TypeSyn, Flags: FlagNeedAck | FlagHasSize,
				Signature:          [16]byte(testutil.Unhex(t, "47cdc13045c9fda980d5db81456feff1")),
				Options:            OptSupportedFunctions | OptConnSignature | OptMaxSubstreamID,
				SupportedFunctions: 0x104,
				Payload:            []byte{},
			},
			check: func(t *testing.T, p Packet, b []byte) {
				d := NewV1("3d37fbdb")
				ok, err := d.VerifyPacket(b, nil, nil)
				if err != nil || !ok {
					t.Fatalf("signature does not verify: %v", err)
				}
				// Re-signing the zeroed packet reproduces the published signature.
				q := p
				q.Signature = [16]byte{}
				enc, err := d.Append(nil, &q)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.SignPacket(enc, nil, nil); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(enc, b) {
					t.Errorf("signed encoding\n%x\nwant\n%x", enc, b)
				}
				// A wrong key does not verify.
				if ok, _ := NewV1("3d37fbdc").VerifyPacket(b, nil, nil); ok {
					t.Error("verifies under a wrong key")
				}
			},
		},
	}
	if len(tests) != len(vec) {
		t.Errorf("%d vectors in the file, %d tested", len(vec), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := vec[tt.name]
			if !ok {
				t.Fatalf("vector %s missing", tt.name)
			}
			p, n, err := tt.dialect.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(b) {
				t.Errorf("used %d of %d bytes", n, len(b))
			}
			want := tt.want
			if want.Payload == nil {
				want.Payload = p.Payload
			}
			if want.Checksum != 0 && p.Checksum != want.Checksum {
				t.Errorf("checksum %#x, want %#x", p.Checksum, want.Checksum)
			}
			if !samePacket(p, want) {
				t.Errorf("decoded\n%+v\nwant\n%+v", p, want)
			}
			if tt.check != nil {
				tt.check(t, p, b)
			}
			enc, err := tt.dialect.Append(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, b) {
				t.Errorf("re-encoded\n%x\nwant\n%x", enc, b)
			}
			// A flipped bit anywhere is caught (checksum dialects) or changes the
			// signature (V1).
			for i := range b {
				bad := bytes.Clone(b)
				bad[i] ^= 0x10
				if _, isV1 := tt.dialect.(*V1); isV1 {
					if ok, _ := NewV1("3d37fbdb").VerifyPacket(bad, nil, nil); ok && i >= 6 && (i < 14 || i >= 30) {
						t.Errorf("bit flip at %d still verifies", i)
					}
					continue
				}
				if _, _, err := tt.dialect.Parse(bad); err == nil {
					t.Errorf("bit flip at %d parses without error", i)
				}
			}
		})
	}
}
