package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
)

func TestNEXProtocolsCLI(t *testing.T) {
	out, err := runCLI(t, "nex", "protocols")
	if err != nil {
		t.Fatal(err, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	footer := lines[len(lines)-1]
	// NintendoClients' 36 protocols and 431 methods plus what the project
	// describes from the nintendo-wiki and other public facts (docs/nex.md,
	// "Protocol descriptions"): the footer counts every method line, and never
	// fewer than the 573 described when this floor was last raised.
	var protocols, methods, structures int
	if _, err := fmt.Sscanf(footer, "%d protocols, %d methods, %d structures", &protocols, &methods, &structures); err != nil {
		t.Fatalf("footer %q: %v", footer, err)
	}
	if protocols < 51 || methods < 573 || structures < 310 {
		t.Errorf("footer %q: fewer than 51 protocols, 573 methods, 310 structures", footer)
	}
	if len(lines)-1 != methods {
		t.Errorf("%d method lines, footer says %d", len(lines)-1, methods)
	}
	for _, want := range []string{
		"MatchmakeExtension(109).AutoMatchmake_Postpone(3)(gathering any<Gathering>, message string) -> (gathering any<Gathering>)",
		"DataStore(115).PreparePostObject(24)(param DataStorePreparePostParam) -> (info DataStoreReqPostInfo)",
		"Ranking(112).GetRanking(9)(mode u8, category u32, order RankingOrderParam, unique_id u64, pid pid) -> (result RankingResult)",
		"Health(18).PingDaemon(1)() -> (result bool)",
		"MatchmakeExtension_MK8(109).CreateSimpleSearchObject(36)(object SimpleSearchObject) -> (id u32)",
		"Subscriber(121).Hello(1)(...)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q", want)
		}
	}

	out, err = runCLI(t, "nex", "protocols", "datastore")
	if err != nil {
		t.Fatal(err, out)
	}
	if !strings.HasSuffix(out, "\n1 protocols, 46 methods, 45 structures\n") || strings.Contains(out, "DataStore_SMM") {
		t.Errorf("datastore family: %s", out[max(0, len(out)-200):])
	}
	out, err = runCLI(t, "nex", "protocols", "MatchmakeExtension_MK8", "--all")
	if err != nil {
		t.Fatal(err, out)
	}
	if !strings.Contains(out, "MatchmakeExtension_MK8(109).CloseParticipation(1)(gid u32) -> ()  [MatchmakeExtension]\n") ||
		!strings.Contains(out, "MatchmakeExtension_MK8(109).CreateSimpleSearchObject(36)") || strings.Contains(out, "GenerateMatchmakeSessionSystemPassword(36)") {
		t.Errorf("--all of a variant:\n%s", out)
	}

	out, err = runCLI(t, "nex", "protocols", "120", "--format", "json")
	if err != nil {
		t.Fatal(err, out)
	}
	var l struct {
		Protocols []struct {
			Name, Family, Parent string
			ID                   uint16
			Methods              []struct {
				ID      uint32
				Name    string
				Params  []struct{ Name, Type string }
				Results []struct{ Name, Type string }
			}
		}
		Counts struct{ Protocols, Methods, Structures int }
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(l.Protocols) != 2 || l.Protocols[0].Name != "MatchmakeReferee" || l.Protocols[1].Name != "MatchmakeReferee_Eagle" ||
		l.Protocols[1].Parent != "MatchmakeReferee" || l.Protocols[1].ID != 120 || l.Counts.Methods != 13+16 {
		t.Errorf("protocols of id 120: %+v", l)
	}
	if m := l.Protocols[0].Methods[0]; m.Name != "StartRound" || m.Params[0].Type != "MatchmakeRefereeStartRoundParam" || m.Results[0].Name != "round_id" {
		t.Errorf("StartRound: %+v", m)
	}

	for _, bad := range [][]string{
		{"nex", "protocols", "NoSuchProtocol"},
		{"nex", "protocols", "999"},
		{"nex", "protocols", "--format", "xml"},
		{"nex", "protocols", "--proto-dir", filepath.Join(t.TempDir(), "missing")},
	} {
		if out, err := runCLI(t, bad...); err == nil {
			t.Errorf("%v succeeded: %s", bad, out)
		}
	}
}

func TestNEXProtocolsProtoDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("health.proto", "protocol Health : 18 {\n\tmethod ping_daemon() { bool result; }\n\tmethod(7) deep_check(list<uint32> ids) { bool ok; }\n}\n")
	write("mygame.proto", "import ranking;\nprotocol Ranking_MyGame : Ranking {\n\tmethod(50) upload_ghost(uint32 category, qbuffer ghost) {}\n}\n")
	base, err := runCLI(t, "nex", "protocols")
	if err != nil {
		t.Fatal(err, base)
	}
	var builtinP, builtinM, builtinS int
	baseLines := strings.Split(strings.TrimSuffix(base, "\n"), "\n")
	if _, err := fmt.Sscanf(baseLines[len(baseLines)-1], "%d protocols, %d methods, %d structures", &builtinP, &builtinM, &builtinS); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "nex", "protocols", "--proto-dir", dir)
	if err != nil {
		t.Fatal(err, out)
	}
	for _, want := range []string{
		"Health(18).DeepCheck(7)(ids list<u32>) -> (ok bool)\n",
		"Ranking_MyGame(112).UploadGhost(50)(category u32, ghost qbuffer) -> ()\n",
		// mygame.proto adds a protocol; health.proto replaces the built-in
		// Health, whose methods number one more than the two it declares
		// plus Ranking_MyGame's one.
		fmt.Sprintf("\n%d protocols, %d methods, %d structures\n", builtinP+1, builtinM-1, builtinS),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out[max(0, len(out)-300):])
		}
	}
	if strings.Contains(out, "PingDatabase") {
		t.Error("the built-in health family is still listed next to health.proto")
	}
	// --format nexd: mygame.proto in the description language, a draft that
	// parses back to the same protocol.
	nexd, err := runCLI(t, "nex", "protocols", "--proto-dir", dir, "--format", "nexd", "mygame")
	if err != nil {
		t.Fatal(err, nexd)
	}
	f, err := desc.Parse("mygame", nexd)
	if err != nil {
		t.Fatalf("--format nexd output does not parse: %v\n%s", err, nexd)
	}
	if len(f.Protocols) != 1 || f.Protocols[0].Name != "Ranking_MyGame" || f.Protocols[0].Parent != "Ranking" ||
		len(f.Protocols[0].Methods) != 1 || f.Protocols[0].Methods[0].Name != "UploadGhost" || f.Protocols[0].Methods[0].ID != 50 {
		t.Errorf("--format nexd of mygame.proto:\n%s", nexd)
	}
	if _, err := runCLI(t, "nex", "protocols", "--format", "yaml"); err == nil || !strings.Contains(err.Error(), "text, json or nexd") {
		t.Errorf("--format yaml: %v", err)
	}
	write("broken.proto", "protocol Broken : 5 { method x(uint32) {} }")
	if out, err := runCLI(t, "nex", "protocols", "--proto-dir", dir); err == nil || !strings.Contains(err.Error(), "broken.proto") {
		t.Errorf("a broken .proto file: %v %s", err, out)
	}
}
