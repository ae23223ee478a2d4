package types

import (
	"bytes"
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
)

var (
	hdr  = Settings{StructureHeader: true}
	pid8 = Settings{PIDSize: 8}
)

// golden is one value with its encoding, checked by hand against the tables of
// nintendo-wiki "NEX common types".
type golden struct {
	name   string
	s      Settings
	hex    string
	encode func(b []byte) ([]byte, error)
	decode func(r *Reader) any
	want   any
}

func ok(f func(b []byte) []byte) func(b []byte) ([]byte, error) {
	return func(b []byte) ([]byte, error) { return f(b), nil }
}

var goldens = []golden{
	{"String", Settings{}, "0400 616263 00",
		func(b []byte) ([]byte, error) { return AppendString(b, "abc") },
		func(r *Reader) any { return r.String("s") }, "abc"},
	{"String/empty", Settings{}, "0100 00",
		func(b []byte) ([]byte, error) { return AppendString(b, "") },
		func(r *Reader) any { return r.String("s") }, ""},
	{"String/utf8", Settings{}, "0300 c3a9 00",
		func(b []byte) ([]byte, error) { return AppendString(b, "é") },
		func(r *Reader) any { return r.String("s") }, "é"},
	{"Buffer", Settings{}, "03000000 010203",
		func(b []byte) ([]byte, error) { return AppendBuffer(b, []byte{1, 2, 3}) },
		func(r *Reader) any { return r.Buffer("b") }, []byte{1, 2, 3}},
	{"qBuffer", Settings{}, "0200 aabb",
		func(b []byte) ([]byte, error) { return AppendQBuffer(b, []byte{0xaa, 0xbb}) },
		func(r *Reader) any { return r.QBuffer("b") }, []byte{0xaa, 0xbb}},
	{"PID/4", Settings{}, "78563412",
		func(b []byte) ([]byte, error) { return AppendPID(b, Settings{}, 0x12345678) },
		func(r *Reader) any { return r.PID("pid") }, PID(0x12345678)},
	{"PID/8", pid8, "b2ee86df19399103",
		func(b []byte) ([]byte, error) { return AppendPID(b, pid8, 257049437023956658) },
		func(r *Reader) any { return r.PID("pid") }, PID(257049437023956658)},
	{"Result", Settings{}, "06000180",
		ok(func(b []byte) []byte { return AppendResult(b, CoreAccessDenied) }),
		func(r *Reader) any { return r.Result("r") }, CoreAccessDenied},
	{"DateTime", Settings{}, "4b99ecaa1f000000",
		ok(func(b []byte) []byte { return AppendDateTime(b, MakeDateTime(2026, 11, 22, 9, 37, 11)) }),
		func(r *Reader) any { return r.DateTime("t") }, MakeDateTime(2026, 11, 22, 9, 37, 11)},
	{"StationURL", Settings{}, "1f00 707275647073 3a2f 616464726573733d312e322e332e34 3b 706f72743d35 00",
		func(b []byte) ([]byte, error) {
			return AppendStationURL(b, NewStationURL("prudps", URLParam{"address", "1.2.3.4"}, URLParam{"port", "5"}))
		},
		func(r *Reader) any { return r.StationURL("u").String() }, "prudps:/address=1.2.3.4;port=5"},
	{"List<Uint32>", Settings{}, "02000000 01000000 02000000",
		func(b []byte) ([]byte, error) {
			return AppendList(b, []uint32{1, 2}, func(b []byte, v uint32) ([]byte, error) { return append(b, byte(v), 0, 0, 0), nil })
		},
		func(r *Reader) any { return ReadList(r, "l", (*Reader).U32) }, []uint32{1, 2}},
	{"Map<String,Variant>", Settings{}, "01000000 0200 6b00 01 ffffffffffffffff",
		func(b []byte) ([]byte, error) {
			return AppendMap(b, []Pair[string, Variant]{{"k", Variant{Type: VariantSint64, Int: -1}}}, AppendString, AppendVariant)
		},
		func(r *Reader) any { return ReadMap(r, "m", (*Reader).String, (*Reader).Variant) },
		[]Pair[string, Variant]{{"k", Variant{Type: VariantSint64, Int: -1}}}},
	{"Variant/None", Settings{}, "00",
		func(b []byte) ([]byte, error) { return AppendVariant(b, Variant{}) },
		func(r *Reader) any { return r.Variant("v") }, Variant{}},
	{"Variant/Double", Settings{}, "02 000000000000f83f",
		func(b []byte) ([]byte, error) { return AppendVariant(b, Variant{Type: VariantDouble, Float: 1.5}) },
		func(r *Reader) any { return r.Variant("v") }, Variant{Type: VariantDouble, Float: 1.5}},
	{"Variant/Bool", Settings{}, "03 01",
		func(b []byte) ([]byte, error) { return AppendVariant(b, Variant{Type: VariantBool, Bool: true}) },
		func(r *Reader) any { return r.Variant("v") }, Variant{Type: VariantBool, Bool: true}},
	{"Variant/String", Settings{}, "04 0300 686900",
		func(b []byte) ([]byte, error) { return AppendVariant(b, Variant{Type: VariantString, Str: "hi"}) },
		func(r *Reader) any { return r.Variant("v") }, Variant{Type: VariantString, Str: "hi"}},
	{"Variant/DateTime", Settings{}, "05 4b99ecaa1f000000",
		func(b []byte) ([]byte, error) {
			return AppendVariant(b, Variant{Type: VariantDateTime, Uint: uint64(MakeDateTime(2026, 11, 22, 9, 37, 11))})
		},
		func(r *Reader) any { return r.Variant("v") }, Variant{Type: VariantDateTime, Uint: 0x1faaec994b}},
	{"Variant/Uint64", Settings{}, "06 0100000000000080",
		func(b []byte) ([]byte, error) { return AppendVariant(b, Variant{Type: VariantUint64, Uint: 1<<63 + 1}) },
		func(r *Reader) any { return r.Variant("v") }, Variant{Type: VariantUint64, Uint: 1<<63 + 1}},
	{"Structure/no header", Settings{}, "01000000 02000000",
		func(b []byte) ([]byte, error) { return ResultRange{1, 2}.Append(b, Settings{}) },
		func(r *Reader) any { return r.ResultRange("range") }, ResultRange{1, 2}},
	{"Structure/header", hdr, "00 08000000 01000000 02000000",
		func(b []byte) ([]byte, error) { return ResultRange{1, 2}.Append(b, hdr) },
		func(r *Reader) any { return r.ResultRange("range") }, ResultRange{1, 2}},
	{"AnyDataHolder/NullData", hdr, "0900 4e756c6c4461746100 0e000000 0a000000 00 00000000 00 00000000",
		func(b []byte) ([]byte, error) {
			data := AppendData(nil, hdr) // Data level
			data = AppendData(data, hdr) // NullData level (no fields)
			return AppendAnyDataHolder(b, AnyDataHolder{TypeName: "NullData", Data: data})
		},
		func(r *Reader) any { return r.AnyDataHolder("any") },
		AnyDataHolder{TypeName: "NullData", Data: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}},
	{"RVConnectionData/v0 no header", Settings{}, "0900 7072756470733a2f00 00000000 0100 00",
		func(b []byte) ([]byte, error) {
			return RVConnectionData{RegularURL: NewStationURL("prudps")}.Append(b, Settings{})
		},
		func(r *Reader) any { return r.RVConnectionData("c") },
		RVConnectionData{RegularURL: NewStationURL("prudps")}},
	{"RVConnectionData/v1 header", hdr, "01 1a000000 0900 7072756470733a2f00 00000000 0100 00 4b99ecaa1f000000",
		func(b []byte) ([]byte, error) {
			return RVConnectionData{RegularURL: NewStationURL("prudps"), Version: 1,
				CurrentUTCTime: MakeDateTime(2026, 11, 22, 9, 37, 11)}.Append(b, hdr)
		},
		func(r *Reader) any { return r.RVConnectionData("c") },
		RVConnectionData{RegularURL: NewStationURL("prudps"), Version: 1, CurrentUTCTime: 0x1faaec994b}},
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			want := testutil.Unhex(t, g.hex)
			prefix := []byte{0xee}
			got, err := g.encode(prefix)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.Equal(got[1:], want) {
				t.Fatalf("encode:\n got %x\nwant %x", got[1:], want)
			}
			r := NewReader(want, g.s)
			v := g.decode(&r)
			if err := r.Done(); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !equal(v, g.want) {
				t.Fatalf("decode: got %#v, want %#v", v, g.want)
			}
			// Every proper prefix is an error, never a panic.
			for n := 0; n < len(want); n++ {
				r := NewReader(want[:n], g.s)
				g.decode(&r)
				if r.Done() == nil {
					t.Fatalf("prefix of %d/%d bytes decoded without error", n, len(want))
				}
			}
		})
	}
}

func equal(a, b any) bool {
	switch a := a.(type) {
	case []byte:
		return bytes.Equal(a, b.([]byte))
	case StationURL:
		return a.String() == b.(StationURL).String()
	case RVConnectionData:
		bb := b.(RVConnectionData)
		return a.RegularURL.String() == bb.RegularURL.String() && a.SpecialURL.String() == bb.SpecialURL.String() &&
			bytes.Equal(a.SpecialProtocols, bb.SpecialProtocols) && a.Version == bb.Version && a.CurrentUTCTime == bb.CurrentUTCTime
	case AnyDataHolder:
		bb := b.(AnyDataHolder)
		return a.TypeName == bb.TypeName && bytes.Equal(a.Data, bb.Data)
	case []uint32:
		bb := b.([]uint32)
		if len(a) != len(bb) {
			return false
		}
		for i := range a {
			if a[i] != bb[i] {
				return false
			}
		}
		return true
	case []Pair[string, Variant]:
		bb := b.([]Pair[string, Variant])
		if len(a) != len(bb) {
			return false
		}
		for i := range a {
			if a[i] != bb[i] {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestEncodeErrors(t *testing.T) {
	if _, err := AppendString(nil, strings.Repeat("x", MaxStringLen+1)); !errors.Is(err, ErrTooLong) {
		t.Errorf("long string: %v", err)
	}
	if b, err := AppendString(nil, strings.Repeat("x", MaxStringLen)); err != nil || len(b) != 2+MaxStringLen+1 {
		t.Errorf("longest string: %v", err)
	}
	if _, err := AppendQBuffer(nil, make([]byte, 65536)); !errors.Is(err, ErrTooLong) {
		t.Errorf("long qBuffer: %v", err)
	}
	if _, err := AppendPID(nil, Settings{}, 1<<32); !errors.Is(err, ErrTooLong) {
		t.Errorf("64-bit PID in 4 bytes: %v", err)
	}
	if _, err := AppendPID(nil, Settings{PIDSize: 5}, 1); !errors.Is(err, ErrBadPIDSize) {
		t.Errorf("PID size 5: %v", err)
	}
	if _, err := AppendVariant(nil, Variant{Type: 7}); !errors.Is(err, ErrBadVariant) {
		t.Errorf("variant 7: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		hex    string
		s      Settings
		decode func(r *Reader)
		want   error
		field  string
		offset int
	}{
		{"string without terminator", "0200 6162", Settings{}, func(r *Reader) { r.String("strUserName") }, ErrNoTerminator, "strUserName", 0},
		{"forged buffer length", "ffffffff 00", Settings{}, func(r *Reader) { r.Buffer("pbuf") }, ErrTruncated, "pbuf", 0},
		{"forged list count", "ffffff7f 00000000", Settings{}, func(r *Reader) { ReadList(r, "vecMyURLs", (*Reader).StationURL) }, ErrBadLength, "vecMyURLs", 0},
		{"bad item in list", "02000000 0100 00 0300 787800", Settings{}, func(r *Reader) { ReadList(r, "vecMyURLs", (*Reader).StationURL) }, ErrBadStationURL, "vecMyURLs[1]", 7},
		{"unknown variant", "07", Settings{}, func(r *Reader) { r.Variant("v") }, ErrBadVariant, "v", 0},
		{"forged structure length", "0102000000 00", hdr, func(r *Reader) { r.ResultRange("range") }, ErrTruncated, "range", 0},
		{"field inside structure", "0004000000 01000000", hdr, func(r *Reader) { r.ResultRange("range") }, ErrTruncated, "range.m_uiSize", 9},
		{"any lengths disagree", "0100 00 09000000 04000000 00000000", Settings{}, func(r *Reader) { r.AnyDataHolder("oExtraData") }, ErrBadLength, "oExtraData", 0},
		{"trailing bytes", "0100 00 ff", Settings{}, func(r *Reader) { r.String("s") }, ErrTrailingData, "end of parameters", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(testutil.Unhex(t, tt.hex), tt.s)
			tt.decode(&r)
			err := r.Done()
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != tt.field || e.Offset != tt.offset {
				t.Fatalf("got %v, want field %q at offset %d", err, tt.field, tt.offset)
			}
		})
	}
}

func TestStructureSkipsNewerFields(t *testing.T) {
	// A version-1 ResultRange with an extra field this decoder does not know: the
	// reader skips it and carries on with the next parameter.
	b := testutil.Unhex(t, "01 0c000000 01000000 02000000 03000000 0500 6e65787400")
	r := NewReader(b, hdr)
	rr := r.ResultRange("range")
	s := r.String("next")
	if err := r.Done(); err != nil || rr != (ResultRange{1, 2}) || s != "next" {
		t.Fatalf("got %v %v %v", rr, s, err)
	}
}

func TestStationURLString(t *testing.T) {
	for _, s := range []string{
		"prudps:/stream=10;sid=1;CID=1;type=2;address=34.210.222.104;port=60101;PID=2",
		"prudps:/PID=2;CID=1;type=2;address=0.0.0.1;port=1;sid=1;stream=10",
		"udp:/",
		"",
	} {
		u, err := ParseStationURLString(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if u.String() != s {
			t.Fatalf("%q printed as %q", s, u.String())
		}
	}
	u, _ := ParseStationURLString("prudps:/stream=10;sid=1;CID=1;type=2;address=34.210.222.104;port=60101;PID=2")
	if u.Address() != "34.210.222.104" || u.Port() != 60101 || u.PID() != 2 || u.CID() != 1 || u.Scheme != "prudps" {
		t.Fatalf("accessors: %q %d %d %d %q", u.Address(), u.Port(), u.PID(), u.CID(), u.Scheme)
	}
	v := u
	v.SetUint("port", 1)
	v.Set("RVCID", "7")
	if u.Port() != 60101 || v.Port() != 1 || !strings.HasSuffix(v.String(), ";RVCID=7") {
		t.Fatalf("Set shares storage or misplaces: %q / %q", u, v)
	}
	for _, bad := range []string{"prudps", ":/a=1", "prudps:/a", "prudps:/=1", "prudps:/a=1;a=2", "pr;x:/a=1"} {
		if _, err := ParseStationURLString(bad); !errors.Is(err, ErrBadStationURL) {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}

func TestDateTimeTime(t *testing.T) {
	tm := time.Date(2026, 11, 22, 9, 37, 11, 500, time.UTC)
	d := DateTimeFromTime(tm)
	if d != 0x1faaec994b || !d.Time().Equal(tm.Truncate(time.Second)) || d.String() != "2026-11-22 09:37:11" {
		t.Fatalf("got %#x %v %s", uint64(d), d.Time(), d)
	}
}

func TestResult(t *testing.T) {
	if ResultSuccess.IsError() || !CoreAccessDenied.IsError() {
		t.Fatal("error bit")
	}
	if got := RendezVousInvalidUsername.String(); got != "RendezVous::InvalidUsername (0x80030064)" {
		t.Fatal(got)
	}
	if got := Result(0x8099_0001).String(); got != "result 0x80990001" {
		t.Fatal(got)
	}
}

func TestQUUID(t *testing.T) {
	var u QUUID
	copy(u[:], testutil.Unhex(t, "ae5e3e66297d8c4aa98420499ad98c3e"))
	if got := u.String(); got != "663e5eae-7d29-4a8c-84a9-4920d99a3e8c" {
		t.Fatal(got)
	}
}

func TestReaderAllocs(t *testing.T) {
	b := testutil.Unhex(t, "00 08000000 01000000 02000000 78563412 03000000 010203")
	n := testing.AllocsPerRun(100, func() {
		r := NewReader(b, hdr)
		r.ResultRange("range")
		r.PID("pid")
		r.Buffer("buf")
		if r.Done() != nil {
			t.Fatal("decode failed")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per decode, want 0", n)
	}
}

func TestListAllocationBounded(t *testing.T) {
	// A count of 1,000,000 with one million bytes behind it but a bad second
	// element: decoding stops at the bad element, having reserved room for a
	// bounded number of Variants, not a million.
	b := make([]byte, 4+1_000_000)
	b[0], b[1], b[2] = 0x40, 0x42, 0x0f // 1,000,000
	b[5] = 0xff                         // element 1: unknown variant type
	allocs := testing.AllocsPerRun(5, func() {
		r := NewReader(b, Settings{})
		if ReadList(&r, "l", (*Reader).Variant) != nil || r.Err() == nil {
			t.Fatal("bad element accepted")
		}
	})
	var ms1, ms2 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	r := NewReader(b, Settings{})
	ReadList(&r, "l", (*Reader).Variant)
	runtime.ReadMemStats(&ms2)
	if grown := ms2.TotalAlloc - ms1.TotalAlloc; grown > 64<<10 {
		t.Fatalf("decoding a forged list allocated %d bytes (%v allocations)", grown, allocs)
	}
}

// TestStandaloneParsers: the decoders for use outside a Reader (DateTime, Result,
// structure header, List) read back what their encoders wrote, use exactly its
// length, and refuse every shorter prefix with ErrTruncated or ErrBadLength.
func TestStandaloneParsers(t *testing.T) {
	date := MakeDateTime(2026, 11, 22, 10, 45, 30)
	st, mark := BeginStructure(nil, hdr, 3)
	st = append(st, 0xAA, 0xBB)
	st, err := EndStructure(st, mark)
	if err != nil {
		t.Fatal(err)
	}
	list, err := AppendList(nil, []string{"ab", ""}, AppendString)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		enc   []byte
		parse func(b []byte) (any, int, error)
		want  any
	}{
		{"DateTime", AppendDateTime(nil, date), func(b []byte) (any, int, error) { return ParseDateTime(b) }, date},
		{"Result", AppendResult(nil, CoreAccessDenied), func(b []byte) (any, int, error) { return ParseResult(b) }, CoreAccessDenied},
		{"structure header", st, func(b []byte) (any, int, error) {
			h, n, err := ParseStructureHeader(b)
			return string(rune(h.Version)) + hex.EncodeToString(h.Content), n, err
		}, "\x03aabb"},
		{"List", list, func(b []byte) (any, int, error) {
			l, n, err := ParseList(b, ParseString)
			return strings.Join(l, ","), n, err
		}, "ab,"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, err := tc.parse(append(tc.enc, 0xEE)) // a trailing byte is not theirs
			if err != nil || n != len(tc.enc) || got != tc.want {
				t.Fatalf("got %v, %d bytes, %v; want %v, %d bytes", got, n, err, tc.want, len(tc.enc))
			}
			for i := range tc.enc {
				if _, _, err := tc.parse(tc.enc[:i]); !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrBadLength) {
					t.Errorf("prefix of %d bytes: %v, want ErrTruncated or ErrBadLength", i, err)
				}
			}
		})
	}
}
