package pipboy

import (
	"bytes"
	"fmt"
	"io"
)

// InputKind is what DecodeFile found in its input.
type InputKind int

// Kinds of input DecodeInput recognises.
const (
	InputStream    InputKind = iota // a raw server-to-app TCP stream of framed messages
	InputPayload                    // a bare data update payload (the content of one type 3 message)
	InputRecording                  // a recording file (docs/pipboy.md), game-to-app side
	InputJSON                       // a nested JSON tree (see DumpFromJSON)
)

func (k InputKind) String() string {
	return [...]string{"stream", "payload", "recording", "json"}[k]
}

// DetectInput tells a recording (by its magic), a JSON tree (starts with '{', which is
// no value type), a raw stream (starts with a complete type 1 or 2 message, or is a
// whole number of valid frames) and a bare update payload apart.
func DetectInput(b []byte) InputKind {
	if bytes.HasPrefix(b, []byte(RecordingMagic)) {
		return InputRecording
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return InputJSON
	}
	// A stream that starts with the game's greeting (or Busy) is a stream even if it
	// is cut short later, so that the error names the stream offset.
	if m, _, err := ParseMessage(b, 0); err == nil && (m.Type == TypeNewConnection || m.Type == TypeBusy) {
		return InputStream
	}
	off := 0
	for off < len(b) {
		_, n, err := ParseMessage(b[off:], 0)
		if err != nil {
			return InputPayload
		}
		off += n
	}
	if len(b) == 0 {
		return InputPayload
	}
	return InputStream
}

// DecodeInput interprets a stream, payload, recording or JSON tree held in b, calling
// event (if not nil) for each message before it is applied, and returns the final
// state. Only game-to-app messages are applied; a recording's app-to-game messages are
// passed to event (with dir FromApp) and skipped. Of a recording, only the main session
// (Recording.MainSession) is decoded. A decoding error stops it and is
// returned with the state reached so far.
func DecodeInput(b []byte, event func(off int64, dir Direction, m Message) error) (*GameState, InputKind, error) {
	kind := DetectInput(b)
	s := NewGameState()
	handle := func(off int64, m Message) error {
		if event != nil {
			if err := event(off, FromGame, m); err != nil {
				return err
			}
		}
		if err := s.Handle(m); err != nil {
			return fmt.Errorf("message at offset %d: %w", off, err)
		}
		return nil
	}
	switch kind {
	case InputPayload:
		return s, kind, handle(0, Message{Type: TypeDataUpdate, Content: b})
	case InputJSON:
		dump, err := DumpFromJSON(bytes.NewReader(b))
		if err != nil {
			return s, kind, err
		}
		return s, kind, handle(0, Message{Type: TypeDataUpdate, Content: dump})
	case InputRecording:
		// A relay's recording can hold several sessions; decode its main one. A
		// recording cut short is decoded up to the cut (every event before it is
		// reported, as for a stream) and then fails at the cut's offset.
		main := mainSessionOf(b)
		rr, err := NewRecordingReader(bytes.NewReader(b))
		if err != nil {
			return s, kind, err
		}
		for {
			off := rr.Offset()
			x, err := rr.Next()
			if err == io.EOF {
				return s, kind, nil
			}
			if err != nil {
				return s, kind, err
			}
			if x.Session != main {
				continue
			}
			if x.Dir != FromGame {
				if event != nil {
					if err := event(off, x.Dir, x.Message); err != nil {
						return s, kind, err
					}
				}
				continue
			}
			if err := handle(off, x.Message); err != nil {
				return s, kind, err
			}
		}
	default:
		r := NewReader(bytes.NewReader(b))
		for {
			off := r.Offset
			m, err := r.ReadMessage()
			if err == io.EOF {
				return s, kind, nil
			}
			if err != nil {
				return s, kind, err
			}
			if err := handle(off, m); err != nil {
				return s, kind, err
			}
		}
	}
}

// Summary describes a message in one line for logs and the decode command.
func Summary(m Message) string {
	switch m.Type {
	case TypeDataUpdate:
		it := NewEntries(m.Content)
		n := 0
		for _, ok := it.Next(); ok; _, ok = it.Next() {
			n++
		}
		if it.Err() != nil {
			return fmt.Sprintf("%s %d bytes, %d values then error: %v", m.Type, len(m.Content), n, it.Err())
		}
		return fmt.Sprintf("%s %d bytes, %d values", m.Type, len(m.Content), n)
	case TypeLocalMapUpdate:
		f, err := ParseMapFrame(m.Content)
		if err != nil {
			return fmt.Sprintf("%s %d bytes: %v", m.Type, len(m.Content), err)
		}
		blank := ""
		if f.Blank() {
			blank = " (blank)"
		}
		return fmt.Sprintf("%s %dx%d stride %d%s NW(%g,%g) NE(%g,%g) SW(%g,%g)", m.Type, f.Width, f.Height, f.Stride, blank, f.NW.X, f.NW.Y, f.NE.X, f.NE.Y, f.SW.X, f.SW.Y)
	case TypeNewConnection, TypeCommandRequest, TypeCommandResponse:
		return fmt.Sprintf("%s %s", m.Type, bytes.TrimSpace(m.Content))
	}
	return fmt.Sprintf("%s %d bytes", m.Type, len(m.Content))
}

// mainSessionOf returns the main session (Recording.MainSession) of the whole records
// at the start of a recording, ignoring anything malformed after them.
func mainSessionOf(b []byte) uint32 {
	rr, err := NewRecordingReader(bytes.NewReader(b))
	if err != nil {
		return 0
	}
	var rec Recording
	for {
		x, err := rr.Next()
		if err != nil {
			return rec.MainSession()
		}
		x.Message.Content = nil // only sessions and directions are counted
		rec.Records = append(rec.Records, x)
	}
}
