package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/friends"
)

// TestNEXFriendsCLI: serve --game friends, two accounts, and gamewire nex
// friends as two consoles run it: one sends a request by friend code, the
// other lists it and accepts it, both list each other; one invites the other;
// code converts.
func TestNEXFriendsCLI(t *testing.T) {
	dir := t.TempDir()
	for _, pw := range []string{"pw-one", "pw-two"} {
		if out, err := runAccountsCLI(t, pw+"\n", "accounts", "add", "--data", dir, "--password-stdin"); err != nil {
			t.Fatalf("accounts add: %v\n%s", err, out)
		}
	}
	addr, banner, _ := startServeNEX(t, dir, "--game", "friends")
	if !strings.Contains(banner.String(), "friends server: Friends_V1 (101, 3DS) and Friends_V2 (102, Wii U)") {
		t.Fatalf("serve --game friends banner:\n%s", banner)
	}
	as := func(user, pw string, args ...string) string {
		t.Helper()
		out, err := runCLI(t, append(append([]string{"nex", "friends"}, args...), "--game", "friends", "--server", addr, "--user", user, "--password", pw)...)
		if err != nil {
			t.Fatalf("nex friends %v as %s: %v\n%s", args, user, err, out)
		}
		return out
	}
	code := friends.FormatFriendCode(friends.FriendCode(1001))
	if out := as("1000", "pw-one", "add", code, "--message", "hi"); !strings.Contains(out, "sent to pid 1001") {
		t.Fatalf("add: %s", out)
	}
	out := as("1001", "pw-two", "list")
	m := regexp.MustCompile(`id (\d+) +pid 1000 .*message "hi"`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "requests received: 1") {
		t.Fatalf("list of the recipient:\n%s", out)
	}
	if out := as("1001", "pw-two", "accept", m[1]); !strings.Contains(out, "friends with pid 1000") {
		t.Fatalf("accept: %s", out)
	}
	if out := as("1000", "pw-one", "list"); !strings.Contains(out, "friends: 1") || !strings.Contains(out, "pid 1001") {
		t.Fatalf("list of the sender after the accept:\n%s", out)
	}
	// Invitations, as a 3DS sends them: to a friend (by PID or friend
	// code); a stranger or oneself is refused with the FPD code, and so is
	// a list with a stranger among friends.
	if out := as("1000", "pw-one", "invite", "1001", code); !strings.Contains(out, "pid 1001 invited") {
		t.Fatalf("invite: %s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"invite", "1002"}, "FPD::NotFriend"},
		{[]string{"invite", "1001", "1002"}, "FPD::NotFriend"},
		{[]string{"invite", "1000"}, "FPD::InvalidPrincipalID"},
		{[]string{"invite", "1234-5678-9012"}, "invitee 1"},
		{[]string{"invite"}, "missing PID|FRIEND-CODE"},
	} {
		out, err := runCLI(t, append(append([]string{"nex", "friends"}, tc.args...), "--game", "friends", "--server", addr, "--user", "1000", "--password", "pw-one")...)
		if err == nil || !strings.Contains(err.Error()+out, tc.want) {
			t.Fatalf("%v: %v\n%s\nwant an error with %q", tc.args, err, out, tc.want)
		}
	}
	if out, err := runCLI(t, "nex", "friends", "code", code); err != nil || !strings.Contains(out, "pid 1001 friend code "+code) {
		t.Fatalf("code %s: %v %s", code, err, out)
	}
	if _, err := runCLI(t, "nex", "friends", "code", "1234-5678-9012"); err == nil {
		t.Fatal("code accepted a friend code with a bad checksum")
	}
}
