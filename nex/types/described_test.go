package types

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSettingsNEXVersion(t *testing.T) {
	for _, c := range []struct {
		s    Settings
		want Version
	}{
		{Settings{}, Version3_4},
		{Settings{StructureHeader: true}, Version3_5},
		{Settings{PIDSize: 8, StructureHeader: true}, Version4},
		{Settings{Version: 30504}, 30504},
		{Settings{PIDSize: 8, Version: 40605}, 40605},
	} {
		if got := c.s.NEXVersion(); got != c.want {
			t.Errorf("%+v: NEXVersion %s, want %s", c.s, got, c.want)
		}
	}
}

// point is a sample described Data class: one level of revision up to 1.
type point struct{ X, Y uint32 }

func (p *point) ClassName() string { return "TestPoint" }

func (p *point) Append(w *Writer) {
	w.Data()
	m := w.BeginStructure(1)
	w.U32(p.X)
	w.U32(p.Y) // revision 1, with or without headers
	w.EndStructure(m)
}

func (p *point) Read(r *Reader, field string) {
	r.ReadData(field)
	m := r.EnterClass(field, "TestPoint", 1)
	p.X = r.U32("x")
	if m.Revision() >= 1 {
		p.Y = r.U32("y")
	}
	r.LeaveStructure(m)
}

func init() {
	RegisterData("TestPoint", []string{"TestPoint"}, func() Object { return new(point) })
}

func TestAnyDataRoundTrip(t *testing.T) {
	for _, s := range []Settings{{}, {StructureHeader: true}} {
		w := NewWriter(nil, s)
		w.AnyData(AnyData{Object: &point{1, 2}})
		w.AnyData(AnyData{Raw: AnyDataHolder{TypeName: "Unknown", Data: []byte{9, 9}}})
		w.AnyData(AnyData{})
		b, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(b, s)
		a := r.AnyData("a", "")
		u := r.AnyData("u", "Data")
		z := r.AnyData("z", "")
		if err := r.Done(); err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if p, ok := a.Object.(*point); !ok || *p != (point{1, 2}) {
			t.Errorf("%+v: object %#v", s, a.Object)
		}
		if u.Object != nil || u.Raw.TypeName != "Unknown" || !bytes.Equal(u.Raw.Data, []byte{9, 9}) {
			t.Errorf("%+v: unknown class %#v", s, u)
		}
		if z.Object != nil || z.ClassName() != "" {
			t.Errorf("%+v: empty holder %#v", s, z)
		}
		// The wrong base class is refused by name.
		r = NewReader(b, s)
		r.AnyData("a", "Gathering")
		if !errors.Is(r.Err(), ErrBadClass) || !strings.Contains(r.Err().Error(), "TestPoint") {
			t.Errorf("%+v: wrong base: %v", s, r.Err())
		}
	}
}

func TestEnterClassRevisionTooNew(t *testing.T) {
	s := Settings{StructureHeader: true, Version: Version3_5}
	w := NewWriter(nil, s)
	m := w.BeginStructure(2)
	w.U32(1)
	w.EndStructure(m)
	r := NewReader(w.B, s)
	m2 := r.EnterClass("param", "TestPoint", 1)
	r.LeaveStructure(m2)
	var ve *VersionError
	if !errors.Is(r.Err(), ErrVersion) || !errors.As(r.Err(), &ve) || ve.Revision != 2 || ve.Max != 1 {
		t.Fatalf("err %v", r.Err())
	}
	if msg := r.Err().Error(); !strings.Contains(msg, "TestPoint revision 2 (NEX 3.5.0 allows up to 1)") || !strings.HasPrefix(msg, "param at offset 0") {
		t.Errorf("message %q", msg)
	}
	// A failure inside a level names the structure and the version too.
	r = NewReader(w.B[:7], Settings{})
	m2 = r.EnterClass("param", "TestPoint", 0)
	r.U32("x")
	r.U32("y")
	r.LeaveStructure(m2)
	if !errors.Is(r.Err(), ErrTruncated) || !strings.Contains(r.Err().Error(), "param.y at offset 4: structure TestPoint (NEX 3.4.0)") {
		t.Errorf("truncated: %v", r.Err())
	}
	// So does a header that does not decode.
	r = NewReader(w.B[:7], s)
	r.LeaveStructure(r.EnterClass("param", "TestPoint", 0))
	if !errors.Is(r.Err(), ErrTruncated) || !strings.Contains(r.Err().Error(), "structure TestPoint (NEX 3.5.0)") {
		t.Errorf("truncated header: %v", r.Err())
	}
}
