package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/nex/games"
)

// newGamesCmd is `gamewire games [FILTER]`: the built-in table of games
// (nex/games), which --game of serve, login, connect and decode reads.
func newGamesCmd() *cobra.Command {
	var verbose bool
	var format formatFlag
	cmd := &cobra.Command{
		Use:   "games [FILTER]",
		Short: "List the games gamewire knows (game server id, access key, dialect, NEX version, source)",
		Long: `games lists the built-in table of NEX games: name, platform, game server id, access
key, PRUDP dialect, NEX version where published, and where each row's values come
from. FILTER keeps the rows whose name, platform, id, key or dialect contains it.

A revival starts from a game: serve, login, connect and decode take --game NAME|ID
and read the access key and dialect from this table (flags given explicitly win);
serve also gives the game's NEX version to Ranking and DataStore.

  gamewire games [FILTER] [-v] [--format json]
  gamewire serve --game terraria`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runGames(cmd, args, verbose, format) },
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also print each row's source and notes")
	addFormatFlag(cmd, &format)
	return cmd
}

// hookGame adds --game to decode, which reads the access key of the game
// (the dialect it recognises from the packets, or takes from --dialect).
func (o *decodeOptions) hookGame(cmd *cobra.Command) {
	registerGameFlag(cmd.Flags(), &o.game)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if o.game == "" || cmd.Flags().Changed("access-key") {
			return nil
		}
		g, err := games.Find(o.game)
		if err != nil {
			return fmt.Errorf("decode: --game: %w", err)
		}
		o.accessKey = g.AccessKey
		return nil
	}
}

func runGames(cmd *cobra.Command, args []string, verbose bool, format formatFlag) error {
	filter := ""
	if len(args) == 1 {
		filter = args[0]
	}
	list := games.Filter(filter)
	if len(list) == 0 {
		return fmt.Errorf("games: none matches %q", filter)
	}
	out := cmd.OutOrStdout()
	if format.json() {
		for _, g := range list {
			rec := map[string]any{"name": g.Name, "platform": g.Platform, "server_id": g.ID(), "access_key": g.AccessKey,
				"dialect": fmt.Sprint(g.Dialect), "nex": g.Version()}
			if verbose {
				rec["source"], rec["note"] = g.Source, g.Note
			}
			if err := writeJSON(out, rec); err != nil {
				return err
			}
		}
		return nil
	}
	// The table is aligned on its own rows; -v's source and note lines go
	// under each row afterwards, so that a long source does not widen the
	// NAME column.
	var table strings.Builder
	w := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tPLATFORM\tSERVER ID\tACCESS KEY\tDIALECT\tNEX")
	for _, g := range list {
		v := g.Version()
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", g.Name, g.Platform, g.ID(), g.AccessKey, g.Dialect, v)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(table.String(), "\n")
	fmt.Fprint(out, lines[0])
	for i, g := range list {
		fmt.Fprint(out, lines[i+1])
		if verbose {
			fmt.Fprintf(out, "  source: %s\n", g.Source)
			if g.Note != "" {
				fmt.Fprintf(out, "  note: %s\n", g.Note)
			}
		}
	}
	return nil
}

func registerGameFlag(fl *pflag.FlagSet, game *string) {
	fl.StringVar(game, "game", "", "take the access key and dialect of this game (a name or game server id; gamewire games lists them)")
}

// gameSettings returns the dialect and access key to use: those of --game
// unless given explicitly, the flags' otherwise. The flags themselves stay as
// they are.
func (f *prudpFlags) gameSettings() (dialect, accessKey string, err error) {
	dialect, accessKey = f.dialect, f.accessKey
	if f.game == "" {
		return dialect, accessKey, nil
	}
	g, err := games.Find(f.game)
	if err != nil {
		return "", "", fmt.Errorf("--game: %w", err)
	}
	if f.flags == nil || !f.flags.Changed("dialect") {
		dialect = g.Dialect.String()
	}
	if f.flags == nil || !f.flags.Changed("access-key") {
		accessKey = g.AccessKey
	}
	return dialect, accessKey, nil
}

// effectiveDialect is the dialect gameSettings picks (the --dialect flag's
// value when --game names no game).
func (f *prudpFlags) effectiveDialect() string {
	d, _, err := f.gameSettings()
	if err != nil {
		return f.dialect
	}
	return d
}

// gameNEXVersion is the NEX version of --game, 0 without one or when not
// published.
func gameNEXVersion(game string) int {
	if game == "" {
		return 0
	}
	g, err := games.Find(game)
	if err != nil {
		return 0
	}
	return g.NEXVersion
}

// gameLine describes --game for banners ("" without one).
func gameLine(game string) string {
	g, err := games.Find(game)
	if game == "" || err != nil {
		return ""
	}
	parts := []string{g.Name, g.Platform, "server id " + g.ID()}
	if v := g.Version(); v != "" {
		parts = append(parts, "NEX "+v)
	}
	return strings.Join(parts, ", ")
}
