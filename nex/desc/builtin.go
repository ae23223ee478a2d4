package desc

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// defs holds gamewire's own descriptions, one file per protocol family.
//
//go:embed defs/*.nexd
var defs embed.FS

var builtin = sync.OnceValues(func() (*Set, error) {
	files, err := ParseFS(defs, "defs")
	if err != nil {
		return nil, err
	}
	s := new(Set)
	s.Add(files...)
	if err := s.Resolve(); err != nil {
		return nil, err
	}
	return s, nil
})

// Builtin returns the set of descriptions gamewire ships (defs/*.nexd), parsed and
// resolved once. Callers must not modify it; Clone it to add files.
func Builtin() (*Set, error) { return builtin() }

// ParseFS parses every .nexd file of dir in fsys.
func ParseFS(fsys fs.FS, dir string) ([]*File, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []*File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".nexd") {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		f, err := Parse(strings.TrimSuffix(e.Name(), ".nexd"), string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, f)
	}
	return out, nil
}
