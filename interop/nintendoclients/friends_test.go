package nintendoclients

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/types"
)

// TestNintendoClientsFriends is issue 28's done-when with NintendoClients'
// own friends clients (nc_friends.py): FriendsClientV1 (the 3DS, profile
// "friends") and FriendsClientV2 (the Wii U) log in to `gamewire serve --game
// friends` (PRUDP V0 with the friends signatures, access key ridfebb9, NEX
// 2.0, 16-byte session keys) and add each other (the 3DS's request, the Wii
// U's accept), see each other's presence change through NintendoNotification
// events, update comments and the favourite game and read the other's, remove
// and block (the 3DS's new request refused with FPD::FriendRequestBlocked),
// become friends again, and the Wii U hears the 3DS go offline. serve is then
// restarted on the same data directory and the Wii U's login shows what the
// store kept. Then (phase notify, a second Wii U): the 3DS's invitations
// (SendInvitation, a stranger refused with FPD::NotFriend), a request withdrawn
// (CancelFriendRequest) heard by its online recipient (event 26), and what
// the second Wii U missed offline listed at its next login as persistent
// notifications, deleted with DeletePersistentNotification.
func TestNintendoClientsFriends(t *testing.T) {
	dir, python := env(t)
	for _, f := range []string{"nintendo/nex/friends.py", "nintendo/nex/nintendonotification.py", "nintendo/files/config/friends.cfg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%v: add NintendoClients' %s to the copy (docs/interop.md)", err, f)
		}
	}
	bin := buildGamewire(t)
	data := filepath.Join(t.TempDir(), "gamewire")
	a := addAccount(t, bin, data, "Friends-3ds-1")
	b := addAccount(t, bin, data, "Friends-wiiu-2")
	c := addAccount(t, bin, data, "Friends-wiiu-3")
	port := freeServePorts(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	serve := func() func() {
		stop := startServe(t, ctx, bin, "serve", "--game", "friends", "--data", data, "--listen", fmt.Sprintf("127.0.0.1:%d", port))
		waitTCP(t, port+2)
		return stop
	}
	run := func(phase string) steps {
		t.Helper()
		cmd := pyCmd(ctx, dir, python, "nc_friends.py", "--port", strconv.Itoa(port), "--phase", phase,
			"--user-a", strconv.Itoa(a), "--password-a", "Friends-3ds-1",
			"--user-b", strconv.Itoa(b), "--password-b", "Friends-wiiu-2",
			"--user-c", strconv.Itoa(c), "--password-c", "Friends-wiiu-3", "--timeout", "60")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		t.Logf("NintendoClients (%s):\n%s", phase, stdout.String())
		if err != nil {
			t.Fatalf("nc_friends.py --phase %s: %v\nstderr:\n%s", phase, err, stderr.String())
		}
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if l != "" {
				t.Errorf("NintendoClients logged: %s", l)
			}
		}
		return steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	}
	want := func(out steps, name string) string {
		t.Helper()
		l, ok := out.find(name)
		if !ok {
			t.Fatalf("no %q step:\n%s", name, strings.Join(out, "\n"))
		}
		return l
	}

	stop := serve()
	out := run("main")
	stop()
	if l := want(out, "a-login"); field(t, l, "pid") != a {
		t.Errorf("the 3DS logged in as %s, want PID %d", l, a)
	}
	if l := want(out, "a-add"); field(t, l, "pid") != b || field(t, l, "complete") != 0 || !strings.Contains(l, fmt.Sprintf("friend_code=%d", friends.FriendCode(types.PID(b)))) {
		t.Errorf("AddFriendByPrincipalId: %s, want PID %d, friend code %d, not complete", l, b, friends.FriendCode(types.PID(b)))
	}
	if l := want(out, "b-request"); field(t, l, "sender") != a || !strings.Contains(l, "name='3DS'") {
		t.Errorf("the request the Wii U heard of: %s", l)
	}
	if l := want(out, "b-accept"); field(t, l, "pid") != a || !strings.Contains(l, "online=True") {
		t.Errorf("AcceptFriendRequest: %s", l)
	}
	want(out, "a-friended")
	if l := want(out, "a-friend"); field(t, l, "pid") != b || field(t, l, "complete") != 1 || out.count("a-friend") != 1 {
		t.Errorf("the 3DS's friend list: %s", l)
	}
	if l := want(out, "b-presence"); field(t, l, "title") != 0x0004000000055E00 || !strings.Contains(l, "online=True") || !strings.Contains(l, "message='racing'") {
		t.Errorf("the 3DS's presence as the Wii U heard it: %s", l)
	}
	if l := want(out, "a-presence"); field(t, l, "title") != 0x000500001010EC00 || field(t, l, "group") != 77 {
		t.Errorf("the Wii U's presence as the 3DS heard it: %s", l)
	}
	if l := want(out, "a-friend-comment"); !strings.Contains(l, "text='hello from the Wii U'") {
		t.Errorf("the Wii U's comment: %s", l)
	}
	if l := want(out, "b-friend"); field(t, l, "pid") != a || !strings.Contains(l, "comment='hello from the 3DS'") {
		t.Errorf("the Wii U's friend list: %s", l)
	}
	if l := want(out, "b-persistent-info"); field(t, l, "favorite") != 0x0004000000086300 || field(t, l, "version") != 2 {
		t.Errorf("the 3DS's favourite game: %s", l)
	}
	if l := want(out, "b-removed"); field(t, l, "a_friends") != 0 {
		t.Errorf("after RemoveFriend: %s", l)
	}
	if l := want(out, "a-add-blocked"); !strings.Contains(l, "error=FPD::FriendRequestBlocked") {
		t.Errorf("a blocked player's request: %s", l)
	}
	if l := want(out, "a-add-again"); field(t, l, "complete") != 1 {
		t.Errorf("adding back: %s", l)
	}
	want(out, "b-friended")
	if l := want(out, "b-offline"); field(t, l, "source") != a {
		t.Errorf("offline: %s", l)
	}

	// The store survives a restart.
	stop = serve()
	defer stop()
	out = run("after")
	if l := want(out, "b-after"); !strings.Contains(l, "comment='hello from the Wii U'") || field(t, l, "blacklist") != 0 {
		t.Errorf("the Wii U's login after a restart: %s", l)
	}
	if l := want(out, "b-after-friend"); field(t, l, "pid") != a || !strings.Contains(l, "online=False") || !strings.Contains(l, "comment='hello from the 3DS'") {
		t.Errorf("the Wii U's friend after a restart: %s", l)
	}

	out = run("notify")
	want(out, "a-invited")
	if l := want(out, "a-invite-stranger"); !strings.Contains(l, "error=FPD::NotFriend") {
		t.Errorf("inviting a stranger: %s", l)
	}
	if l := want(out, "c-request"); field(t, l, "sender") != b {
		t.Errorf("the request the second Wii U heard of: %s", l)
	}
	if l := want(out, "c-cancelled"); field(t, l, "source") != b {
		t.Errorf("the withdrawn request: %s", l)
	}
	if l := want(out, "c-relogin"); field(t, l, "received") != 1 || field(t, l, "notifications") != 3 {
		t.Errorf("the second Wii U's next login: %s", l)
	}
	var kinds []int
	for _, l := range out {
		if strings.HasPrefix(l, "STEP c-notification ") {
			kinds = append(kinds, field(t, l, "type"))
			if field(t, l, "source") != b || field(t, l, "id") == 0 || field(t, l, "at") == 0 {
				t.Errorf("persistent notification: %s", l)
			}
		}
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]int{int(friends.EventWiiURequest), int(friends.EventWiiUUnfriended), int(friends.EventWiiURequest)}) {
		t.Errorf("persistent notification types %v, want 27 26 27", kinds)
	}
	if l := want(out, "c-after-delete"); field(t, l, "notifications") != 0 {
		t.Errorf("after DeletePersistentNotification: %s", l)
	}
}
