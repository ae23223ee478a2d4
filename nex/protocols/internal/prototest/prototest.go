// Package prototest tests generated protocol codecs (nex/protocols/...) generically:
// every structure and message of a package round-trips as its zero value and as a
// value with every field filled, at several NEX versions and encoding settings;
// every strict prefix of an encoding fails to decode; and a fuzz target decodes
// arbitrary bytes as any of them without panicking, re-encoding what decodes
// stably.
package prototest

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

// structure is a generated structure; message a generated request or response.
type (
	structure interface {
		Append(w *types.Writer)
		Read(r *types.Reader, field string)
	}
	message interface {
		Append(w *types.Writer)
		Read(r *types.Reader)
	}
)

// Settings are the encoding settings the tests run at: NEX 3.0 and 3.4 without
// structure headers, 3.5 and 3.8 with them, 4.0 and 4.6 with 8-byte PIDs.
var Settings = []types.Settings{
	{Version: types.Version3},
	{Version: types.Version3_4},
	{StructureHeader: true, Version: types.Version3_5},
	{StructureHeader: true, Version: types.Version3_8},
	{PIDSize: 8, StructureHeader: true, Version: types.Version4},
	{PIDSize: 8, StructureHeader: true, Version: 40600},
}

// Encode appends v (a generated structure or message) with settings s.
func Encode(v any, s types.Settings) ([]byte, error) {
	w := types.NewWriter(nil, s)
	switch x := v.(type) {
	case structure:
		x.Append(&w)
	case message:
		x.Append(&w)
	default:
		return nil, fmt.Errorf("prototest: %T is not a generated structure or message", v)
	}
	return w.Bytes()
}

// Decode decodes b as a new value of v's type (a pointer to a generated type) and
// checks that it used all of b.
func Decode(v any, b []byte, s types.Settings) (any, error) {
	nv := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	r := types.NewReader(b, s)
	switch x := nv.(type) {
	case structure:
		x.Read(&r, "value")
	case message:
		x.Read(&r)
	default:
		return nil, fmt.Errorf("prototest: %T is not a generated structure or message", v)
	}
	return nv, r.Done()
}

// RoundTrip checks every value of values (pointers to generated types) at every
// Settings: the zero value and a filled one encode, decode to the end and encode
// again to the same bytes; every strict prefix of the filled encoding fails.
func RoundTrip(t *testing.T, values []any) {
	t.Helper()
	for _, v := range values {
		name := reflect.TypeOf(v).Elem().Name()
		for _, s := range Settings {
			zero := reflect.New(reflect.TypeOf(v).Elem()).Interface()
			filled := Fill(v)
			for _, c := range []struct {
				what string
				v    any
			}{{"zero", zero}, {"filled", filled}} {
				b, err := Encode(c.v, s)
				if err != nil {
					t.Errorf("%s %s at %+v: encode: %v", name, c.what, s, err)
					continue
				}
				d, err := Decode(v, b, s)
				if err != nil {
					t.Errorf("%s %s at %+v: decode %x: %v", name, c.what, s, b, err)
					continue
				}
				b2, err := Encode(d, s)
				if err != nil || !bytes.Equal(b, b2) {
					t.Errorf("%s %s at %+v: re-encoded %x (%v), want %x", name, c.what, s, b2, err, b)
					continue
				}
				if c.what == "zero" {
					continue
				}
				for n := 0; n < len(b); n++ {
					if _, err := Decode(v, b[:n], s); err == nil {
						t.Errorf("%s at %+v: the %d-byte prefix of %x decodes", name, s, n, b)
						break
					}
				}
			}
		}
	}
}

// Fuzz decodes the fuzzer's bytes as one of values (picked by the first byte) at
// one of Settings (the second byte). What decodes must encode, and decode again to
// a value that encodes to the same bytes. Seeds are the filled values' encodings.
func Fuzz(f *testing.F, values []any) {
	if len(values) == 0 {
		return
	}
	for i, v := range values {
		for j, s := range Settings {
			if b, err := Encode(Fill(v), s); err == nil {
				f.Add(append([]byte{byte(i), byte(j)}, b...))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		v := values[int(data[0])%len(values)]
		s := Settings[int(data[1])%len(Settings)]
		d, err := Decode(v, data[2:], s)
		if err != nil {
			return
		}
		b, err := Encode(d, s)
		if err != nil {
			t.Fatalf("%T decoded from %x does not encode: %v", v, data[2:], err)
		}
		d2, err := Decode(v, b, s)
		if err != nil {
			t.Fatalf("%T re-encoded as %x does not decode: %v", v, b, err)
		}
		b2, err := Encode(d2, s)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("%T: %x re-encodes as %x (%v)", v, b, b2, err)
		}
	})
}

// Fill returns a new value of v's type with every field set to a non-zero value:
// lists of two elements, AnyData holding a value of its base class when that is
// registered, nested structures filled to a bounded depth.
func Fill(v any) any {
	nv := reflect.New(reflect.TypeOf(v).Elem())
	fill(nv.Elem(), "", 0)
	return nv.Interface()
}

var (
	anyDataType    = reflect.TypeOf(types.AnyData{})
	variantType    = reflect.TypeOf(types.Variant{})
	stationURLType = reflect.TypeOf(types.StationURL{})
)

func fill(v reflect.Value, tag string, depth int) {
	switch v.Type() {
	case anyDataType:
		_, base, _ := strings.Cut(tag, ",any=")
		if base == "" || depth > 3 {
			return
		}
		if obj, ok := types.NewData(base); ok {
			ov := reflect.ValueOf(obj)
			fill(ov.Elem(), "", depth+1)
			v.Set(reflect.ValueOf(types.AnyData{Object: obj}))
		}
		return
	case variantType:
		v.Set(reflect.ValueOf(types.Variant{Type: types.VariantString, Str: "v"}))
		return
	case stationURLType:
		v.Set(reflect.ValueOf(types.NewStationURL("prudp", types.URLParam{Key: "port", Value: "1"})))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(-2)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.String:
		v.SetString("ab")
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), "", depth+1)
			if v.Index(i).Kind() == reflect.Uint8 {
				v.Index(i).SetUint(uint64(i + 1))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte{1, 2, 0})
			return
		}
		if depth > 3 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), tag, depth+1)
		}
		v.Set(s)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			fill(v.Field(i), f.Tag.Get("nex"), depth)
		}
	}
}
