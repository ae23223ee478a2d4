package dissect

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/gamewire/gamewire/prudp/wire"
)

// TestWriteDecryptedPRUDP checks --write-decrypted: the DATA payloads in the
// written pcapng are the plaintext fragments, the rest of the frames are as
// captured, and (where tshark exists) Wireshark reads the file and finds the
// rebuilt IP and UDP checksums correct.
func TestWriteDecryptedPRUDP(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 300)
	c.handshake()
	c.message(0, testMessage(0, 700), false)
	c.message(1, testMessage(1, 100), false)
	var out bytes.Buffer
	dw := NewDecryptedWriter(&out)
	if _, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}, Decrypted: dw}, c.pcap()); err != nil {
		t.Fatal(err)
	}
	if err := dw.Flush(); err != nil {
		t.Fatal(err)
	}
	written := append([]byte(nil), out.Bytes()...)
	r, err := pcapgo.NewNgReader(&out, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	v1 := wire.NewV1("6f599f81")
	var plain [2][]byte
	frames := 0
	for {
		data, _, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames++
		udp := data[14+20:]
		payload := udp[8:]
		if int(binary.BigEndian.Uint16(udp[4:6])) != len(udp) {
			t.Fatalf("frame %d: UDP length %d for %d bytes", frames, binary.BigEndian.Uint16(udp[4:6]), len(udp))
		}
		p, _, err := v1.Parse(payload)
		if err != nil {
			t.Fatalf("frame %d: %v", frames, err)
		}
		if p.Type == wire.TypeData && p.Flags.Has(wire.FlagReliable) {
			dir := 0
			if binary.BigEndian.Uint16(udp[0:2]) == srv.Port() {
				dir = 1
			}
			plain[dir] = append(plain[dir], p.Payload...)
		}
	}
	if frames != len(c.frames) {
		t.Fatalf("%d frames written, %d captured", frames, len(c.frames))
	}
	for dir := range 2 {
		if !bytes.Equal(plain[dir], bytes.Join(c.sent[dir], nil)) {
			t.Fatalf("direction %d: written payloads are not the plaintext", dir)
		}
	}
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		return
	}
	path := filepath.Join(t.TempDir(), "decrypted.pcapng")
	os.WriteFile(path, written, 0o644)
	// Every frame must have a UDP checksum Wireshark verifies as good (status 1)
	// and an IPv4 header checksum likewise.
	good, err := exec.Command(tshark, "-n", "-r", path, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
		"-Y", "ip.checksum.status == 1 && udp.checksum.status == 1").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if n := strings.Count(string(good), "\n"); n != frames {
		t.Fatalf("tshark verifies the checksums of %d of %d frames:\n%s", n, frames, good)
	}
}
