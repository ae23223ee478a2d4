package nex

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	rt "github.com/gamewire/gamewire/nex/protocols/rating"
	sub "github.com/gamewire/gamewire/nex/protocols/subscription"
	"github.com/gamewire/gamewire/nex/rating"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/subscription"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// staticFriends is a friend list fixed by the test (friends.Friends).
type staticFriends map[types.PID][]types.PID

func (f staticFriends) AreFriends(_ context.Context, a, b types.PID) (bool, error) {
	return slices.Contains(f[a], b), nil
}

func (f staticFriends) FriendsOf(_ context.Context, pid types.PID) ([]types.PID, error) {
	return f[pid], nil
}

// pokemonConfig is Pokémon X/Y's PRUDP configuration (nex/games).
var pokemonConfig = prudp.Config{Dialect: prudp.NEXV0, AccessKey: "876138df"}

// pokemonLogin logs pid in as Pokémon X/Y does (NEX 3.3).
func pokemonLogin(t *testing.T, ctx context.Context, addr string, pid int) *player {
	t.Helper()
	return loginVersion(t, ctx, addr, pokemonConfig, pid, 30300)
}

// startPokemon serves Subscription and Rating on the SQLite store at Pokémon
// X/Y's NEX version, 2000 and 2001 being friends.
func startPokemon(t *testing.T) (*Server, string, *accounts.Store) {
	t.Helper()
	store, _, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	// As serve --game registers them: on the secure Mux, notifications
	// through the server's hub.
	srv := &Server{Config: pokemonConfig, Accounts: playerAccounts(), NEXVersion: 30300, Mux: rmc.NewMux()}
	sub := &subscription.Server{Store: store.Subscriptions(), Friends: staticFriends{2000: {2001}, 2001: {2000}}, Hub: srv.Hub(),
		Config: subscription.Config{MaxDataSize: 8, MaxTargets: 2}}
	sub.Register(srv.Mux)
	(&rating.Server{Store: store.Ratings()}).Register(srv.Mux)
	return srv, startServer(t, srv), store
}

// TestPokemonSubscription: over PRUDP at NEX 3.3, a player's data is
// published, changed and cleared, its friends and the players targeting it
// are notified, and the reads answer friends', targets', active players' and
// given players' data; limits answer Core::InvalidArgument; privacy levels
// are kept.
func TestPokemonSubscription(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, addr, _ := startPokemon(t)
	a, b, c := pokemonLogin(t, ctx, addr, 2000), pokemonLogin(t, ctx, addr, 2001), pokemonLogin(t, ctx, addr, 2002)
	ac, bc, cc := &sub.SubscriptionClient{C: a.sess.RMC}, &sub.SubscriptionClient{C: b.sess.RMC}, &sub.SubscriptionClient{C: c.sess.RMC}
	pids := func(ds []sub.SubscriptionData) []types.PID {
		out := make([]types.PID, len(ds))
		for i, d := range ds {
			out[i] = d.PrincipalID
		}
		return out
	}
	sent := srv.Hub().Sent()
	notified := func(want uint64, what string) {
		t.Helper()
		if got := srv.Hub().Sent() - sent; got != want {
			t.Errorf("%s: %d notifications sent, want %d", what, got, want)
		}
		sent = srv.Hub().Sent()
	}

	// a publishes (the structure's PID is replaced by the caller's): its
	// friend b is told, c (no friend, no target) is not.
	if err := ac.CreateMySubscriptionData(ctx, 7, sub.SubscriptionData{PrincipalID: 9999, Content: []byte{1, 2, 3}}, true); err != nil {
		t.Fatal(err)
	}
	if ev := b.next(t, subscription.NotificationChanged); ev.Source != 2000 {
		t.Errorf("b's notification %+v", ev)
	}
	notified(1, "create")
	if ds, err := bc.GetFriendSubscriptionData(ctx); err != nil || !slices.Equal(pids(ds), []types.PID{2000}) || !bytes.Equal(ds[0].Content, []byte{1, 2, 3}) {
		t.Fatalf("b's friends' data %+v, %v", ds, err)
	}
	if ds, err := cc.GetFriendSubscriptionData(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("c has no friends: %+v, %v", ds, err)
	}

	// c targets a: a's update reaches b and c.
	if err := cc.AddTarget(ctx, []types.PID{2000}); err != nil {
		t.Fatal(err)
	}
	if err := ac.UpdateMySubscriptionData(ctx, sub.SubscriptionData{Content: []byte{4}}); err != nil {
		t.Fatal(err)
	}
	b.next(t, subscription.NotificationChanged)
	if ev := c.next(t, subscription.NotificationChanged); ev.Source != 2000 {
		t.Errorf("c's notification %+v", ev)
	}
	notified(2, "update")
	if ds, err := cc.GetTargetSubscriptionData(ctx); err != nil || !slices.Equal(pids(ds), []types.PID{2000}) || !bytes.Equal(ds[0].Content, []byte{4}) {
		t.Fatalf("c's targets' data %+v, %v", ds, err)
	}

	// Active players: newest first, without the caller, bounded by the
	// request's count.
	if err := bc.CreateMySubscriptionData(ctx, 0, sub.SubscriptionData{Content: []byte("b")}, false); err != nil {
		t.Fatal(err)
	}
	a.next(t, subscription.NotificationChanged)
	notified(1, "b's create")
	act, err := cc.GetActivePlayerSubscriptionData(ctx, 0, 0, 0)
	if err != nil || len(act) != 2 || act[0].PrincipalID != 2001 || act[1].PrincipalID != 2000 || !act[0].Unknown || string(act[0].Content) != "b" {
		t.Fatalf("active players for c %+v, %v", act, err)
	}
	if act, err := ac.GetActivePlayerSubscriptionData(ctx, 1, 0, 0); err != nil || len(act) != 1 || act[0].PrincipalID != 2001 {
		t.Fatalf("one active player for a %+v, %v", act, err)
	}
	if ds, err := cc.GetSubscriptionData(ctx, []types.PID{2000, 2001}); err != nil || !slices.Equal(pids(ds), []types.PID{2000, 2001}) {
		t.Fatalf("given players' data %+v, %v", ds, err)
	}
	if ds, err := cc.ReplaceTargetAndGetSubscriptionData(ctx, []types.PID{2001, 2002}); err != nil || !slices.Equal(pids(ds), []types.PID{2001}) {
		t.Fatalf("replaced targets' data %+v, %v", ds, err)
	}

	// Limits: 8 bytes of data, 2 targets.
	if err := ac.UpdateMySubscriptionData(ctx, sub.SubscriptionData{Content: make([]byte, 9)}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("9 bytes of data: %v, want Core::InvalidArgument", err)
	}
	if err := cc.AddTarget(ctx, []types.PID{2000}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("a third target: %v, want Core::InvalidArgument", err)
	}
	if _, err := cc.GetSubscriptionData(ctx, []types.PID{1, 2, 3}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("three players asked for: %v, want Core::InvalidArgument", err)
	}
	if err := cc.DeleteTarget(ctx, []types.PID{2002}); err != nil {
		t.Fatal(err)
	}
	if err := cc.AddTarget(ctx, []types.PID{2000}); err != nil {
		t.Fatal(err)
	}
	if ds, err := cc.GetTargetSubscriptionData(ctx); err != nil || !slices.Equal(pids(ds), []types.PID{2001, 2000}) {
		t.Fatalf("targets after delete and add %+v, %v", ds, err)
	}
	notified(0, "reads and refusals")

	// Privacy levels.
	if l, err := cc.GetPrivacyLevel(ctx); err != nil || l != subscription.DefaultPrivacyLevel {
		t.Fatalf("default privacy level %d, %v", l, err)
	}
	if err := cc.SetPrivacyLevel(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if l, err := cc.GetPrivacyLevel(ctx); err != nil || l != 3 {
		t.Fatalf("privacy level %d, %v", l, err)
	}

	// a clears its data: b (friend) and c (target) are told; it is gone.
	if err := ac.ClearMySubscriptionData(ctx); err != nil {
		t.Fatal(err)
	}
	b.next(t, subscription.NotificationCleared)
	c.next(t, subscription.NotificationCleared)
	notified(2, "clear")
	if ds, err := bc.GetSubscriptionData(ctx, []types.PID{2000, 2001}); err != nil || !slices.Equal(pids(ds), []types.PID{2001}) {
		t.Fatalf("cleared data %+v, %v", ds, err)
	}
	if err := cc.ClearTarget(ctx); err != nil {
		t.Fatal(err)
	}
	if ds, err := cc.GetTargetSubscriptionData(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("cleared targets %+v, %v", ds, err)
	}
}

// TestPokemonRating: over PRUDP at NEX 3.3, method 1 issues a token of the
// public form (a 32-bit id; 16 hex digits and a NUL), method 2 takes back
// tokens issued here (another player's too) and refuses others, and the
// methods not served answer Core::NotImplemented.
func TestPokemonRating(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, addr, store := startPokemon(t)
	a, b := pokemonLogin(t, ctx, addr, 2000), pokemonLogin(t, ctx, addr, 2001)
	ac, bc := &rt.RatingClient{C: a.sess.RMC}, &rt.RatingClient{C: b.sess.RMC}
	tok, err := ac.UnknownMethod0x1(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Unknown1 == 0 || tok.Unknown1 > 0xffffffff || len(tok.Unknown2) != rating.KeySize || tok.Unknown2[16] != 0 {
		t.Fatalf("token %d %q", tok.Unknown1, tok.Unknown2)
	}
	if _, err := hex.DecodeString(string(tok.Unknown2[:16])); err != nil {
		t.Fatalf("token key %q: %v", tok.Unknown2, err)
	}
	other, err := bc.UnknownMethod0x1(ctx)
	if err != nil || other.Unknown1 == tok.Unknown1 || bytes.Equal(other.Unknown2, tok.Unknown2) {
		t.Fatalf("a second token %d %q, %v", other.Unknown1, other.Unknown2, err)
	}
	for _, p := range []*rt.RatingClient{bc, ac} {
		if err := p.UnknownMethod0x2(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if us, err := store.Ratings().TokenUsers(ctx, tok.Unknown1); err != nil || !slices.Equal(us, []types.PID{2001, 2000}) {
		t.Errorf("token presented by %v, %v", us, err)
	}
	bad := tok
	bad.Unknown2 = other.Unknown2
	if err := bc.UnknownMethod0x2(ctx, bad); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("a token with another's key: %v, want Core::InvalidArgument", err)
	}
	if _, err := ac.GetCommonData(ctx, 1); !errors.Is(err, types.CoreNotImplemented) {
		t.Errorf("GetCommonData: %v, want Core::NotImplemented", err)
	}
	if err := bc.UnknownMethod0x2(ctx, rt.RatingSessionToken{Unknown1: tok.Unknown1, Unknown2: make([]byte, 100)}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("a 100-byte key: %v, want Core::InvalidArgument", err)
	}
}

// TestPokemonSubscriptionAcrossNodes: two secure nodes sharing one SQLite
// store and its Exchange, A on one and its friend B on the other: A's
// published data reaches B's notifications through the other node's mailbox
// (NotifyAnywhere), and B reads it from the shared store.
func TestPokemonSubscriptionAcrossNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, mm := sharedStore(t, ctx, 3100, 3101)
	cfg := fastFail(pokemonConfig)
	const beat = 100 * time.Millisecond
	for range 2 {
		// One connection each: the second login goes to the other node.
		srv := &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat,
			Matchmaking: mm, NodeCapacity: 1, NEXVersion: 30300, Mux: rmc.NewMux()}
		sub := &subscription.Server{Store: store.Subscriptions(), Friends: staticFriends{3100: {3101}, 3101: {3100}}, Notify: srv.NotifyAnywhere}
		sub.Register(srv.Mux)
		startRole(t, srv)
	}
	addr := startRole(t, &Server{Role: RoleAuth, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat})
	// waitLoad waits until the nodes' heartbeats report n connections.
	waitLoad := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			ns, _ := store.Nodes(ctx)
			load := 0
			for _, x := range ns {
				load += x.Load
			}
			if len(ns) == 2 && load == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("nodes %+v, want 2 with %d connections", ns, n)
			}
		}
	}
	waitLoad(0)
	a := loginVersion(t, ctx, addr, cfg, 3100, 30300)
	waitLoad(1)
	b := loginVersion(t, ctx, addr, cfg, 3101, 30300)
	if a.sess.SecureURL.String() == b.sess.SecureURL.String() {
		t.Fatalf("both players on %s", a.sess.SecureURL)
	}
	// Each node learns of its player's stations at Register (the login).
	ac := &sub.SubscriptionClient{C: a.sess.RMC}
	if err := ac.CreateMySubscriptionData(ctx, 0, sub.SubscriptionData{Content: []byte("across")}, false); err != nil {
		t.Fatal(err)
	}
	if ev := b.next(t, subscription.NotificationChanged); ev.Source != 3100 {
		t.Fatalf("B's notification %+v", ev)
	}
	ds, err := (&sub.SubscriptionClient{C: b.sess.RMC}).GetFriendSubscriptionData(ctx)
	if err != nil || len(ds) != 1 || string(ds[0].Content) != "across" {
		t.Fatalf("B's friends' data %+v, %v", ds, err)
	}
}
