package dissect

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// DecryptedWriter writes a pcapng copy of the capture in which every UDP
// payload the dissector decrypted is replaced by its plaintext (decrypted and
// decompressed, with the PRUDP or Pia header kept in front), so Wireshark users
// can read the traffic with their own dissectors. Frames that were not
// decrypted are copied unchanged. A datagram rebuilt from IP fragments is
// written whole, unfragmented, in place of the frame that completed it.
type DecryptedWriter struct {
	out    io.Writer
	w      *pcapgo.NgWriter
	ifaces map[layers.LinkType]int
}

// NewDecryptedWriter returns a writer that writes pcapng to w. Call Flush at the end.
func NewDecryptedWriter(w io.Writer) *DecryptedWriter {
	return &DecryptedWriter{out: w, ifaces: map[layers.LinkType]int{}}
}

// WriteFrame implements FrameWriter.
func (dw *DecryptedWriter) WriteFrame(f *Frame) error {
	id, ok := dw.ifaces[f.Link]
	if !ok {
		intf := pcapgo.NgInterface{Name: "gamewire-decrypted", LinkType: f.Link, SnapLength: 0, TimestampResolution: 9}
		if dw.w == nil {
			w, err := pcapgo.NewNgWriterInterface(dw.out, intf, pcapgo.NgWriterOptions{
				SectionInfo: pcapgo.NgSectionInfo{Application: "gamewire decode --write-decrypted"},
			})
			if err != nil {
				return fmt.Errorf("write-decrypted: %w", err)
			}
			dw.w, id = w, 0
		} else {
			var err error
			if id, err = dw.w.AddInterface(intf); err != nil {
				return fmt.Errorf("write-decrypted: %w", err)
			}
		}
		dw.ifaces[f.Link] = id
	}
	ci := gopacket.CaptureInfo{Timestamp: f.Time, CaptureLength: len(f.Data), Length: max(f.OrigLen, len(f.Data)), InterfaceIndex: id}
	if err := dw.w.WritePacket(ci, f.Data); err != nil {
		return fmt.Errorf("write-decrypted: frame %d: %w", f.Number, err)
	}
	return nil
}

// Flush writes buffered output.
func (dw *DecryptedWriter) Flush() error {
	if dw.w == nil {
		return nil
	}
	return dw.w.Flush()
}

// writeRewritten writes the current frame with its UDP payload replaced by
// plain, rebuilding the IP and UDP headers. plain == nil writes the frame as captured.
func (d *Dissector) writeRewritten(f *Frame, plain []byte) {
	if d.emitErr != nil {
		return
	}
	if plain == nil {
		if err := d.cfg.Decrypted.WriteFrame(f); err != nil {
			d.emitErr = err
		}
		return
	}
	_, netb, _ := linkDecode(f.Link, f.Data)
	linkLen := len(f.Data) - len(netb)
	b := append(d.rewriteBuf[:0], f.Data[:linkLen]...)
	ipStart := len(b)
	switch netb[0] >> 4 {
	case 4:
		ihl := int(netb[0]&0x0f) * 4
		b = append(b, netb[:ihl]...)
		h := b[ipStart:]
		binary.BigEndian.PutUint16(h[2:4], uint16(ihl+8+len(plain)))
		binary.BigEndian.PutUint16(h[6:8], binary.BigEndian.Uint16(h[6:8])&0x4000) // keep DF only
		h[10], h[11] = 0, 0
		binary.BigEndian.PutUint16(h[10:12], ^onesSum(h, 0))
	default:
		b = append(b, netb[:40]...)
		h := b[ipStart:]
		h[6] = protoUDP // extension headers are dropped
		binary.BigEndian.PutUint16(h[4:6], uint16(8+len(plain)))
	}
	udpStart := len(b)
	b = binary.BigEndian.AppendUint16(b, d.udp.srcPort)
	b = binary.BigEndian.AppendUint16(b, d.udp.dstPort)
	b = binary.BigEndian.AppendUint16(b, uint16(8+len(plain)))
	b = append(b, 0, 0)
	b = append(b, plain...)
	// UDP checksum over the pseudo-header (RFC 768; RFC 8200 section 8.1).
	var sum uint32
	ip := b[ipStart:udpStart]
	if ip[0]>>4 == 4 {
		sum = uint32(onesSumRaw(ip[12:20], 0))
	} else {
		sum = uint32(onesSumRaw(ip[8:40], 0))
	}
	sum += protoUDP + uint32(8+len(plain))
	cs := ^onesSum(b[udpStart:], sum)
	if cs == 0 {
		cs = 0xffff
	}
	binary.BigEndian.PutUint16(b[udpStart+6:], cs)
	d.rewriteBuf = b
	nf := *f
	nf.Data = b
	nf.OrigLen = len(b)
	if err := d.cfg.Decrypted.WriteFrame(&nf); err != nil {
		d.emitErr = err
	}
}

// onesSum folds the one's-complement sum of b (RFC 1071) onto an initial sum.
func onesSum(b []byte, initial uint32) uint16 {
	s := uint32(onesSumRaw(b, initial))
	return uint16(s)
}

func onesSumRaw(b []byte, initial uint32) uint16 {
	s := initial
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
