package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// walkCmds calls f for c and every command under it.
func walkCmds(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walkCmds(sub, f)
	}
}

// TestHelpExamplesUseCurrentFlags: every flag in a help example of a
// command ("  gamewire PATH ... --flag") is one of its flags, by its current
// name (not an alias, not deprecated).
func TestHelpExamplesUseCurrentFlags(t *testing.T) {
	t.Parallel()
	flagRE := regexp.MustCompile(`(?:^|\s|\[)--([a-z][a-z0-9-]*)`)
	root := newRootCmd()
	walkCmds(root, func(c *cobra.Command) {
		var target *cobra.Command // the command of the example being read
		for _, line := range strings.Split(c.Long, "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "  ") && strings.HasPrefix(trimmed, "gamewire "):
				var words []string
				for _, w := range strings.Fields(trimmed)[1:] {
					if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") || strings.ToLower(w) != w {
						break
					}
					words = append(words, w)
				}
				target, _, _ = root.Find(words)
			case strings.HasPrefix(line, "  ") && (strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, "--")):
			default:
				target = nil
			}
			if target == nil {
				continue
			}
			for _, m := range flagRE.FindAllStringSubmatch(trimmed, -1) {
				name := m[1]
				f := target.Flags().Lookup(name)
				if f == nil {
					f = target.InheritedFlags().Lookup(name)
				}
				switch {
				case f == nil:
					t.Errorf("%s: a help example uses --%s, which %s does not have:\n  %s", c.CommandPath(), name, target.CommandPath(), trimmed)
				case f.Deprecated != "" || f.Name != name:
					t.Errorf("%s: a help example uses --%s, an old name:\n  %s", c.CommandPath(), name, trimmed)
				}
			}
		}
	})
}

// TestVocabulary: -v is --verbose wherever there is one; --server names the
// server of every client; --format text|json is on every command that
// prints records or tables; --game is a preset wherever it is not deprecated.
func TestVocabulary(t *testing.T) {
	t.Parallel()
	walkCmds(newRootCmd(), func(c *cobra.Command) {
		if f := c.Flags().Lookup("verbose"); f != nil && f.Shorthand != "v" {
			t.Errorf("%s --verbose has shorthand %q, want v", c.CommandPath(), f.Shorthand)
		}
		if f := c.Flags().Lookup("game"); f != nil && f.Deprecated == "" && !f.Hidden && !strings.Contains(f.Usage, "gamewire games") && !strings.Contains(f.Usage, "ENL") {
			t.Errorf("%s --game is not a game preset: %q", c.CommandPath(), f.Usage)
		}
	})
	for _, path := range [][]string{
		{"games"}, {"accounts", "list"}, {"login"}, {"connect"}, {"nex", "matchmake"}, {"nex", "ranking", "upload"},
		{"nex", "ranking", "get"}, {"nex", "datastore", "put"}, {"nex", "datastore", "get"}, {"pipboy", "decode"},
		{"decode"}, {"pia", "listen"}, {"pia", "send"},
	} {
		c := findCmd(t, path...)
		if f := c.Flags().Lookup("format"); f == nil || f.Value.Set("json") != nil {
			t.Errorf("gamewire %s: no --format text|json", strings.Join(path, " "))
		}
	}
	for _, path := range [][]string{
		{"login"}, {"connect"}, {"nex", "matchmake"}, {"nex", "ranking", "upload"}, {"nex", "ranking", "get"},
		{"nex", "datastore", "put"}, {"nex", "datastore", "get"}, {"pipboy", "connect"}, {"pipboy", "relay"}, {"pipboy", "dashboard"},
	} {
		if findCmd(t, path...).Flags().Lookup("server") == nil {
			t.Errorf("gamewire %s: no --server", strings.Join(path, " "))
		}
	}
}

// TestVocabularyMistakes: a mistyped flag gets a suggestion, a missing
// argument is named, `help` with an unknown topic fails, the deprecated
// forms still work and say what replaces them, and the server given twice
// differently is refused.
func TestVocabularyMistakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--acess-key", "x"}, 1, "unknown flag: --acess-key (did you mean --access-key?)"},
		{[]string{"games", "--formt", "json"}, 1, "did you mean --format?"},
		{[]string{"nex", "datastore", "get"}, 1, "missing ID (usage: gamewire nex datastore get ID"},
		{[]string{"help", "serv"}, 1, `unknown help topic "serv" (did you mean serve?)`},
		{[]string{"help", "nex", "rankin"}, 1, `unknown help topic "nex rankin"`},
		{[]string{"login", "127.0.0.1:1", "--server", "127.0.0.1:2", "--user", "u", "--password", "p"}, 1, "the server is given twice"},
		{[]string{"pipboy", "relay", "--game", "127.0.0.1:1", "--listen", "127.0.0.1:99999"}, 1, "note: --game is deprecated: use --server"},
		{[]string{"nex", "datastore", "get", "abc", "--user", "u", "--password", "p"}, 1, `data id "abc" is not a number`},
	} {
		code, stdout, stderr := runMain(t, c.args...)
		if code != c.code || !strings.Contains(stderr+stdout, c.want) {
			t.Errorf("gamewire %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
	if code, stdout, _ := runMain(t, "help", "serve"); code != 0 || !strings.Contains(stdout, "gamewire serve") {
		t.Errorf("help serve: exit %d\n%s", code, stdout)
	}
	// The older positional form works, with a note.
	_, _, stderr := runMain(t, "login", freeUDPAddr(t), "--user", "u", "--password", "p", "--timeout", "1s")
	if !strings.Contains(stderr, "note: gamewire login ADDR (the server as an argument) is deprecated: use --server") {
		t.Errorf("login ADDR: no deprecation note:\n%s", stderr)
	}
}

// TestGamesOutput: games -v keeps the table narrow (sources under the rows,
// not in the NAME column); --format json prints one object per game.
func TestGamesOutput(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "games", "-v")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "  ") && utf8.RuneCountInString(line) > 100 {
			t.Errorf("a table row %d columns wide:\n%s", len(line), line)
		}
	}
	if !strings.Contains(out, "  source: ") {
		t.Errorf("games -v without sources:\n%s", out)
	}
	out, err = runCLI(t, "games", "--format", "json", "terraria")
	if err != nil {
		t.Fatal(err)
	}
	var g struct{ Name, Dialect, AccessKey string }
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &g); err != nil || g.Name != "Terraria" || g.Dialect != "nex-v1" {
		t.Errorf("games --format json terraria: %+v, %v\n%s", g, err, out)
	}
}
