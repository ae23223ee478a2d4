package prudp

import (
	"cmp"
	"fmt"
)

// reassembler joins the fragments of one reliable substream's messages
// ("Fragment id" in NintendoClients wiki "PRUDP Protocol": fragments count up from 1 and the last
// carries id 0). It sees fragments already in sequence order, so a message's
// fragments never interleave with another's. The buffer grows with the bytes
// actually received and is never sized from anything the peer claims, so an
// oversized message is refused as soon as it crosses the limit, before its
// remaining fragments are stored.
type reassembler struct {
	buf      []byte
	next     uint32 // fragment id expected next within a message (0 = none started)
	fragMax  uint32 // highest fragment id before the ids wrap to 1 (255 for 1-byte ids)
	skipping bool   // discarding the rest of a refused message
	max      int
	pool     *msgPool // where one-fragment messages take their buffer (nil: allocate)
}

// msgPool recycles a shard's small message buffers: one-fragment messages
// are built in them, and an InlineHandler's request goes back once handled
// and its reply once sent, so that answering inline allocates nothing. A
// message delivered to Recv or ServePRUDP keeps its buffer.
type msgPool struct{ bufs [][]byte }

// maxPooledMessage bounds the buffers kept: a fragment and a small reply.
const maxPooledMessage = 2048

func (p *msgPool) get() []byte {
	if p == nil || len(p.bufs) == 0 {
		return nil
	}
	b := p.bufs[len(p.bufs)-1]
	p.bufs[len(p.bufs)-1] = nil
	p.bufs = p.bufs[:len(p.bufs)-1]
	return b
}

func (p *msgPool) put(b []byte) {
	if p == nil || cap(b) == 0 || cap(b) > maxPooledMessage || len(p.bufs) >= 256 {
		return
	}
	p.bufs = append(p.bufs, b[:0])
}

// add feeds one fragment and returns the completed message, if any. The
// returned slice is owned by the caller. An error means the message being
// built was refused; the reassembler then skips to the next message.
func (r *reassembler) add(fragment uint32, payload []byte) ([]byte, error) {
	if r.skipping {
		if fragment == 0 {
			r.skipping = false
		}
		return nil, nil
	}
	if r.next != 0 && fragment != 0 && fragment != r.next {
		got, want := fragment, r.next
		r.reset(fragment != 0)
		return nil, fmt.Errorf("%w: fragment id %d where %d was expected", ErrBadFragment, got, want)
	}
	if r.next == 0 && fragment > 1 {
		r.reset(true)
		return nil, fmt.Errorf("%w: message starts with fragment id %d", ErrBadFragment, fragment)
	}
	if len(r.buf)+len(payload) > r.max {
		size := len(r.buf) + len(payload)
		r.reset(fragment != 0)
		return nil, fmt.Errorf("%w: %d bytes so far exceed the limit of %d", ErrMessageTooLarge, size, r.max)
	}
	if fragment == 0 {
		var msg []byte
		if len(r.buf) == 0 {
			msg = append(r.pool.get(), payload...)
		} else {
			r.grow(len(payload))
			msg = append(r.buf, payload...)
		}
		r.buf = nil
		r.next = 0
		return msg, nil
	}
	r.grow(len(payload))
	r.buf = append(r.buf, payload...)
	r.next = fragment + 1
	if r.next > cmp.Or(r.fragMax, 255) || r.next == 0 { // ids 1..fragMax then wrap past the terminator id
		r.next = 1
	}
	return nil, nil
}

// growth is how many bytes of capacity grow would allocate for n more
// bytes (0 when they fit), or what one refused message may use for them
// when the reassembler is skipping (0).
func (r *reassembler) growth(n int) int {
	if r.skipping || len(r.buf)+n <= cap(r.buf) {
		return 0
	}
	if len(r.buf)+n > r.max {
		return 0 // refused without storing
	}
	return min(max(2*cap(r.buf), len(r.buf)+n, 4096), r.max) - cap(r.buf)
}

// grow makes room for n more bytes, doubling but never beyond the limit, so
// that a message's buffer costs at most about twice the limit in total.
func (r *reassembler) grow(n int) {
	need := len(r.buf) + n
	if need <= cap(r.buf) {
		return
	}
	c := min(max(2*cap(r.buf), need, 4096), r.max)
	nb := make([]byte, len(r.buf), c)
	copy(nb, r.buf)
	r.buf = nb
}

func (r *reassembler) reset(skipRest bool) {
	r.buf = nil
	r.next = 0
	r.skipping = skipRest
}

// pending returns the bytes held for an incomplete message.
func (r *reassembler) pending() int { return len(r.buf) }
