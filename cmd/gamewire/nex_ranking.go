package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// `gamewire nex ranking upload|get`: the Ranking protocol (112) as a console
// uses it, after the login flow of gamewire login.

func newNEXRankingCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ranking",
		Short: "Upload and read scores on a NEX server's Ranking service (protocol 112)",
		Long: `ranking logs in as gamewire login does (same flags), then uploads a score or
reads a ranking.

  gamewire nex ranking upload --user U --password P --category N --score S
      [--server ADDR] [--order desc|asc] [--update best|replace] [--groups 1,2] [--param N] [--unique-id N]
  gamewire nex ranking get --user U --password P --category N
      [--server ADDR] [--mode global|around-self|self|friends] [--offset N] [--length N] [--ordinal]
      [--group-index I --group-num N] [--pid PID]

A category comes into existence with its first score (serve declares none), ordered
as that upload says: --order desc ranks higher scores first, asc lower ones (times).
--update best keeps a player's better score, replace always takes the new one.`,
	}
	uploadOpts, getOpts := &nexRankingOptions{}, &nexRankingOptions{}
	upload := &cobra.Command{Use: "upload", Short: "Upload a score", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runNEXRanking(cmd, uploadOpts, true) }}
	get := &cobra.Command{Use: "get", Short: "Read a ranking", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runNEXRanking(cmd, getOpts, false) }}
	for _, c := range []struct {
		cmd *cobra.Command
		o   *nexRankingOptions
	}{{upload, uploadOpts}, {get, getOpts}} {
		c.o.registerLogin(c.cmd)
		addFormatFlag(c.cmd, &c.o.format)
		f := c.cmd.Flags()
		f.StringVar(&c.o.server, "server", nex.DefaultAddr, "the NEX authentication server (a URL with --dialect nex-lite)")
		f.Uint32Var(&c.o.category, "category", 0, "ranking category")
		f.Uint64Var(&c.o.uniqueID, "unique-id", 0, "NEX unique id the score is filed under")
		_ = c.cmd.MarkFlagRequired("category")
	}
	f := upload.Flags()
	f.Uint32Var(&uploadOpts.score, "score", 0, "the score")
	f.StringVar(&uploadOpts.order, "order", "desc", "desc: higher scores rank first; asc: lower ones")
	f.StringVar(&uploadOpts.update, "update", "best", "best: keep the better score; replace: always take this one")
	f.StringVar(&uploadOpts.groups, "groups", "", "group bytes, comma-separated (e.g. 1,2)")
	f.Uint64Var(&uploadOpts.param, "param", 0, "the score's param")
	_ = upload.MarkFlagRequired("score")
	f = get.Flags()
	f.StringVar(&getOpts.mode, "mode", "global", "global (from --offset), around-self, self, or friends (the player's and its friends' scores, around its own)")
	f.Uint32Var(&getOpts.offset, "offset", 0, "global: first rank to read, 0 is the top")
	f.Uint8Var(&getOpts.length, "length", 10, "entries to read (at most 255)")
	f.BoolVar(&getOpts.ordinal, "ordinal", false, "ordinal ranks (1234) instead of standard ones (1224)")
	f.Uint8Var(&getOpts.groupIndex, "group-index", ranking.NoGroup, "only entries whose group byte I equals --group-num (0 or 1; 255: all)")
	f.Uint8Var(&getOpts.groupNum, "group-num", 0, "the group value --group-index filters on")
	f.Uint64Var(&getOpts.pid, "pid", 0, "whose entry is 'self' (default: the logged-in user)")
	cmd.AddCommand(upload, get)
	return cmd
}

// nexRankingOptions are the flags of nex ranking upload and get.
type nexRankingOptions struct {
	loginOptions
	server        string
	category      uint32
	score         uint32
	order, update string
	groups        string
	param         uint64
	uniqueID      uint64
	mode          string
	offset        uint32
	length        uint8
	ordinal       bool
	groupIndex    uint8
	groupNum      uint8
	pid           uint64
}

func parseGroups(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	var out []byte
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 8)
		if err != nil {
			return nil, fmt.Errorf("--groups %q: %w", s, err)
		}
		out = append(out, byte(n))
	}
	return out, nil
}

func runNEXRanking(cmd *cobra.Command, o *nexRankingOptions, upload bool) error {
	name := "nex ranking get"
	if upload {
		name = "nex ranking upload"
	}
	var sd ranking.ScoreData
	var mode uint8
	if upload {
		groups, err := parseGroups(o.groups)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sd = ranking.ScoreData{Category: o.category, Score: o.score, Groups: groups, Param: o.param}
		switch o.order {
		case "desc":
			sd.OrderBy = ranking.OrderDescending
		case "asc":
			sd.OrderBy = ranking.OrderAscending
		default:
			return fmt.Errorf("%s: --order %q: desc or asc", name, o.order)
		}
		switch o.update {
		case "best":
			sd.UpdateMode = ranking.UpdateNormal
		case "replace":
			sd.UpdateMode = ranking.UpdateDeleteOld
		default:
			return fmt.Errorf("%s: --update %q: best or replace", name, o.update)
		}
	} else {
		switch o.mode {
		case "global":
			mode = ranking.ModeGlobal
		case "around-self":
			mode = ranking.ModeGlobalAroundSelf
		case "self":
			mode = ranking.ModeSelf
		case "friends":
			mode = ranking.ModeFriendsAroundSelf
		default:
			return fmt.Errorf("%s: --mode %q: global, around-self, self or friends", name, o.mode)
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	sess, err := o.login(ctx, o.server)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer closeSession(sess)
	c := &ranking.Client{C: sess.RMC}
	out := cmd.OutOrStdout()
	if upload {
		if err := c.UploadScore(ctx, sd, o.uniqueID); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if o.format.json() {
			return writeJSON(out, map[string]any{"uploaded": true, "score": sd.Score, "category": sd.Category, "pid": sess.PID})
		}
		fmt.Fprintf(out, "uploaded score %d in category %d for PID %d\n", sd.Score, sd.Category, sess.PID)
		return nil
	}
	op := ranking.OrderParam{GroupIndex: o.groupIndex, GroupNum: o.groupNum, TimeScope: 2, Offset: o.offset, Length: o.length}
	if o.ordinal {
		op.OrderCalc = ranking.OrderCalcOrdinal
	}
	res, err := c.GetRanking(ctx, mode, o.category, op, o.uniqueID, types.PID(o.pid))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if o.format.json() {
		for _, d := range res.Data {
			if err := writeJSON(out, map[string]any{"category": o.category, "total": res.TotalCount, "rank": d.Order,
				"pid": d.PID, "score": d.Score, "param": d.Param, "groups": d.Groups}); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(out, "category %d: %d entries in all\n", o.category, res.TotalCount)
	for _, d := range res.Data {
		fmt.Fprintf(out, "%6d  pid %-10d score %-10d param %d groups %v\n", d.Order, d.PID, d.Score, d.Param, d.Groups)
	}
	return nil
}
