package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The CLI's shared vocabulary (docs/cli.md, "Vocabulary"): the server
// address is --server everywhere, -v is --verbose everywhere, --format
// text|json on every command that prints records, and the mistakes a user
// makes (a mistyped flag, a missing argument, an unknown help topic) are
// answered with what was meant.

// addServerFlag adds --server, where a client finds the server, to cmd.
func addServerFlag(cmd *cobra.Command, dst *string, def, usage string) {
	cmd.Flags().StringVar(dst, "server", def, usage)
}

// serverFromArgs returns the server address a client command was given: its
// --server, or the positional ADDR of the older form, which still works with
// a note on stderr. Both at once must agree.
func serverFromArgs(cmd *cobra.Command, server string, args []string) (string, error) {
	if len(args) == 0 {
		return server, nil
	}
	if f := cmd.Flags().Lookup("server"); f != nil && f.Changed && server != args[0] {
		return "", fmt.Errorf("the server is given twice, as %s and --server %s: give --server only", args[0], server)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "note: %s ADDR (the server as an argument) is deprecated: use --server %s\n", cmd.CommandPath(), args[0])
	return args[0], nil
}

// withServer is the RunE of a client command: run with the server address
// serverFromArgs finds (--server, or the older positional ADDR); name
// prefixes its error.
func withServer(name string, server *string, run func(*cobra.Command, string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		addr, err := serverFromArgs(cmd, *server, args)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return run(cmd, addr)
	}
}

// formatFlag is --format text|json for a command that prints records.
type formatFlag string

// addFormatFlag adds --format to cmd, text by default.
func addFormatFlag(cmd *cobra.Command, f *formatFlag) {
	*f = "text"
	cmd.Flags().Var(f, "format", "output: text, or json (one JSON object per record and line)")
}

func (f *formatFlag) String() string { return string(*f) }
func (f *formatFlag) Type() string   { return "text|json" }

// Set implements pflag.Value: text or json.
func (f *formatFlag) Set(s string) error {
	switch s {
	case "text", "json":
		*f = formatFlag(s)
		return nil
	}
	return fmt.Errorf("%q: text or json", s)
}

// json reports whether --format json was chosen.
func (f formatFlag) json() bool { return f == "json" }

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// suggestFlags makes an unknown flag's error name the flags of the command
// that are close to it ("unknown flag: --acess-key (did you mean
// --access-key?)").
func suggestFlags(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		if strings.HasPrefix(msg, "unknown shorthand flag: ") {
			return fmt.Errorf("%w (%s --help lists its flags)", err, cmd.CommandPath())
		}
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	var near []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		if d := editDistance(name, f.Name); d <= max(2, len(name)/4) || strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) {
			near = append(near, "--"+f.Name)
		}
	})
	slices.Sort(near)
	if len(near) > 0 {
		return fmt.Errorf("%w (did you mean %s?)", err, strings.Join(near, " or "))
	}
	return fmt.Errorf("%w (%s --help lists its flags)", err, cmd.CommandPath())
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// explainArgs makes the argument errors of c and every command under it
// say what is missing, from the command's usage line: "missing ADDR (usage:
// gamewire login ADDR [flags])" instead of "accepts 1 arg(s), received 0".
func explainArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		explainArgs(sub)
	}
	orig := c.Args
	if orig == nil || c.Annotations[groupAnnotation] != "" {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		err := orig(cmd, args)
		if err == nil {
			return nil
		}
		var required []string
		for _, w := range strings.Fields(cmd.Use)[1:] {
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
				break
			}
			required = append(required, w)
		}
		if len(args) < len(required) {
			return fmt.Errorf("missing %s (usage: %s)", strings.Join(required[len(args):], " "), cmd.UseLine())
		}
		return fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())
	}
}

// errUnknownTopic is returned by `gamewire help TOPIC` for a topic that is no
// command.
var errUnknownTopic = errors.New("unknown help topic")

// newHelpCmd is `gamewire help [COMMAND]...`: cobra's help, except that an
// unknown topic is an error (exit status 1) naming the closest commands.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]...",
		Short: "Help about any command",
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				msg := fmt.Sprintf("%v %q", errUnknownTopic, strings.Join(args, " "))
				parent := root
				if target != nil {
					parent = target
				}
				if parent.SuggestionsMinimumDistance <= 0 {
					parent.SuggestionsMinimumDistance = 2
				}
				last := args[len(args)-1]
				if len(rest) > 0 {
					last = rest[0]
				}
				if s := parent.SuggestionsFor(last); len(s) > 0 {
					msg += " (did you mean " + strings.Join(s, " or ") + "?)"
				}
				return fmt.Errorf("%s; gamewire help lists the commands", msg)
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}

// deprecateFlag hides flag name of c (an older spelling kept working) and
// makes c say on stderr, when it is used, what replaces it. Unlike pflag's
// MarkDeprecated the note goes to stderr, never into output a script reads.
// Call it after c.RunE is set.
func deprecateFlag(c *cobra.Command, name, instead string) {
	f := c.Flags().Lookup(name)
	if f == nil {
		panic("deprecateFlag: no flag " + name)
	}
	f.Hidden = true
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed(name) {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: --%s is deprecated: %s\n", name, instead)
		}
		return run(cmd, args)
	}
}
