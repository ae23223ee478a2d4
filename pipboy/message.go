package pipboy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// MessageType is the type byte of a TCP message ("Message Types" in the Pip-Boy PROTOCOL.md).
type MessageType uint8

// Message types, as the spec names them.
const (
	TypeHeartbeat       MessageType = 0 // empty; answered with an empty heartbeat
	TypeNewConnection   MessageType = 1 // JSON {"lang":..,"version":..} sent by the game first
	TypeBusy            MessageType = 2 // empty; the game already serves another app
	TypeDataUpdate      MessageType = 3 // a sequence of database values
	TypeLocalMapUpdate  MessageType = 4 // one local map frame
	TypeCommandRequest  MessageType = 5 // JSON command from the app
	TypeCommandResponse MessageType = 6 // JSON response from the game
)

func (t MessageType) String() string {
	switch t {
	case TypeHeartbeat:
		return "Heartbeat"
	case TypeNewConnection:
		return "NewConnection"
	case TypeBusy:
		return "Busy"
	case TypeDataUpdate:
		return "DataUpdate"
	case TypeLocalMapUpdate:
		return "LocalMapUpdate"
	case TypeCommandRequest:
		return "CommandRequest"
	case TypeCommandResponse:
		return "CommandResponse"
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}

// Valid reports whether t is one of the seven message types of the spec.
func (t MessageType) Valid() bool { return t <= TypeCommandResponse }

// HeaderSize is the size of a message header: u32 LE content size, u8 type.
const HeaderSize = 5

// DefaultMaxMessageSize is the largest content size readers accept unless configured
// otherwise. The real game's full dump is about 366 KB; 16 MiB leaves ample room.
const DefaultMaxMessageSize = 16 << 20

// Message is one TCP message ("Data Stream Format" in the Pip-Boy PROTOCOL.md).
// Content aliases the buffer it was parsed from.
type Message struct {
	Type    MessageType
	Content []byte
}

// Append appends the framed message (size, type, content) to b.
func (m Message) Append(b []byte) ([]byte, error) {
	if !m.Type.Valid() {
		return b, fmt.Errorf("pipboy: append message: %w %d", ErrUnknownMessageType, m.Type)
	}
	if uint64(len(m.Content)) > 0xFFFFFFFF {
		return b, fmt.Errorf("pipboy: append %s: %w: %d bytes", m.Type, ErrTooLarge, len(m.Content))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Content)))
	b = append(b, byte(m.Type))
	return append(b, m.Content...), nil
}

// ParseMessage parses one framed message from the start of b and returns it with the
// number of bytes used. Content aliases b. A size above maxSize (0 means
// DefaultMaxMessageSize) is ErrTooLarge; an incomplete frame is ErrTruncated.
func ParseMessage(b []byte, maxSize int) (Message, int, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	if len(b) < HeaderSize {
		return Message{}, 0, fmt.Errorf("pipboy: message header: %w: have %d of %d bytes", ErrTruncated, len(b), HeaderSize)
	}
	size := binary.LittleEndian.Uint32(b)
	typ := MessageType(b[4])
	if uint64(size) > uint64(maxSize) {
		return Message{}, 0, fmt.Errorf("pipboy: %s size field at offset 0: %w: %d > %d", typ, ErrTooLarge, size, maxSize)
	}
	if !typ.Valid() {
		return Message{}, 0, fmt.Errorf("pipboy: type field at offset 4: %w %d", ErrUnknownMessageType, b[4])
	}
	end := HeaderSize + int(size)
	if len(b) < end {
		return Message{}, 0, fmt.Errorf("pipboy: %s content: %w: have %d of %d bytes", typ, ErrTruncated, len(b)-HeaderSize, size)
	}
	return Message{Type: typ, Content: b[HeaderSize:end:end]}, end, nil
}

// Reader reads framed messages from a stream. It never allocates more than the bytes
// that actually arrived: a claimed size is checked against MaxSize first, and content is
// read into a buffer that grows as data arrives, not to the claimed size up front.
type Reader struct {
	r       *bufio.Reader
	buf     []byte
	MaxSize int   // content size limit; 0 means DefaultMaxMessageSize
	Offset  int64 // stream offset of the next message header
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// ReadMessage reads the next message. Content is valid until the next call.
// At a clean end of stream it returns io.EOF; inside a message, io.ErrUnexpectedEOF
// wrapped together with ErrTruncated.
func (r *Reader) ReadMessage() (Message, error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r.r, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return Message{}, fmt.Errorf("pipboy: message header at offset %d: %w (%w)", r.Offset, ErrTruncated, err)
		}
		return Message{}, err
	}
	maxSize := r.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	size := binary.LittleEndian.Uint32(hdr[:])
	typ := MessageType(hdr[4])
	if uint64(size) > uint64(maxSize) {
		return Message{}, fmt.Errorf("pipboy: %s size field at offset %d: %w: %d > %d", typ, r.Offset, ErrTooLarge, size, maxSize)
	}
	if !typ.Valid() {
		return Message{}, fmt.Errorf("pipboy: type field at offset %d: %w %d", r.Offset+4, ErrUnknownMessageType, hdr[4])
	}
	r.buf = r.buf[:0]
	remaining := int(size)
	for remaining > 0 {
		// Grow by what is buffered (at least one chunk), never by the claimed size.
		chunk := min(remaining, 64<<10)
		if cap(r.buf)-len(r.buf) < chunk {
			nb := make([]byte, len(r.buf), max(2*cap(r.buf), len(r.buf)+chunk))
			copy(nb, r.buf)
			r.buf = nb
		}
		n, err := io.ReadFull(r.r, r.buf[len(r.buf):len(r.buf)+chunk])
		r.buf = r.buf[:len(r.buf)+n]
		remaining -= n
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return Message{}, fmt.Errorf("pipboy: %s content at offset %d: %w: have %d of %d bytes (%w)", typ, r.Offset+HeaderSize, ErrTruncated, len(r.buf), size, io.ErrUnexpectedEOF)
			}
			return Message{}, err
		}
	}
	r.Offset += HeaderSize + int64(size)
	return Message{Type: typ, Content: r.buf}, nil
}

// WriteMessage writes one framed message to w in a single Write call.
func WriteMessage(w io.Writer, typ MessageType, content []byte) error {
	b, err := Message{Type: typ, Content: content}.Append(make([]byte, 0, HeaderSize+len(content)))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
