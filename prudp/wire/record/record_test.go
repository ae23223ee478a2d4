package record

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/prudp/crypt"
	"github.com/gamewire/gamewire/prudp/wire"
)

func vectors(t *testing.T) map[string][]byte { return vectorsFor(t) }

func vectorsFor(t testing.TB) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile("../../../testdata/prudp/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vf struct {
		Packets []struct{ Name, Hex string }
	}
	if err := json.Unmarshal(raw, &vf); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range vf.Packets {
		out[p.Name], _ = hex.DecodeString(p.Hex)
	}
	return out
}

// decodeJSON runs the decode --hex pipeline and returns the JSON objects it would print.
func decodeJSON(t *testing.T, dialect string, b []byte, key string, checksum int, opts Options) []map[string]any {
	t.Helper()
	d, err := Resolve(dialect, b, key, checksum)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := DecodeAll(d, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for i := range recs {
		line, err := json.Marshal(&recs[i])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
		if txt := recs[i].Text(); !strings.Contains(txt, recs[i].Type) {
			t.Errorf("text %q lacks the type", txt)
		}
	}
	return out
}

// requiredKeys are the keys the decode contract (docs/cli.md) promises in every record.
var requiredKeys = []string{"protocol", "dialect", "src", "dst", "type", "flags", "session_id",
	"substream_id", "seq", "fragment_id", "signature_hex", "connection_signature_hex",
	"payload_hex", "checksum_ok", "signature_ok"}

func TestQuickStart(t *testing.T) {
	// The README's first command.
	recs := decodeJSON(t, "quazal", vectors(t)["quazal-gro-connect"], "8dtRv2oj", 0, Options{})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	for _, k := range requiredKeys {
		if _, ok := r[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	want := map[string]any{
		"protocol": "prudp", "dialect": "quazal", "type": "CONNECT", "session_id": 31.0, "seq": 1.0,
		"signature_hex": "78563412", "connection_signature_hex": "0100267f", "payload_hex": "",
		"checksum_ok": true, "signature_ok": nil, "substream_id": nil, "fragment_id": nil,
	}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s = %v, want %v", k, r[k], v)
		}
	}
	if f := r["flags"].([]any); len(f) != 2 || f[0] != "RELIABLE" || f[1] != "NEED_ACK" {
		t.Errorf("flags %v", f)
	}
	src := r["src"].(map[string]any)
	if src["stream"] != 3.0 || src["port"] != 15.0 {
		t.Errorf("src %v", src)
	}
	if _, ok := r["plain_hex"]; ok {
		t.Error("plain_hex without --rc4-key/--decrypt")
	}
}

func TestAutoVectors(t *testing.T) {
	vec := vectors(t)
	for _, tc := range []struct {
		name, key, dialect, typ string
		sigOK                   any
	}{
		{"quazal-gro-connect", "8dtRv2oj", "quazal", "CONNECT", nil},
		{"quazal-scbl-syn", "yl4NG7qZ", "quazal", "SYN", nil},
		{"quazal-gro-do-join-request", "", "quazal", "DATA", nil},
		{"v1-terraria-syn", "3d37fbdb", "nex-v1", "SYN", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decodeJSON(t, "auto", vec[tc.name], tc.key, 0, Options{})[0]
			if r["dialect"] != tc.dialect || r["type"] != tc.typ || r["signature_ok"] != tc.sigOK {
				t.Errorf("record %v", r)
			}
		})
	}
	// The V1 SYN under a wrong key: the signature is certainly wrong.
	r := decodeJSON(t, "auto", vec["v1-terraria-syn"], "00000000", 0, Options{})[0]
	if r["signature_ok"] != false || r["checksum_ok"] != nil {
		t.Errorf("wrong key: signature_ok %v checksum_ok %v", r["signature_ok"], r["checksum_ok"])
	}
}

func TestPlainDO(t *testing.T) {
	r := decodeJSON(t, "quazal", vectors(t)["quazal-gro-do-join-request"], "", 0, Options{Decrypt: true})[0]
	plain, _ := r["plain_hex"].(string)
	if len(plain) != 2*39 {
		t.Fatalf("plain_hex %q (%v), want 39 bytes", plain, r["plain_error"])
	}
}

// TestPlainRC4: an RC4-encrypted Quazal DATA payload decrypts with a fresh state per
// packet, so two packets encrypted from fresh states both decode.
func TestPlainRC4(t *testing.T) {
	d := wire.NewQuazal("8dtRv2oj", wire.QuazalOptions{})
	msg := []byte{0, 'h', 'e', 'l', 'l', 'o'} // ratio byte 0: not compressed
	enc := rc4Encrypt([]byte("CD&ML"), msg)
	var buf []byte
	for seq := uint16(2); seq <= 3; seq++ {
		p := wire.Packet{Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck | wire.FlagHasSize,
			Src: wire.VPort{Stream: 3, Port: 15}, Dst: wire.VPort{Stream: 3, Port: 1}, Seq: seq, Payload: enc}
		var err error
		if buf, err = d.Append(buf, &p); err != nil {
			t.Fatal(err)
		}
	}
	for _, opts := range []Options{{Decrypt: true}, {RC4Key: []byte("CD&ML")}} {
		recs := decodeJSON(t, "auto", buf, "8dtRv2oj", 0, opts)
		if len(recs) != 2 {
			t.Fatalf("%d records", len(recs))
		}
		for _, r := range recs {
			if r["plain_hex"] != hex.EncodeToString([]byte("hello")) {
				t.Errorf("plain_hex %v (%v)", r["plain_hex"], r["plain_error"])
			}
		}
	}
}

func rc4Encrypt(key, msg []byte) []byte {
	out := append([]byte(nil), msg...)
	var c crypt.RC4
	if err := c.Reset(key); err != nil {
		panic(err)
	}
	c.XORKeyStream(out, out)
	return out
}

func TestBadChecksumRecord(t *testing.T) {
	b, _ := hex.DecodeString("3f31311f7856341201000100267f5f")
	recs := decodeJSON(t, "quazal", b, "8dtRv2oj", 1, Options{})
	if recs[0]["checksum_ok"] != false || recs[0]["type"] != "CONNECT" {
		t.Errorf("record %v", recs[0])
	}
}

func TestResolveErrors(t *testing.T) {
	if _, err := Resolve("nex-v2", nil, "", 0); err == nil {
		t.Error("unknown dialect accepted")
	}
	if _, err := Resolve("quazal", nil, "", 2); err == nil {
		t.Error("--checksum 2 accepted")
	}
	if _, err := Resolve("nex-v0", nil, "", 4); err == nil {
		t.Error("--checksum with nex-v0 accepted")
	}
	d, err := Resolve("quazal-2006", nil, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	if q := d.(*wire.Quazal).Options(); !q.Types2006 || q.ChecksumSize != 4 {
		t.Errorf("options %+v", q)
	}
	// A truncated second packet stops decoding with an error naming its offset.
	b := vectors(t)["v1-terraria-syn"]
	d, _ = Resolve("nex-v1", b, "3d37fbdb", 0)
	recs, err := DecodeAll(d, append(b, b[:20]...), Options{})
	if len(recs) != 1 || err == nil || !strings.Contains(err.Error(), "offset 57") {
		t.Errorf("%d records, err %v", len(recs), err)
	}
}

// orderedSink writes Profile.Fields as JSON in the order they come.
type orderedSink struct {
	b  []byte
	in []int // members left in each open object
}

func (s *orderedSink) key(k string) {
	if n := len(s.b); n > 0 && s.b[n-1] != '{' {
		s.b = append(s.b, ',')
	}
	s.b, _ = appendJSON(s.b, k)
	s.b = append(s.b, ':')
}

func (s *orderedSink) done() {
	for len(s.in) > 0 {
		s.in[len(s.in)-1]--
		if s.in[len(s.in)-1] >= 0 {
			if s.in[len(s.in)-1] == 0 {
				s.b = append(s.b, '}')
				s.in = s.in[:len(s.in)-1]
			}
			return
		}
		s.in = s.in[:len(s.in)-1]
	}
}

func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}

func (s *orderedSink) String(k, v string)     { s.key(k); s.b, _ = appendJSON(s.b, v); s.done() }
func (s *orderedSink) Int(k string, v int64)  { s.key(k); s.b, _ = appendJSON(s.b, v); s.done() }
func (s *orderedSink) Bool(k string, v bool)  { s.key(k); s.b, _ = appendJSON(s.b, v); s.done() }
func (s *orderedSink) Null(k string)          { s.key(k); s.b = append(s.b, "null"...); s.done() }
func (s *orderedSink) Hex(k string, v []byte) { s.String(k, hex.EncodeToString(v)) }
func (s *orderedSink) Strings(k string, v []string) {
	s.key(k)
	s.b, _ = appendJSON(s.b, v)
	s.done()
}
func (s *orderedSink) Object(k string, n int) {
	s.key(k)
	s.b = append(s.b, '{')
	s.in = append(s.in, n)
}

// TestDescribeFollowsFields checks that the Record struct's JSON has the keys, order and
// nulls Profile.Fields writes (which the dissector writes too), for every published
// vector under every dialect that decodes it, with and without decryption.
func TestDescribeFollowsFields(t *testing.T) {
	n := 0
	for name, b := range vectors(t) {
		for _, dn := range Names {
			for _, opts := range []Options{{}, {Decrypt: true}} {
				d, err := Resolve(dn, b, "", 0)
				if err != nil {
					continue
				}
				p, size, err := d.Parse(b)
				if err != nil && !errors.Is(err, wire.ErrBadChecksum) {
					continue
				}
				r := Describe(d, &p, b[:size], 0, err == nil, opts)
				got, err := json.Marshal(&r)
				if err != nil {
					t.Fatal(err)
				}
				pr := ProfileOf(d.Name())
				f := Facts{Length: size, Flags: p.Flags.Names(), ChecksumOK: r.ChecksumOK != nil && *r.ChecksumOK,
					Signature: signatureOK(pr, d, &p, b[:size])}
				if r.PlainHex != nil {
					f.Plain, _ = hex.DecodeString(*r.PlainHex)
					f.Decoded = true
				}
				f.PlainError = r.PlainError
				s := &orderedSink{b: []byte(`{"protocol":"prudp"`)}
				pr.Fields(s, &p, &f)
				s.b = append(s.b, '}')
				if string(got) != string(s.b) {
					t.Errorf("%s as %s:\nstruct %s\nfields %s", name, dn, got, s.b)
				}
				n++
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d records compared", n)
	}
}
