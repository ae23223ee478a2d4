package types

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Writer appends a sequence of NEX values to B with a sticky error, the encoding
// counterpart of Reader: a handler writes its return values one after another and
// checks Err once. The zero Writer (with nil B) works.
type Writer struct {
	B   []byte
	S   Settings
	err error
}

// NewWriter returns a Writer appending to b with settings s.
func NewWriter(b []byte, s Settings) Writer { return Writer{B: b, S: s} }

// NEXVersion returns S.NEXVersion(), the version that gates fields, without
// copying the settings (generated encoders ask for it per structure).
func (w *Writer) NEXVersion() Version { return w.S.nexVersion() }

// GateMin returns S.GateMin(console, nc) without copying the settings.
func (w *Writer) GateMin(console, nc Version) Version { return w.S.gateMin(console, nc) }

// Err returns the first encoding error.
func (w *Writer) Err() error { return w.err }

// Bytes returns the encoded bytes and the first error.
func (w *Writer) Bytes() ([]byte, error) { return w.B, w.err }

func (w *Writer) set(b []byte, err error) {
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.B = b
}

// U8 appends a Uint8.
func (w *Writer) U8(v uint8) { w.B = append(w.B, v) }

// Bool appends a Bool.
func (w *Writer) Bool(v bool) { w.B = AppendBool(w.B, v) }

// U16 appends a Uint16.
func (w *Writer) U16(v uint16) { w.B = binary.LittleEndian.AppendUint16(w.B, v) }

// U32 appends a Uint32.
func (w *Writer) U32(v uint32) { w.B = binary.LittleEndian.AppendUint32(w.B, v) }

// S32 appends a Sint32.
func (w *Writer) S32(v int32) { w.U32(uint32(v)) }

// S64 appends a Sint64.
func (w *Writer) S64(v int64) { w.U64(uint64(v)) }

// U64 appends a Uint64.
func (w *Writer) U64(v uint64) { w.B = binary.LittleEndian.AppendUint64(w.B, v) }

// F64 appends a Double.
func (w *Writer) F64(v float64) { w.U64(math.Float64bits(v)) }

// Result appends a Result.
func (w *Writer) Result(r Result) { w.U32(uint32(r)) }

// DateTime appends a DateTime.
func (w *Writer) DateTime(d DateTime) { w.U64(uint64(d)) }

// Raw appends bytes as they are.
func (w *Writer) Raw(p []byte) { w.B = append(w.B, p...) }

// String appends a String.
func (w *Writer) String(s string) {
	if w.err == nil {
		w.set(AppendString(w.B, s))
	}
}

// Buffer appends a Buffer.
func (w *Writer) Buffer(p []byte) {
	if w.err == nil {
		w.set(AppendBuffer(w.B, p))
	}
}

// QBuffer appends a qBuffer.
func (w *Writer) QBuffer(p []byte) {
	if w.err == nil {
		w.set(AppendQBuffer(w.B, p))
	}
}

// PID appends a PID in the configured width. It inlines, as U32 does (generated
// encoders write every PID field with it): no call even on its failures, which
// record a *pidError built only then.
func (w *Writer) PID(p PID) {
	switch {
	case p>>32 == 0 && w.S.PIDSize|4 == 4: // 4-byte PIDs (PIDSize 0 or 4)
		w.B = binary.LittleEndian.AppendUint32(w.B, uint32(p))
	case w.S.PIDSize == 8:
		w.B = binary.LittleEndian.AppendUint64(w.B, uint64(p))
	case w.err == nil: // bad settings or a PID too wide
		w.err = &pidError{pid: p, size: w.S.PIDSize}
	}
}

// pidError is Writer.PID's failure, with AppendPID's message.
type pidError struct {
	pid  PID
	size int
}

func (e *pidError) Error() string {
	if e.size|4 == 4 {
		return fmt.Sprintf("PID %d: %v (4-byte PIDs)", e.pid, ErrTooLong)
	}
	return fmt.Sprintf("%v (got %d)", ErrBadPIDSize, e.size)
}

func (e *pidError) Unwrap() error {
	if e.size|4 == 4 {
		return ErrTooLong
	}
	return ErrBadPIDSize
}

// StationURL appends a StationURL.
func (w *Writer) StationURL(u StationURL) {
	if w.err == nil {
		w.set(AppendStationURL(w.B, u))
	}
}

// Variant appends a Variant.
func (w *Writer) Variant(v Variant) {
	if w.err == nil {
		w.set(AppendVariant(w.B, v))
	}
}

// AnyDataHolder appends an AnyDataHolder.
func (w *Writer) AnyDataHolder(h AnyDataHolder) {
	if w.err == nil {
		w.set(AppendAnyDataHolder(w.B, h))
	}
}

// BeginStructure starts a structure level (see BeginStructure); pass the mark to
// EndStructure.
func (w *Writer) BeginStructure(version uint8) int {
	var mark int
	w.B, mark = BeginStructure(w.B, w.S, version)
	return mark
}

// EndStructure completes a structure level.
func (w *Writer) EndStructure(mark int) {
	if w.err == nil {
		w.set(EndStructure(w.B, mark))
	}
}

// RVConnectionData appends an RVConnectionData structure.
func (w *Writer) RVConnectionData(c RVConnectionData) {
	if w.err == nil {
		w.set(c.Append(w.B, w.S))
	}
}

// WriteList appends a List whose elements elem writes.
func WriteList[T any](w *Writer, items []T, elem func(w *Writer, v T)) {
	if uint64(len(items)) > math.MaxUint32 {
		w.set(nil, ErrTooLong)
		return
	}
	w.U32(uint32(len(items)))
	for _, v := range items {
		elem(w, v)
	}
}
