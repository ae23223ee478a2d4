package pipboy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Recording file format (documented in docs/pipboy.md, "Recording file format"):
//
//	header: magic "GWPIPREC" (8 bytes), u16 LE version (1), u64 LE start time (Unix nanoseconds)
//	record: u64 LE time since start (ns), u32 LE session, u8 direction (0 game->app, 1 app->game),
//	        then the message exactly as on the wire: u32 LE size, u8 type, content
//
// Records follow each other to the end of the file; a file cut inside a record is an
// error at that record's offset.
const (
	RecordingMagic   = "GWPIPREC"
	RecordingVersion = 1

	recordingHeaderSize = 8 + 2 + 8
	recordHeaderSize    = 8 + 4 + 1
)

// Direction says which way a recorded message went.
type Direction uint8

// Directions of recorded messages.
const (
	FromGame Direction = 0 // game -> app
	FromApp  Direction = 1 // app -> game
)

func (d Direction) String() string {
	switch d {
	case FromGame:
		return "game->app"
	case FromApp:
		return "app->game"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Record is one recorded message.
type Record struct {
	Time    time.Duration // since the recording started
	Session uint32        // connection number within the recording, from 1
	Dir     Direction
	Message Message
}

// Recorder writes a recording. It is safe for concurrent use (a relay records both
// directions of several sessions into one file).
type Recorder struct {
	// MaxBytes, if above 0, bounds the recording's size, header included: the
	// first record that would take it past the bound is not written, and that
	// record and every later one fail with ErrRecordingFull. The file stays a
	// valid recording (it ends on a whole record). A relay then goes on relaying,
	// unrecorded. Set it before the first Record.
	MaxBytes int64

	mu      sync.Mutex
	w       *bufio.Writer
	start   time.Time
	buf     []byte
	err     error
	written int64
}

// NewRecorder writes the recording header to w and returns a Recorder whose times are
// relative to start.
func NewRecorder(w io.Writer, start time.Time) (*Recorder, error) {
	r := &Recorder{w: bufio.NewWriter(w), start: start}
	h := append([]byte(RecordingMagic), 0, 0)
	binary.LittleEndian.PutUint16(h[8:], RecordingVersion)
	h = binary.LittleEndian.AppendUint64(h, uint64(start.UnixNano()))
	if _, err := r.w.Write(h); err != nil {
		return nil, err
	}
	r.written = int64(len(h))
	return r, r.w.Flush()
}

// Size returns the bytes written so far, header included.
func (r *Recorder) Size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written
}

// Record appends one message seen at time at, and flushes it to the writer.
func (r *Recorder) Record(at time.Time, session uint32, dir Direction, m Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	d := max(at.Sub(r.start), 0)
	b := binary.LittleEndian.AppendUint64(r.buf[:0], uint64(d))
	b = binary.LittleEndian.AppendUint32(b, session)
	b = append(b, byte(dir))
	b, err := m.Append(b)
	if err != nil {
		return err
	}
	r.buf = b
	if r.MaxBytes > 0 && r.written+int64(len(b)) > r.MaxBytes {
		r.err = fmt.Errorf("%w: %d bytes written, the next record has %d, limit %d", ErrRecordingFull, r.written, len(b), r.MaxBytes)
		return r.err
	}
	if _, err := r.w.Write(b); err != nil {
		r.err = err
		return err
	}
	r.written += int64(len(b))
	if err := r.w.Flush(); err != nil {
		r.err = err
	}
	return r.err
}

// RecordingReader reads a recording.
type RecordingReader struct {
	r     *bufio.Reader
	mr    *Reader
	start time.Time
	off   int64
	// MaxSize bounds message content sizes as Reader.MaxSize does.
	MaxSize int
}

// NewRecordingReader checks the header of a recording and returns a reader of its records.
func NewRecordingReader(r io.Reader) (*RecordingReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var h [recordingHeaderSize]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, fmt.Errorf("pipboy: recording header: %w: %w", ErrBadRecording, err)
	}
	if string(h[:8]) != RecordingMagic {
		return nil, fmt.Errorf("pipboy: recording header at offset 0: %w: magic %q, want %q", ErrBadRecording, h[:8], RecordingMagic)
	}
	if v := binary.LittleEndian.Uint16(h[8:]); v != RecordingVersion {
		return nil, fmt.Errorf("pipboy: recording header at offset 8: %w: version %d, want %d", ErrBadRecording, v, RecordingVersion)
	}
	rr := &RecordingReader{r: br, off: recordingHeaderSize}
	rr.mr = NewReader(br)
	rr.start = time.Unix(0, int64(binary.LittleEndian.Uint64(h[10:])))
	return rr, nil
}

// Start returns the wall-clock time the recording started.
func (rr *RecordingReader) Start() time.Time { return rr.start }

// Offset returns the file offset of the next record.
func (rr *RecordingReader) Offset() int64 { return rr.off }

// Next returns the next record; io.EOF at a clean end. The message content is valid
// until the next call.
func (rr *RecordingReader) Next() (Record, error) {
	var h [recordHeaderSize]byte
	n, err := io.ReadFull(rr.r, h[:])
	if err == io.EOF {
		return Record{}, io.EOF
	}
	if err != nil {
		return Record{}, fmt.Errorf("pipboy: record at offset %d: %w: %w: header has %d of %d bytes", rr.off, ErrBadRecording, ErrTruncated, n, recordHeaderSize)
	}
	rec := Record{
		Time:    time.Duration(binary.LittleEndian.Uint64(h[:])),
		Session: binary.LittleEndian.Uint32(h[8:]),
		Dir:     Direction(h[12]),
	}
	if rec.Dir > FromApp || rec.Time < 0 {
		return Record{}, fmt.Errorf("pipboy: record at offset %d: %w: direction %d, time %d", rr.off, ErrBadRecording, h[12], rec.Time)
	}
	rr.mr.MaxSize = rr.MaxSize
	rr.mr.Offset = rr.off + recordHeaderSize
	m, err := rr.mr.ReadMessage()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: %w", ErrTruncated, err)
		}
		return Record{}, fmt.Errorf("pipboy: record at offset %d: %w: %w", rr.off, ErrBadRecording, err)
	}
	rec.Message = m
	rr.off = rr.mr.Offset
	return rec, nil
}
