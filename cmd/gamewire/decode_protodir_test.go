package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeProtoDir: decode and wireshark-plugin take --proto-dir as the nex
// commands do. A .proto of the ranking family (written here in NintendoClients'
// grammar) renames GetRanking and drops the other Ranking methods: the done-when
// capture's GetRanking calls are named and decoded by it, its UploadScore calls
// keep their ids only, and the Lua dissector names the method the same way. A
// broken file is an error naming the file and line.
func TestDecodeProtoDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	protos := filepath.Join(dir, "proto")
	if err := os.Mkdir(protos, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(protos, "ranking.proto"), []byte(`protocol Ranking : 112 {
    method(9) fetch_board(uint8 mode, uint32 category, RankingOrderParam order, uint64 unique_id, pid pid) {
        RankingResult result;
    }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(keys, []byte("access-key 3d37fbdb\npassword 1000 Done-when-a-1\npassword 1001 Done-when-b-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const capture = "../../dissect/testdata/captures/nintendoclients-doneflow.pcap"
	lua := filepath.Join(dir, "nex.lua")
	out, err := runCLI(t, "decode", capture, "--keys", keys, "--no-progress", "--proto-dir", protos, "--wireshark-plugin", lua)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	for _, want := range []string{
		"(Ranking.FetchBoard) mode=0 category=16",
		"(Ranking.FetchBoard) result={data=[{pid=1000",
		"RMC request protocol 112 method 1 call 5, 50 bytes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("decode --proto-dir lacks %q", want)
		}
	}
	if strings.Contains(out, "Ranking.GetRanking") || strings.Contains(out, "Ranking.UploadScore") {
		t.Error("decode --proto-dir still names the built-in Ranking methods")
	}
	b, err := os.ReadFile(lua)
	if err != nil || !strings.Contains(string(b), `name = "FetchBoard"`) {
		t.Errorf("decode --wireshark-plugin with --proto-dir: %v, FetchBoard not in it", err)
	}
	plugin, err := runCLI(t, "wireshark-plugin", "--proto-dir", protos, "-")
	if err != nil || !strings.Contains(plugin, `name = "FetchBoard"`) {
		t.Errorf("wireshark-plugin --proto-dir: %v, FetchBoard not in it", err)
	}

	if err := os.WriteFile(filepath.Join(protos, "broken.proto"), []byte("struct Foo {\n    uint32 a;\n    bogus<> b;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"decode", capture, "--no-progress", "-q", "--proto-dir", protos},
		{"wireshark-plugin", "--proto-dir", protos, "-"},
	} {
		if _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), "broken.proto:3") {
			t.Errorf("%q with a broken .proto: %v, want broken.proto:3", args, err)
		}
	}
}
