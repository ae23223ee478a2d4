package pipboy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image/color"
	"image/png"
	"testing"
)

func TestMapFrame(t *testing.T) {
	// Rows wider than the declared width, as the real game sends them: width 3, stride 4.
	m := MapFrame{Width: 3, Height: 2, NW: Extent{-72968.92, 82340.27}, NE: Extent{-66824.92, 82340.27}, SW: Extent{-72968.92, 78884.27},
		Stride: 4, Pixels: []byte{0, 128, 255, 9, 255, 0, 64, 9}}
	b, err := m.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseMapFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Width != 3 || p.Height != 2 || p.Stride != 4 || p.NW != m.NW || p.NE != m.NE || p.SW != m.SW || !bytes.Equal(p.Pixels, m.Pixels) {
		t.Fatalf("parsed %+v", p)
	}
	if p.Blank() {
		t.Fatal("non-zero frame reported blank")
	}
	db := NewDatabase()
	if err := db.Apply(readVector(t, payloadFile)); err != nil {
		t.Fatal(err)
	}
	tint := db.EffectColor() // $.Status.EffectColor is [0.08, 1, 0.09]
	if tint != (color.RGBA{R: 20, G: 255, B: 23, A: 255}) {
		t.Fatalf("effect colour %v", tint)
	}
	var png1 bytes.Buffer
	if err := p.WritePNG(&png1, tint); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&png1)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 3 || img.Bounds().Dy() != 2 {
		t.Fatalf("image size %v", img.Bounds())
	}
	checks := []struct {
		x, y int
		want color.RGBA
	}{
		{0, 0, color.RGBA{0, 0, 0, 255}},
		{2, 0, color.RGBA{20, 255, 23, 255}},
		{1, 0, color.RGBA{10, 128, 11, 255}},
		{0, 1, color.RGBA{20, 255, 23, 255}},
		{2, 1, color.RGBA{5, 64, 5, 255}},
	}
	for _, c := range checks {
		if got := color.RGBAModel.Convert(img.At(c.x, c.y)).(color.RGBA); got != c.want {
			t.Errorf("pixel (%d,%d): got %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

func TestMapFrameBlankAndBad(t *testing.T) {
	blank := MapFrame{Width: 2, Height: 2, Pixels: make([]byte, 4)}
	b, _ := blank.Append(nil)
	p, err := ParseMapFrame(b)
	if err != nil || !p.Blank() {
		t.Fatalf("all-zero frame: %v blank=%v", err, p.Blank())
	}
	empty := MapFrame{}
	b, _ = empty.Append(nil)
	if p, err := ParseMapFrame(b); err != nil || !p.Blank() || p.Image(DefaultTint).Bounds().Dx() != 1 {
		t.Fatalf("empty frame: %v", err)
	}
	hdr := func(w, h uint32, px int) []byte {
		b := binary.LittleEndian.AppendUint32(nil, w)
		b = binary.LittleEndian.AppendUint32(b, h)
		return append(b, make([]byte, 24+px)...)
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"short header", make([]byte, 31), ErrTruncated},
		{"rows do not divide", hdr(2, 3, 7), ErrBadMap},
		{"rows narrower than width", hdr(4, 2, 6), ErrBadMap},
		{"pixels with zero height", hdr(4, 0, 4), ErrBadMap},
		{"huge claimed size, no pixels", hdr(0xFFFFFFFF, 0xFFFFFFFF, 0), ErrBadMap},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseMapFrame(tc.in); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
