package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestNEXCall: gamewire nex call against gamewire serve: Health.PingDaemon, then
// a Ranking.UploadScore and a Ranking.GetRanking that returns the score, with
// omitted fields taking their description defaults; an unknown method, a bad
// parameter and a server error say what.
func TestNEXCall(t *testing.T) {
	addr, _, _ := startServeNEX(t, t.TempDir())
	call := func(args ...string) (string, error) {
		return runCLI(t, append([]string{"nex", "call", addr}, append(args, "--user", "guest", "--password", "MMQea3n!fsik", "--compact")...)...)
	}
	out, err := call("Health.PingDaemon")
	if err != nil || strings.TrimSpace(out) != `{"result":true}` {
		t.Fatalf("PingDaemon: %v\n%s", err, out)
	}
	out, err = call("ranking.uploadscore", `{"score_data":{"category":5,"score":4321,"groups":[1,2],"param":9},"unique_id":0}`)
	if err != nil || strings.TrimSpace(out) != `{}` {
		t.Fatalf("UploadScore: %v\n%s", err, out)
	}
	out, err = call("Ranking.GetRanking", `{"mode":0,"category":5,"order":{"order_calc":0,"group_index":255,"group_num":0,"time_scope":2,"offset":0,"count":10},"unique_id":0,"pid":0}`)
	if err != nil {
		t.Fatalf("GetRanking: %v\n%s", err, out)
	}
	var res struct {
		Result struct {
			Data []struct {
				PID    uint64  `json:"pid"`
				Order  uint32  `json:"rank"`
				Score  uint32  `json:"score"`
				Groups []uint8 `json:"groups"`
				Param  uint64  `json:"param"`
			} `json:"data"`
			TotalCount uint32 `json:"total"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("GetRanking output: %v\n%s", err, out)
	}
	if res.Result.TotalCount != 1 || len(res.Result.Data) != 1 || res.Result.Data[0].Score != 4321 || res.Result.Data[0].Order != 1 ||
		res.Result.Data[0].Param != 9 || len(res.Result.Data[0].Groups) != 2 || res.Result.Data[0].Groups[1] != 2 {
		t.Fatalf("GetRanking: %s", out)
	}
	// The defaults: an order param of its description's defaults reads the same.
	out2, err := call("Ranking.GetRanking", `{"category":5}`)
	sinceTime := regexp.MustCompile(`"since_time":"[^"]*"`)
	if err != nil || sinceTime.ReplaceAllString(out2, "") != sinceTime.ReplaceAllString(out, "") {
		t.Fatalf("GetRanking with defaults: %v\n%s\nwant\n%s", err, out2, out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"Ranking.Nope"}, `protocol Ranking has no method "Nope"`},
		{[]string{"Nowhere.Ping"}, `no protocol "Nowhere"`},
		{[]string{"Ranking.GetRanking", `{"category":"five"}`}, `category: dyn: bad value`},
		{[]string{"Ranking.GetRanking", `{"catgory":5}`}, `unknown field "catgory"`},
		{[]string{"Ranking.GetRanking", `[1]`}, `not a JSON object`},
		{[]string{"DataStore.GetMeta", `{"param":{"data_id":999999}}`}, `DataStore.GetMeta: DataStore::NotFound`},
	} {
		out, err := call(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q\n%s", c.args, err, c.want, out)
		}
	}
}

// TestNEXCallGates: nex call --nex-gates against serve --nex-version 3.4
// --nex-gates console: the consoles' reading sends and reads MatchmakeSession
// with progress_score; NintendoClients' reading (and auto's, gamewire's client
// negotiating structure headers, which below NEX 3.5 only NintendoClients does)
// leaves it out, which that server refuses; a reading that is none is refused
// before anything is sent.
func TestNEXCallGates(t *testing.T) {
	addr, _, _ := startServeNEX(t, t.TempDir(), "--nex-version", "3.4", "--nex-gates", "console")
	call := func(gates string) (string, error) {
		return runCLI(t, "nex", "call", addr, "MatchmakeExtension.AutoMatchmake_Postpone",
			`{"gathering":{"class":"MatchmakeSession","value":{"max_participants":4,"game_mode":3,"progress_score":42}},"message":"hi"}`,
			"--user", "guest", "--password", "MMQea3n!fsik", "--compact", "--nex-version", "3.4", "--nex-gates", gates)
	}
	out, err := call("console")
	if err != nil || !strings.Contains(out, `"num_participants":1,"progress_score":42,"session_key":"`) {
		t.Fatalf("--nex-gates console: %v\n%s", err, out)
	}
	for _, g := range []string{"nintendoclients", "auto"} {
		out, err := call(g)
		if err == nil || !strings.Contains(err.Error(), "Core::InvalidArgument") {
			t.Errorf("--nex-gates %s against a console-reading server: %v\n%s", g, err, out)
		}
	}
	if out, err := call("wii"); err == nil || !strings.Contains(err.Error(), `--nex-gates: nex gates "wii": want auto, console or nintendoclients`) {
		t.Errorf("--nex-gates wii: %v\n%s", err, out)
	}
}
