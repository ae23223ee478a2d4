package dissect

import (
	"bytes"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/gamewire/gamewire/pipboy"
)

// tcpConversation wraps a server-to-client byte stream into the TCP segments
// of one connection (handshake, data in segments of mss bytes, FIN).
func tcpConversation(t testing.TB, client, server netip.AddrPort, toClient []byte, mss int) [][]byte {
	return tcpConversationISN(t, client, server, toClient, mss, 7000, 900000)
}

func tcpConversationISN(t testing.TB, client, server netip.AddrPort, toClient []byte, mss int, cs, ss uint32) [][]byte {
	f := [][]byte{
		wrapLink(t, layers.LinkTypeLinuxSLL, tcpIP(t, client, server, cs, 0, true, false, false, nil)),
		wrapLink(t, layers.LinkTypeLinuxSLL, tcpIP(t, server, client, ss, cs+1, true, true, false, nil)),
		wrapLink(t, layers.LinkTypeLinuxSLL, tcpIP(t, client, server, cs+1, ss+1, false, true, false, nil)),
	}
	seq := ss + 1
	for off := 0; off < len(toClient); off += mss {
		end := min(off+mss, len(toClient))
		f = append(f, wrapLink(t, layers.LinkTypeLinuxSLL, tcpIP(t, server, client, seq, cs+1, false, true, false, toClient[off:end])))
		seq += uint32(end - off)
	}
	f = append(f, wrapLink(t, layers.LinkTypeLinuxSLL, tcpIP(t, server, client, seq, cs+1, false, true, true, nil)))
	return f
}

// TestPipboyRecordingInPcap is the check: the real Fallout 4 stream
// from testdata, carried in a pcap, decodes to the same database as
// `gamewire pipboy decode` (pipboy.DecodeInput) gives for the raw stream.
func TestPipboyRecordingInPcap(t *testing.T) {
	stream, err := os.ReadFile("../testdata/pipboy/fo4-1.1.30-server-stream.bin")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := pipboy.DecodeInput(stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	app := netip.MustParseAddrPort("192.168.1.20:50312")
	game := netip.MustParseAddrPort("192.168.1.10:27000")
	frames := tcpConversation(t, app, game, stream, 1448)
	// A retransmitted segment in the middle must not be applied twice.
	frames = append(frames[:10], append([][]byte{frames[9]}, frames[10:]...)...)
	capture := pcapFile(t, layers.LinkTypeLinuxSLL, frames...)

	d := New(Config{})
	var types []string
	retrans := 0
	err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
		if r.Retransmission {
			retrans++
		}
		if r.Kind == KindNote || r.Error != "" {
			t.Errorf("unexpected note: %s", r.AppendJSON(nil))
		}
		if r.Protocol == "pipboy" && r.Kind == KindMessage {
			f, _ := r.Field("type")
			types = append(types, f.Str)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if retrans != 1 {
		t.Errorf("%d retransmissions, want 1", retrans)
	}
	states := d.PipboyStates()
	got := states[1]
	if got == nil {
		t.Fatalf("no Pip-Boy state: %v", states)
	}
	if got.DB.Len() != want.DB.Len() || got.DB.Len() != 12554 {
		t.Fatalf("database has %d values, pipboy decode has %d (want 12554)", got.DB.Len(), want.DB.Len())
	}
	gr, _ := got.DB.Root()
	wr, _ := want.DB.Root()
	gj, err1 := gr.AppendJSON(nil, "")
	wj, err2 := wr.AppendJSON(nil, "")
	if err1 != nil || err2 != nil || !bytes.Equal(gj, wj) {
		t.Fatalf("databases differ (%v %v): %d vs %d bytes of JSON", err1, err2, len(gj), len(wj))
	}
	if got.Messages != want.Messages {
		t.Errorf("messages by type %v, want %v", got.Messages, want.Messages)
	}
	if len(types) == 0 || types[0] != pipboy.TypeNewConnection.String() {
		t.Errorf("first message types %v", types[:min(3, len(types))])
	}
	fl := d.Flows()
	if fl[0].Protocol != "pipboy" || fl[0].Client != app || !strings.HasPrefix(fl[0].Handshake, "hello ") {
		t.Errorf("flow %+v", fl[0])
	}
}

func TestPipboyDiscovery(t *testing.T) {
	app := netip.MustParseAddrPort("127.0.0.1:40001")
	game := netip.MustParseAddrPort("127.0.0.1:28000")
	frames := [][]byte{
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, app, game, []byte(`{"cmd":"autodiscover"}`))),
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, game, app, []byte(`{"IsBusy":false,"MachineType":"PC"}`))),
	}
	recs, err := collect(t, Config{}, pcapFile(t, layers.LinkTypeEthernet, frames...))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.Contains(recs[0], `"direction":"app-to-game"`) || !strings.Contains(recs[1], `"machine_type":"PC"`) {
		t.Fatalf("%q", recs)
	}
}

// TestTCPPortReuse: a second connection on the same addresses and ports (a
// new initial sequence number) is a flow of its own and decodes in full.
func TestTCPPortReuse(t *testing.T) {
	stream, err := os.ReadFile("../testdata/pipboy/fo4-1.1.30-server-stream.bin")
	if err != nil {
		t.Fatal(err)
	}
	app := netip.MustParseAddrPort("192.168.1.20:50312")
	game := netip.MustParseAddrPort("192.168.1.10:27000")
	frames := append(tcpConversationISN(t, app, game, stream[:20000], 1448, 7000, 900000),
		tcpConversationISN(t, app, game, stream, 1448, 123456789, 3000000000)...)
	d := New(Config{})
	notes := 0
	err = d.Decode(bytes.NewReader(pcapFile(t, layers.LinkTypeLinuxSLL, frames...)), func(r *Record) error {
		if r.Kind == KindNote {
			notes++
			// The dump the game sent was cut: the note runs game to app.
			if r.Flow != 1 || !strings.Contains(r.Error, "capture ended inside a message") || r.NetSrc != game || r.NetDst != app {
				t.Errorf("note %s", r.AppendJSON(nil))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if notes != 1 {
		t.Errorf("%d notes, want 1 for the cut dump of the first connection", notes)
	}
	fl := d.Flows()
	if len(fl) != 2 {
		t.Fatalf("%d flows, want 2", len(fl))
	}
	st := d.PipboyStates()
	if st[2] == nil || st[2].DB.Len() != 12554 {
		t.Fatalf("second connection: %+v", st[2])
	}
}
