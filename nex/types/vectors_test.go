package types

import (
	"bytes"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
)

// Vectors published in an implementation no one here wrote: the byte strings of
// kinnay/NintendoClients' tests (tests/nex/test_nex_streams.py and
// tests/nex/test_common.py), where "default" settings are 4-byte PIDs without
// structure headers and "switch" ones 8-byte PIDs with them. Each is encoded by this
// package and must come out byte for byte, then decoded back.
func TestNintendoClientsVectors(t *testing.T) {
	def := Settings{}
	sw := Settings{PIDSize: 8, StructureHeader: true}
	nullData := func(s Settings) AnyDataHolder {
		return AnyDataHolder{TypeName: "NullData", Data: AppendData(AppendData(nil, s), s)}
	}
	for _, v := range []struct {
		name   string
		s      Settings
		hex    string
		encode func(w *Writer)
		decode func(r *Reader) any
		want   any
	}{
		{"pid", def, "39300000", func(w *Writer) { w.PID(12345) }, func(r *Reader) any { return r.PID("") }, PID(12345)},
		{"pid switch", sw, "3930000000000000", func(w *Writer) { w.PID(12345) }, func(r *Reader) any { return r.PID("") }, PID(12345)},
		{"result success", def, "01000100", func(w *Writer) { w.Result(ResultSuccess) }, func(r *Reader) any { return r.Result("") }, ResultSuccess},
		{"list u8", def, "0400000001020304",
			func(w *Writer) { WriteList(w, []uint8{1, 2, 3, 4}, (*Writer).U8) },
			func(r *Reader) any { return string(ReadList(r, "", (*Reader).U8)) }, "\x01\x02\x03\x04"},
		{"map u8 u16", def, "02000000010a00020b00",
			func(w *Writer) {
				WriteList(w, []Pair[uint8, uint16]{{1, 10}, {2, 11}}, func(w *Writer, p Pair[uint8, uint16]) { w.U8(p.Key); w.U16(p.Value) })
			},
			func(r *Reader) any {
				m := ReadMap(r, "", (*Reader).U8, (*Reader).U16)
				return len(m) == 2 && m[0] == (Pair[uint8, uint16]{1, 10}) && m[1] == (Pair[uint8, uint16]{2, 11})
			}, true},
		{"string", def, "0c00" + hexOf("test string") + "00", func(w *Writer) { w.String("test string") },
			func(r *Reader) any { return r.String("") }, "test string"},
		{"stationurl", def, "1600" + hexOf("prudps:/PID=1;CID=100") + "00",
			func(w *Writer) {
				w.StationURL(NewStationURL("prudps", URLParam{"PID", "1"}, URLParam{"CID", "100"}))
			},
			func(r *Reader) any {
				u := r.StationURL("")
				return u.Scheme == "prudps" && u.PID() == 1 && u.CID() == 100
			}, true},
		{"datetime", def, "00e0be921f000000", func(w *Writer) { w.DateTime(135605968896) },
			func(r *Reader) any { return r.DateTime("") }, DateTime(135605968896)},
		{"buffer", def, "0b000000" + hexOf("test buffer"), func(w *Writer) { w.Buffer([]byte("test buffer")) },
			func(r *Reader) any { return string(r.Buffer("")) }, "test buffer"},
		{"qbuffer", def, "0c00" + hexOf("test qbuffer"), func(w *Writer) { w.QBuffer([]byte("test qbuffer")) },
			func(r *Reader) any { return string(r.QBuffer("")) }, "test qbuffer"},
		{"resultrange", def, "000000000a000000",
			func(w *Writer) { b, _ := ResultRange{0, 10}.Append(w.B, w.S); w.B = b },
			func(r *Reader) any { return r.ResultRange("") }, ResultRange{0, 10}},
		{"resultrange switch", sw, "0008000000000000000a000000",
			func(w *Writer) { b, _ := ResultRange{0, 10}.Append(w.B, w.S); w.B = b },
			func(r *Reader) any { return r.ResultRange("") }, ResultRange{0, 10}},
		{"anydata NullData", def, "0900" + hexOf("NullData") + "00 04000000 00000000",
			func(w *Writer) { w.AnyDataHolder(nullData(def)) },
			func(r *Reader) any { h := r.AnyDataHolder(""); return h.TypeName == "NullData" && len(h.Data) == 0 }, true},
		{"anydata NullData switch", sw, "0900" + hexOf("NullData") + "00 0e000000 0a000000 00000000000000000000",
			func(w *Writer) { w.AnyDataHolder(nullData(sw)) },
			func(r *Reader) any { h := r.AnyDataHolder(""); return h.TypeName == "NullData" && len(h.Data) == 10 }, true},
		{"variant none", def, "00", func(w *Writer) { w.Variant(Variant{}) }, func(r *Reader) any { return r.Variant("") }, Variant{}},
		{"variant sint64", def, "01c7cfffffffffffff", func(w *Writer) { w.Variant(Variant{Type: VariantSint64, Int: -12345}) },
			func(r *Reader) any { return r.Variant("") }, Variant{Type: VariantSint64, Int: -12345}},
		{"variant double", def, "02cdccccccccdc5e40", func(w *Writer) { w.Variant(Variant{Type: VariantDouble, Float: 123.45}) },
			func(r *Reader) any { return r.Variant("") }, Variant{Type: VariantDouble, Float: 123.45}},
		{"variant bools", def, "03010300",
			func(w *Writer) {
				w.Variant(Variant{Type: VariantBool, Bool: true})
				w.Variant(Variant{Type: VariantBool})
			},
			func(r *Reader) any {
				a, b := r.Variant(""), r.Variant("")
				return a.Bool && b.Type == VariantBool && !b.Bool
			}, true},
		{"variant string", def, "040600" + hexOf("hello") + "00", func(w *Writer) { w.Variant(Variant{Type: VariantString, Str: "hello"}) },
			func(r *Reader) any { return r.Variant("") }, Variant{Type: VariantString, Str: "hello"}},
		{"variant datetime never", def, "050000000000000000", func(w *Writer) { w.Variant(Variant{Type: VariantDateTime}) },
			func(r *Reader) any { return r.Variant("") }, Variant{Type: VariantDateTime}},
		{"variant uint64", def, "063930000000000000", func(w *Writer) { w.Variant(Variant{Type: VariantUint64, Uint: 12345}) },
			func(r *Reader) any { return r.Variant("") }, Variant{Type: VariantUint64, Uint: 12345}},
	} {
		t.Run(v.name, func(t *testing.T) {
			want := testutil.Unhex(t, v.hex)
			w := NewWriter(nil, v.s)
			v.encode(&w)
			if got, err := w.Bytes(); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("encode: %x (%v)\nwant    %x", got, err, want)
			}
			r := NewReader(want, v.s)
			if got := v.decode(&r); r.Done() != nil || got != v.want {
				t.Fatalf("decode: %#v (%v), want %#v", got, r.Err(), v.want)
			}
		})
	}
	// DateTime fields from the same tests. Their Unix timestamps (1596279241 for
	// this value, 1604149200 for 2020-10-31 14:00) are those fields read as
	// local time in a UTC+2 / UTC+1 zone; the bytes carry no zone, and this
	// package (like prudp/kerberos and the public servers' tickets) reads them
	// as UTC, so only the fields are compared.
	d := DateTime(135593643393)
	if d.Year() != 2020 || d.Month() != 8 || d.Day() != 1 || d.Hour() != 12 || d.Minute() != 54 || d.Second() != 1 {
		t.Fatalf("DateTime(135593643393) = %s", d)
	}
	if got := DateTimeFromTime(time.Date(2020, 10, 31, 14, 0, 0, 0, time.UTC)); got != 135605968896 {
		t.Fatalf("DateTimeFromTime(2020-10-31 14:00) = %d", got)
	}
	if got := MakeDateTime(9999, 12, 31, 23, 59, 59); got != 0x9C3F3F7EFB {
		t.Fatalf("the 'future' DateTime: %#x", uint64(got))
	}
	if CoreInvalidArgument != 0x8001000A || ResultSuccess != 0x10001 {
		t.Fatal("result codes")
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}
