// Package desc holds NEX protocol descriptions: which protocols exist, their methods
// with parameters and return values, and the structures and enums those use, with
// the NEX-version and structure-revision gates that change a structure's fields.
//
// Descriptions are data. gamewire ships its own, written in the project's
// description language (.nexd files under defs/, see docs/nex.md "Protocol
// descriptions") from the public facts of NintendoClients' protocol definitions
// (github.com/kinnay/NintendoClients, nintendo/files/proto, MIT) and the
// nintendo-wiki protocol pages (github.com/PretendoNetwork/nintendo-wiki). Users can
// add NintendoClients' own .proto files at run time (LoadProtoDir).
//
// From a Set the generator (nex/desc/gen, run by go generate) writes Go codecs,
// handler interfaces and client stubs (nex/protocols/...), and the dissector and
// `gamewire nex call` encode and decode values by description at run time
// (package nex/desc/dyn).
package desc

import (
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/gamewire/gamewire/nex/types"
)

// Kind is the kind of a Type.
type Kind uint8

// The kinds of NEX values ("NEX common types" on nintendo-wiki).
const (
	KInvalid Kind = iota
	KUint8
	KUint16
	KUint32
	KUint64
	KSint8
	KSint16
	KSint32
	KSint64
	KFloat
	KDouble
	KBool
	KString
	KBuffer
	KQBuffer
	KPID
	KResult
	KDateTime
	KStationURL
	KVariant
	KQUUID
	KAnyData // AnyDataHolder: a Data-derived object named by its class name
	KData    // the Data base class itself (an empty structure level)
	KList
	KMap
	KStruct
	KEnum
)

// kindNames are the description language's names of the built-in kinds.
var kindNames = [...]string{
	KInvalid: "invalid", KUint8: "u8", KUint16: "u16", KUint32: "u32", KUint64: "u64",
	KSint8: "s8", KSint16: "s16", KSint32: "s32", KSint64: "s64", KFloat: "f32", KDouble: "f64",
	KBool: "bool", KString: "string", KBuffer: "buffer", KQBuffer: "qbuffer", KPID: "pid",
	KResult: "result", KDateTime: "datetime", KStationURL: "stationurl", KVariant: "variant",
	KQUUID: "quuid", KAnyData: "any", KData: "data", KList: "list", KMap: "map",
	KStruct: "struct", KEnum: "enum",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Integer reports whether k is a fixed-size integer kind.
func (k Kind) Integer() bool { return k >= KUint8 && k <= KSint64 }

// Size returns the wire size of fixed-size kinds (PID: 0, it depends on the
// settings), or 0.
func (k Kind) Size() int {
	switch k {
	case KUint8, KSint8, KBool:
		return 1
	case KUint16, KSint16:
		return 2
	case KUint32, KSint32, KFloat, KResult:
		return 4
	case KUint64, KSint64, KDouble, KDateTime:
		return 8
	case KQUUID:
		return 16
	}
	return 0
}

// Type is a value's type. Elem is the element of a List and the value of a Map, Key
// the key of a Map. Name is the structure or enum of Struct and Enum, and the base
// class an AnyData must derive from ("" for any Data). Struct and Enum point at the
// resolved declaration once the Set is resolved.
type Type struct {
	Kind   Kind
	Name   string
	Elem   *Type
	Key    *Type
	Struct *Struct
	Enum   *Enum
}

// String prints t in the description language.
func (t *Type) String() string {
	switch t.Kind {
	case KList:
		return "list<" + t.Elem.String() + ">"
	case KMap:
		return "map<" + t.Key.String() + ", " + t.Elem.String() + ">"
	case KStruct, KEnum:
		return t.Name
	case KAnyData:
		if t.Name != "" {
			return "any<" + t.Name + ">"
		}
		return "any"
	}
	return t.Kind.String()
}

// Cond is the condition under which a structure field (or a method parameter) is
// on the wire: the connection's NEX version lies in [NexMin, NexMax) (0 means
// unbounded) and the structure's revision is at least Revision. A field with the
// zero Cond is always present.
//
// A disputed gate (docs/nex.md "Disputed gates") has two lower bounds: NexMin,
// the consoles' (the nintendo-wiki's, and what real games send), and NCMin,
// NintendoClients'; the connection's types.Settings say which reading applies
// (Settings.NintendoClientsGates). NCMin is 0 when the gate is not disputed.
type Cond struct {
	NexMin, NexMax types.Version
	Revision       int
	NCMin          types.Version
}

// Always reports whether c holds for every version and revision.
func (c Cond) Always() bool { return c == Cond{} }

// Disputed reports whether c's lower bound differs between the consoles' reading
// and NintendoClients'.
func (c Cond) Disputed() bool { return c.NCMin != 0 }

// Reading returns c as one reading sees it: NintendoClients' lower bound when nc
// and c is disputed, else c's own; the result is not disputed.
func (c Cond) Reading(nc bool) Cond {
	if nc && c.NCMin != 0 {
		c.NexMin = c.NCMin
	}
	c.NCMin = 0
	return c
}

// NexHolds reports whether the NEX-version part of c holds for v in the
// consoles' reading.
func (c Cond) NexHolds(v types.Version) bool {
	return v >= c.NexMin && (c.NexMax == 0 || v < c.NexMax)
}

// Holds reports whether c holds for NEX version v and structure revision rev in
// the consoles' reading.
func (c Cond) Holds(v types.Version, rev int) bool { return c.NexHolds(v) && rev >= c.Revision }

// HoldsIn reports whether c holds for NEX version v and structure revision rev in
// the reading the settings choose.
func (c Cond) HoldsIn(st types.Settings, v types.Version, rev int) bool {
	return c.Reading(st.NintendoClientsGates()).Holds(v, rev)
}

// And returns the conjunction of two conditions.
func (c Cond) And(d Cond) Cond {
	out := c.Reading(false)
	if d.NexMin > out.NexMin {
		out.NexMin = d.NexMin
	}
	if d.NexMax != 0 && (out.NexMax == 0 || d.NexMax < out.NexMax) {
		out.NexMax = d.NexMax
	}
	if d.Revision > out.Revision {
		out.Revision = d.Revision
	}
	if c.Disputed() || d.Disputed() {
		nc := max(c.Reading(true).NexMin, d.Reading(true).NexMin)
		if nc != out.NexMin {
			out.NCMin = nc
		}
	}
	return out
}

// String writes c as the description language's `if` condition, in a form
// Parse reads back.
func (c Cond) String() string {
	var parts []string
	switch {
	case c.NexMin != 0 && c.NexMax != 0:
		parts = append(parts, "nex "+formatVersion(c.NexMin)+".."+formatVersion(c.NexMax)+c.disputeString())
	case c.NexMin != 0:
		parts = append(parts, "nex >= "+formatVersion(c.NexMin)+c.disputeString())
	case c.NexMax != 0:
		parts = append(parts, "nex < "+formatVersion(c.NexMax))
	}
	if c.Revision != 0 {
		parts = append(parts, fmt.Sprintf("rev >= %d", c.Revision))
	}
	return strings.Join(parts, " && ")
}

// disputeString is the NintendoClients bound of a disputed gate as the language
// writes it after the version term: " (nintendoclients: 3.5)".
func (c Cond) disputeString() string {
	if c.NCMin == 0 {
		return ""
	}
	return " (nintendoclients: " + formatVersion(c.NCMin) + ")"
}

// VersionString prints a NEX version the way descriptions write it: 3.5, 3.5.1, 4.
func VersionString(v types.Version) string {
	major, minor, patch := v/10000, v/100%100, v%100
	switch {
	case patch != 0:
		return fmt.Sprintf("%d.%d.%d", major, minor, patch)
	default:
		return fmt.Sprintf("%d.%d", major, minor)
	}
}

// Field is one field of a structure, or one parameter or return value of a method.
// Fields of a structure are in wire order; a name may appear more than once when
// different versions put it in different places (MatchmakeSession's progress_score
// in NEX 3 and NEX 4), always with the same type.
type Field struct {
	Name    string
	Type    *Type
	Default string // the default as written in the description ("" when none)
	Cond    Cond
	Doc     string
	Pos     Pos
}

// Struct is a structure declaration. Parent is the structure it derives from
// (written as its own structure level before this one), "" for none; a structure
// declared to derive from "Data" has Parent "Data" and is an AnyData class.
type Struct struct {
	Name   string
	Parent string
	Fields []*Field
	Doc    string
	File   *File
	Pos    Pos

	ParentStruct *Struct // resolved Parent, nil for none and for Data
}

// MaxRevision returns the revision a writer uses for s at NEX version v: the highest
// Revision among the conditions whose NEX range holds at v (0 when none), as
// NintendoClients' generated max_version does.
func (s *Struct) MaxRevision(v types.Version) int {
	rev := 0
	for _, f := range s.Fields {
		if f.Cond.Revision > rev && f.Cond.NexHolds(v) {
			rev = f.Cond.Revision
		}
	}
	return rev
}

// IsData reports whether s derives, directly or not, from Data.
func (s *Struct) IsData() bool {
	for p := s; p != nil; p = p.ParentStruct {
		if p.Parent == "Data" {
			return true
		}
	}
	return false
}

// Chain returns s and its ancestors, root first: the order of the structure levels
// on the wire.
func (s *Struct) Chain() []*Struct {
	var out []*Struct
	for p := s; p != nil; p = p.ParentStruct {
		out = append(out, p)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Enum is an enumeration of named integer values over an integer kind.
type Enum struct {
	Name   string
	Base   Kind
	Values []EnumValue
	Doc    string
	File   *File
	Pos    Pos
}

// EnumValue is one named value of an Enum.
type EnumValue struct {
	Name  string
	Value int64
	Doc   string
}

// ValueName returns the name of v, or "".
func (e *Enum) ValueName(v int64) string {
	for _, ev := range e.Values {
		if ev.Value == v {
			return ev.Name
		}
	}
	return ""
}

// Method is one method of a protocol. Name is the nintendo-wiki's CamelCase name
// (AutoMatchmake_Postpone); parameter and result names are NintendoClients'
// snake_case ones.
type Method struct {
	ID      uint32
	Name    string
	Params  []*Field
	Results []*Field
	// Opaque marks a method whose parameters and results the description does
	// not know (written `Name(...)`): its calls are named but not decoded.
	Opaque   bool
	Doc      string
	Protocol *Protocol // the protocol that declares it (a parent's for inherited methods)
	Pos      Pos
}

// Protocol is a protocol declaration. A variant names its Parent: it has the
// parent's id and methods, and its own methods add to them or replace the parent's
// method of the same id (MK8's MatchmakeExtension method 36).
type Protocol struct {
	Name       string
	ID         uint16
	Parent     string
	NoResponse bool // calls of this protocol are never answered (Notification)
	Methods    []*Method
	Doc        string
	File       *File
	Pos        Pos

	ParentProtocol *Protocol
}

// AllMethods returns the protocol's methods with its ancestors', by id; a method
// the protocol declares replaces an ancestor's of the same id.
func (p *Protocol) AllMethods() []*Method {
	byID := map[uint32]*Method{}
	for _, q := range p.chain() {
		for _, m := range q.Methods {
			byID[m.ID] = m
		}
	}
	out := make([]*Method, 0, len(byID))
	for _, m := range byID {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Method returns the method with the given id, the protocol's own or inherited, or nil.
func (p *Protocol) Method(id uint32) *Method {
	for q := p; q != nil; q = q.ParentProtocol {
		for _, m := range q.Methods {
			if m.ID == id {
				return m
			}
		}
	}
	return nil
}

// MethodByName returns the method with the given name (exact, then ignoring case
// and underscores), or nil.
func (p *Protocol) MethodByName(name string) *Method {
	all := p.AllMethods()
	for _, m := range all {
		if m.Name == name {
			return m
		}
	}
	key := foldName(name)
	for _, m := range all {
		if foldName(m.Name) == key {
			return m
		}
	}
	return nil
}

func (p *Protocol) chain() []*Protocol {
	var out []*Protocol
	for q := p; q != nil; q = q.ParentProtocol {
		out = append([]*Protocol{q}, out...)
	}
	return out
}

// Root returns the protocol at the top of p's parent chain: the one whose id p has.
func (p *Protocol) Root() *Protocol {
	q := p
	for q.ParentProtocol != nil {
		q = q.ParentProtocol
	}
	return q
}

func foldName(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// File is one description file: a family of protocols and the types they use.
type File struct {
	Name      string // the file's base name without extension: the family ("matchmaking")
	Path      string
	Doc       string
	Imports   []string
	Protocols []*Protocol
	Structs   []*Struct
	Enums     []*Enum
}

// Fields yields every field the file declares: its structures' fields, then its
// protocols' method parameters and results, in declaration order.
func (f *File) Fields() iter.Seq[*Field] {
	return func(yield func(*Field) bool) {
		for _, s := range f.Structs {
			for _, fl := range s.Fields {
				if !yield(fl) {
					return
				}
			}
		}
		for _, p := range f.Protocols {
			for _, m := range p.Methods {
				for _, fl := range m.Params {
					if !yield(fl) {
						return
					}
				}
				for _, fl := range m.Results {
					if !yield(fl) {
						return
					}
				}
			}
		}
	}
}

// Pos is a place in a description file.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }
