package pia

import (
	"encoding/binary"
	"fmt"
	"time"
)

// SessionTimer is a station's own session timer: milliseconds since the session
// started, carried in 16 bits up to 5.10 ("RTT Calculation" in the Pia Protocol wiki).
type SessionTimer struct {
	Start time.Time
}

// Value returns the timer at now (wrapping at 65536 ms).
func (s SessionTimer) Value(now time.Time) uint16 {
	return uint16(now.Sub(s.Start).Milliseconds())
}

// PeerClock tracks what this station believes a peer's session timer to be: the
// last value received and when it arrived ("RTT Calculation" in the Pia Protocol wiki).
type PeerClock struct {
	last  uint16
	at    time.Time
	valid bool
}

// Observe records the peer's session timer as received at now.
func (c *PeerClock) Observe(timer uint16, now time.Time) {
	c.last, c.at, c.valid = timer, now, true
}

// Estimate returns the peer's session timer as believed at now (the value to send
// in the RTT timer field), and false before anything was received.
func (c *PeerClock) Estimate(now time.Time) (uint16, bool) {
	if !c.valid {
		return 0, false
	}
	return c.last + uint16(now.Sub(c.at).Milliseconds()), true
}

// RTTFromTimers returns the round-trip time measured by a packet whose RTT timer
// field is echoed, received when the own session timer reads own. In the spec's
// example A's timer reads 248 when it receives 244: 4 ms.
func RTTFromTimers(own, echoed uint16) time.Duration {
	return time.Duration(own-echoed) * time.Millisecond
}

// RTTEstimator smooths RTT samples as RFC 6298 does (SRTT gains 1/8 of each
// sample's error, RTTVAR 1/4).
type RTTEstimator struct {
	srtt, rttvar time.Duration
	samples      int
}

// Add feeds one sample.
func (r *RTTEstimator) Add(sample time.Duration) {
	if sample < 0 {
		sample = 0
	}
	if r.samples == 0 {
		r.srtt, r.rttvar = sample, sample/2
	} else {
		d := r.srtt - sample
		if d < 0 {
			d = -d
		}
		r.rttvar += (d - r.rttvar) / 4
		r.srtt += (sample - r.srtt) / 8
	}
	r.samples++
}

// SRTT returns the smoothed RTT (0 before the first sample).
func (r *RTTEstimator) SRTT() time.Duration { return r.srtt }

// RTTVar returns the RTT variation.
func (r *RTTEstimator) RTTVar() time.Duration { return r.rttvar }

// Samples returns how many samples were fed.
func (r *RTTEstimator) Samples() int { return r.samples }

// RTT protocol ("RTT" in nintendo-wiki docs/pia/protocols/rtt.md): port 1, payload
// u32 kind (0 request, 1 response), u32 zero, u64 system time.
const (
	RTTProtocolOld = 0x0600 // up to 5.4
	RTTProtocol    = 0x58   // 5.6 and later
	RTTPort        = 1
	rttPayloadSize = 16
)

// RTTProtocolType returns the RTT protocol's type for v.
func RTTProtocolType(v Version) uint16 {
	if v.MessageLayout() == MessageUpTo5_4 {
		return RTTProtocolOld
	}
	return RTTProtocol
}

// RTTPayload is the payload of an RTT protocol message.
type RTTPayload struct {
	Response bool
	Time     uint64
}

// ParseRTTPayload decodes an RTT protocol payload.
func ParseRTTPayload(b []byte) (RTTPayload, int, error) {
	if len(b) < rttPayloadSize {
		return RTTPayload{}, 0, fmt.Errorf("pia rtt: %w: %d bytes, need 16", ErrTruncated, len(b))
	}
	kind := binary.BigEndian.Uint32(b)
	if kind > 1 {
		return RTTPayload{}, 0, fmt.Errorf("pia rtt: %w: kind %d at offset 0 (want 0 or 1)", ErrBadField, kind)
	}
	return RTTPayload{Response: kind == 1, Time: binary.BigEndian.Uint64(b[8:])}, rttPayloadSize, nil
}

// Append appends the payload.
func (r RTTPayload) Append(b []byte) ([]byte, error) {
	var kind uint32
	if r.Response {
		kind = 1
	}
	b = binary.BigEndian.AppendUint32(b, kind)
	b = binary.BigEndian.AppendUint32(b, 0)
	return binary.BigEndian.AppendUint64(b, r.Time), nil
}
