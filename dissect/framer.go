package dissect

import "strconv"

// framer splits one direction of a TCP stream into messages that each say their own
// length (PRUDP Lite packets, Pip-Boy messages). It holds a partial message across
// segments and tracks the stream offset for notes. At the first gap in the capture or
// the first frame that does not decode it gives up on the direction: a length-framed
// stream has no marker to find the next message by, so guessing would misreport the
// rest.
type framer struct {
	buf    []byte
	broken bool
	off    int64 // stream offset of buf[0]
}

// feed adds the stream bytes data (after gap bytes the capture missed) and calls
// next with each whole message at the front of what is held, and its stream
// offset. next returns how many bytes the message took, 0 when the bytes held are
// only the start of a message, or an error that ends the direction. unit names a
// message in notes ("Lite packet", "message").
func (f *framer) feed(c *pktCtx, proto, unit string, data []byte, gap int, next func(b []byte, off int64) (int, error)) {
	if gap > 0 && !f.broken {
		f.broken = true
		c.note(proto, strconv.Itoa(gap)+" bytes missing from the capture at stream offset "+strconv.FormatInt(f.off+int64(len(f.buf)), 10)+"; "+unit+" framing lost for the rest of this direction")
	}
	if f.broken {
		return
	}
	f.buf = append(f.buf, data...)
	n := 0
	for n < len(f.buf) {
		used, err := next(f.buf[n:], f.off+int64(n))
		if err != nil {
			f.broken = true
			c.note(proto, unit+" at stream offset "+strconv.FormatInt(f.off+int64(n), 10)+": "+err.Error()+"; framing lost for the rest of this direction")
			f.buf = nil
			return
		}
		if used == 0 {
			break
		}
		n += used
	}
	f.off += int64(n)
	f.buf = f.buf[:copy(f.buf, f.buf[n:])]
}

// finish notes a message the capture ended inside of, in direction dir.
func (f *framer) finish(c *pktCtx, dir int, proto, unit string) {
	if len(f.buf) > 0 && !f.broken {
		c.towards(dir).note(proto, "capture ended inside a "+unit+": "+strconv.Itoa(len(f.buf))+" bytes of it at stream offset "+strconv.FormatInt(f.off, 10))
	}
}
