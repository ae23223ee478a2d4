package types

import (
	"bytes"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

func seedGoldens(f *testing.F) {
	for _, g := range goldens {
		f.Add(testutil.Unhex(f, g.hex))
	}
}

// FuzzParseString checks String, Buffer and qBuffer: no panic, and parse -> append
// -> parse gives the same value.
func FuzzParseString(f *testing.F) {
	seedGoldens(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, n, err := ParseString(b); err == nil {
			if n > len(b) {
				t.Fatalf("used %d of %d bytes", n, len(b))
			}
			enc, err := AppendString(nil, s)
			if err != nil {
				t.Fatal(err)
			}
			s2, _, err := ParseString(enc)
			if err != nil || s2 != s {
				t.Fatalf("round trip %q -> %q (%v)", s, s2, err)
			}
		}
		if v, _, err := ParseBuffer(b); err == nil {
			enc, _ := AppendBuffer(nil, v)
			if v2, _, err := ParseBuffer(enc); err != nil || !bytes.Equal(v, v2) {
				t.Fatalf("buffer round trip: %v", err)
			}
		}
		if v, _, err := ParseQBuffer(b); err == nil {
			enc, _ := AppendQBuffer(nil, v)
			if v2, _, err := ParseQBuffer(enc); err != nil || !bytes.Equal(v, v2) {
				t.Fatalf("qBuffer round trip: %v", err)
			}
		}
	})
}

// FuzzParseStationURL checks the station url decoder and its string form.
func FuzzParseStationURL(f *testing.F) {
	seedGoldens(f)
	f.Add([]byte("\x4f\x00prudps:/stream=10;sid=1;CID=1;type=2;address=34.210.222.104;port=60101;PID=2\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, _, err := ParseStationURL(b)
		if err != nil {
			return
		}
		enc, err := AppendStationURL(nil, u)
		if err != nil {
			return // a value too long after normalisation is reported, fine
		}
		u2, _, err := ParseStationURL(enc)
		if err != nil || u2.String() != u.String() {
			t.Fatalf("round trip %q -> %q (%v)", u, u2, err)
		}
	})
}

// FuzzParseVariant checks Variant and AnyDataHolder.
func FuzzParseVariant(f *testing.F) {
	seedGoldens(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, _, err := ParseVariant(b); err == nil {
			enc, err := AppendVariant(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			v2, _, err := ParseVariant(enc)
			// NaN != NaN: compare the encodings instead.
			enc2, _ := AppendVariant(nil, v2)
			if err != nil || !bytes.Equal(enc, enc2) {
				t.Fatalf("variant round trip %#v -> %#v (%v)", v, v2, err)
			}
		}
		if h, _, err := ParseAnyDataHolder(b); err == nil {
			enc, err := AppendAnyDataHolder(nil, h)
			if err != nil {
				t.Fatal(err)
			}
			h2, _, err := ParseAnyDataHolder(enc)
			if err != nil || h2.TypeName != h.TypeName || !bytes.Equal(h.Data, h2.Data) {
				t.Fatalf("AnyDataHolder round trip (%v)", err)
			}
		}
	})
}

// FuzzReadStructures drives the Reader through structures, lists and maps with and
// without structure headers.
func FuzzReadStructures(f *testing.F) {
	seedGoldens(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []Settings{{}, hdr, {PIDSize: 8, StructureHeader: true}} {
			r := NewReader(b, s)
			c := r.RVConnectionData("c")
			if r.Err() == nil {
				enc, err := c.Append(nil, s)
				if err != nil {
					t.Fatal(err)
				}
				r2 := NewReader(enc, s)
				c2 := r2.RVConnectionData("c")
				if r2.Done() != nil || !equal(c, c2) {
					t.Fatalf("RVConnectionData round trip: %v", r2.Err())
				}
			}
			r = NewReader(b, s)
			ReadMap(&r, "m", (*Reader).String, (*Reader).Variant)
			ReadList(&r, "l", (*Reader).ResultRange)
			r.PID("pid")
			r.ReadData("d")
			_ = r.Done()
		}
	})
}
