package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/friends"
	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	"github.com/gamewire/gamewire/nex/types"
)

// `gamewire nex friends list|add|accept|deny|remove|block|unblock|invite|code`:
// the friends server (Friends_V2, protocol 102) as a Wii U uses it, after the
// login flow of gamewire login; `add --3ds` adds as a 3DS does and `invite`
// invites as a 3DS does (Friends_V1).

func newNEXFriendsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "friends",
		Short: "List, add and accept friends on a friends server (Friends_V1 101, Friends_V2 102)",
		Long: `friends logs in as gamewire login does (same flags; --game friends gives the
friends server's dialect and access key), then acts as a console on the friends server.

  gamewire nex friends list    --game friends --user U --password P [--server ADDR]
  gamewire nex friends add     --game friends --user U --password P PID|FRIEND-CODE [--message M] [--3ds]
  gamewire nex friends accept  --game friends --user U --password P REQUEST-ID
  gamewire nex friends deny    --game friends --user U --password P REQUEST-ID
  gamewire nex friends remove  --game friends --user U --password P PID
  gamewire nex friends block   --game friends --user U --password P PID
  gamewire nex friends unblock --game friends --user U --password P PID
  gamewire nex friends invite  --game friends --user U --password P PID|FRIEND-CODE...
  gamewire nex friends code PID|FRIEND-CODE

list sends the Wii U's login (UpdateAndGetAllInformation) and prints the friends,
the requests sent and received (with their ids) and the block list. add sends a
friend request (a 12-digit 3DS friend code, dashes allowed, is checked and turned
into its PID); with --3ds it adds as a 3DS adds a friend code (AddFriendByPrincipalId:
friends as soon as both have added each other). invite invites friends to play as
a 3DS does (SendInvitation: each invitee online on a 3DS is told; every invitee must
be a friend, else nobody is). code prints a PID's friend code, or
a friend code's PID, without logging in.`,
	}
	var opts [8]nexFriendsOptions
	sub := []struct {
		use, short string
		args       int
		run        func(ctx context.Context, o *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error
	}{
		{"list", "Print friends, requests and block list", 0, friendsList},
		{"add PID|FRIEND-CODE", "Send a friend request", 1, friendsAdd},
		{"accept REQUEST-ID", "Accept a friend request", 1, friendsAccept},
		{"deny REQUEST-ID", "Deny a friend request (and block its sender)", 1, friendsDeny},
		{"remove PID", "End a friendship", 1, friendsRemove},
		{"block PID", "Add a player to the block list", 1, friendsBlock},
		{"unblock PID", "Remove a player from the block list", 1, friendsUnblock},
		{"invite PID|FRIEND-CODE...", "Invite friends as a 3DS does (SendInvitation)", -1, friendsInvite},
	}
	for i, s := range sub {
		o, s := &opts[i], s
		args := cobra.ExactArgs(s.args)
		if s.args < 0 {
			args = cobra.RangeArgs(1, friends.DefaultMaxFriends)
		}
		c := &cobra.Command{Use: s.use, Short: s.short, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				return runNEXFriends(cmd, o, strings.Fields(s.use)[0], args, s.run)
			}}
		o.registerLogin(c)
		c.Flags().StringVar(&o.server, "server", nex.DefaultAddr, "the NEX authentication server")
		if i == 1 {
			c.Flags().StringVar(&o.message, "message", "", "the request's message")
			c.Flags().BoolVar(&o.as3DS, "3ds", false, "add as a 3DS (Friends_V1 AddFriendByPrincipalId)")
		}
		cmd.AddCommand(c)
	}
	cmd.AddCommand(&cobra.Command{Use: "code PID|FRIEND-CODE", Short: "Print a PID's 3DS friend code, or a friend code's PID", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pid, err := parseFriend(args[0])
			if err != nil {
				return fmt.Errorf("nex friends code: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pid %d friend code %s\n", pid, friends.FormatFriendCode(friends.FriendCode(pid)))
			return nil
		}})
	return cmd
}

// nexFriendsOptions are the flags of a nex friends subcommand.
type nexFriendsOptions struct {
	loginOptions
	server  string
	message string
	as3DS   bool
}

// friendsConsole is a logged-in session's two friends clients.
type friendsConsole struct {
	pid types.PID
	v1  fp.FriendsV1Client
	v2  fp.FriendsV2Client
}

func runNEXFriends(cmd *cobra.Command, o *nexFriendsOptions, name string, args []string,
	run func(ctx context.Context, o *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	sess, err := o.login(ctx, o.server)
	if err != nil {
		return fmt.Errorf("nex friends %s: %w", name, err)
	}
	defer closeSession(sess)
	c := friendsConsole{pid: sess.PID, v1: fp.FriendsV1Client{C: sess.RMC}, v2: fp.FriendsV2Client{C: sess.RMC}}
	if err := run(ctx, o, c, args, cmd.OutOrStdout()); err != nil {
		return fmt.Errorf("nex friends %s: %w", name, err)
	}
	return nil
}

// parseFriend reads a PID in decimal or a 12-digit friend code.
func parseFriend(s string) (types.PID, error) {
	digits := strings.NewReplacer("-", "", " ", "").Replace(s)
	if len(digits) == 12 {
		_, pid, err := friends.ParseFriendCode(s)
		return pid, err
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is neither a PID nor a 12-digit friend code", s)
	}
	return types.PID(n), nil
}

func parsePID(s string) (types.PID, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("PID %q: want a number from 1 to 4294967295", s)
	}
	return types.PID(n), nil
}

func friendsList(ctx context.Context, o *nexFriendsOptions, c friendsConsole, _ []string, out io.Writer) error {
	nna := fp.NNAInfo{PrincipalInfo: fp.PrincipalBasicInfo{PID: c.pid, NNID: o.user, Mii: fp.MiiV2{Name: o.user}, Unk: 2}, Unk1: 94, Unk2: 11}
	pref, comment, fl, sent, recv, bl, _, _, _, err := c.v2.UpdateAndGetAllInformation(ctx, nna, fp.NintendoPresenceV2{Unk5: 3, Unk6: 3, Unk7: 3}, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pid %d friend code %s comment %q show online %v show title %v block requests %v\n", c.pid,
		friends.FormatFriendCode(friends.FriendCode(c.pid)), comment.Text, pref.ShowOnlineStatus, pref.ShowCurrentTitle, pref.BlockFriendRequests)
	fmt.Fprintf(out, "friends: %d\n", len(fl))
	for _, f := range fl {
		pi := f.NnaInfo.PrincipalInfo
		state := "offline"
		if f.Presence.IsOnline {
			state = fmt.Sprintf("online, title %016X", f.Presence.GameKey.TitleID)
		}
		fmt.Fprintf(out, "  pid %-10d %-16q %s, since %s, comment %q\n", pi.PID, pi.Mii.Name, state, f.Befriended, f.Comment.Text)
	}
	for _, x := range []struct {
		what string
		rs   []fp.FriendRequest
	}{{"requests received", recv}, {"requests sent", sent}} {
		fmt.Fprintf(out, "%s: %d\n", x.what, len(x.rs))
		for _, r := range x.rs {
			fmt.Fprintf(out, "  id %-6d pid %-10d %-16q message %q, expires %s\n", r.Message.FriendRequestID, r.PrincipalInfo.PID,
				r.PrincipalInfo.Mii.Name, r.Message.Message, r.Message.Expires)
		}
	}
	fmt.Fprintf(out, "blocked: %d\n", len(bl))
	for _, b := range bl {
		fmt.Fprintf(out, "  pid %-10d since %s\n", b.PrincipalInfo.PID, b.Since)
	}
	return nil
}

func friendsAdd(ctx context.Context, o *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error {
	pid, err := parseFriend(args[0])
	if err != nil {
		return err
	}
	if o.as3DS {
		rel, err := c.v1.AddFriendByPrincipalId(ctx, 0, pid)
		if err != nil {
			return err
		}
		state := "added; friends once they add you back"
		if rel.IsComplete != 0 {
			state = "friends"
		}
		fmt.Fprintf(out, "pid %d (friend code %s): %s\n", rel.PID, friends.FormatFriendCode(rel.FriendCode), state)
		return nil
	}
	req, info, err := c.v2.AddFriendRequest(ctx, uint32(pid), 0, o.message, 0, "", fp.GameKey{}, 0)
	if err != nil {
		return err
	}
	if info.Befriended != 0 {
		fmt.Fprintf(out, "pid %d had asked already: friends since %s\n", pid, info.Befriended)
		return nil
	}
	fmt.Fprintf(out, "request %d sent to pid %d, expires %s\n", req.Message.FriendRequestID, pid, req.Message.Expires)
	return nil
}

func parseID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("request id %q: %w", s, err)
	}
	return id, nil
}

func friendsAccept(ctx context.Context, _ *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error {
	id, err := parseID(args[0])
	if err != nil {
		return err
	}
	info, err := c.v2.AcceptFriendRequest(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "friends with pid %d since %s\n", info.NnaInfo.PrincipalInfo.PID, info.Befriended)
	return nil
}

func friendsDeny(ctx context.Context, _ *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error {
	id, err := parseID(args[0])
	if err != nil {
		return err
	}
	b, err := c.v2.DenyFriendRequest(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "request %d denied; pid %d blocked\n", id, b.PrincipalInfo.PID)
	return nil
}

func friendsRemove(ctx context.Context, _ *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error {
	pid, err := parsePID(args[0])
	if err != nil {
		return err
	}
	if err := c.v2.RemoveFriend(ctx, pid); err != nil {
		return err
	}
	fmt.Fprintf(out, "pid %d removed\n", pid)
	return nil
}

func friendsBlock(ctx context.Context, _ *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error {
	pid, err := parsePID(args[0])
	if err != nil {
		return err
	}
	if _, err := c.v2.AddBlackList(ctx, fp.BlacklistedPrincipal{PrincipalInfo: fp.PrincipalBasicInfo{PID: pid, Unk: 2}}); err != nil {
		return err
	}
	fmt.Fprintf(out, "pid %d blocked\n", pid)
	return nil
}

func friendsUnblock(ctx context.Context, _ *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error {
	pid, err := parsePID(args[0])
	if err != nil {
		return err
	}
	if err := c.v2.RemoveBlackList(ctx, pid); err != nil {
		return err
	}
	fmt.Fprintf(out, "pid %d unblocked\n", pid)
	return nil
}

// friendsInvite sends Friends_V1 SendInvitation to the friends named (PIDs or
// 3DS friend codes).
func friendsInvite(ctx context.Context, _ *nexFriendsOptions, c friendsConsole, args []string, out io.Writer) error {
	pids := make([]uint32, len(args))
	for i, a := range args {
		pid, err := parseFriend(a)
		if err != nil {
			return fmt.Errorf("invitee %d: %w", i+1, err)
		}
		pids[i] = uint32(pid)
	}
	if err := c.v1.SendInvitation(ctx, pids); err != nil {
		return err
	}
	for _, p := range pids {
		fmt.Fprintf(out, "pid %d invited\n", p)
	}
	return nil
}
