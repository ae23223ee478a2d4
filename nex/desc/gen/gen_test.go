package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/protocols/matchmaking"
)

// TestGeneratedUpToDate: the committed nex/protocols packages are what the
// generator writes from the built-in descriptions, and two runs write the same
// bytes (CI's go generate step checks the tree the same way).
func TestGeneratedUpToDate(t *testing.T) {
	set, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Generate(set)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(set)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range a {
		if !bytes.Equal(src, b[name]) {
			t.Errorf("%s: two runs differ", name)
		}
		have, err := os.ReadFile(filepath.Join("..", "..", "protocols", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(have, src) {
			t.Errorf("%s: not what go generate ./nex/protocols writes (%v)", name, err)
		}
	}
	if len(a) != 2*len(set.Files()) {
		t.Errorf("%d files for %d families", len(a), len(set.Files()))
	}
}

// TestNewDefaults: New functions set the descriptions' defaults, nested
// structures' and parents' included.
func TestNewDefaults(t *testing.T) {
	sp := datastore.NewDataStoreSearchParam()
	if sp.DataType != 65535 || sp.SearchTarget != 1 || !sp.TotalCountEnabled || sp.ResultRange.Size != 10 {
		t.Errorf("DataStoreSearchParam defaults: %+v", sp)
	}
	gm := datastore.NewDataStoreGetMetaParam()
	if gm.PersistenceTarget.PersistenceID != 65535 {
		t.Errorf("DataStoreGetMetaParam defaults: %+v", gm)
	}
	ms := matchmaking.NewMatchmakeSession()
	if len(ms.Attribs) != 6 || ms.ProgressScore != 100 {
		t.Errorf("MatchmakeSession defaults: %+v", ms)
	}
}
