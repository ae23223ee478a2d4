package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestServeFriendsSource: serve --friends-source takes friend lists from an
// HTTP JSON endpoint (the bearer token from GAMEWIRE_FRIENDS_KEY): a
// ranking read with the friends filter returns the player's and its
// friends' scores only, as the endpoint names them; a source that fails
// grants nothing.
func TestServeFriendsSource(t *testing.T) {
	var calls atomic.Int64
	lists := map[string][]uint64{"1000": {1001}, "1001": {1000}}
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer sesame" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		l, ok := lists[strings.TrimPrefix(r.URL.Path, "/friends/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"friends": l})
	}))
	defer ep.Close()
	t.Setenv(friendsKeyEnv, "sesame")

	dir := t.TempDir()
	pws := []string{"pw-a", "pw-b", "pw-c"}
	for _, pw := range pws {
		if out, err := runAccountsCLI(t, pw+"\n", "accounts", "add", "--data", dir, "--password-stdin"); err != nil {
			t.Fatalf("accounts add: %v\n%s", err, out)
		}
	}
	addr, banner, _ := startServeNEX(t, dir, "--friends-source", ep.URL+"/friends")
	if !strings.Contains(banner.String(), "friend lists: from "+ep.URL+"/friends") || strings.Contains(banner.String(), "sesame") {
		t.Fatalf("banner:\n%s", banner)
	}
	login := func(i int) loginOptions {
		o := guestLogin()
		o.user, o.password = []string{"1000", "1001", "1002"}[i], pws[i]
		return o
	}
	for i, score := range []uint32{300, 200, 100} {
		up := nexRankingOptions{loginOptions: login(i), server: addr, category: 7, score: score, order: "desc", update: "best"}
		cmd, out := clientCmd()
		if err := runNEXRanking(cmd, &up, true); err != nil {
			t.Fatalf("upload as %d: %v\n%s", 1000+i, err, out)
		}
	}
	get := nexRankingOptions{loginOptions: login(0), server: addr, category: 7, mode: "friends", length: 10, groupIndex: 255}
	cmd, out := clientCmd()
	if err := runNEXRanking(cmd, &get, false); err != nil {
		t.Fatalf("get --mode friends: %v\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, "score 300") || !strings.Contains(s, "score 200") || strings.Contains(s, "score 100") {
		t.Fatalf("friends ranking of 1000 (friends: 1001):\n%s", s)
	}
	if calls.Load() == 0 {
		t.Fatal("the endpoint was never asked")
	}
	// 1002 is unknown to the endpoint (404: no friends): its own score only.
	get.loginOptions = login(2)
	cmd, out = clientCmd()
	if err := runNEXRanking(cmd, &get, false); err != nil {
		t.Fatalf("get --mode friends as 1002: %v\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, "score 100") || strings.Contains(s, "score 200") || strings.Contains(s, "score 300") {
		t.Fatalf("friends ranking of 1002:\n%s", s)
	}
}

// TestServeFriendsSourceRefused: a source serve cannot use is refused before
// it serves.
func TestServeFriendsSourceRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--friends-source", "ftp://host:1"}, "scheme"},
		{[]string{"--friends-source", "grpc://host"}, "grpc://HOST:PORT"},
		{[]string{"--friends-source", "grpc://host:1", "--friends-cache", "1h"}, "beyond"},
		{[]string{"--friends-source", "grpc://host:1", "--friends-timeout", "0s"}, "--friends-timeout"},
		{[]string{"--friends-source", "grpc://host:1", "--game", "friends"}, "keeps the friend lists itself"},
	} {
		args := append([]string{"serve", "--data", t.TempDir(), "--listen", freeUDPAddr(t)}, c.args...)
		if out, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("serve %v: %v (want %q)\n%s", c.args, err, c.want, out)
		}
	}
}
