package wire

import (
	"encoding/binary"
	"strconv"
)

// AggregateAck is a decoded aggregate-acknowledgement payload ("Aggregate
// acknowledgement" in NintendoClients wiki "PRUDP Protocol"): every packet of SubstreamID up to and including
// Seq is acknowledged, and so are the additional sequence ids. For the old format, which
// carries neither substream nor base sequence id, Seq is the aggregate ack packet's own
// sequence id as passed to [ParseAggregateAckOld] and SubstreamID is 0.
//
// The additional ids alias the payload; read them with Len and At (no allocation) or
// AppendTo.
type AggregateAck struct {
	SubstreamID uint8
	Seq         uint16
	extra       []byte // LE u16 ids
}

// Len returns the number of additional sequence ids.
func (a AggregateAck) Len() int { return len(a.extra) / 2 }

// At returns the i-th additional sequence id.
func (a AggregateAck) At(i int) uint16 { return binary.LittleEndian.Uint16(a.extra[2*i:]) }

// AppendTo appends the additional sequence ids to dst.
func (a AggregateAck) AppendTo(dst []uint16) []uint16 {
	for i := 0; i < a.Len(); i++ {
		dst = append(dst, a.At(i))
	}
	return dst
}

// ParseAggregateAck decodes the new-format payload: substream id (1), count (1), base
// sequence id (LE u16), then count additional LE u16 ids. The payload must be exactly that
// long. The aggregate ack packet itself has sequence id 0.
func ParseAggregateAck(payload []byte) (AggregateAck, error) {
	if len(payload) < 4 {
		field, off := "substream id", 0
		switch {
		case len(payload) >= 2:
			field, off = "sequence id", 2
		case len(payload) == 1:
			field, off = "count", 1
		}
		return AggregateAck{}, errAt("aggregate-ack", field, off, ErrTruncated)
	}
	count := int(payload[1])
	if len(payload) < 4+2*count {
		return AggregateAck{}, errDetail("aggregate-ack", "additional sequence ids", 4, ErrTruncated,
			"count says "+strconv.Itoa(count)+", "+strconv.Itoa((len(payload)-4)/2)+" present")
	}
	if len(payload) > 4+2*count {
		return AggregateAck{}, errDetail("aggregate-ack", "additional sequence ids", 4+2*count, ErrTrailingData,
			strconv.Itoa(len(payload)-4-2*count)+" bytes after "+strconv.Itoa(count)+" ids")
	}
	return AggregateAck{
		SubstreamID: payload[0],
		Seq:         binary.LittleEndian.Uint16(payload[2:]),
		extra:       payload[4:],
	}, nil
}

// AppendAggregateAck appends a new-format payload (see [ParseAggregateAck]). At most 255
// additional ids fit.
func AppendAggregateAck(b []byte, substream uint8, seq uint16, additional []uint16) ([]byte, error) {
	if len(additional) > 255 {
		return b, errDetail("aggregate-ack", "count", -1, ErrTooLarge, strconv.Itoa(len(additional))+" ids, at most 255")
	}
	b = append(b, substream, byte(len(additional)))
	b = binary.LittleEndian.AppendUint16(b, seq)
	for _, s := range additional {
		b = binary.LittleEndian.AppendUint16(b, s)
	}
	return b, nil
}

// ParseAggregateAckOld decodes the old-format payload: a list of LE u16 sequence ids
// acknowledged in addition to every id up to packetSeq, the aggregate ack packet's own
// sequence id. An odd payload length is an error.
func ParseAggregateAckOld(payload []byte, packetSeq uint16) (AggregateAck, error) {
	if len(payload)%2 != 0 {
		return AggregateAck{}, errDetail("aggregate-ack", "sequence id", len(payload)-1, ErrTruncated, "odd payload length")
	}
	return AggregateAck{Seq: packetSeq, extra: payload}, nil
}

// AppendAggregateAckOld appends an old-format payload listing additional ids.
func AppendAggregateAckOld(b []byte, additional []uint16) []byte {
	for _, s := range additional {
		b = binary.LittleEndian.AppendUint16(b, s)
	}
	return b
}
