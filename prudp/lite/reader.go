package lite

import (
	"errors"
	"fmt"
	"io"

	"github.com/gamewire/gamewire/prudp/wire"
)

// HeaderSize is the fixed part of a Lite packet ("Lite Format" in
// NintendoClients wiki "PRUDP Protocol"): magic, options length, payload size, stream types,
// ports, fragment id, type and flags, sequence id.
const HeaderSize = 12

// Magic is the first byte of every Lite packet.
const Magic = 0x80

// MaxPacketSize is the largest packet the Lite header can describe: 12 header
// bytes, 255 bytes of options and a 65535-byte payload.
const MaxPacketSize = HeaderSize + 0xff + 0xffff

// DefaultMaxPacket is the default bound on one received packet: the engine
// reads packets into 4096-byte datagram buffers, and real peers fragment at
// about 1300 payload bytes.
const DefaultMaxPacket = 4096

// Errors of the stream framing. They are wrapped with the stream offset, so
// compare with errors.Is.
var (
	// ErrPacketTooLarge: a packet header declares more bytes than the
	// configured maximum; the stream cannot be trusted any more.
	ErrPacketTooLarge = errors.New("prudp lite stream: packet too large")
	// ErrTruncatedStream: the stream ended inside a packet.
	ErrTruncatedStream = errors.New("prudp lite stream: stream ended inside a packet")
)

// PacketLen implements the framing of "Lite Format" in NintendoClients wiki "PRUDP Protocol" on a
// byte stream: the length of the packet starting at b is 12 + the options
// length (byte 1) + the payload size (bytes 2-3, little endian). It needs 4
// bytes; with fewer it returns 0 and no error. A first byte other than 0x80
// is an error wrapping wire.ErrBadMagic: a stream has no way to find the next
// packet boundary after that.
func PacketLen(b []byte) (int, error) {
	if len(b) >= 1 && b[0] != Magic {
		return 0, fmt.Errorf("prudp lite stream: magic is 0x%02x, want 0x80: %w", b[0], wire.ErrBadMagic)
	}
	if len(b) < 4 {
		return 0, nil
	}
	return HeaderSize + int(b[1]) + (int(b[2]) | int(b[3])<<8), nil
}

// Reader splits a byte stream (a TCP or TLS connection, or the concatenated
// binary messages of a WebSocket) into Lite packets. A packet boundary may
// fall anywhere in what one Read returns, and one Read may return several
// packets: Reader decodes incrementally. It buffers at most one packet plus
// what the last Read returned beyond it (its buffer starts at 1.5 KiB and grows
// only for a packet whose declared length was checked against the maximum).
type Reader struct {
	r          io.Reader
	buf        []byte
	start, end int   // buf[start:end] is read but not yet returned
	off        int64 // stream offset of buf[start]
	max        int
	err        error
}

// initialBuffer holds a full-size packet of real peers (1300 payload bytes,
// header and options); the buffer grows for larger ones, up to the limit.
const initialBuffer = 1536

// NewReader returns a Reader of r that refuses packets longer than maxPacket
// bytes (DefaultMaxPacket if maxPacket <= 0; at most MaxPacketSize).
func NewReader(r io.Reader, maxPacket int) *Reader {
	if maxPacket <= 0 {
		maxPacket = DefaultMaxPacket
	}
	maxPacket = min(maxPacket, MaxPacketSize)
	return &Reader{r: r, max: maxPacket, buf: make([]byte, min(maxPacket, initialBuffer))}
}

// Buffered returns how many bytes of the next packets have been read from the
// stream and not yet returned: more than 0 after Next means the next packet has
// started to arrive.
func (r *Reader) Buffered() int { return r.end - r.start }

// Offset is the stream offset of the next packet Next returns.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next whole packet. The slice aliases the Reader's buffer
// and is valid until the next call. At the end of the stream on a packet
// boundary it returns io.EOF; inside a packet, an error wrapping
// ErrTruncatedStream. A bad magic or an oversized packet is an error naming
// the stream offset; after any error the Reader returns the same error.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		n, err := PacketLen(r.buf[r.start:r.end])
		if err != nil {
			r.err = fmt.Errorf("%w (at stream offset %d)", err, r.off)
			return nil, r.err
		}
		if n > r.max {
			r.err = fmt.Errorf("%w: header at stream offset %d declares %d bytes, limit %d", ErrPacketTooLarge, r.off, n, r.max)
			return nil, r.err
		}
		if n > 0 && r.end-r.start >= n {
			p := r.buf[r.start : r.start+n : r.start+n]
			r.start += n
			r.off += int64(n)
			return p, nil
		}
		if err := r.fill(n); err != nil {
			r.err = err
			return nil, err
		}
	}
}

// fill reads more bytes, making room for a packet of need bytes (0: not yet
// known, at least the 4 bytes that tell it).
func (r *Reader) fill(need int) error {
	need = max(need, 4)
	if r.start == r.end {
		r.start, r.end = 0, 0
	}
	if len(r.buf)-r.start < need {
		if need > len(r.buf) {
			nb := make([]byte, need) // need <= r.max was checked by the caller
			copy(nb, r.buf[r.start:r.end])
			r.buf = nb
		} else {
			copy(r.buf, r.buf[r.start:r.end])
		}
		r.end -= r.start
		r.start = 0
	}
	for {
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if n > 0 {
			return nil
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if r.end > r.start {
				return fmt.Errorf("%w: %d bytes of a packet at stream offset %d", ErrTruncatedStream, r.end-r.start, r.off)
			}
			return io.EOF
		}
		if err != nil {
			return err
		}
	}
}
