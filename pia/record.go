package pia

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Record is a decoded packet in the shape `gamewire decode` prints (JSON keys as
// issue 6 lists them): header fields by their spec names in snake_case, tag_ok,
// messages and footer_hex. Fields a layout does not carry are omitted.
type Record struct {
	Protocol              string          `json:"protocol"`
	Version               string          `json:"version"`
	HeaderLayout          string          `json:"header_layout"`
	HeaderVersion         *uint8          `json:"header_version,omitempty"`
	Encrypted             bool            `json:"encrypted"`
	ConnectionID          *uint8          `json:"connection_id,omitempty"`
	PacketID              uint16          `json:"packet_id"`
	SessionTimer          *uint16         `json:"session_timer,omitempty"`
	RTTTimer              *uint16         `json:"rtt_timer,omitempty"`
	DestinationVariableID *uint32         `json:"destination_variable_id,omitempty"`
	SourceVariableID      *uint32         `json:"source_variable_id,omitempty"`
	FooterSize            *uint8          `json:"footer_size,omitempty"`
	Nonce                 string          `json:"nonce,omitempty"`
	Tag                   string          `json:"tag,omitempty"`
	TagOK                 *bool           `json:"tag_ok"`
	Messages              []MessageRecord `json:"messages"`
	FooterHex             string          `json:"footer_hex"`
	FooterVariableIDs     []uint16        `json:"footer_variable_ids,omitempty"`
	Error                 string          `json:"error,omitempty"`
	// Partial marks a packet that authenticated (or was not encrypted) but whose
	// messages broke: Messages holds those before the break, ErrorOffset is the
	// break's offset in the plaintext messages and RestHex the undecoded rest.
	Partial     bool   `json:"partial,omitempty"`
	ErrorOffset *int   `json:"error_offset,omitempty"`
	RestHex     string `json:"rest_hex,omitempty"`
	Note        string `json:"note,omitempty"`
}

// partialNote is the caveat of a partial record.
const partialNote = "partial: the packet authenticated but its messages do not all parse, and a peer drops it whole; " +
	"fields inherited from the previous message can make a misplaced message boundary look valid, " +
	"so the messages before the break are not proven right either"

// MessageRecord is one message of a Record.
type MessageRecord struct {
	Flags               uint8    `json:"flags"`
	FlagNames           []string `json:"flag_names,omitempty"`
	SourceStationIndex  *uint8   `json:"source_station_index,omitempty"`
	ProtocolType        uint16   `json:"protocol_type"`
	ProtocolName        string   `json:"protocol_name,omitempty"`
	ProtocolPort        uint32   `json:"protocol_port"`
	Destination         uint64   `json:"destination"`
	DestinationStations []int    `json:"destination_stations,omitempty"`
	SourceConstantID    *uint64  `json:"source_constant_id,omitempty"`
	PayloadSize         int      `json:"payload_size"`
	PayloadHex          string   `json:"payload_hex"`
	InflatedHex         string   `json:"inflated_hex,omitempty"`
	InflateError        string   `json:"inflate_error,omitempty"`
}

// Describe decodes b into a Record. cfg.Version may be zero to detect it from the
// version bits (5.11 and later). Without a session key an encrypted packet yields
// its header only (tag_ok null). A packet that fails authentication yields its
// header, tag_ok false and the error, which Describe also returns. A packet that
// authenticates but whose messages break yields its header, footer, the messages
// before the break, the error with its offset and the rest as hex, marked Partial
// (with a note on why the earlier messages are not proven right), and the error.
func Describe(b []byte, cfg Config, src Source) (Record, error) {
	rec := Record{Protocol: "pia", Messages: []MessageRecord{}}
	if cfg.Version.Major == 0 {
		v, err := DetectVersion(b)
		if err != nil {
			rec.Error = err.Error()
			return rec, err
		}
		cfg.Version = v
	}
	rec.Version = cfg.Version.String()
	hl := cfg.Version.HeaderLayout()
	rec.HeaderLayout = hl.String()
	h, _, err := ParseHeader(b, hl)
	if err != nil {
		rec.Error = err.Error()
		return rec, err
	}
	rec.fillHeader(&h)
	if h.Encrypted && cfg.SessionKey == nil {
		rec.Error = "encrypted; give the session key to decrypt"
		return rec, nil
	}
	cfg.AllowPlaintext = true
	c, err := NewCodec(cfg)
	if err != nil {
		rec.Error = err.Error()
		return rec, err
	}
	var p Packet
	err = c.Open(&p, b, src)
	if h.Encrypted {
		ok := err == nil || !errors.Is(err, ErrAuth)
		rec.TagOK = &ok
	}
	var me *MessageError
	if err != nil && !errors.As(err, &me) {
		rec.Error = err.Error()
		return rec, err
	}
	if me != nil {
		off := me.Offset
		rec.Partial, rec.ErrorOffset, rec.RestHex, rec.Note = true, &off, hex.EncodeToString(p.Rest), partialNote
		rec.Error = err.Error()
	}
	for i := range p.Messages {
		rec.Messages = append(rec.Messages, describeMessage(&p.Messages[i], cfg.Version))
	}
	rec.FooterHex = hex.EncodeToString(p.Footer)
	if len(p.Footer) > 0 {
		rec.FooterVariableIDs, _ = p.FooterVariableIDs(nil)
	}
	return rec, err
}

func (rec *Record) fillHeader(h *Header) {
	l := h.Layout
	rec.Encrypted = h.Encrypted
	rec.PacketID = h.PacketID
	if l.HasVersionBits() {
		v := h.Version
		rec.HeaderVersion = &v
	}
	if l.hasConnectionID() {
		v := h.ConnectionID
		rec.ConnectionID = &v
	}
	if l <= Header5_7 {
		s, r := h.SessionTimer, h.RTTTimer
		rec.SessionTimer, rec.RTTTimer = &s, &r
	}
	if l.HasFooter() {
		d, s, f := h.DestinationVariableID, h.SourceVariableID, h.FooterSize
		rec.DestinationVariableID, rec.SourceVariableID, rec.FooterSize = &d, &s, &f
	}
	if l != HeaderUpTo5_6 {
		rec.Nonce = hex.EncodeToString(h.Nonce[:])
		rec.Tag = hex.EncodeToString(h.Tag[:l.TagSize()])
	}
}

// DescribeMessage is the record of one message as Describe writes it, but
// without inflating a compressed payload: a message an Endpoint delivered
// carries its payload inflated already (its flags still say zlib).
func DescribeMessage(m *Message, v Version) MessageRecord {
	l := v.MessageLayout()
	r := MessageRecord{
		Flags: m.Flags, ProtocolType: m.ProtocolType, ProtocolPort: m.ProtocolPort,
		Destination: m.Destination, PayloadSize: len(m.Payload), PayloadHex: hex.EncodeToString(m.Payload),
		ProtocolName: ProtocolName(v, m.ProtocolType),
	}
	r.FlagNames = l.Flags().Names(m.Flags)
	if l == MessageUpTo5_4 {
		s := m.SourceStationIndex
		r.SourceStationIndex = &s
	}
	if l.carriesSourceConstantID() {
		c := m.SourceConstantID
		r.SourceConstantID = &c
	}
	for _, st := range m.DestinationStations(nil, l) {
		r.DestinationStations = append(r.DestinationStations, int(st))
	}
	return r
}

// describeMessage is DescribeMessage of a message as it came off the wire,
// with its compressed payload inflated.
func describeMessage(m *Message, v Version) MessageRecord {
	r := DescribeMessage(m, v)
	if m.Compressed(v) {
		out, err := m.Inflate(nil)
		if err != nil {
			r.InflateError = err.Error()
		} else {
			r.InflatedHex = hex.EncodeToString(out)
		}
	}
	return r
}

// ProtocolName names a protocol type from the tables of
// nintendo-wiki docs/pia/protocols/index.md (16-bit ids up to 5.4, one-byte ids from
// 5.6 and in 6.x). It returns "" for ids it does not know.
func ProtocolName(v Version, typ uint16) string {
	if v.MessageLayout() == MessageUpTo5_4 {
		return oldProtocolNames[typ]
	}
	if v.Major >= 6 {
		return protocolNames6[typ]
	}
	// The one-byte ids of 5.6-5.44 were renamed but never renumbered.
	switch {
	case typ == 0x74 && !v.atLeast(5, 11):
		return "clone"
	case typ == 0xA4 && !v.atLeast(5, 24):
		return "feedback"
	}
	return protocolNames5[typ]
}

var oldProtocolNames = map[uint16]string{
	0x0080: "relay", 0x00C0: "keep-alive", 0x0100: "station", 0x0200: "mesh", 0x0210: "sync-clock",
	0x0300: "local", 0x0400: "nat", 0x0410: "gateway", 0x0420: "lan", 0x0500: "bandwidth-check",
	0x0600: "rtt", 0x1800: "sync-old", 0x1810: "sync", 0x2000: "unreliable", 0x2100: "roundrobin-unreliable",
	0x2400: "clone", 0x2800: "voice", 0x3000: "reliable", 0x7000: "reliable-broadcast", 0x7200: "session",
	0x8000: "feedback", 0x8200: "relay-service",
}

var protocolNames5 = map[uint16]string{
	0x08: "keep-alive", 0x14: "station", 0x18: "mesh", 0x1C: "sync-clock", 0x24: "local", 0x34: "nat",
	0x44: "lan", 0x58: "rtt", 0x65: "sync", 0x68: "unreliable", 0x73: "clone", 0x74: "clone-atomic",
	0x75: "clone-event", 0x76: "clone-broadcast-event", 0x77: "clone-clock", 0x7B: "voice", 0x7C: "reliable",
	0x80: "broadcast-reliable", 0x81: "stream-broadcast-reliable", 0x94: "session", 0xA4: "monitoring-data",
	0xB0: "reckoning-1d", 0xB4: "reckoning-3d",
}

var protocolNames6 = map[uint16]string{
	0x08: "keep-alive", 0x2C: "net", 0x30: "turn", 0x58: "rtt", 0x65: "sync", 0x68: "unreliable",
	0x74: "clone-atomic", 0x75: "clone-event", 0x76: "clone-broadcast-event", 0x77: "clone-clock", 0x7B: "voice",
	0x7C: "reliable", 0x80: "broadcast-reliable", 0x81: "stream-broadcast-reliable", 0x94: "session",
	0xA0: "nat-traversal-result", 0xA4: "monitoring-data", 0xAC: "wan-nat", 0xB0: "reckoning-1d", 0xB4: "reckoning-3d",
}

// Text renders the record as indented lines for `gamewire decode --format text`.
func (rec *Record) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "pia %s (header %s)", rec.Version, rec.HeaderLayout)
	if rec.HeaderVersion != nil {
		fmt.Fprintf(&sb, " header_version=%d", *rec.HeaderVersion)
	}
	fmt.Fprintf(&sb, " encrypted=%v", rec.Encrypted)
	if rec.ConnectionID != nil {
		fmt.Fprintf(&sb, " connection_id=%d", *rec.ConnectionID)
	}
	fmt.Fprintf(&sb, " packet_id=%d", rec.PacketID)
	if rec.SessionTimer != nil {
		fmt.Fprintf(&sb, " session_timer=%d rtt_timer=%d", *rec.SessionTimer, *rec.RTTTimer)
	}
	if rec.DestinationVariableID != nil {
		fmt.Fprintf(&sb, " destination_variable_id=0x%x source_variable_id=0x%x footer_size=%d", *rec.DestinationVariableID, *rec.SourceVariableID, *rec.FooterSize)
	}
	if rec.Nonce != "" {
		fmt.Fprintf(&sb, " nonce=%s tag=%s", rec.Nonce, rec.Tag)
	}
	if rec.TagOK != nil {
		fmt.Fprintf(&sb, " tag_ok=%v", *rec.TagOK)
	}
	sb.WriteByte('\n')
	for i, m := range rec.Messages {
		fmt.Fprintf(&sb, "  message %d: flags=0x%02x", i, m.Flags)
		if len(m.FlagNames) > 0 {
			fmt.Fprintf(&sb, "(%s)", strings.Join(m.FlagNames, ","))
		}
		fmt.Fprintf(&sb, " protocol_type=0x%x", m.ProtocolType)
		if m.ProtocolName != "" {
			fmt.Fprintf(&sb, "(%s)", m.ProtocolName)
		}
		fmt.Fprintf(&sb, " protocol_port=%d destination=0x%x", m.ProtocolPort, m.Destination)
		if m.SourceStationIndex != nil {
			fmt.Fprintf(&sb, " source_station_index=%d", *m.SourceStationIndex)
		}
		if m.SourceConstantID != nil {
			fmt.Fprintf(&sb, " source_constant_id=0x%x", *m.SourceConstantID)
		}
		fmt.Fprintf(&sb, " payload(%d)=%s", m.PayloadSize, m.PayloadHex)
		if m.InflatedHex != "" {
			fmt.Fprintf(&sb, " inflated=%s", m.InflatedHex)
		}
		sb.WriteByte('\n')
	}
	if rec.FooterHex != "" {
		fmt.Fprintf(&sb, "  footer=%s variable_ids=%x\n", rec.FooterHex, rec.FooterVariableIDs)
	}
	if rec.Partial {
		fmt.Fprintf(&sb, "  rest(%d)=%s\n", len(rec.RestHex)/2, rec.RestHex)
	}
	if rec.Error != "" {
		fmt.Fprintf(&sb, "  error: %s\n", rec.Error)
	}
	if rec.Note != "" {
		fmt.Fprintf(&sb, "  note: %s\n", rec.Note)
	}
	return sb.String()
}
