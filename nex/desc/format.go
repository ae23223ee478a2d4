package desc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/nex/types"
)

// formatLineWidth is the length beyond which Format writes a method's parameters
// one a line.
const formatLineWidth = 100

// Format prints f in the description language: Parse(f.Name, Format(f)) describes
// the same protocols, structures and enums with the same documentation. Fields of a
// structure that share a condition are grouped in one `if` block; a variant is
// written with its parent, not its resolved id.
func Format(f *File) string {
	var b strings.Builder
	if f.Doc != "" {
		writeDoc(&b, "", f.Doc)
		b.WriteString("\n")
	}
	for _, imp := range f.Imports {
		fmt.Fprintf(&b, "import %s\n", imp)
	}
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
	}
	for _, e := range f.Enums {
		sep()
		writeDoc(&b, "", e.Doc)
		fmt.Fprintf(&b, "enum %s %s {\n", e.Name, e.Base)
		for _, v := range e.Values {
			writeDoc(&b, "\t", v.Doc)
			fmt.Fprintf(&b, "\t%s = %d\n", v.Name, v.Value)
		}
		b.WriteString("}\n")
	}
	for _, s := range f.Structs {
		sep()
		writeDoc(&b, "", s.Doc)
		b.WriteString("struct " + s.Name)
		if s.Parent != "" {
			b.WriteString(" : " + s.Parent)
		}
		b.WriteString(" {\n")
		for i := 0; i < len(s.Fields); {
			c := s.Fields[i].Cond
			j := i
			for j < len(s.Fields) && s.Fields[j].Cond == c {
				j++
			}
			indent := "\t"
			if !c.Always() {
				fmt.Fprintf(&b, "\tif %s {\n", c)
				indent = "\t\t"
			}
			for _, fl := range s.Fields[i:j] {
				writeDoc(&b, indent, fl.Doc)
				b.WriteString(indent + formatField(fl) + "\n")
			}
			if !c.Always() {
				b.WriteString("\t}\n")
			}
			i = j
		}
		b.WriteString("}\n")
	}
	for _, p := range f.Protocols {
		sep()
		writeDoc(&b, "", p.Doc)
		if p.Parent != "" {
			fmt.Fprintf(&b, "protocol %s : %s {\n", p.Name, p.Parent)
		} else {
			fmt.Fprintf(&b, "protocol %s %d {\n", p.Name, p.ID)
		}
		if p.NoResponse {
			b.WriteString("\tnoresponse\n")
		}
		for _, m := range p.Methods {
			writeDoc(&b, "\t", m.Doc)
			b.WriteString(formatMethod(m))
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func writeDoc(b *strings.Builder, indent, doc string) {
	if doc == "" {
		return
	}
	for _, line := range strings.Split(doc, "\n") {
		if line == "" {
			b.WriteString(indent + "//\n")
		} else {
			b.WriteString(indent + "// " + line + "\n")
		}
	}
}

func formatField(f *Field) string {
	s := f.Name + " " + f.Type.String()
	if f.Default != "" {
		s += " = " + f.Default
	}
	return s
}

// formatParam writes a method parameter or result, with its gate.
func formatParam(f *Field) string {
	s := formatField(f)
	if !f.Cond.Always() {
		s += " if " + f.Cond.String()
	}
	return s
}

// formatMethod writes one method line (or lines, when long or documented), with
// its leading tab and final newline.
func formatMethod(m *Method) string {
	head := "\t" + strconv.FormatUint(uint64(m.ID), 10) + " " + m.Name
	if m.Opaque {
		return head + "(...)\n"
	}
	oneLine := func(list []*Field) string {
		parts := make([]string, len(list))
		for i, f := range list {
			parts[i] = formatParam(f)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	documented := func(list []*Field) bool {
		for _, f := range list {
			if f.Doc != "" {
				return true
			}
		}
		return false
	}
	multi := func(list []*Field) string {
		var b strings.Builder
		b.WriteString("(\n")
		for _, f := range list {
			writeDoc(&b, "\t\t", f.Doc)
			b.WriteString("\t\t" + formatParam(f) + ",\n")
		}
		b.WriteString("\t)")
		return b.String()
	}
	// Each list stays on one line when it fits and has no documented entry.
	out := head
	if p := oneLine(m.Params); len(out)+len(p) <= formatLineWidth && !documented(m.Params) {
		out += p
	} else {
		out += multi(m.Params)
	}
	if len(m.Results) > 0 {
		last := out[strings.LastIndexByte(out, '\n')+1:]
		if r := oneLine(m.Results); len(last)+4+len(r) <= formatLineWidth && !documented(m.Results) {
			out += " -> " + r
		} else {
			out += " -> " + multi(m.Results)
		}
	}
	return out + "\n"
}

// formatVersion writes v as ParseVersion reads it back: 3.5, 3.5.1, or the plain
// number for versions past 99.99.99.
func formatVersion(v types.Version) string {
	if v/10000 > 99 {
		return strconv.FormatUint(uint64(v), 10)
	}
	return VersionString(v)
}
