package wire

import (
	"bytes"
	"errors"
	"testing"
)

// fuzzSeeds adds the published vectors and encodings of sample packets of every type.
func fuzzSeeds(f *testing.F, d Dialect, types []PacketType) {
	for _, b := range loadVectors(f) {
		f.Add(b)
	}
	for _, typ := range types {
		for _, p := range samplePackets(d, typ) {
			enc, err := d.Append(nil, &p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(enc)
		}
	}
}

// fuzzDialect checks: no panic; a decoded packet (also one with a bad checksum) appends
// and parses back equal; an error is a *Error of the dialect.
func fuzzDialect(t *testing.T, d Dialect, data []byte) {
	p, n, err := d.Parse(data)
	if err != nil && !errors.Is(err, ErrBadChecksum) {
		var we *Error
		if !errors.As(err, &we) || we.Dialect != d.Name() {
			t.Fatalf("error %v is not a *Error of %s", err, d.Name())
		}
		return
	}
	if n <= 0 || n > len(data) {
		t.Fatalf("used %d of %d bytes", n, len(data))
	}
	enc, err := d.Append(nil, &p)
	if err != nil {
		t.Fatalf("append of a parsed packet: %v\n%+v", err, p)
	}
	q, m, err := d.Parse(enc)
	if err != nil {
		t.Fatalf("reparse: %v\n%x", err, enc)
	}
	if m != len(enc) {
		t.Fatalf("reparse used %d of %d", m, len(enc))
	}
	if !samePacket(p, q) {
		t.Fatalf("parse -> append -> parse differs\n%+v\n%+v", p, q)
	}
	// Without a checksum error, checksum dialects reproduce the bytes exactly.
	if _, ok := legacyOfDialect(d); ok && !bytes.Equal(enc, data[:n]) && p.Checksum == q.Checksum {
		t.Fatalf("re-encoding differs\n%x\n%x", enc, data[:n])
	}
}

func FuzzV0(f *testing.F) {
	games, friends := NewV0("ridfebb9", ModeGames), NewV0("ridfebb9", ModeFriends)
	fuzzSeeds(f, games, allDialects()[0].types)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDialect(t, games, data)
		fuzzDialect(t, friends, data)
	})
}

func FuzzQuazal(f *testing.F) {
	ds := []Dialect{
		NewQuazal("8dtRv2oj", QuazalOptions{}),
		NewQuazal("8dtRv2oj", QuazalOptions{ChecksumSize: 4}),
		NewQuazal("", QuazalOptions{Types2006: true}),
	}
	fuzzSeeds(f, ds[0], allDialects()[2].types)
	fuzzSeeds(f, ds[1], allDialects()[3].types)
	fuzzSeeds(f, ds[2], allDialects()[4].types)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range ds {
			fuzzDialect(t, d, data)
		}
	})
}

func FuzzV1(f *testing.F) {
	d := NewV1("3d37fbdb")
	fuzzSeeds(f, d, allDialects()[5].types)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDialect(t, d, data)
		// Signing never panics and covers exactly the first packet.
		if _, n, err := d.Parse(data); err == nil {
			if _, err := d.Signature(data[:n], []byte("k"), nil); err != nil {
				t.Fatalf("signature of a parsed packet: %v", err)
			}
		}
	})
}

func FuzzLite(f *testing.F) {
	d := NewLite("3d37fbdb")
	fuzzSeeds(f, d, allDialects()[6].types)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDialect(t, d, data) })
}

func FuzzHyperscape(f *testing.F) {
	d := NewHyperscape()
	fuzzSeeds(f, d, allDialects()[7].types)
	var c HyperscapeConnect
	pl, _ := c.Append(nil, false)
	f.Add(pl)
	c.PublicKeySignature, c.Tag = []byte{1, 2, 3}, make([]byte, 32)
	pl, _ = c.Append(nil, true)
	f.Add(pl)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDialect(t, d, data)
		for _, server := range []bool{false, true} {
			c, err := ParseHyperscapeConnect(data, server)
			if err != nil {
				continue
			}
			enc, err := c.Append(nil, server)
			if err != nil || !bytes.Equal(enc, data) {
				t.Fatalf("connect payload re-encodes to %x (%v), want %x", enc, err, data)
			}
		}
	})
}

func FuzzAggregateAck(f *testing.F) {
	b, _ := AppendAggregateAck(nil, 1, 7, []uint16{9, 10})
	f.Add(b)
	f.Add(AppendAggregateAckOld(nil, []uint16{3, 4}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if a, err := ParseAggregateAck(data); err == nil {
			enc, err := AppendAggregateAck(nil, a.SubstreamID, a.Seq, a.AppendTo(nil))
			if err != nil || !bytes.Equal(enc, data) {
				t.Fatalf("new format re-encodes to %x (%v), want %x", enc, err, data)
			}
		}
		if a, err := ParseAggregateAckOld(data, 5); err == nil {
			if enc := AppendAggregateAckOld(nil, a.AppendTo(nil)); !bytes.Equal(enc, data) {
				t.Fatalf("old format re-encodes to %x, want %x", enc, data)
			}
		}
	})
}

func FuzzDetect(f *testing.F) {
	for _, b := range loadVectors(f) {
		f.Add(b, "8dtRv2oj")
	}
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		d, err := Detect(data, DetectOptions{AccessKey: key})
		if err != nil {
			if !errors.Is(err, ErrUnknownDialect) {
				t.Fatalf("error %v", err)
			}
			return
		}
		// Whatever Detect picks decodes the whole input with verified checksums.
		for off := 0; off < len(data); {
			_, n, err := d.Parse(data[off:])
			if err != nil {
				if d.Name() == NameV1 {
					return // V1 is chosen by magic alone
				}
				t.Fatalf("%s picked but packet at %d: %v", d.Name(), off, err)
			}
			off += n
		}
	})
}
