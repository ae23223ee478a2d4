package pipboy_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/gamewire/gamewire/pipboy"
)

// Decoding a recorded server-to-app stream and reading values by path.
func ExampleDecodeInput() {
	b, err := os.ReadFile("../testdata/pipboy/fo4-1.1.30-server-stream.bin")
	if err != nil {
		panic(err)
	}
	state, kind, err := pipboy.DecodeInput(b, nil)
	if err != nil {
		panic(err)
	}
	name, _ := state.DB.Lookup("$.PlayerInfo.PlayerName")
	level, _ := state.DB.Lookup("$.PlayerInfo.XPLevel")
	fmt.Println(kind, state.Hello.Version, state.DB.Len())
	fmt.Println(name.Str(), level.Int())
	// Output:
	// stream 1.1.30.0 12554
	// Gavin Sterling 8
}

// Building a small tree from JSON, changing one value by id, and exporting it.
func ExampleDatabase_Apply() {
	dump, err := pipboy.DumpFromJSON(stringsReader(`{"PlayerInfo":{"PlayerName":"Nate","XPLevel":1}}`))
	if err != nil {
		panic(err)
	}
	db := pipboy.NewDatabase()
	if err := db.Apply(dump); err != nil {
		panic(err)
	}
	level, _ := db.Lookup("$.playerinfo.xplevel") // keys match case-insensitively
	update := pipboy.Entry{Type: pipboy.TypeInt32, ID: level.ID(), Int: 2}
	payload, _ := update.Append(nil)
	if err := db.Apply(payload); err != nil {
		panic(err)
	}
	root, _ := db.Root()
	j, _ := root.AppendJSON(nil, "")
	fmt.Println(string(j))
	// Output:
	// {"PlayerInfo":{"PlayerName":"Nate","XPLevel":2}}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
