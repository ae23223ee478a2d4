package dissect

import (
	"bytes"
	"encoding/binary"
	"os"
	"slices"
	"testing"
)

// nexgoRequest is the RMC request interop's rmcframe.Request builds: u32 size, u8
// protocol|0x80, u32 call id, u32 method id, then bytes fill+i.
func nexgoRequest(protocol uint8, callID, method uint32, total int, fill byte) []byte {
	total = max(total, 13)
	b := make([]byte, total)
	binary.LittleEndian.PutUint32(b[0:], uint32(total-4))
	b[4] = protocol | 0x80
	binary.LittleEndian.PutUint32(b[5:], callID)
	binary.LittleEndian.PutUint32(b[9:], method)
	for i := 13; i < total; i++ {
		b[i] = fill + byte(i)
	}
	return b
}

// nexgoResponse is the RMC success response nex-go's server (interop/nexgo) sends to
// req: u32 size, u8 protocol, u8 1, u32 call id, u32 method|0x8000, the parameters.
func nexgoResponse(req []byte) []byte {
	b := make([]byte, 14, 14+len(req)-13)
	binary.LittleEndian.PutUint32(b[0:], uint32(10+len(req)-13))
	b[4], b[5] = req[4]&^0x80, 1
	copy(b[6:10], req[5:9])
	binary.LittleEndian.PutUint32(b[10:], binary.LittleEndian.Uint32(req[9:])|0x8000)
	return append(b, req[13:]...)
}

// TestNexgoCaptures decodes tcpdump captures of gamewire's client talking to nex-go
// v2.3.1's server (testdata/captures/nexgo-*.pcap, made by interop's TestCaptureNexgo;
// see the README there): the packets nex-go built, encrypted, fragmented, signed and,
// in one capture, compressed must decode. Every request and every echo appears
// decrypted and in order; nex-go's reliable DATA packets have consecutive sequence
// ids from 1, the flags RELIABLE|NEED_ACK|HAS_SIZE and verified signatures.
func TestNexgoCaptures(t *testing.T) {
	sizes := []int{13, 64, 1024, 3000, 64, 1}
	for _, tc := range []struct {
		file, key, dialect string
		compression        string
		frags              int // fragments of nex-go's echo of the 3000-byte request
	}{
		{"nex-v1", "ridfebb9", "nex-v1", "", 3},
		{"nex-v1-compression", "ridfebb9", "nex-v1", "on", 3}, // nex-go compresses each fragment
		{"nex-v0", "6f599f81", "nex-v0", "", 3},
		{"nex-v0-friends", "ridfebb9", "nex-v0-friends", "", 3},
	} {
		t.Run(tc.file, func(t *testing.T) {
			capture, err := os.ReadFile("testdata/captures/nexgo-" + tc.file + ".pcap")
			if err != nil {
				t.Fatal(err)
			}
			d := New(Config{Keys: &Keys{AccessKeys: []string{tc.key}, Compression: tc.compression}})
			var msgs [2][][]byte
			var msgFrags []int
			var seqs []int64
			var frags []int64
			verified := 0
			err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
				if r.Kind == KindNote || r.Error != "" {
					t.Errorf("%s", r.AppendJSON(nil))
				}
				if f, ok := r.Field("checksum_ok"); ok && f.Type == FieldBool && !f.Bool {
					t.Errorf("bad checksum: %s", r.AppendJSON(nil))
				}
				fromNexgo := r.NetSrc == d.Flows()[0].Server
				if r.Kind == KindMessage {
					f, _ := r.Field("plain_hex")
					if fromNexgo {
						msgs[1] = append(msgs[1], bytes.Clone(f.Bytes))
						n, _ := r.Field("fragments")
						msgFrags = append(msgFrags, int(n.Int))
					} else {
						msgs[0] = append(msgs[0], bytes.Clone(f.Bytes))
					}
					return nil
				}
				if !fromNexgo || r.Kind != KindPacket {
					return nil
				}
				if f, ok := r.Field("signature_ok"); ok && f.Type == FieldBool {
					if !f.Bool {
						t.Errorf("nex-go's signature does not verify: %s", r.AppendJSON(nil))
					}
					verified++
				}
				typ, _ := r.Field("type")
				flags, _ := r.Field("flags")
				if typ.Str != "DATA" || !slices.Contains(flags.Strs, "RELIABLE") {
					return nil
				}
				if !slices.Equal(flags.Strs, []string{"RELIABLE", "NEED_ACK", "HAS_SIZE"}) {
					t.Errorf("nex-go DATA flags %v", flags.Strs)
				}
				seq, _ := r.Field("seq")
				frag, _ := r.Field("fragment_id")
				seqs, frags = append(seqs, seq.Int), append(frags, frag.Int)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fl := d.Flows(); len(fl) != 1 || fl[0].Dialect != tc.dialect {
				t.Fatalf("flows %+v", fl)
			}
			if len(msgs[0]) != len(sizes) || len(msgs[1]) != len(sizes) {
				t.Fatalf("%d requests and %d responses decoded, want %d each", len(msgs[0]), len(msgs[1]), len(sizes))
			}
			for i, size := range sizes {
				req := nexgoRequest(0x66, uint32(i+1), 7, size, byte(i))
				if !bytes.Equal(msgs[0][i], req) {
					t.Errorf("request %d differs: %x", i, msgs[0][i])
				}
				if !bytes.Equal(msgs[1][i], nexgoResponse(req)) {
					t.Errorf("nex-go's response %d differs: %x", i, msgs[1][i])
				}
			}
			if msgFrags[3] != tc.frags {
				t.Errorf("nex-go's 3000-byte echo came in %d fragments, want %d", msgFrags[3], tc.frags)
			}
			// Reliable DATA from nex-go: seq 1, 2, ... (its CONNECT-ACK is not
			// reliable), fragment ids 1, 2, ... then 0 for the last of a message.
			var wantSeqs, wantFrags []int64
			for _, n := range msgFrags {
				for f := 1; f < n; f++ {
					wantFrags = append(wantFrags, int64(f))
				}
				wantFrags = append(wantFrags, 0)
			}
			for i := range wantFrags {
				wantSeqs = append(wantSeqs, int64(i+1))
			}
			if !slices.Equal(seqs, wantSeqs) || !slices.Equal(frags, wantFrags) {
				t.Errorf("nex-go DATA seqs %v fragments %v, want %v and %v", seqs, frags, wantSeqs, wantFrags)
			}
			if verified < len(wantSeqs) {
				t.Errorf("%d of nex-go's packets had verified signatures, want at least %d", verified, len(wantSeqs))
			}
		})
	}
}
