package rating

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
	rt "github.com/gamewire/gamewire/nex/protocols/rating"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// v33 are Pokémon X/Y's settings: NEX 3.3, 4-byte PIDs, no structure headers.
var v33 = types.Settings{PIDSize: 4, Version: 30300}

// officialToken reads testdata/token-official.txt: the token bytes of the
// official server's answer (its source is in the file).
func officialToken(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/token-official.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var hexLines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			hexLines = append(hexLines, l)
		}
	}
	return testutil.Unhex(tb, strings.Join(hexLines, ""))
}

// call calls a method of srv as p, as a connection would.
func call(srv *Server, p *rmc.Peer, method uint32, params []byte) ([]byte, error) {
	return (&rmc.InMemory{Handler: srv, Peer: p}).Call(context.Background(), ProtocolID, method, params)
}

// fuzzCall is call for the fuzz targets: a result code is an answer; any
// other error is a malformed response.
func fuzzCall(t *testing.T, srv *Server, p *rmc.Peer, method uint32, params []byte) {
	t.Helper()
	var ce *rmc.CallError
	if _, err := call(srv, p, method, params); err != nil && !errors.As(err, &ce) {
		t.Fatal(err)
	}
}

// TestOfficialToken: the official server's token decodes as the wiki's
// RatingSessionToken with a key of the form this server issues, and a token
// issued here is written in the same layout.
func TestOfficialToken(t *testing.T) {
	vec := officialToken(t)
	r := types.NewReader(vec, v33)
	var tok rt.RatingSessionToken
	tok.Read(&r, "token")
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	if tok.Unknown1 != 2259334670 || string(tok.Unknown2) != "e00d70431ddca6ae\x00" || len(tok.Unknown2) != KeySize {
		t.Fatalf("decoded %d %q", tok.Unknown1, tok.Unknown2)
	}
	// Drawing the id 2259334670 and the key's 8 bytes gives the same bytes.
	draw := append(testutil.Unhex(t, "0eb6aa86"), testutil.Unhex(t, "e00d70431ddca6ae")...)
	store := new(Memory)
	srv := &Server{Store: store, Rand: bytes.NewReader(draw)}
	me := &rmc.Peer{PID: 1000, Settings: v33}
	if r, err := call(srv, me, rt.RatingMethodUnknownMethod0x1, nil); !bytes.Equal(r, vec) {
		t.Fatalf("issued %x (%v), want %x", r, err, vec)
	}
	// Method 2 takes it back, from another player too.
	for _, pid := range []types.PID{1001, 1000} {
		if r, err := call(srv, &rmc.Peer{PID: pid, Settings: v33}, rt.RatingMethodUnknownMethod0x2, vec); err != nil || len(r) != 0 {
			t.Fatalf("PID %d: %v", pid, err)
		}
	}
	if us, _ := store.TokenUsers(context.Background(), 2259334670); len(us) != 2 {
		t.Errorf("users %v", us)
	}
}

// TestTokens: ids are drawn again when taken or zero, tokens expire, keys
// are checked, and the methods not served answer Core::NotImplemented.
func TestTokens(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	// First draw: id 0 (drawn again); second: id 5; third: id 5 again (taken); fourth: id 6.
	draws := bytes.Join([][]byte{
		testutil.Unhex(t, "00000000 0101010101010101"), testutil.Unhex(t, "05000000 0202020202020202"),
		testutil.Unhex(t, "05000000 0303030303030303"), testutil.Unhex(t, "06000000 0404040404040404"),
	}, nil)
	srv := &Server{Store: new(Memory), Rand: bytes.NewReader(draws), Now: func() time.Time { return now }, TokenLifetime: time.Hour}
	c := &rmc.Call{Peer: &rmc.Peer{PID: 7, Settings: v33}}
	a, err := srv.UnknownMethod0x1(ctx, c)
	if err != nil || a.Unknown1 != 5 || string(a.Unknown2) != "0202020202020202\x00" {
		t.Fatalf("first token %d %q, %v", a.Unknown1, a.Unknown2, err)
	}
	b, err := srv.UnknownMethod0x1(ctx, c)
	if err != nil || b.Unknown1 != 6 || string(b.Unknown2) != "0404040404040404\x00" {
		t.Fatalf("second token %d %q, %v", b.Unknown1, b.Unknown2, err)
	}
	if err := srv.UnknownMethod0x2(ctx, c, rt.RatingSessionToken{Unknown1: 5, Unknown2: b.Unknown2}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("another token's key: %v", err)
	}
	if _, err := srv.UnknownMethod0x1(ctx, c); err == nil {
		t.Error("a token without randomness")
	}
	now = now.Add(time.Hour + time.Nanosecond)
	if err := srv.UnknownMethod0x2(ctx, c, a); !errors.Is(err, types.CoreInvalidArgument) {
		t.Errorf("an expired token: %v", err)
	}
	if err := srv.UnknownMethod0x2(ctx, &rmc.Call{Peer: &rmc.Peer{Settings: v33}}, a); !errors.Is(err, types.RendezVousNotAuthenticated) {
		t.Errorf("no PID: %v", err)
	}
	if _, err := call(srv, c.Peer, rt.RatingMethodGetCommonData, testutil.Unhex(t, "0100000000000000")); !errors.Is(err, types.CoreNotImplemented) {
		t.Errorf("GetCommonData: %v", err)
	}
}

// FuzzRatingServe feeds arbitrary parameters to every method, seeded with the
// official server's token: no panic, a well-formed response each time.
func FuzzRatingServe(f *testing.F) {
	vec := officialToken(f)
	f.Add(uint8(2), vec)
	f.Add(uint8(3), append(append([]byte{}, vec...), 0, 0, 0, 0))
	f.Add(uint8(0x82), vec)
	f.Fuzz(func(t *testing.T, method uint8, params []byte) {
		srv := &Server{Store: new(Memory)}
		st := v33
		if method&0x80 != 0 {
			st = types.Settings{PIDSize: 8, StructureHeader: true, Version: 40000}
		}
		p := &rmc.Peer{PID: 1, Settings: st}
		fuzzCall(t, srv, p, rt.RatingMethodUnknownMethod0x1, nil)
		fuzzCall(t, srv, p, uint32(method&0x7f%10), params)
	})
}
