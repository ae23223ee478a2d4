package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/pia"
)

// piaListener is a `gamewire pia listen` running in the background.
type piaListener struct {
	addr   string
	out    *syncWriter
	cancel context.CancelFunc
	done   chan error
}

var piaListeningRE = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// piaDeliveredRE matches a message line of listen's text output.
var piaDeliveredRE = regexp.MustCompile(`(?m)^from=`)

// startPiaListen runs `gamewire pia listen ARGS --listen 127.0.0.1:0` and waits
// until it says where it listens.
func startPiaListen(t *testing.T, args ...string) *piaListener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &piaListener{out: &syncWriter{}, cancel: cancel, done: make(chan error, 1)}
	go func() {
		l.done <- runCLIContext(t, ctx, l.out, append([]string{"pia", "listen", "--listen", "127.0.0.1:0"}, args...)...)
	}()
	t.Cleanup(func() {
		cancel()
		<-l.done
	})
	deadline := time.After(10 * time.Second)
	for {
		if m := piaListeningRE.FindStringSubmatch(l.out.String()); m != nil {
			l.addr = m[1]
			return l
		}
		select {
		case err := <-l.done:
			l.done <- err
			if m := piaListeningRE.FindStringSubmatch(l.out.String()); m != nil {
				l.addr = m[1] // a short --timeout: it listened, and already ended
				return l
			}
			t.Fatalf("pia listen ended before listening: %v\n%s", err, l.out.String())
		case <-deadline:
			t.Fatalf("pia listen did not start:\n%s", l.out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// wait returns the listener's error once it ended by itself (--count).
func (l *piaListener) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-l.done:
		l.done <- err
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("pia listen did not end:\n%s", l.out.String())
		return nil
	}
}

// waitFor waits until the listener's output contains s.
func (l *piaListener) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(l.out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("pia listen never printed %q:\n%s", s, l.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stop cancels the listener (Ctrl-C) and returns its error.
func (l *piaListener) stop(t *testing.T) error {
	t.Helper()
	l.cancel()
	return l.wait(t)
}

// runPiaSubcommand runs `gamewire pia SUB ARGS` in the foreground.
func runPiaSubcommand(t *testing.T, sub string, args ...string) (string, error) {
	t.Helper()
	return runCLI(t, append([]string{"pia", sub}, args...)...)
}

// piaSessionFlags are the session flags of each tested version x network.
var piaEndpointCases = []struct {
	name    string
	session []string
}{
	{"5.27-lan", []string{"--version", "5.27", "--network", "lan", "--session-key", "000102030405060708090a0b0c0d0e0f"}},
	{"6.16-npln", []string{"--version", "6.16", "--network", "npln", "--network-id", "0x12345678", "--session-key", "f0e1d2c3b4a5968778695a4b3c2d1e0f"}},
	{"6.16-ldn", []string{"--version", "6.16", "--network", "ldn", "--network-id", "0x19EC1D90", "--session-key", "1cd8384ae3cc5198402f8d5291eb054c"}},
	// Up to 5.10 the RTT comes from header timers, the message layout carries a
	// source constant id, and an answer is unicast to it.
	{"5.9-nex", []string{"--version", "5.9", "--network", "nex", "--gathering-id", "0x1234", "--session-key", "00112233445566778899aabbccddeeff"}},
	// Up to 5.6 the header has no nonce (HMAC-MD5 when encrypted); up to 5.4 the
	// protocol type is 16-bit (unreliable is 0x2000). This one is unencrypted.
	{"5.4-lan-plaintext", []string{"--version", "5.4", "--network", "lan"}},
	// LDN up to 5.44: nonces hash the sender's MAC, so both sides name both MACs.
	{"5.27-ldn", []string{"--version", "5.27", "--network", "ldn", "--network-id", "434904464", "--session-key", "1cd8384ae3cc5198402f8d5291eb054c"}},
}

// TestPiaListenSendAnswer: `pia listen --answer --count 3` and `pia send
// --expect-answer --count 3` talk over 127.0.0.1 for several versions and
// networks; send prints three echoed answers with RTTs, listen prints the three
// messages and no drops, and both exit 0.
func TestPiaListenSendAnswer(t *testing.T) {
	const text = "hello pia"
	payloadHex := hex.EncodeToString([]byte(text))
	for _, tc := range piaEndpointCases {
		t.Run(tc.name, func(t *testing.T) {
			protocol := "protocol_type=0x68(unreliable) protocol_port=1"
			if strings.HasPrefix(tc.name, "5.4") {
				protocol = "protocol_type=0x2000(unreliable) protocol_port=1"
			}
			listenArgs := append([]string{"--answer", "--count", "3"}, tc.session...)
			sendArgs := append([]string{"--text", text, "--count", "3", "--expect-answer", "--timeout", "10s"}, tc.session...)
			if strings.HasPrefix(tc.name, "5.27-ldn") {
				listenArgs = append(listenArgs, "--mac", "48:f1:eb:20:9b:22", "--peer-mac", "02:00:00:00:00:02")
				sendArgs = append(sendArgs, "--mac", "02:00:00:00:00:02", "--peer-mac", "48:f1:eb:20:9b:22")
			}
			if strings.HasPrefix(tc.name, "5.9") {
				sendArgs = append(sendArgs, "--constant-id", "0x1001")
			}
			// --ping adds an RTT protocol request (and its response) per message.
			ping := tc.name == "6.16-npln"
			listenCounters := "messages 3 in, 3 out, 0 relayed; drops: none"
			if ping {
				sendArgs = append(sendArgs, "--ping")
				listenCounters = "messages 6 in, 6 out, 0 relayed; drops: none"
			}
			// LDN up to 5.44 needs the peer's MAC, so that listener knows its peer.
			var l *piaListener
			if strings.HasPrefix(tc.name, "5.27-ldn") {
				// The sender's port is not known in advance: reserve one until the
				// listener has its own, so that the two cannot be the same.
				sendLocal, release := reserveUDPAddr(t)
				sendArgs = append(sendArgs, "--local", sendLocal)
				l = startPiaListen(t, append(listenArgs, "--peer", sendLocal)...)
				release()
			} else {
				l = startPiaListen(t, append(listenArgs, "--accept-unknown")...)
			}
			out, err := runPiaSubcommand(t, "send", append([]string{l.addr}, sendArgs...)...)
			if err != nil {
				t.Fatalf("pia send: %v\n%s\nlisten:\n%s", err, out, l.out.String())
			}
			if n := strings.Count(out, "echo from="+l.addr); n != 3 {
				t.Errorf("pia send printed %d echoed answers, want 3:\n%s", n, out)
			}
			for i := 1; i <= 3; i++ {
				if !strings.Contains(out, fmt.Sprintf("answer %d/3 rtt=", i)) {
					t.Errorf("pia send: no line for answer %d:\n%s", i, out)
				}
			}
			for _, want := range []string{protocol, "payload(9)=" + payloadHex, "sent 3 of 3, answered 3; rtt min ", "drops: none"} {
				if !strings.Contains(out, want) {
					t.Errorf("pia send output lacks %q:\n%s", want, out)
				}
			}
			// The endpoint's own estimate: from the RTT protocol with --ping, from
			// the header timers up to 5.10.
			if hasSRTT := strings.Contains(out, "; pia srtt "); hasSRTT != (ping || strings.HasPrefix(tc.name, "5.9") || strings.HasPrefix(tc.name, "5.4")) {
				t.Errorf("pia send: pia srtt shown %v:\n%s", hasSRTT, out)
			}
			if err := l.wait(t); err != nil {
				t.Fatalf("pia listen: %v\n%s", err, l.out.String())
			}
			lout := l.out.String()
			if n := strings.Count(lout, protocol+" flags=0x00"); n != 3 {
				t.Errorf("pia listen printed %d messages, want 3:\n%s", n, lout)
			}
			if n := strings.Count(lout, "payload(9)="+payloadHex); n != 3 {
				t.Errorf("pia listen printed %d payloads %s, want 3:\n%s", n, payloadHex, lout)
			}
			if !strings.Contains(lout, listenCounters) {
				t.Errorf("pia listen counters:\n%s", lout)
			}
			if strings.HasPrefix(tc.name, "5.9") && !strings.Contains(lout, "source_constant_id=0x1001") {
				t.Errorf("pia listen: the sender's constant id is not shown:\n%s", lout)
			}
		})
	}
}

// TestPiaListenSendJSON: the JSON records of both commands carry the decode
// command's message keys, the sender, the answers' RTTs and the counters; the
// payload goes zlib-compressed and is printed inflated.
func TestPiaListenSendJSON(t *testing.T) {
	session := []string{"--version", "6.16", "--network", "lan", "--session-key", "000102030405060708090a0b0c0d0e0f", "--format", "json",
		"--protocol-type", "0x7c", "--protocol-port", "0x10000"}
	l := startPiaListen(t, append([]string{"--answer", "--count", "2", "--accept-unknown"}, session...)...)
	out, err := runPiaSubcommand(t, "send", append([]string{l.addr, "--payload", "00ff10", "--zlib", "--count", "2", "--expect-answer"}, session...)...)
	if err != nil {
		t.Fatalf("pia send: %v\n%s", err, out)
	}
	if err := l.wait(t); err != nil {
		t.Fatalf("pia listen: %v\n%s", err, l.out.String())
	}
	records := func(s string) []map[string]any {
		var recs []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			if !strings.HasPrefix(line, "{") {
				continue // the start line on stderr
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			recs = append(recs, r)
		}
		return recs
	}
	sendRecs, listenRecs := records(out), records(l.out.String())
	if len(sendRecs) != 4 || len(listenRecs) != 3 {
		t.Fatalf("records: send %d (want 2 answers, summary, stats), listen %d (want 2 messages, stats)\nsend:\n%s\nlisten:\n%s", len(sendRecs), len(listenRecs), out, l.out.String())
	}
	for i, r := range append(sendRecs[:2:2], listenRecs[:2]...) {
		for k, want := range map[string]any{"protocol_type": float64(0x7c), "protocol_name": "reliable", "protocol_port": float64(0x10000),
			"payload_hex": "00ff10", "payload_size": 3.0, "flags": float64(0x20)} {
			if r[k] != want {
				t.Errorf("record %d: %s = %v, want %v", i, k, r[k], want)
			}
		}
		if names, _ := r["flag_names"].([]any); len(names) != 1 || names[0] != "zlib" {
			t.Errorf("record %d: flag_names %v", i, r["flag_names"])
		}
		if from, _ := r["from"].(string); !strings.HasPrefix(from, "127.0.0.1:") {
			t.Errorf("record %d: from %v", i, r["from"])
		}
	}
	for i, r := range sendRecs[:2] {
		if r["answer"] != float64(i+1) || r["of"] != 2.0 || r["echo"] != true {
			t.Errorf("answer record %d: %v", i, r)
		}
		if rtt, _ := r["rtt_ns"].(float64); rtt <= 0 {
			t.Errorf("answer record %d: rtt_ns %v", i, r["rtt_ns"])
		}
	}
	sum, _ := sendRecs[2]["summary"].(map[string]any)
	if sum["sent"] != 2.0 || sum["answered"] != 2.0 || sum["rtt_ns"] == nil {
		t.Errorf("summary %v", sendRecs[2])
	}
	for _, r := range []map[string]any{sendRecs[3], listenRecs[2]} {
		st, _ := r["stats"].(map[string]any)
		if st["messages_in"] != 2.0 || st["messages_out"] != 2.0 {
			t.Errorf("stats %v", r)
		}
		if d, _ := st["drops"].(map[string]any); len(d) != 0 {
			t.Errorf("drops %v", d)
		}
	}
}

// TestPiaSendWrongSessionKey: a sender with another session key gets no answer
// and exits non-zero naming the message; the listener logs (-v) and counts the
// packet as an auth drop and prints the count when stopped.
func TestPiaSendWrongSessionKey(t *testing.T) {
	l := startPiaListen(t, "--version", "5.27", "--network", "lan", "--session-key", "000102030405060708090a0b0c0d0e0f", "--accept-unknown", "--answer", "-v")
	out, err := runPiaSubcommand(t, "send", l.addr, "--version", "5.27", "--network", "lan", "--session-key", "000102030405060708090a0b0c0d0e0e",
		"--count", "2", "--expect-answer", "--timeout", "300ms")
	if err == nil || !strings.Contains(err.Error(), "message 1 of 2: no answer from "+l.addr) {
		t.Fatalf("pia send with a wrong key: err %v\n%s", err, out)
	}
	if !strings.Contains(out, "sent 1 of 2, answered 0") {
		t.Errorf("pia send output:\n%s", out)
	}
	l.waitFor(t, "reason=auth from=127.0.0.1:")
	if err := l.stop(t); err != nil {
		t.Fatalf("pia listen: %v", err)
	}
	lout := l.out.String()
	if !strings.Contains(lout, "messages 0 in, 0 out, 0 relayed; drops: auth=1") {
		t.Errorf("pia listen did not count the auth drop:\n%s", lout)
	}
}

// TestPiaListenUnknownPeerDropped: without --accept-unknown a station that is not
// the --peer is dropped, logged (-v) and counted.
func TestPiaListenUnknownPeerDropped(t *testing.T) {
	session := []string{"--version", "6.16", "--network", "npln", "--session-key", "000102030405060708090a0b0c0d0e0f"}
	l := startPiaListen(t, append([]string{"--peer", "127.0.0.1:9", "-v"}, session...)...)
	out, err := runPiaSubcommand(t, "send", append([]string{l.addr, "--count", "1"}, session...)...)
	if err != nil {
		t.Fatalf("pia send without --expect-answer: %v\n%s", err, out)
	}
	if !strings.Contains(out, "sent 1 of 1\n") {
		t.Errorf("pia send output:\n%s", out)
	}
	l.waitFor(t, "reason=unknown-peer from=127.0.0.1:")
	if err := l.stop(t); err != nil {
		t.Fatalf("pia listen: %v\n%s", err, l.out.String())
	}
	if !strings.Contains(l.out.String(), "messages 0 in, 0 out, 0 relayed; drops: unknown-peer=1") {
		t.Errorf("pia listen did not count the unknown peer:\n%s", l.out.String())
	}
}

// TestPiaListenCountTimeout: listen --count N --timeout D fails saying how many
// messages came when D ends first; without --count the timeout is a normal end.
func TestPiaListenCountTimeout(t *testing.T) {
	session := []string{"--version", "5.27", "--network", "lan", "--accept-unknown", "--timeout", "50ms"}
	l := startPiaListen(t, append([]string{"--count", "2"}, session...)...)
	if err := l.wait(t); err == nil || err.Error() != "pia listen: --timeout 50ms: 0 of 2 messages received" {
		t.Fatalf("pia listen --count 2 --timeout 50ms: err %v\n%s", err, l.out.String())
	}
	if !strings.Contains(l.out.String(), "packets 0 in, 0 out;") {
		t.Errorf("pia listen did not print its counters:\n%s", l.out.String())
	}
}

// TestPiaListenTimeoutEndsRun: without --count, --timeout ends the run with exit
// 0 and the counters (JSON here).
func TestPiaListenTimeoutEndsRun(t *testing.T) {
	l := startPiaListen(t, "--version", "5.27", "--network", "lan", "--accept-unknown", "--timeout", "50ms", "--format", "json")
	if err := l.wait(t); err != nil {
		t.Fatalf("pia listen --timeout 50ms: %v\n%s", err, l.out.String())
	}
	if !strings.Contains(l.out.String(), `{"stats":{"packets_in":0,"packets_out":0,"messages_in":0,"messages_out":0,"messages_relayed":0,"drops":{}}}`) {
		t.Errorf("pia listen did not print its counters:\n%s", l.out.String())
	}
}

// TestPiaRelayThroughListener: send --relay asks station A (listen --relay) to
// forward a message to station B by B's constant id; B prints it with the
// relayed flag, and A counts it as relayed and does not deliver it itself.
func TestPiaRelayThroughListener(t *testing.T) {
	session := []string{"--version", "6.16", "--network", "lan", "--session-key", "000102030405060708090a0b0c0d0e0f"}
	b := startPiaListen(t, append([]string{"--constant-id", "0x2002", "--accept-unknown", "--count", "1"}, session...)...)
	a := startPiaListen(t, append([]string{"--relay", "--constant-id", "0x1001", "--accept-unknown", "--peer", b.addr, "--peer-constant-id", "0x2002"}, session...)...)
	out, err := runPiaSubcommand(t, "send", append([]string{a.addr, "--relay", "--peer-constant-id", "0x2002", "--text", "via a"}, session...)...)
	if err != nil {
		t.Fatalf("pia send --relay: %v\n%s", err, out)
	}
	if err := b.wait(t); err != nil {
		t.Fatalf("station b: %v\n%s", err, b.out.String())
	}
	want := "from=" + a.addr + " protocol_type=0x68(unreliable) protocol_port=1 flags=0x08(relayed) destination=0x2002 payload(5)=" + hex.EncodeToString([]byte("via a"))
	if !strings.Contains(b.out.String(), want) {
		t.Errorf("station b did not print the relayed message %q:\n%s", want, b.out.String())
	}
	if err := a.stop(t); err != nil {
		t.Fatalf("station a: %v", err)
	}
	aout := a.out.String()
	if !strings.Contains(aout, "messages 1 in, 1 out, 1 relayed; drops: none") || piaDeliveredRE.MatchString(aout) {
		t.Errorf("station a relayed nothing, or delivered the message itself:\n%s", aout)
	}
}

// TestPiaSendMulticastBroadcast: send --multicast reaches a listener whose
// station index has its bit and is dropped (destination) by one whose index has
// not; send --broadcast reaches every station.
func TestPiaSendMulticastBroadcast(t *testing.T) {
	session := []string{"--version", "5.27", "--network", "lan", "--session-key", "000102030405060708090a0b0c0d0e0f"}
	l := startPiaListen(t, append([]string{"--station-index", "3", "--accept-unknown", "--answer", "--count", "2"}, session...)...)
	for _, mode := range []string{"--multicast", "--broadcast"} {
		out, err := runPiaSubcommand(t, "send", append([]string{l.addr, mode, "--peer-station-index", "3", "--expect-answer", "--timeout", "10s"}, session...)...)
		if err != nil || !strings.Contains(out, "sent 1 of 1, answered 1") {
			t.Fatalf("pia send %s: %v\n%s", mode, err, out)
		}
	}
	if err := l.wait(t); err != nil {
		t.Fatalf("pia listen: %v\n%s", err, l.out.String())
	}
	for _, want := range []string{"flags=0x01(multicast) destination=0x8 ", "flags=0x01(multicast) destination=0xffffffff ", "drops: none"} {
		if !strings.Contains(l.out.String(), want) {
			t.Errorf("pia listen output lacks %q:\n%s", want, l.out.String())
		}
	}

	other := startPiaListen(t, append([]string{"--station-index", "4", "--accept-unknown", "-v"}, session...)...)
	out, err := runPiaSubcommand(t, "send", append([]string{other.addr, "--multicast", "--peer-station-index", "3"}, session...)...)
	if err != nil {
		t.Fatalf("pia send --multicast: %v\n%s", err, out)
	}
	other.waitFor(t, "reason=destination")
	if err := other.stop(t); err != nil {
		t.Fatalf("pia listen: %v", err)
	}
	if lout := other.out.String(); !strings.Contains(lout, "messages 1 in, 0 out, 0 relayed; drops: destination=1") || piaDeliveredRE.MatchString(lout) {
		t.Errorf("station 4 took a message for station 3:\n%s", lout)
	}
}

// TestPiaEndpointBadFlags: bad flags are refused before any socket opens, with
// an error naming the flag.
func TestPiaEndpointBadFlags(t *testing.T) {
	t.Parallel()
	ok := []string{"--version", "5.27", "--network", "lan", "--session-key", "000102030405060708090a0b0c0d0e0f"}
	with := func(extra ...string) []string { return append(append([]string{}, ok...), extra...) }
	tests := []struct {
		name string
		cmd  string
		args []string
		want string
	}{
		{"no version", "listen", []string{"--network", "lan", "--accept-unknown"}, "--pia-version is required"},
		{"bad version", "send", []string{"127.0.0.1:1", "--version", "5.x", "--network", "lan"}, "--pia-version: pia: version \"5.x\""},
		{"no network", "send", []string{"127.0.0.1:1", "--version", "5.27"}, "--pia-network is required"},
		{"bad network", "listen", []string{"--version", "5.27", "--network", "wifi", "--accept-unknown"}, "--pia-network: pia: network \"wifi\""},
		{"nex on 6.x", "listen", []string{"--version", "6.16", "--network", "nex", "--accept-unknown"}, "--pia-network: pia: unsupported: the nex network has no nonce defined for Pia 6.16"},
		{"short key", "listen", []string{"--version", "5.27", "--network", "lan", "--session-key", "0011", "--accept-unknown"}, "--pia-key: 2 bytes, want 16"},
		{"key not hex", "send", []string{"127.0.0.1:1", "--version", "5.27", "--network", "lan", "--session-key", "zz"}, "--pia-key: encoding/hex"},
		{"gathering id on lan", "listen", with("--gathering-id", "5", "--accept-unknown"), "--gathering-id: pia: nonce input not used by this network: gathering id in a lan session of Pia 5.27"},
		{"network id on lan", "send", append([]string{"127.0.0.1:1"}, with("--network-id", "5")...), "--pia-network-id: pia: nonce input not used by this network: network id in a lan session"},
		{"mac on lan", "send", append([]string{"127.0.0.1:1"}, with("--mac", "01:02:03:04:05:06")...), "--src-mac: source: pia: nonce input not used by this network: source MAC in a lan session"},
		{"bad mac", "listen", []string{"--version", "5.27", "--network", "ldn", "--peer-mac", "0102", "--accept-unknown"}, "--peer-mac: \"0102\" is not a MAC address"},
		{"bad network id", "listen", []string{"--version", "6.16", "--network", "npln", "--network-id", "0xZZ", "--accept-unknown"}, "--pia-network-id: \"ZZ\" is not a 32-bit"},
		{"connection id too big", "listen", with("--connection-id", "256", "--accept-unknown"), "--connection-id \"256\": want a number 0..255"},
		{"station index", "listen", with("--station-index", "300", "--accept-unknown"), "--station-index: \"300\": want a number 0..255"},
		{"constant id 5.4 width", "send", []string{"127.0.0.1:1", "--version", "5.4", "--network", "lan", "--peer-constant-id", "0x100000000"}, "--peer-constant-id: \"0x100000000\" is not a 32-bit"},
		{"protocol type width", "listen", with("--protocol-type", "0x100", "--accept-unknown"), "--protocol-type 0x100: Pia 5.27 carries at most 0xff"},
		{"protocol port width", "send", []string{"127.0.0.1:1", "--version", "5.9", "--network", "lan", "--protocol-port", "256"}, "--protocol-port 256: Pia 5.9 carries at most 0xff"},
		{"two protocols on send", "send", append([]string{"127.0.0.1:1"}, with("--protocol-port", "1,2")...), "send takes one of each"},
		{"format", "listen", with("--format", "yaml", "--accept-unknown"), "--format \"yaml\": want text or json"},
		{"listen count", "listen", with("--count", "-1", "--accept-unknown"), "--count -1"},
		{"send count", "send", append([]string{"127.0.0.1:1"}, with("--count", "0")...), "--count 0: want at least 1"},
		{"payload and text", "send", append([]string{"127.0.0.1:1"}, with("--payload", "00", "--text", "a")...), "give --payload HEX or --text S, not both"},
		{"payload not hex", "send", append([]string{"127.0.0.1:1"}, with("--payload", "0g")...), "--payload: encoding/hex"},
		{"no peer", "listen", ok, "give --peer ADDR (a known station) or --accept-unknown"},
		{"peer flag without peer", "listen", with("--accept-unknown", "--peer-constant-id", "7"), "--peer-constant-id describes the --peer station: give --peer ADDR too"},
		{"relay without destination", "send", append([]string{"127.0.0.1:1"}, with("--relay")...), "--relay needs --peer-constant-id (or --multicast, --broadcast)"},
		{"multicast and broadcast", "send", append([]string{"127.0.0.1:1"}, with("--multicast", "--broadcast")...), "give --multicast or --broadcast, not both"},
		{"multicast without station", "send", append([]string{"127.0.0.1:1"}, with("--multicast")...), "--multicast needs --peer-station-index"},
		{"multicast station beyond 5.4 bitmap", "send", []string{"127.0.0.1:1", "--version", "5.4", "--network", "lan", "--multicast", "--peer-station-index", "40"}, "not 40"},
		{"bad peer", "listen", with("--peer", "127.0.0.1"), "--peer \"127.0.0.1\""},
		{"send address without port", "send", append([]string{"127.0.0.1:0"}, ok...), "ADDR \"127.0.0.1:0\": want HOST:PORT"},
		{"wildcard listen on lan", "listen", with("--listen", "0.0.0.0:0", "--accept-unknown"), "--listen 0.0.0.0:0: pia endpoint: wildcard address and no source IP for the nonce: lan nonces of Pia 5.27 use this station's IP"},
		{"expect answer without timeout", "send", append([]string{"127.0.0.1:1"}, with("--expect-answer", "--timeout", "0")...), "--expect-answer needs a time"},
		{"send without address", "send", ok, "missing ADDR (usage: gamewire pia send ADDR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runPiaSubcommand(t, tc.cmd, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to contain %q\n%s", err, tc.want, out)
			}
			if tc.cmd == "send" && !strings.HasPrefix(tc.want, "missing ADDR") && !strings.HasPrefix(err.Error(), "pia send: ") {
				t.Errorf("error %q does not name the command", err)
			}
		})
	}
}

// reserveUDPAddr binds a 127.0.0.1 UDP port and returns its address and a
// function that frees it for the command that is to bind it.
func reserveUDPAddr(t *testing.T) (string, func()) {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.LocalAddr().String(), func() { c.Close() }
}

// TestPiaErrorsReadOnce: errors name their command once (no "pia listen: pia
// listen:") and the counters never print a Go map (issue 13.5).
func TestPiaErrorsReadOnce(t *testing.T) {
	t.Parallel()
	doubled := func(msg string) bool {
		parts := strings.Split(msg, ": ")
		for i := 1; i < len(parts); i++ {
			if parts[i] == parts[i-1] {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		sub  string
		args []string
	}{
		{"listen", []string{"--listen", "192.0.2.1:5", "--version", "5.27", "--network", "lan", "--accept-unknown"}},
		{"listen", []string{"--listen", "nonsense", "--version", "5.27", "--network", "lan", "--accept-unknown"}},
		{"send", []string{"127.0.0.1:1", "--local", "192.0.2.1:5", "--version", "5.27", "--network", "lan"}},
	} {
		_, err := runPiaSubcommand(t, tc.sub, tc.args...)
		if err == nil {
			t.Errorf("%s %v: no error", tc.sub, tc.args)
			continue
		}
		if doubled(err.Error()) || !strings.HasPrefix(err.Error(), "pia "+tc.sub+": ") {
			t.Errorf("%s %v: %q", tc.sub, tc.args, err)
		}
	}
	st := pia.EndpointStats{PacketsIn: 3, Drops: map[string]uint64{"replay": 1, "auth": 2}}
	if got, want := fmt.Sprint(st), "packets 3 in, 0 out; messages 0 in, 0 out, 0 relayed; drops: auth=2 replay=1"; got != want {
		t.Errorf("stats print %q, want %q", got, want)
	}
}
