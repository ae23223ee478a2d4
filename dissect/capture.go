package dissect

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Capture file magic numbers (pcap: "Libpcap File Format" in the tcpdump
// documentation; pcapng: the Section Header Block type, draft-ietf-opsawg-pcapng).
const (
	magicPcapMicros   = 0xa1b2c3d4
	magicPcapNanos    = 0xa1b23c4d
	magicPcapngHeader = 0x0a0d0d0a
)

// Frame is one captured frame as read from the capture file. Data aliases the
// reader's buffer and is valid only until the next frame is read.
type Frame struct {
	Number   uint64 // 1-based, as Wireshark numbers frames
	Time     time.Time
	Link     layers.LinkType
	Data     []byte
	OrigLen  int   // length on the wire; > len(Data) when the snaplen cut it
	FileOff  int64 // offset of its record header in the (decompressed) capture
	IfaceIdx int
}

// captureReader reads frames from a pcap or pcapng stream.
type captureReader struct {
	counter *countingReader // bytes taken from the input (progress)
	fed     *countingReader // bytes fed into buf, the capture after any gzip
	buf     *bufio.Reader   // the reader pcapgo reads (its bufio.NewReader keeps it)
	gzipped bool
	pcap    *pcapgo.Reader
	ng      *pcapgo.NgReader
	format  string // "pcap" or "pcapng"
	frames  uint64
}

// countingReader counts the bytes consumed from the underlying file so errors
// and progress can name a file offset.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// openCapture recognises pcap (either byte order, micro- or nanosecond
// timestamps), pcapng, and either of them gzip-compressed.
func openCapture(r io.Reader) (*captureReader, error) {
	cr := &captureReader{counter: &countingReader{r: r}}
	br := bufio.NewReaderSize(cr.counter, 1<<16)
	magic, err := br.Peek(4)
	if err != nil {
		if errors.Is(err, io.EOF) {
			if len(magic) == 0 {
				return nil, fmt.Errorf("%w: empty input", ErrNotCapture)
			}
			return nil, fmt.Errorf("%w: only %d bytes", ErrNotCapture, len(magic))
		}
		return nil, err
	}
	cr.fed, cr.buf = cr.counter, br
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrNotCapture, err)
		}
		cr.fed = &countingReader{r: zr}
		cr.buf = bufio.NewReaderSize(cr.fed, 1<<16)
		cr.gzipped = true
		if magic, err = cr.buf.Peek(4); err != nil {
			return nil, fmt.Errorf("%w: gzip content: %v", ErrNotCapture, err)
		}
	}
	// pcapgo wraps its input in bufio.NewReader, which returns a *bufio.Reader of at
	// least 4096 bytes as it is: pcapgo reads cr.buf itself, so what cr.buf has
	// handed out is exactly what pcapgo consumed (pos).
	src := cr.buf
	le, be := binary.LittleEndian.Uint32(magic), binary.BigEndian.Uint32(magic)
	switch {
	case le == magicPcapngHeader:
		ng, err := pcapgo.NewNgReader(src, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
		if err != nil {
			return nil, fmt.Errorf("%w: pcapng section header: %v", ErrNotCapture, err)
		}
		cr.ng, cr.format = ng, "pcapng"
	case le == magicPcapMicros || le == magicPcapNanos || be == magicPcapMicros || be == magicPcapNanos:
		p, err := pcapgo.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("%w: pcap file header: %v", ErrNotCapture, err)
		}
		cr.pcap, cr.format = p, "pcap"
	default:
		return nil, fmt.Errorf("%w: unknown magic % x (want pcap a1b2c3d4/a1b23c4d or pcapng 0a0d0d0a)", ErrNotCapture, magic)
	}
	return cr, nil
}

// next reads the next frame. At the end of the capture it returns io.EOF; a
// capture cut short returns an error wrapping ErrTruncatedCapture that names the
// frame and offset. Frame data stays valid until the following call.
func (cr *captureReader) next(f *Frame) error {
	var (
		data []byte
		err  error
	)
	off := cr.pos()
	if cr.ng != nil {
		var ci = f
		d, info, e := cr.ng.ZeroCopyReadPacketData()
		data, err = d, e
		if err == io.EOF && info.CaptureLength > 0 {
			err = io.ErrUnexpectedEOF // the block header promised data that is missing
		}
		if err == nil {
			ci.Time, ci.OrigLen, ci.IfaceIdx = info.Timestamp, info.Length, info.InterfaceIndex
			ci.Link = layers.LinkTypeNull
			if len(info.AncillaryData) > 0 {
				if lt, ok := info.AncillaryData[0].(layers.LinkType); ok {
					ci.Link = lt
				}
			}
		}
	} else {
		d, info, e := cr.pcap.ZeroCopyReadPacketData()
		data, err = d, e
		if err == io.EOF && info.CaptureLength > 0 {
			err = io.ErrUnexpectedEOF // the record header promised data that is missing
		}
		if err == nil {
			f.Time, f.OrigLen, f.IfaceIdx = info.Timestamp, info.Length, 0
			f.Link = cr.pcap.LinkType()
		}
	}
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: frame %d at %s: %v", ErrTruncatedCapture, cr.frames+1, cr.where(off), err)
		}
		// A record header that makes no sense (a length beyond the snap length,
		// a pcapng block of a bad size): the framing of the rest of the file is
		// lost, as tshark also reports.
		return fmt.Errorf("%w: frame %d at %s: %v", ErrCorruptCapture, cr.frames+1, cr.where(off), err)
	}
	cr.frames++
	f.Number = cr.frames
	f.Data = data
	f.FileOff = off
	if f.OrigLen < len(data) {
		f.OrigLen = len(data)
	}
	return nil
}

// pos is the offset in the capture (after any gzip) of the next byte pcapgo reads.
func (cr *captureReader) pos() int64 { return cr.fed.n - int64(cr.buf.Buffered()) }

// where names an offset of the capture for an error.
func (cr *captureReader) where(off int64) string {
	if cr.gzipped {
		return fmt.Sprintf("offset %d of the decompressed capture", off)
	}
	return fmt.Sprintf("file offset %d", off)
}

// offset reports how many bytes of the (possibly compressed) input have been consumed.
func (cr *captureReader) offset() int64 { return cr.counter.n }
