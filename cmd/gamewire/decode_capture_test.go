package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runDecodeCLI runs gamewire with args and returns standard output and standard error
// apart.
func runDecodeCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = executeCLI(context.Background(), nil, &out, &errOut, args...)
	return out.String(), errOut.String(), err
}

const v0Capture = "../../dissect/testdata/captures/tcpdump-nex-v0.pcap"

// TestDecodeRefusesFlagsOfTheOtherInput: flags that would be ignored are errors.
func TestDecodeRefusesFlagsOfTheOtherInput(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out.pcapng")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"decode", "--hex", "00", "--write-decrypted", out}, "--write-decrypted applies to a capture file"},
		{[]string{"decode", "--hex", "00", "--stats"}, "--stats applies to a capture file"},
		{[]string{"decode", "--hex", "00", "--keys", "k.txt"}, "--keys applies to a capture file"},
		{[]string{"decode", "--hex", "00", "--nex-gates", "console"}, "--nex-gates applies to a capture file"},
		{[]string{"decode", "--hex", "00", "--nex-version", "3.4"}, "--nex-version applies to a capture file"},
		{[]string{"decode", v0Capture, "--hex", "00"}, "give --hex or a capture file, not both"},
		{[]string{"decode", v0Capture, "--rc4-key", "CD&ML"}, "--rc4-key applies to --hex"},
		{[]string{"decode", v0Capture, "--decrypt"}, "--decrypt applies to --hex"},
		{[]string{"decode", v0Capture, "--pia-key", "000102030405060708090a0b0c0d0e0f"}, "--pia-key applies to --hex"},
		{[]string{"decode", v0Capture, "--pia-version", "5.27"}, "--pia-version applies to --hex"},
	} {
		stdout, _, err := runDecodeCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.args, err, tc.want)
		}
		if stdout != "" {
			t.Errorf("%q printed %q", tc.args, stdout)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--write-decrypted with --hex created %s", out)
	}
}

// TestDecodeVariant: --variant refuses a name no description has, naming the flag,
// the value and the known names; help lists the variants the descriptions have.
func TestDecodeVariant(t *testing.T) {
	t.Parallel()
	stdout, _, err := runDecodeCLI(t, "decode", v0Capture, "--variant", "nosuch")
	if err == nil || stdout != "" {
		t.Fatalf("--variant nosuch: err %v, printed %q", err, stdout)
	}
	for _, want := range []string{"--variant", `"nosuch"`, "mk8d", "pokemon6", "pokemon7"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("--variant nosuch: %v lacks %q", err, want)
		}
	}
	if _, _, err := runDecodeCLI(t, "decode", v0Capture, "--variant", "pokemon7,mk8", "-q"); err != nil {
		t.Errorf("--variant pokemon7,mk8: %v", err)
	}
	help, _, err := runDecodeCLI(t, "decode", "--help")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(help, "--variant string")
	if i < 0 {
		t.Fatalf("help lacks --variant:\n%s", help)
	}
	line, _, _ := strings.Cut(help[i:], "\n")
	for _, want := range []string{"eagle", "mk8", "pokemon6", "pokemon7", "smm2"} {
		if !strings.Contains(line, want) {
			t.Errorf("--variant's help lacks %q: %s", want, line)
		}
	}
}

// TestDecodeNotACaptureHasNoStats: --stats prints no empty table before the error.
func TestDecodeNotACaptureHasNoStats(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(p, []byte("not a capture at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runDecodeCLI(t, "decode", p, "--stats")
	if err == nil || !strings.Contains(err.Error(), "not a pcap") {
		t.Fatalf("err %v", err)
	}
	if stdout != "" {
		t.Fatalf("printed %q before the error", stdout)
	}
}

// TestDecodeCorruptFirstRecordOffset: the error names the record header's offset (24),
// not how far the reader had buffered.
func TestDecodeCorruptFirstRecordOffset(t *testing.T) {
	t.Parallel()
	b := make([]byte, 24+16, 100_000)
	binary.LittleEndian.PutUint32(b[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(b[4:], 2)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint32(b[16:], 65535) // snap length
	binary.LittleEndian.PutUint32(b[20:], 1)     // Ethernet
	binary.LittleEndian.PutUint32(b[24+8:], 0x7fffffff)
	b = b[:cap(b)]
	p := filepath.Join(t.TempDir(), "corrupt.pcap")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runDecodeCLI(t, "decode", p)
	if err == nil || !strings.Contains(err.Error(), "frame 1 at file offset 24:") {
		t.Fatalf("err %v", err)
	}
}

// TestDecodeUnrecognisedHint: a capture whose every flow is "unknown" (no access key,
// or a wrong one) ends with a hint on standard error; a right key needs none.
func TestDecodeUnrecognisedHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, want string
	}{
		{"", "--access-key KEY or a keys file with --keys FILE"},
		{"wrong", "no given access key verifies"},
		{"6f599f81", ""},
	} {
		args := []string{"decode", v0Capture, "-q"}
		if tc.key != "" {
			args = append(args, "--access-key", tc.key)
		}
		_, stderr, err := runDecodeCLI(t, args...)
		if err != nil {
			t.Fatalf("key %q: %v", tc.key, err)
		}
		if tc.want == "" && stderr != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("key %q: stderr %q, want %q", tc.key, stderr, tc.want)
		}
	}
}

// TestDecodeHelpNamesEveryDialect: decode --help lists every --dialect name --hex accepts.
func TestDecodeHelpNamesEveryDialect(t *testing.T) {
	t.Parallel()
	stdout, _, err := runDecodeCLI(t, "decode", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"auto", "nex-v0", "nex-v0-friends", "nex-v1", "nex-lite", "quazal", "quazal-2006", "hyperscape"} {
		if !strings.Contains(stdout, "|"+n+"|") && !strings.Contains(stdout, "|"+n+"]") && !strings.Contains(stdout, "dialect "+n+"|") {
			t.Errorf("decode --help does not name %s:\n%s", n, stdout)
		}
	}
}

// TestDecodeWrongAccessKeyV1: V1 has no checksum, so a wrong --access-key
// shows in the signatures: every packet's record says so and --stats counts
// the errors; with the right key there are none.
func TestDecodeWrongAccessKeyV1(t *testing.T) {
	t.Parallel()
	const capture = "../../dissect/testdata/captures/tcpdump-nex-v1.pcap"
	out, err := runCLI(t, "decode", capture, "--access-key", "00000000", "--stats")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "signature mismatch") || !regexp.MustCompile(`nex-v1\s+79\s+14\s+1\s+61320\s+79\s`).MatchString(out) {
		t.Errorf("decode --access-key WRONG --stats:\n%s", out)
	}
	out, err = runCLI(t, "decode", capture, "--access-key", "6f599f81", "--stats")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "signature mismatch") || !regexp.MustCompile(`nex-v1\s+79\s+14\s+1\s+61320\s+0\s`).MatchString(out) {
		t.Errorf("decode --access-key RIGHT --stats:\n%s", out)
	}
}

// TestDecodeNEXVersionAndGates: decode's --nex-version and --nex-gates reach the
// dissector (dissect.Config; the readings themselves: dissect
// TestDisputedGates). NintendoClients' NEX 3.5 done-when capture decodes
// without an error at its own version and at 3.5 with either reading (they
// differ only below 3.5), and with errors at NEX 4.0, whose MatchmakeSession
// has more fields; a bad value names its flag before anything is read.
func TestDecodeNEXVersionAndGates(t *testing.T) {
	t.Parallel()
	keys := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(keys, []byte("access-key 3d37fbdb\npassword 1000 Done-when-a-1\npassword 1001 Done-when-b-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	decode := func(args ...string) (string, error) {
		out, _, err := runDecodeCLI(t, append([]string{"decode", "../../dissect/testdata/captures/nintendoclients-doneflow.pcap", "--keys", keys,
			"--no-progress", "--format", "json"}, args...)...)
		return out, err
	}
	for _, c := range []struct {
		args   []string
		errors bool
	}{
		{nil, false},
		{[]string{"--nex-version", "3.5", "--nex-gates", "console"}, false},
		{[]string{"--nex-version", "30500", "--nex-gates", "nintendoclients"}, false},
		{[]string{"--nex-version", "4.0"}, true},
	} {
		out, err := decode(c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if !strings.Contains(out, `"method":"AutoMatchmake_Postpone"`) {
			t.Fatalf("%v: no AutoMatchmake_Postpone in\n%.500s", c.args, out)
		}
		if got := strings.Contains(out, `_error":"`); got != c.errors {
			t.Errorf("%v: decoding errors %v, want %v", c.args, got, c.errors)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nex-gates", "wii"}, `--nex-gates: nex gates "wii": want auto, console or nintendoclients`},
		{[]string{"--nex-version", "3.x"}, `--nex-version "3.x": want a NEX version`},
	} {
		if out, err := decode(c.args...); err == nil || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("%v: %v, want %q\n%.200s", c.args, err, c.want, out)
		}
	}
}
