package main

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/pia"
	"github.com/spf13/cobra"
)

const cliVectorHex = "32ab98648900000001ab358028000504100d649b1ec312c65bc4bc05c88237c05acc7a796988059a6f997bede1c55e308972518adcbd59256ebdf3d5f6aa69c780284c11"

func TestDecodePiaJSON(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "decode", "--hex", cliVectorHex, "--pia-version", "5.27", "--pia-network", "ldn",
		"--pia-key", "1cd8384ae3cc5198402f8d5291eb054c", "--pia-network-id", "0x19EC1D90", "--src-mac", "48:f1:eb:20:9b:22", "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for k, want := range map[string]any{"protocol": "pia", "version": "5.27", "encrypted": true, "tag_ok": true,
		"footer_hex": "80284c11", "packet_id": 5.0, "source_variable_id": float64(0xab358028), "footer_size": 4.0} {
		if rec[k] != want {
			t.Errorf("%s = %v, want %v", k, rec[k], want)
		}
	}
	msgs, _ := rec["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages %v", rec["messages"])
	}
	m := msgs[0].(map[string]any)
	for k, want := range map[string]any{"flags": 1.0, "protocol_type": 104.0, "protocol_port": 0.0, "destination": float64(0xFFFFFFFF), "payload_hex": "0400020000"} {
		if m[k] != want {
			t.Errorf("message %s = %v, want %v", k, m[k], want)
		}
	}
}

func TestDecodePiaWrongKey(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "decode", "--hex", cliVectorHex, "--pia-version", "auto", "--pia-network", "ldn",
		"--pia-key", "1cd8384ae3cc5198402f8d5291eb054d", "--pia-network-id", "434904464", "--src-mac", "48f1eb209b22", "--format", "json")
	if err == nil || !strings.Contains(err.Error(), "authentication failed") {
		t.Fatalf("wrong key: err %v", err)
	}
	if !strings.Contains(out, `"tag_ok":false`) {
		t.Fatalf("output lacks tag_ok false: %s", out)
	}
}

func TestPiaKeyHelpers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"pia", "session-key", "--network", "ldn", "--game-key", "9900bd0cdcfa65639918bd0fc7fa6577", "--param", "0x36dee059"}, "7b182cb087eeabd228a2efd91a8be147"},
		{[]string{"pia", "game-key", "--game", "splatoon2"}, "ee182a63e216cdb1f51ad4bed8cf6508"},
		{[]string{"pia", "game-key", "--game", "smm2"}, "667c18475889faab61f93ef1da180971"},
	}
	for _, tc := range cases {
		out, err := runCLI(t, tc.args...)
		if err != nil || strings.TrimSpace(out) != tc.want {
			t.Errorf("%v: %q %v, want %s", tc.args, out, err, tc.want)
		}
	}
	if _, err := runCLI(t, "pia", "session-key", "--network", "nex", "--game-key", "00"); err == nil {
		t.Error("NEX session-key derivation accepted")
	}
}

func TestPiaFlagParsers(t *testing.T) {
	t.Parallel()
	if v, err := piaParseNumber("010"); err != nil || v != 10 {
		t.Errorf("010 -> %d %v, want decimal 10", v, err)
	}
	if v, err := piaParseNumber("0x10"); err != nil || v != 16 {
		t.Errorf("0x10 -> %d %v", v, err)
	}
	if _, err := piaParseNumber("0x1ffffffff"); err == nil {
		t.Error("33-bit number accepted")
	}
	for _, s := range []string{"48f1eb209b22", "48:f1:eb:20:9b:22", "48-F1-EB-20-9B-22"} {
		if m, err := piaParseMAC(s); err != nil || m != [6]byte{0x48, 0xf1, 0xeb, 0x20, 0x9b, 0x22} {
			t.Errorf("MAC %q -> %x %v", s, m, err)
		}
	}
	if _, err := piaParseMAC("48f1eb209b"); err == nil {
		t.Error("5-byte MAC accepted")
	}
}

// TestDecodePiaPartial is issue 13.3: a packet whose messages break after the
// first shows its header, that message, the footer, the error with its offset and
// the undecoded rest, marked partial; the command fails.
func TestDecodePiaPartial(t *testing.T) {
	t.Parallel()
	c, err := pia.NewCodec(pia.Config{Version: pia.Version{Major: 5, Minor: 27}, NonceParams: pia.NonceParams{Network: pia.NetworkLAN}})
	if err != nil {
		t.Fatal(err)
	}
	p := pia.Packet{Messages: []pia.Message{{ProtocolType: 0x68, ProtocolPort: 1, Payload: []byte("ok")}}, Footer: []byte{0x12, 0x34}}
	raw, err := c.Seal(nil, &p, pia.Source{})
	if err != nil {
		t.Fatal(err)
	}
	raw = append(append(raw[:len(raw)-2:len(raw)-2], 0x02, 0x00, 0x09, 0xAA), 0x12, 0x34) // message 1 claims 9 bytes, has 1
	out, err := runCLI(t, "decode", "--hex", hex.EncodeToString(raw), "--pia-version", "5.27", "--pia-network", "lan", "--format", "json")
	if err == nil || !strings.Contains(err.Error(), "message 1 at offset 20") {
		t.Fatalf("err %v, want the break of message 1 at offset 20\n%s", err, out)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for k, want := range map[string]any{"partial": true, "error_offset": 20.0, "rest_hex": "020009aa", "footer_hex": "1234"} {
		if rec[k] != want {
			t.Errorf("%s = %v, want %v", k, rec[k], want)
		}
	}
	if msgs, _ := rec["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["payload_hex"] != "6f6b" {
		t.Errorf("messages %v, want the one before the break", rec["messages"])
	}
	if note, _ := rec["note"].(string); !strings.Contains(note, "inherited") {
		t.Errorf("note %q", note)
	}
}

// TestPiaDocumentedKeyHelpers runs the key helpers as docs/cli.md writes them
// (issue 13.5): --network ldn6 and ldn5, and game-key --seed with a game's table.
func TestPiaDocumentedKeyHelpers(t *testing.T) {
	t.Parallel()
	const gameKey, ssid = "9900bd0cdcfa65639918bd0fc7fa6577", "00112233445566778899aabbccddeeff"
	ldn, err := runCLI(t, "pia", "session-key", "--network", "ldn", "--game-key", gameKey, "--ssid", ssid)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pia", "session-key", "--network", "ldn6", "--game-key", gameKey, "--ssid", ssid}, strings.TrimSpace(ldn)},
		{[]string{"pia", "session-key", "--network", "ldn5", "--game-key", gameKey, "--param", "0x36dee059"}, "7b182cb087eeabd228a2efd91a8be147"},
		// The published Splatoon 2 seed given explicitly with the game's table.
		{[]string{"pia", "game-key", "--game", "splatoon2", "--seed", "0xCEB9D8D9"}, "ee182a63e216cdb1f51ad4bed8cf6508"},
	} {
		out, err := runCLI(t, tc.args...)
		if err != nil || strings.TrimSpace(out) != tc.want {
			t.Errorf("%v: %q %v, want %s", tc.args, out, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pia", "session-key", "--network", "ldn6", "--game-key", gameKey, "--param", "1"}, "ldn6 (6.16-6.30) derives from --ssid"},
		{[]string{"pia", "session-key", "--network", "ldn5", "--game-key", gameKey, "--ssid", ssid}, "ldn5 (up to 5.44) derives from --param"},
		{[]string{"pia", "game-key", "--seed", "5"}, "--seed needs a table: --table LIST, or --game NAME"},
	} {
		if _, err := runCLI(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestPiaUnknownSubcommand: a mistyped pia subcommand is an error naming it (with
// a suggestion), not a complaint about the flags that follow it (issue 13.5).
func TestPiaUnknownSubcommand(t *testing.T) {
	t.Parallel()
	_, err := runCLI(t, "pia", "sned", "127.0.0.1:1", "--count", "3")
	if err == nil {
		t.Fatal("pia sned accepted")
	}
	for _, want := range []string{`unknown command "sned" for "gamewire pia"`, "did you mean send", "listen"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "--count") {
		t.Errorf("error %q complains about --count", err)
	}
	out, err := runCLI(t, "pia")
	if err != nil || !strings.Contains(out, "session-key") || !strings.Contains(out, "listen") {
		t.Fatalf("pia alone: %v\n%s", err, out)
	}
}

// TestPiaSessionFlagsShared: decode and pia listen/send take the same session
// flags under the same names (issue 15.3); listen's and send's former names are
// aliases of them.
func TestPiaSessionFlagsShared(t *testing.T) {
	t.Parallel()
	decodeCmd, piaListenCmd, piaSendCmd := findCmd(t, "decode"), findCmd(t, "pia", "listen"), findCmd(t, "pia", "send")
	for _, cmd := range []*cobra.Command{decodeCmd, piaListenCmd, piaSendCmd} {
		for _, n := range piaSessionFlagNames {
			if cmd.Flags().Lookup(n) == nil {
				t.Errorf("%s has no --%s", cmd.CommandPath(), n)
			}
		}
	}
	for old, name := range piaFlagAliases {
		for _, cmd := range []*cobra.Command{piaListenCmd, piaSendCmd} {
			if f := cmd.Flags().Lookup(old); f == nil || f.Name != name {
				t.Errorf("%s --%s is not an alias of --%s", cmd.CommandPath(), old, name)
			}
		}
	}
	// A Pia flag without --pia-version is an error, not a PRUDP decode that ignores it.
	if _, err := runCLI(t, "decode", "--hex", cliVectorHex, "--pia-key", "1cd8384ae3cc5198402f8d5291eb054c"); err == nil || !strings.Contains(err.Error(), "--pia-key is a Pia flag: give --pia-version") {
		t.Errorf("decode --pia-key without --pia-version: %v", err)
	}
	for _, n := range piaSessionFlagNames {
		if decodeCmd.Flags().Lookup(n) == nil {
			t.Errorf("piaSessionFlagNames names --%s, which decode lacks", n)
		}
	}
	// decode refuses a nonce input its network does not use, as listen and send do.
	_, err := runCLI(t, "decode", "--hex", cliVectorHex, "--pia-version", "5.27", "--pia-network", "ldn",
		"--pia-key", "1cd8384ae3cc5198402f8d5291eb054c", "--pia-network-id", "0x19EC1D90", "--src-mac", "48:f1:eb:20:9b:22", "--gathering-id", "7")
	if err == nil || !strings.Contains(err.Error(), "--gathering-id: pia: nonce input not used") {
		t.Errorf("decode with --gathering-id on ldn: %v", err)
	}
}
