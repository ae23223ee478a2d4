package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex/desc"
)

// `gamewire nex protocols [NAME]`: the described NEX protocols, one method a line.

func newNEXProtocolsCmd(descs *nexDescOptions) *cobra.Command {
	var format string
	var all bool
	cmd := &cobra.Command{
		Use:   "protocols [NAME]",
		Short: "List the described NEX protocols and their methods, one method a line",
		Long: `protocols lists every method of gamewire's NEX protocol descriptions (and of
--proto-dir's NintendoClients .proto files), one a line:

  Protocol(id).Method(id)(param type, ...) -> (result type, ...)

Parameter and result names are NintendoClients' (snake_case); method names the
nintendo-wiki's. (...) marks a method whose parameters are not known. A game's
variant (MatchmakeExtension_MK8) lists the methods it adds or replaces; --all lists
its inherited ones too. NAME selects a protocol (MatchmakeExtension, or
matchmaking_mk8.MatchmakeExtension_MK8), a family (matchmaking: its file of
descriptions) or a protocol id (109). The footer counts what was listed.

--format nexd prints the selected families in gamewire's description language
instead (one family's output is a FAMILY.nexd file): with --proto-dir, a first
draft of a description from a NintendoClients .proto (docs/nex.md "Adding a
protocol or a game's variant").

  gamewire nex protocols
  gamewire nex protocols DataStore --format json
  gamewire nex protocols --proto-dir ~/NintendoClients/nintendo/files/proto
  gamewire nex protocols --proto-dir DIR --format nexd matchmaking_mk8 > matchmaking_mk8.nexd`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" && format != "nexd" {
				return fmt.Errorf("nex protocols: --format must be text, json or nexd, not %q", format)
			}
			set, err := descs.set()
			if err != nil {
				return fmt.Errorf("nex protocols: %w", err)
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			protos, files, err := selectProtocols(set, name)
			if err != nil {
				return fmt.Errorf("nex protocols: %w", err)
			}
			if format == "nexd" {
				for i, f := range files {
					if i > 0 {
						fmt.Fprintln(cmd.OutOrStdout())
					}
					if _, err := io.WriteString(cmd.OutOrStdout(), desc.Format(f)); err != nil {
						return err
					}
				}
				return nil
			}
			l := newProtocolListing(protos, files, all)
			if format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(l)
			}
			return l.writeText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text (one method a line), json, or nexd (the families in gamewire's description language)")
	cmd.Flags().BoolVar(&all, "all", false, "list a variant's inherited methods too")
	return cmd
}

// selectProtocols returns the protocols NAME selects and the families they come
// from: all of them for "", a family by its name, the protocols of an id, or one
// protocol by name.
func selectProtocols(set *desc.Set, name string) ([]*desc.Protocol, []*desc.File, error) {
	var protos []*desc.Protocol
	switch id, err := strconv.ParseUint(name, 10, 16); {
	case name == "":
		protos = set.Protocols()
	case set.File(name) != nil:
		for _, p := range set.Protocols() {
			if p.File == set.File(name) {
				protos = append(protos, p)
			}
		}
		return protos, []*desc.File{set.File(name)}, nil
	case err == nil:
		protos = set.ProtocolsByID(uint16(id))
		if len(protos) == 0 {
			return nil, nil, fmt.Errorf("no protocol has id %d", id)
		}
	default:
		p, err := set.Protocol(name)
		if err != nil {
			return nil, nil, err
		}
		protos = []*desc.Protocol{p}
	}
	if name == "" {
		return protos, set.Files(), nil
	}
	var files []*desc.File
	seen := map[*desc.File]bool{}
	for _, p := range protos {
		if !seen[p.File] {
			seen[p.File] = true
			files = append(files, p.File)
		}
	}
	return protos, files, nil
}

// protocolListing is what `nex protocols` prints; its JSON form is the --format
// json output.
type protocolListing struct {
	Protocols []listedProtocol `json:"protocols"`
	Counts    listingCounts    `json:"counts"`
}

type listingCounts struct {
	Protocols  int `json:"protocols"`
	Methods    int `json:"methods"`
	Structures int `json:"structures"`
}

type listedProtocol struct {
	Name       string         `json:"name"`
	Family     string         `json:"family"`
	ID         uint16         `json:"id"`
	Parent     string         `json:"parent,omitempty"`
	NoResponse bool           `json:"noresponse,omitempty"`
	Methods    []listedMethod `json:"methods"`
}

type listedMethod struct {
	ID uint32 `json:"id"`
	// Name is the method's name; Protocol the protocol declaring it when it is
	// not the listed one (an inherited method with --all).
	Name     string        `json:"name"`
	Protocol string        `json:"protocol,omitempty"`
	Opaque   bool          `json:"opaque,omitempty"`
	Params   []listedField `json:"params"`
	Results  []listedField `json:"results"`
}

type listedField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func newProtocolListing(protos []*desc.Protocol, files []*desc.File, all bool) *protocolListing {
	l := &protocolListing{Protocols: []listedProtocol{}}
	fields := func(list []*desc.Field) []listedField {
		out := make([]listedField, len(list))
		for i, f := range list {
			out[i] = listedField{Name: f.Name, Type: f.Type.String()}
		}
		return out
	}
	for _, p := range protos {
		lp := listedProtocol{Name: p.Name, Family: p.File.Name, ID: p.ID, Parent: p.Parent, NoResponse: p.NoResponse, Methods: []listedMethod{}}
		methods := p.Methods
		if all {
			methods = p.AllMethods()
		}
		for _, m := range methods {
			lm := listedMethod{ID: m.ID, Name: m.Name, Opaque: m.Opaque, Params: fields(m.Params), Results: fields(m.Results)}
			if m.Protocol != p {
				lm.Protocol = m.Protocol.Name
			}
			lp.Methods = append(lp.Methods, lm)
		}
		l.Counts.Methods += len(lp.Methods)
		l.Protocols = append(l.Protocols, lp)
	}
	l.Counts.Protocols = len(l.Protocols)
	for _, f := range files {
		l.Counts.Structures += len(f.Structs)
	}
	return l
}

func (l *protocolListing) writeText(w io.Writer) error {
	var b strings.Builder
	list := func(fs []listedField) string {
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = f.Name + " " + f.Type
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	for _, p := range l.Protocols {
		for _, m := range p.Methods {
			fmt.Fprintf(&b, "%s(%d).%s(%d)", p.Name, p.ID, m.Name, m.ID)
			if m.Opaque {
				b.WriteString("(...)")
			} else {
				b.WriteString(list(m.Params) + " -> " + list(m.Results))
			}
			if m.Protocol != "" {
				b.WriteString("  [" + m.Protocol + "]")
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "%d protocols, %d methods, %d structures\n", l.Counts.Protocols, l.Counts.Methods, l.Counts.Structures)
	_, err := io.WriteString(w, b.String())
	return err
}
