package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
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

// TestGeneratedErrors: a generated decoder's error names the field path with
// the descriptions' names, the offset, the innermost structure and the NEX
// version; a revision newer than the version allows is refused naming both.
func TestGeneratedErrors(t *testing.T) {
	st := types.Settings{StructureHeader: true, Version: types.Version3_5}
	p := datastore.NewDataStoreGetMetaParam()
	w := types.NewWriter(nil, st)
	p.Append(&w)
	b := w.B[:len(w.B)-12] // cut into persistence_target's level and after
	r := types.NewReader(b, st)
	var q datastore.DataStoreGetMetaParam
	q.Read(&r, "param")
	if r.Err() == nil || !strings.Contains(r.Err().Error(), "param") || !strings.Contains(r.Err().Error(), "DataStoreGetMetaParam") ||
		!strings.Contains(r.Err().Error(), "NEX 3.5.0") {
		t.Errorf("truncated GetMetaParam: %v", r.Err())
	}
	t.Log(r.Err())
	// SearchParam at NEX 4 allows revision 0 only; a NEX 3.x writer's revision 3 is refused.
	sp := datastore.NewDataStoreSearchParam()
	w = types.NewWriter(nil, st)
	sp.Append(&w)
	r = types.NewReader(w.B, types.Settings{StructureHeader: true, Version: types.Version4})
	var q2 datastore.DataStoreSearchParam
	q2.Read(&r, "param")
	if !errors.Is(r.Err(), types.ErrVersion) || !strings.Contains(r.Err().Error(), "structure DataStoreSearchParam revision 3 (NEX 4.0.0 allows up to 0)") {
		t.Errorf("NEX 3.5 SearchParam read at NEX 4: %v", r.Err())
	}
	t.Log(r.Err())
}

// TestVariantNames: a variant's client hides the parent's methods it
// replaces under another name, and a variant method named as an inherited
// method of another id is refused (its client could not reach that one).
func TestVariantNames(t *testing.T) {
	gen := func(variant string) (map[string][]byte, error) {
		base, err := desc.Parse("base", "protocol Base 200 {\n\t1 Old(a u32)\n\t2 Kept()\n}\n")
		if err != nil {
			t.Fatal(err)
		}
		v, err := desc.Parse("base_v", "import base\n\nprotocol Base_V : Base {\n"+variant+"}\n")
		if err != nil {
			t.Fatal(err)
		}
		set := &desc.Set{}
		set.Add(base, v)
		if err := set.Resolve(); err != nil {
			t.Fatal(err)
		}
		return Generate(set)
	}
	files, err := gen("\t1 New(b string)\n")
	if err != nil {
		t.Fatal(err)
	}
	src := string(files["basev/basev.go"])
	for _, want := range []string{"\tbase.BaseClient\n", "\tOld struct{}\n", "func ServeBaseVOwn(", "func NewBaseVClient(c rmc.Caller) BaseVClient {"} {
		if !strings.Contains(src, want) {
			t.Errorf("basev.go lacks %q", want)
		}
	}
	if strings.Contains(src, "Kept struct{}") {
		t.Error("basev.go hides the inherited Kept")
	}
	if _, err := gen("\t3 Kept()\n"); err == nil || !strings.Contains(err.Error(), "method Kept (3) has the name of inherited method 2") {
		t.Errorf("a variant method named as an inherited one: %v", err)
	}
}
