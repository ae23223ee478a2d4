package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// fakeGRPC is a gRPC unary endpoint for GetUserFriendPIDs written from the
// gRPC over HTTP/2 specification (interop/friendsgrpc tests against grpc-go
// itself): friend lists by PID, the API key required.
type fakeGRPC struct {
	key     string
	friends map[uint32][]uint32
	calls   atomic.Int64
	// answer, when set, replaces the answer's message bytes.
	answer []byte
	block  chan struct{} // when set, the handler waits for it or the request's end
}

func (f *fakeGRPC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if f.block != nil {
		select {
		case <-f.block:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/grpc")
	status := func(code int, msg string) {
		w.Header().Set(http.TrailerPrefix+"grpc-status", strconv.Itoa(code))
		w.Header().Set(http.TrailerPrefix+"grpc-message", msg)
	}
	if r.ProtoMajor != 2 || r.Method != http.MethodPost || r.URL.Path != MethodGetUserFriendPIDs ||
		r.Header.Get("Content-Type") != "application/grpc+proto" || r.Header.Get("TE") != "trailers" {
		status(12, fmt.Sprintf("unexpected %s %s %s", r.Proto, r.Method, r.URL.Path))
		return
	}
	if r.Header.Get(APIKeyMetadata) != f.key {
		status(2, "Missing or invalid API key")
		return
	}
	body, _ := io.ReadAll(r.Body)
	m, _, err := ParseFrame(body)
	if err != nil {
		status(13, err.Error())
		return
	}
	pid, err := ParseFriendPIDsRequest(m)
	if err != nil {
		status(13, err.Error())
		return
	}
	out := f.answer
	if out == nil {
		out = AppendFriendPIDsResponse(nil, f.friends[pid])
	}
	w.Write(AppendFrame(nil, out))
	status(0, "")
}

func startH2C(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func open(t *testing.T, src string, o Options) *Source {
	t.Helper()
	s, err := Open(src, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestGRPCSource(t *testing.T) {
	ctx := context.Background()
	f := &fakeGRPC{key: "secret", friends: map[uint32][]uint32{1000: {1001, 1002, 1001, 0, 1000}, 1001: {1000}}}
	addr := startH2C(t, f)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := open(t, "grpc://"+addr, Options{Key: "secret", TTL: time.Minute, Now: clk.now})

	fs, err := s.FriendsOf(ctx, 1000)
	if err != nil || !slices.Equal(fs, []types.PID{1001, 1002}) {
		t.Fatalf("FriendsOf: %v %v (repeats, zero and the player itself dropped)", fs, err)
	}
	for _, c := range []struct {
		a, b types.PID
		want bool
	}{{1000, 1001, true}, {1000, 1002, true}, {1000, 1003, false}, {1000, 1000, false}, {1001, 1000, true}, {1002, 1000, false}} {
		if ok, err := s.AreFriends(ctx, c.a, c.b); err != nil || ok != c.want {
			t.Errorf("AreFriends(%d, %d) = %v %v, want %v", c.a, c.b, ok, err, c.want)
		}
	}
	// 1000 was asked once (cached), 1001 and 1002 once each.
	if n := f.calls.Load(); n != 3 {
		t.Fatalf("%d calls, want 3 (answers cached)", n)
	}
	fs[0] = 9 // the caller's copy
	clk.add(time.Minute)
	if fs, _ := s.FriendsOf(ctx, 1000); fs[0] != 1001 || f.calls.Load() != 4 {
		t.Fatalf("after the cache time: %v, %d calls", fs, f.calls.Load())
	}
	if _, err := s.FriendsOf(ctx, 1<<32); err == nil || !errors.Is(err, ErrSource) {
		t.Fatalf("a 64-bit PID: %v", err)
	}
}

func TestGRPCSourceFailures(t *testing.T) {
	ctx := context.Background()
	f := &fakeGRPC{key: "secret", friends: map[uint32][]uint32{1: {2}}}
	addr := startH2C(t, f)

	// A wrong key: the server's error, named, and no friendship.
	s := open(t, "grpc://"+addr, Options{Key: "wrong"})
	ok, err := s.AreFriends(ctx, 1, 2)
	if ok || !errors.Is(err, ErrSource) || !strings.Contains(err.Error(), "Missing or invalid API key") ||
		!strings.Contains(err.Error(), "grpc://"+addr) || !strings.Contains(err.Error(), "Unknown") {
		t.Fatalf("a wrong key: %v %v", ok, err)
	}
	// A failure is not cached: the right key then works.
	s.o.Key = "secret"
	if ok, err := s.AreFriends(ctx, 1, 2); !ok || err != nil {
		t.Fatalf("after a failure: %v %v", ok, err)
	}

	// An answer beyond the size bound, or one that does not decode.
	big := &fakeGRPC{key: "k", answer: AppendFriendPIDsResponse(nil, make([]uint32, 2000))}
	s = open(t, "grpc://"+startH2C(t, big), Options{Key: "k", MaxResponse: 1000})
	if _, err := s.FriendsOf(ctx, 1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a large answer: %v", err)
	}
	many := make([]uint32, MaxFriends+1)
	for i := range many {
		many[i] = uint32(i + 1)
	}
	big.answer = AppendFriendPIDsResponse(nil, many)
	s = open(t, "grpc://"+startH2C(t, big), Options{Key: "k"})
	if _, err := s.FriendsOf(ctx, 1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("%d friends: %v", len(many), err)
	}
	bad := &fakeGRPC{key: "k", answer: []byte{0x0a, 0x05, 1}}
	s = open(t, "grpc://"+startH2C(t, bad), Options{Key: "k"})
	if ok, err := s.AreFriends(ctx, 1, 1); ok || err != nil {
		t.Fatalf("a player and itself: %v %v", ok, err)
	}
	if ok, err := s.AreFriends(ctx, 1, 2); ok || !errors.Is(err, ErrMalformed) {
		t.Fatalf("a truncated answer: %v %v", ok, err)
	}

	// A server that does not answer in time.
	slow := &fakeGRPC{key: "k", block: make(chan struct{})}
	defer close(slow.block)
	s = open(t, "grpc://"+startH2C(t, slow), Options{Key: "k", Timeout: 50 * time.Millisecond})
	if ok, err := s.AreFriends(ctx, 1, 2); ok || !errors.Is(err, ErrSource) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a silent server: %v %v", ok, err)
	}
	// The caller's own context ends its wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.FriendsOf(cctx, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled caller: %v", err)
	}

	// Nobody listening.
	s = open(t, "grpc://127.0.0.1:1", Options{})
	if _, err := s.FriendsOf(ctx, 1); !errors.Is(err, ErrSource) {
		t.Fatalf("nobody listening: %v", err)
	}
}

func TestGRPCSourceTLS(t *testing.T) {
	f := &fakeGRPC{key: "k", friends: map[uint32][]uint32{5: {6}}}
	srv := httptest.NewUnstartedServer(f)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	tr := newTransport(false)
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	s := open(t, "grpcs://"+strings.TrimPrefix(srv.URL, "https://"), Options{Key: "k", Transport: tr})
	if ok, err := s.AreFriends(context.Background(), 5, 6); !ok || err != nil {
		t.Fatalf("over TLS: %v %v", ok, err)
	}
}

func TestHTTPSource(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		switch id {
		case "10":
			json.NewEncoder(w).Encode(HTTPAnswer{Friends: []uint64{11, 12}})
		case "11":
			pid := uint64(11)
			json.NewEncoder(w).Encode(HTTPAnswer{PID: &pid, Friends: []uint64{10}})
		case "13":
			pid := uint64(99)
			json.NewEncoder(w).Encode(HTTPAnswer{PID: &pid, Friends: []uint64{10}})
		case "14":
			io.WriteString(w, `{"friends": [1, 2`)
		case "15":
			http.Redirect(w, r, "/friends/10", http.StatusFound)
		case "16":
			io.WriteString(w, `{"friends": [`+strings.Repeat("1, ", 500)+`1]}`)
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, base := range []string{srv.URL + "/friends", srv.URL + "/friends/", srv.URL + "/friends/{pid}?v=1"} {
		s := open(t, base, Options{Key: "tok"})
		if ok, err := s.AreFriends(ctx, 10, 12); !ok || err != nil {
			t.Fatalf("%s: AreFriends(10, 12): %v %v", base, ok, err)
		}
		if fs, err := s.FriendsOf(ctx, 11); err != nil || !slices.Equal(fs, []types.PID{10}) {
			t.Fatalf("%s: FriendsOf(11): %v %v", base, fs, err)
		}
		if fs, err := s.FriendsOf(ctx, 20); err != nil || len(fs) != 0 {
			t.Fatalf("%s: an unknown player (404): %v %v", base, fs, err)
		}
	}
	s := open(t, srv.URL+"/friends", Options{Key: "tok", MaxResponse: 1000})
	for pid, want := range map[types.PID]error{13: ErrMalformed, 14: ErrMalformed, 15: ErrSource, 16: ErrTooLarge} {
		if ok, err := s.AreFriends(ctx, pid, 10); ok || !errors.Is(err, want) || !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("PID %d: %v %v, want %v", pid, ok, err, want)
		}
	}
	s = open(t, srv.URL+"/friends", Options{Key: "wrong"})
	if ok, err := s.AreFriends(ctx, 10, 11); ok || !errors.Is(err, ErrSource) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a wrong token: %v %v", ok, err)
	}
	// No cache: every ask reaches the endpoint.
	s = open(t, srv.URL+"/friends", Options{Key: "tok", TTL: -1})
	before := calls.Load()
	s.FriendsOf(ctx, 10)
	s.FriendsOf(ctx, 10)
	if calls.Load()-before != 2 {
		t.Fatalf("TTL -1 cached an answer")
	}
}

func TestCacheBound(t *testing.T) {
	f := &fakeGRPC{key: "k", friends: map[uint32][]uint32{}}
	s := open(t, "grpc://"+startH2C(t, f), Options{Key: "k", MaxCached: 3})
	for pid := types.PID(1); pid <= 10; pid++ {
		if _, err := s.FriendsOf(context.Background(), pid); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		n := len(s.cache)
		s.mu.Unlock()
		if n > 3 {
			t.Fatalf("%d players cached, at most 3", n)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	for _, c := range []struct {
		src string
		o   Options
	}{
		{"ftp://host:1", Options{}},
		{"grpc://host", Options{}},
		{"grpc://host:1/path", Options{}},
		{"grpc://user:pw@host:1", Options{}},
		{"https://user:pw@host/x", Options{}},
		{"http:///nohost", Options{}},
		{"grpc://host:1", Options{TTL: time.Hour}},
		{"grpc://host:1", Options{Timeout: -1}},
		{"::", Options{}},
	} {
		if _, err := Open(c.src, c.o); err == nil {
			t.Errorf("Open(%q, %+v) succeeded", c.src, c.o)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("Open(%q): the error shows the password: %v", c.src, err)
		}
	}
}

func TestWire(t *testing.T) {
	// protobuf.dev "Encoding": 150 is 96 01; a packed [3, 270, 86942] is
	// 06 03 8E 02 9E A7 05 after its key (field 1 here: 0A).
	if got := AppendFriendPIDsRequest(nil, 150); string(got) != "\x08\x96\x01" {
		t.Fatalf("request: % x", got)
	}
	packed := []byte{0x0a, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}
	if got := AppendFriendPIDsResponse(nil, []uint32{3, 270, 86942}); string(got) != string(packed) {
		t.Fatalf("response: % x", got)
	}
	for _, b := range [][]byte{packed, {0x08, 0x03, 0x08, 0x8e, 0x02, 0x08, 0x9e, 0xa7, 0x05}, append([]byte{0x12, 0x01, 'x', 0x1d, 1, 2, 3, 4}, packed...)} {
		got, err := ParseFriendPIDsResponse(b, 10)
		if err != nil || !slices.Equal(got, []uint32{3, 270, 86942}) {
			t.Fatalf("ParseFriendPIDsResponse(% x) = %v %v", b, got, err)
		}
	}
	if _, err := ParseFriendPIDsResponse(packed, 2); err == nil {
		t.Fatal("three PIDs with at most 2 allowed")
	}
	for i := range packed {
		if _, err := ParseFriendPIDsResponse(packed[:i], 10); i > 0 && err == nil {
			t.Errorf("a %d-byte prefix parsed", i)
		}
	}
	frame := AppendFrame(nil, packed)
	m, n, err := ParseFrame(frame)
	if err != nil || n != len(frame) || string(m) != string(packed) {
		t.Fatalf("ParseFrame: % x %d %v", m, n, err)
	}
	for i := range frame {
		if _, _, err := ParseFrame(frame[:i]); err == nil {
			t.Errorf("a %d-byte frame prefix parsed", i)
		}
	}
	if _, _, err := ParseFrame([]byte{1, 0, 0, 0, 0}); !errors.Is(err, ErrCompressed) {
		t.Fatalf("a compressed frame: %v", err)
	}
}
