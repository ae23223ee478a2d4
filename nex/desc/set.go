package desc

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrResolve is wrapped by every error of Set.Resolve: a name that names nothing, a
// duplicate, a cycle.
var ErrResolve = errors.New("desc: unresolved description")

// Set is a resolved collection of description files: every type name points at its
// declaration, every variant at its parent. The zero Set is empty; add files with
// Add and call Resolve before use.
type Set struct {
	files    []*File
	byName   map[string]*File
	resolved bool
}

// Add adds files to the set. A file whose name is already in the set replaces it
// (a user's --proto-dir file of the same family overrides the built-in one). The set
// must be resolved again.
func (s *Set) Add(files ...*File) {
	if s.byName == nil {
		s.byName = map[string]*File{}
	}
	for _, f := range files {
		if old, ok := s.byName[f.Name]; ok {
			for i, g := range s.files {
				if g == old {
					s.files = append(s.files[:i], s.files[i+1:]...)
					break
				}
			}
		}
		s.byName[f.Name] = f
		s.files = append(s.files, f)
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].Name < s.files[j].Name })
	s.resolved = false
}

// Files returns the set's files by name.
func (s *Set) Files() []*File { return s.files }

// File returns the file of the given family name, or nil.
func (s *Set) File(name string) *File { return s.byName[name] }

// scope returns the files a name in f is looked up in: f, then its imports, depth
// first, each once.
func (s *Set) scope(f *File) []*File {
	var out []*File
	seen := map[*File]bool{}
	var walk func(*File)
	walk = func(f *File) {
		if f == nil || seen[f] {
			return
		}
		seen[f] = true
		out = append(out, f)
		for _, imp := range f.Imports {
			walk(s.byName[imp])
		}
	}
	walk(f)
	return out
}

// LookupType finds the structure or enum name as seen from file f: f's own
// declarations first, then its imports'. A name qualified with a file
// ("matchmaking.Gathering") looks only there.
func (s *Set) LookupType(f *File, name string) (*Struct, *Enum) {
	files := s.scope(f)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		files, name = []*File{s.byName[name[:i]]}, name[i+1:]
		if files[0] == nil {
			return nil, nil
		}
	}
	for _, g := range files {
		for _, st := range g.Structs {
			if st.Name == name {
				return st, nil
			}
		}
		for _, e := range g.Enums {
			if e.Name == name {
				return nil, e
			}
		}
	}
	return nil, nil
}

// Struct finds a structure by name anywhere in the set (a qualified name
// "file.Name" picks one file); with several of that name, the one of a file without
// a parent protocol family (the base file) is preferred, then the first by file name.
func (s *Set) Struct(name string) *Struct {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		st, _ := s.LookupType(s.byName[name[:i]], name)
		return st
	}
	for _, f := range s.files {
		for _, st := range f.Structs {
			if st.Name == name {
				return st
			}
		}
	}
	return nil
}

// Protocols returns every protocol of the set, by id and then name (roots before
// their variants).
func (s *Set) Protocols() []*Protocol {
	var out []*Protocol
	for _, f := range s.files {
		out = append(out, f.Protocols...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if (a.Parent == "") != (b.Parent == "") {
			return a.Parent == ""
		}
		return a.QualifiedName() < b.QualifiedName()
	})
	return out
}

// ProtocolsByID returns the protocols with the given id, roots first.
func (s *Set) ProtocolsByID(id uint16) []*Protocol {
	var out []*Protocol
	for _, p := range s.Protocols() {
		if p.ID == id {
			out = append(out, p)
		}
	}
	return out
}

// ProtocolByID returns the root protocol of an id (the one without a parent), or nil.
func (s *Set) ProtocolByID(id uint16) *Protocol {
	for _, p := range s.ProtocolsByID(id) {
		if p.ParentProtocol == nil || p.ParentProtocol.ID != p.ID {
			return p
		}
	}
	return nil
}

// Protocol finds a protocol by name: "file.Name" exactly, else a unique name across
// the set (case and underscores ignored when nothing matches exactly). It reports
// an ambiguity as an error listing the candidates.
func (s *Set) Protocol(name string) (*Protocol, error) {
	var exact, folded []*Protocol
	for _, p := range s.Protocols() {
		switch {
		case p.QualifiedName() == name || p.Name == name:
			exact = append(exact, p)
		case foldName(p.Name) == foldName(name) || foldName(p.QualifiedName()) == foldName(name):
			folded = append(folded, p)
		}
	}
	if len(exact) == 0 {
		exact = folded
	}
	switch len(exact) {
	case 0:
		return nil, fmt.Errorf("no protocol %q (gamewire nex protocols lists them)", name)
	case 1:
		return exact[0], nil
	}
	names := make([]string, len(exact))
	for i, p := range exact {
		names[i] = p.QualifiedName()
	}
	return nil, fmt.Errorf("protocol %q is ambiguous: %s", name, strings.Join(names, ", "))
}

// QualifiedName returns "file.Name".
func (p *Protocol) QualifiedName() string {
	if p.File == nil {
		return p.Name
	}
	return p.File.Name + "." + p.Name
}

// Resolve links every name of the set and checks it: types name a structure or an
// enum in scope, parents exist and form no cycle, variants have a parent protocol,
// method ids are unique per protocol. It reports every problem found, joined.
func (s *Set) Resolve() error {
	var errs []error
	bad := func(pos Pos, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrResolve, pos, fmt.Sprintf(format, args...)))
	}
	for _, f := range s.files {
		for _, imp := range f.Imports {
			if s.byName[imp] == nil {
				bad(Pos{File: f.Path, Line: 1}, "import %q: no such description file", imp)
			}
		}
		seen := map[string]Pos{}
		for _, st := range f.Structs {
			if p, dup := seen[st.Name]; dup {
				bad(st.Pos, "%s declared again (first at %s)", st.Name, p)
			}
			seen[st.Name] = st.Pos
		}
		for _, e := range f.Enums {
			if p, dup := seen[e.Name]; dup {
				bad(e.Pos, "%s declared again (first at %s)", e.Name, p)
			}
			seen[e.Name] = e.Pos
		}
	}
	var resolveType func(f *File, t *Type, pos Pos, what string)
	resolveType = func(f *File, t *Type, pos Pos, what string) {
		switch t.Kind {
		case KList:
			resolveType(f, t.Elem, pos, what)
		case KMap:
			resolveType(f, t.Key, pos, what)
			resolveType(f, t.Elem, pos, what)
		case KStruct, KEnum:
			st, e := s.LookupType(f, t.Name)
			switch {
			case st != nil:
				t.Kind, t.Struct, t.Enum = KStruct, st, nil
			case e != nil:
				t.Kind, t.Enum, t.Struct = KEnum, e, nil
			case t.Name == "Data":
				t.Kind = KData
			default:
				bad(pos, "%s: type %s is not declared in %s or its imports", what, t.Name, f.Name)
			}
		case KAnyData:
			if t.Name != "" && t.Name != "Data" {
				if st, _ := s.LookupType(f, t.Name); st == nil {
					bad(pos, "%s: any<%s>: no structure %s", what, t.Name, t.Name)
				} else {
					t.Struct = st
				}
			}
		}
	}
	for _, f := range s.files {
		for _, st := range f.Structs {
			st.ParentStruct = nil
			if st.Parent != "" && st.Parent != "Data" {
				parent, _ := s.LookupType(f, st.Parent)
				if parent == nil {
					bad(st.Pos, "struct %s: parent %s is not a structure in scope", st.Name, st.Parent)
				}
				st.ParentStruct = parent
			}
			types := map[string]string{}
			for _, fl := range st.Fields {
				resolveType(f, fl.Type, fl.Pos, st.Name+"."+fl.Name)
				if prev, ok := types[fl.Name]; ok && prev != fl.Type.String() {
					bad(fl.Pos, "struct %s: field %s is %s here and %s before", st.Name, fl.Name, fl.Type, prev)
				}
				types[fl.Name] = fl.Type.String()
			}
		}
	}
	for _, f := range s.files {
		for _, st := range f.Structs {
			n := 0
			for p := st.ParentStruct; p != nil; p = p.ParentStruct {
				if n++; n > 64 || p == st {
					bad(st.Pos, "struct %s: its parents form a cycle", st.Name)
					st.ParentStruct = nil
					break
				}
			}
		}
	}
	for _, f := range s.files {
		for _, p := range f.Protocols {
			p.ParentProtocol = nil
			if p.Parent != "" {
				parent := s.lookupProtocol(f, p.Parent, p)
				if parent == nil {
					bad(p.Pos, "protocol %s: parent %s is not declared in %s or its imports", p.Name, p.Parent, f.Name)
					continue
				}
				p.ParentProtocol = parent
			}
			ids := map[uint32]string{}
			for _, m := range p.Methods {
				if prev, dup := ids[m.ID]; dup {
					bad(m.Pos, "protocol %s: method id %d used by %s and %s", p.Name, m.ID, prev, m.Name)
				}
				ids[m.ID] = m.Name
				for _, fl := range m.Params {
					resolveType(f, fl.Type, fl.Pos, p.Name+"."+m.Name+"("+fl.Name+")")
				}
				for _, fl := range m.Results {
					resolveType(f, fl.Type, fl.Pos, p.Name+"."+m.Name+" -> "+fl.Name)
				}
			}
		}
	}
	// Variants take their root's id; a cycle of parents is an error.
	for _, f := range s.files {
		for _, p := range f.Protocols {
			n := 0
			q := p
			for q.ParentProtocol != nil {
				if n++; n > 64 || q.ParentProtocol == p {
					bad(p.Pos, "protocol %s: its parents form a cycle", p.Name)
					p.ParentProtocol = nil
					break
				}
				q = q.ParentProtocol
			}
			if p.ParentProtocol != nil {
				p.ID = q.ID
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	s.resolved = true
	return nil
}

// lookupProtocol finds a protocol named name as seen from f (f, then its imports),
// not self: a variant may share its parent's name (one game's Ranking2 : Ranking2).
func (s *Set) lookupProtocol(f *File, name string, self *Protocol) *Protocol {
	files := s.scope(f)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		files, name = []*File{s.byName[name[:i]]}, name[i+1:]
		if files[0] == nil {
			return nil
		}
	}
	for _, g := range files {
		for _, p := range g.Protocols {
			if p.Name == name && p != self {
				return p
			}
		}
	}
	return nil
}

// Resolved reports whether the set was resolved since its last change.
func (s *Set) Resolved() bool { return s.resolved }

// Count returns the number of protocols, methods (each protocol's own declarations)
// and structures in the set.
func (s *Set) Count() (protocols, methods, structs int) {
	for _, f := range s.files {
		protocols += len(f.Protocols)
		for _, p := range f.Protocols {
			methods += len(p.Methods)
		}
		structs += len(f.Structs)
	}
	return
}
