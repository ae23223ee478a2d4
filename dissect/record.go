package dissect

import (
	"encoding/hex"
	"net/netip"
	"strconv"
	"time"

	"github.com/gamewire/gamewire/internal/jsonstr"
)

// Record kinds.
const (
	KindPacket  = "packet"  // one datagram or one protocol packet inside it
	KindMessage = "message" // a whole application message reassembled from fragments or a stream
	KindNote    = "note"    // something the dissector skipped or could not decode, with Error set
)

// FieldType says which member of a Field holds its value.
type FieldType uint8

// Field value types.
const (
	FieldString  FieldType = iota // Str
	FieldInt                      // Int
	FieldBool                     // Bool
	FieldNull                     // JSON null (e.g. a signature that cannot be checked)
	FieldHex                      // Bytes, written as lower-case hex
	FieldStrings                  // Strs
	FieldObject                   // the next Int fields are this object's members
	FieldJSON                     // Bytes hold a JSON value copied verbatim
	FieldArray                    // the next Int fields are this array's items (their keys are ignored in JSON)
	FieldEnum                     // an enum value with a name: Str the name, Int the number (JSON the name, text Name(n))
)

// Field is one named value of a record. Fields keep their order, so JSON output
// lists keys in the order the protocol decoder added them.
type Field struct {
	Key   string
	Type  FieldType
	Str   string
	Int   int64
	Bool  bool
	Bytes []byte
	Strs  []string
}

// Record is one line of output: a packet, a reassembled message, or a note about
// something skipped. Byte slices in Fields alias the dissector's buffers and are
// valid only during the callback that receives the record.
type Record struct {
	Kind           string
	Frame          uint64 // capture frame number (1-based); for a message, the frame that completed it
	Time           time.Time
	Flow           int // flow number (1-based, in order of first appearance); 0 if none
	Transport      string
	NetSrc, NetDst netip.AddrPort
	Protocol       string // "prudp", "pia", "pipboy", "websocket", or "unknown"
	Retransmission bool   // bytes already decoded once; not decoded again
	Summary        string // one-line description for text output
	Fields         []Field
	Error          string // why the packet was skipped or only partly decoded

	info []byte // summary built without allocating (hot protocols); used when Summary is ""
	// paramsAt is where in info the text of the decoded RMC parameters goes
	// (0: none), paramsField the index in Fields of their object: the text is
	// rendered from the fields only when a summary is asked for.
	paramsAt, paramsField int
}

func (r *Record) reset() {
	*r = Record{Fields: r.Fields[:0], info: r.info[:0]}
}

// Text returns the one-line description of the record.
func (r *Record) Text() string {
	if r.Summary != "" {
		return r.Summary
	}
	return string(r.appendInfo(nil))
}

// appendInfo appends the built summary, with the RMC parameters' text at paramsAt.
func (r *Record) appendInfo(b []byte) []byte {
	if r.paramsAt == 0 || r.paramsAt > len(r.info) || r.paramsField >= len(r.Fields) {
		return append(b, r.info...)
	}
	b = append(b, r.info[:r.paramsAt]...)
	f := r.Fields[r.paramsField]
	n := min(int(f.Int), len(r.Fields)-r.paramsField-1)
	if n > 0 {
		start := len(b) + 1
		b = append(b, ' ')
		b = appendFieldsText(b, r.Fields[r.paramsField+1:r.paramsField+1+n], false)
		if len(b)-start > maxSummaryParams {
			b = append(b[:start+maxSummaryParams], "…"...)
		}
	}
	return append(b, r.info[r.paramsAt:]...)
}

// appendFieldsText appends fields as name=value pairs (array items without
// their keys) in the compact one-line form of the RMC summaries:
// {a=1 b=[1 2]}.
func appendFieldsText(b []byte, fs []Field, inArray bool) []byte {
	for i := 0; i < len(fs); i++ {
		f := fs[i]
		if i > 0 {
			b = append(b, ' ')
		}
		if !inArray {
			b = append(b, f.Key...)
			b = append(b, '=')
		}
		switch f.Type {
		case FieldObject, FieldArray:
			n := min(int(f.Int), len(fs)-i-1)
			if f.Type == FieldObject && n >= 2 && fs[i+1].Key == "class" && fs[i+1].Type == FieldString &&
				(fs[i+2].Key == "value" && fs[i+2].Type == FieldObject || fs[i+2].Key == "hex") {
				// An AnyData: Class{fields} or Class(hex).
				b = append(b, fs[i+1].Str...)
				if fs[i+2].Type == FieldObject {
					m := min(int(fs[i+2].Int), len(fs)-i-3)
					b = append(b, '{')
					b = appendFieldsText(b, fs[i+3:i+3+m], false)
					b = append(b, '}')
				} else {
					b = append(b, '(')
					b = hex.AppendEncode(b, fs[i+2].Bytes[:min(len(fs[i+2].Bytes), 32)])
					b = append(b, ')')
				}
				i += n
				continue
			}
			open, close := byte('{'), byte('}')
			if f.Type == FieldArray {
				open, close = '[', ']'
			}
			b = append(b, open)
			b = appendFieldsText(b, fs[i+1:i+1+n], f.Type == FieldArray)
			b = append(b, close)
			i += n
		case FieldString:
			b = strconv.AppendQuote(b, f.Str)
		case FieldEnum:
			b = appendEnumText(b, f)
		case FieldInt:
			b = strconv.AppendInt(b, f.Int, 10)
		case FieldBool:
			b = strconv.AppendBool(b, f.Bool)
		case FieldNull:
			b = append(b, "null"...)
		case FieldHex:
			if len(f.Bytes) == 0 {
				b = append(b, `""`...)
			} else if len(f.Bytes) > 32 {
				b = hex.AppendEncode(b, f.Bytes[:32])
				b = append(b, "…("...)
				b = strconv.AppendInt(b, int64(len(f.Bytes)), 10)
				b = append(b, " bytes)"...)
			} else {
				b = hex.AppendEncode(b, f.Bytes)
			}
		case FieldStrings:
			for j, s := range f.Strs {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, s...)
			}
		case FieldJSON:
			b = append(b, f.Bytes...)
		}
	}
	return b
}

// appendEnumText appends an enum field as the text forms show it: Name(n), as
// nex/desc/dyn's Value.AppendText does.
func appendEnumText(b []byte, f Field) []byte {
	b = append(b, f.Str...)
	b = append(b, '(')
	b = strconv.AppendInt(b, f.Int, 10)
	return append(b, ')')
}

// Add helpers append fields; they return r for chaining.
func (r *Record) addString(k, v string) { r.Fields = append(r.Fields, Field{Key: k, Str: v}) }
func (r *Record) addEnum(k, name string, v int64) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldEnum, Str: name, Int: v})
}
func (r *Record) addInt(k string, v int64) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldInt, Int: v})
}
func (r *Record) addBool(k string, v bool) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldBool, Bool: v})
}
func (r *Record) addNull(k string) { r.Fields = append(r.Fields, Field{Key: k, Type: FieldNull}) }
func (r *Record) addHex(k string, v []byte) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldHex, Bytes: v})
}
func (r *Record) addStrings(k string, v []string) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldStrings, Strs: v})
}
func (r *Record) addObject(k string, members int) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldObject, Int: int64(members)})
}
func (r *Record) addArray(k string, members int) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldArray, Int: int64(members)})
}
func (r *Record) addJSON(k string, raw []byte) {
	r.Fields = append(r.Fields, Field{Key: k, Type: FieldJSON, Bytes: raw})
}

// Field returns the first top-level field named key.
func (r *Record) Field(key string) (Field, bool) {
	for i := 0; i < len(r.Fields); i++ {
		f := r.Fields[i]
		if f.Key == key {
			return f, true
		}
		if f.Type == FieldObject || f.Type == FieldArray {
			i += int(f.Int)
		}
	}
	return Field{}, false
}

// AppendJSON appends the record as one JSON object (no newline). The keys of
// Fields are the ones `gamewire decode --hex --format json` prints; the capture
// adds frame, time, flow, transport, net_src, net_dst, record and, when set,
// retransmission and error.
func (r *Record) AppendJSON(b []byte) []byte {
	b = append(b, `{"frame":`...)
	b = strconv.AppendUint(b, r.Frame, 10)
	if !r.Time.IsZero() {
		b = append(b, `,"time":"`...)
		b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	if r.Flow > 0 {
		b = append(b, `,"flow":`...)
		b = strconv.AppendInt(b, int64(r.Flow), 10)
	}
	if r.Transport != "" {
		b = append(b, `,"transport":"`...)
		b = append(b, r.Transport...)
		b = append(b, '"')
	}
	if r.NetSrc.IsValid() {
		b = append(b, `,"net_src":"`...)
		b = r.NetSrc.AppendTo(b)
		b = append(b, `","net_dst":"`...)
		b = r.NetDst.AppendTo(b)
		b = append(b, '"')
	}
	b = append(b, `,"record":"`...)
	b = append(b, r.Kind...)
	b = append(b, '"')
	if r.Protocol != "" {
		b = append(b, `,"protocol":`...)
		b = jsonstr.Append(b, r.Protocol)
	}
	if len(r.Fields) > 0 {
		b = append(b, ',')
		b = appendFieldsJSON(b, r.Fields)
	}
	if r.Retransmission {
		b = append(b, `,"retransmission":true`...)
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonstr.Append(b, r.Error)
	}
	return append(b, '}')
}

// appendFieldsJSON writes fields as object members and returns b.
func appendFieldsJSON(b []byte, fs []Field) []byte { return appendMembersJSON(b, fs, false) }

// appendMembersJSON writes fields as object members, or as array items
// (without their keys) when inArray.
func appendMembersJSON(b []byte, fs []Field, inArray bool) []byte {
	for i := 0; i < len(fs); i++ {
		f := fs[i]
		if i > 0 {
			b = append(b, ',')
		}
		if !inArray {
			b = jsonstr.Append(b, f.Key)
			b = append(b, ':')
		}
		switch f.Type {
		case FieldString, FieldEnum:
			b = jsonstr.Append(b, f.Str)
		case FieldInt:
			b = strconv.AppendInt(b, f.Int, 10)
		case FieldBool:
			b = strconv.AppendBool(b, f.Bool)
		case FieldNull:
			b = append(b, "null"...)
		case FieldHex:
			b = append(b, '"')
			b = hex.AppendEncode(b, f.Bytes)
			b = append(b, '"')
		case FieldStrings:
			b = append(b, '[')
			for j, s := range f.Strs {
				if j > 0 {
					b = append(b, ',')
				}
				b = jsonstr.Append(b, s)
			}
			b = append(b, ']')
		case FieldObject:
			n := min(int(f.Int), len(fs)-i-1)
			b = append(b, '{')
			b = appendFieldsJSON(b, fs[i+1:i+1+n])
			b = append(b, '}')
			i += n
		case FieldArray:
			n := min(int(f.Int), len(fs)-i-1)
			b = append(b, '[')
			b = appendMembersJSON(b, fs[i+1:i+1+n], true)
			b = append(b, ']')
			i += n
		case FieldJSON:
			b = append(b, f.Bytes...)
		}
	}
	return b
}

// AppendText appends the one-line summary tshark-style: frame number, seconds
// since the first frame, source and destination, protocol, summary.
func (r *Record) AppendText(b []byte, start time.Time) []byte {
	b = appendPadded(b, strconv.FormatUint(r.Frame, 10), 6)
	b = append(b, ' ')
	if !r.Time.IsZero() && !start.IsZero() {
		b = appendPadded(b, strconv.FormatFloat(r.Time.Sub(start).Seconds(), 'f', 6, 64), 11)
	} else {
		b = appendPadded(b, "-", 11)
	}
	b = append(b, ' ')
	if r.NetSrc.IsValid() {
		b = r.NetSrc.AppendTo(b)
		b = append(b, " → "...)
		b = r.NetDst.AppendTo(b)
		b = append(b, ' ')
	}
	p := r.Protocol
	if p == "" {
		p = r.Transport
	}
	b = append(b, upper(p)...)
	if r.Kind == KindMessage {
		b = append(b, " message"...)
	}
	if r.Summary != "" {
		b = append(b, ' ')
		b = append(b, r.Summary...)
	} else if len(r.info) > 0 {
		b = append(b, ' ')
		b = r.appendInfo(b)
	}
	if r.Retransmission {
		b = append(b, " [retransmission]"...)
	}
	if r.Error != "" {
		b = append(b, " [error: "...)
		b = append(b, r.Error...)
		b = append(b, ']')
	}
	return b
}

// AppendTree appends the -V field tree: one indented "key: value" line per field.
func (r *Record) AppendTree(b []byte) []byte {
	b = append(b, "    record: "...)
	b = append(b, r.Kind...)
	b = append(b, '\n')
	if r.Flow > 0 {
		b = append(b, "    flow: "...)
		b = strconv.AppendInt(b, int64(r.Flow), 10)
		b = append(b, " ("...)
		b = append(b, r.Transport...)
		b = append(b, ")\n"...)
	}
	if r.Protocol != "" {
		b = append(b, "    protocol: "...)
		b = append(b, r.Protocol...)
		b = append(b, '\n')
	}
	b = appendFieldsTree(b, r.Fields, 4)
	if r.Retransmission {
		b = append(b, "    retransmission: true\n"...)
	}
	if r.Error != "" {
		b = append(b, "    error: "...)
		b = append(b, r.Error...)
		b = append(b, '\n')
	}
	return b
}

func appendFieldsTree(b []byte, fs []Field, indent int) []byte {
	for i := 0; i < len(fs); i++ {
		f := fs[i]
		for range indent {
			b = append(b, ' ')
		}
		b = append(b, f.Key...)
		b = append(b, ':')
		switch f.Type {
		case FieldObject, FieldArray:
			n := min(int(f.Int), len(fs)-i-1)
			b = append(b, '\n')
			b = appendFieldsTree(b, fs[i+1:i+1+n], indent+4)
			i += n
			continue
		case FieldString:
			b = append(b, ' ')
			b = append(b, f.Str...)
		case FieldEnum:
			b = append(b, ' ')
			b = appendEnumText(b, f)
		case FieldInt:
			b = append(b, ' ')
			b = strconv.AppendInt(b, f.Int, 10)
		case FieldBool:
			b = append(b, ' ')
			b = strconv.AppendBool(b, f.Bool)
		case FieldNull:
			b = append(b, " (unknown)"...)
		case FieldHex:
			b = append(b, ' ')
			if len(f.Bytes) > 64 {
				b = hex.AppendEncode(b, f.Bytes[:64])
				b = append(b, "... ("...)
				b = strconv.AppendInt(b, int64(len(f.Bytes)), 10)
				b = append(b, " bytes)"...)
			} else {
				b = hex.AppendEncode(b, f.Bytes)
			}
		case FieldStrings:
			b = append(b, ' ')
			for j, s := range f.Strs {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, s...)
			}
		case FieldJSON:
			b = append(b, ' ')
			if len(f.Bytes) > 200 {
				b = append(b, f.Bytes[:200]...)
				b = append(b, "..."...)
			} else {
				b = append(b, f.Bytes...)
			}
		}
		b = append(b, '\n')
	}
	return b
}

func appendPadded(b []byte, s string, w int) []byte {
	for i := len(s); i < w; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

func upper(s string) string {
	switch s {
	case "prudp":
		return "PRUDP"
	case "pia":
		return "PIA"
	case "pipboy":
		return "PIPBOY"
	case "udp":
		return "UDP"
	case "tcp":
		return "TCP"
	case "websocket":
		return "WEBSOCKET"
	}
	return s
}

// fieldSink lets record.Profile.Fields write a packet's fields into a Record.
type fieldSink Record

func (s *fieldSink) String(k, v string)           { (*Record)(s).addString(k, v) }
func (s *fieldSink) Int(k string, v int64)        { (*Record)(s).addInt(k, v) }
func (s *fieldSink) Bool(k string, v bool)        { (*Record)(s).addBool(k, v) }
func (s *fieldSink) Null(k string)                { (*Record)(s).addNull(k) }
func (s *fieldSink) Hex(k string, v []byte)       { (*Record)(s).addHex(k, v) }
func (s *fieldSink) Strings(k string, v []string) { (*Record)(s).addStrings(k, v) }
func (s *fieldSink) Object(k string, n int)       { (*Record)(s).addObject(k, n) }
