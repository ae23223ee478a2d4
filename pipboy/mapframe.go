package pipboy

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
)

// Extent is one corner of the local map in world coordinates ("struct Extend").
type Extent struct{ X, Y float32 }

// mapHeaderSize is width, height and the three extents.
const mapHeaderSize = 4 + 4 + 3*8

// MapFrame is one local map frame, the content of message type 4 ("Type 4: Local Map
// Update" in the Pip-Boy PROTOCOL.md). The real game's rows can be wider than Width: Stride is
// the byte length of a row, len(Pixels)/Height. A frame with zero width or height and
// no pixels is a blank frame, as are frames whose pixels are all zero. Pixels aliases
// the parsed input.
type MapFrame struct {
	Width, Height uint32
	NW, NE, SW    Extent
	Stride        int
	Pixels        []byte
}

// ParseMapFrame parses the content of a type 4 message.
func ParseMapFrame(b []byte) (MapFrame, error) {
	if len(b) < mapHeaderSize {
		return MapFrame{}, fmt.Errorf("pipboy: %s header: %w: have %d of %d bytes", TypeLocalMapUpdate, ErrTruncated, len(b), mapHeaderSize)
	}
	f32 := func(o int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[o:])) }
	m := MapFrame{
		Width:  binary.LittleEndian.Uint32(b[0:]),
		Height: binary.LittleEndian.Uint32(b[4:]),
		NW:     Extent{f32(8), f32(12)},
		NE:     Extent{f32(16), f32(20)},
		SW:     Extent{f32(24), f32(28)},
	}
	px := b[mapHeaderSize:]
	if m.Width == 0 || m.Height == 0 {
		if len(px) != 0 {
			return MapFrame{}, fmt.Errorf("pipboy: %s pixels at offset %d: %w: %d bytes for a %dx%d frame", TypeLocalMapUpdate, mapHeaderSize, ErrBadMap, len(px), m.Width, m.Height)
		}
		return m, nil
	}
	if uint64(len(px))%uint64(m.Height) != 0 {
		return MapFrame{}, fmt.Errorf("pipboy: %s pixels at offset %d: %w: %d bytes do not divide into %d rows", TypeLocalMapUpdate, mapHeaderSize, ErrBadMap, len(px), m.Height)
	}
	stride := uint64(len(px)) / uint64(m.Height)
	if stride < uint64(m.Width) {
		return MapFrame{}, fmt.Errorf("pipboy: %s pixels at offset %d: %w: %d bytes for %d rows of width %d", TypeLocalMapUpdate, mapHeaderSize, ErrBadMap, len(px), m.Height, m.Width)
	}
	m.Stride = int(stride)
	m.Pixels = px
	return m, nil
}

// Append appends the wire form of m (Height rows of Stride bytes; Stride 0 means Width).
func (m *MapFrame) Append(b []byte) ([]byte, error) {
	stride := m.Stride
	if stride == 0 {
		stride = int(m.Width)
	}
	if stride < int(m.Width) || len(m.Pixels) != stride*int(m.Height) {
		return b, fmt.Errorf("pipboy: append %s: %w: %d pixel bytes for %d rows of stride %d (width %d)", TypeLocalMapUpdate, ErrBadMap, len(m.Pixels), m.Height, stride, m.Width)
	}
	b = binary.LittleEndian.AppendUint32(b, m.Width)
	b = binary.LittleEndian.AppendUint32(b, m.Height)
	for _, e := range [3]Extent{m.NW, m.NE, m.SW} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(e.X))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(e.Y))
	}
	return append(b, m.Pixels...), nil
}

// Blank reports whether the frame carries no picture: no pixels, or all zero.
func (m *MapFrame) Blank() bool {
	for _, p := range m.Pixels {
		if p != 0 {
			return false
		}
	}
	return true
}

// Image renders the frame Width x Height, each 8-bit pixel scaling the tint colour
// (the Pip-Boy's $.Status.EffectColor). A blank frame with no size gives a 1x1 image.
func (m *MapFrame) Image(tint color.RGBA) *image.RGBA {
	w, h := int(m.Width), int(m.Height)
	if w == 0 || h == 0 || len(m.Pixels) == 0 {
		return image.NewRGBA(image.Rect(0, 0, 1, 1))
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		row := m.Pixels[y*m.Stride : y*m.Stride+w]
		out := img.Pix[y*img.Stride:]
		for x, p := range row {
			out[4*x+0] = uint8(uint16(tint.R) * uint16(p) / 255)
			out[4*x+1] = uint8(uint16(tint.G) * uint16(p) / 255)
			out[4*x+2] = uint8(uint16(tint.B) * uint16(p) / 255)
			out[4*x+3] = 255
		}
	}
	return img
}

// WritePNG writes the frame rendered with tint as a PNG image.
func (m *MapFrame) WritePNG(w io.Writer, tint color.RGBA) error {
	return png.Encode(w, m.Image(tint))
}

// DefaultTint is the classic Pip-Boy green, used when the database has no usable
// $.Status.EffectColor.
var DefaultTint = color.RGBA{R: 26, G: 255, B: 128, A: 255}

// EffectColor reads $.Status.EffectColor (an array of three floats in 0..1) as a tint.
func (db *Database) EffectColor() color.RGBA {
	v, err := db.Lookup("$.Status.EffectColor")
	if err != nil || v.Type() != TypeArray || v.Len() < 3 {
		return DefaultTint
	}
	var c [3]uint8
	for i := range 3 {
		e := v.Index(i)
		if !e.IsNumber() {
			return DefaultTint
		}
		f := e.Float()
		if math.IsNaN(f) {
			return DefaultTint
		}
		c[i] = uint8(math.Round(255 * math.Max(0, math.Min(1, f))))
	}
	return color.RGBA{R: c[0], G: c[1], B: c[2], A: 255}
}
