// Package remote is friends.Friends over a friends server elsewhere, so a
// gamewire game server can join a network whose friend lists it does not keep:
//
//   - grpc://HOST:PORT (grpcs:// over TLS): a Pretendo friends server's gRPC
//     API, service friends.Friends, method GetUserFriendPIDs (request
//     {uint32 pid = 1}, response {repeated uint32 pids = 1}), with the API key
//     in the X-API-Key metadata (PretendoNetwork/grpc-protobufs friends/ and
//     PretendoNetwork/friends grpc/). The client is gRPC's unary call as the
//     gRPC over HTTP/2 specification (grpc/grpc doc/PROTOCOL-HTTP2.md)
//     describes it, on net/http's HTTP/2 (prior knowledge for grpc://), with
//     the two messages encoded by hand (protobuf encoding, protobuf.dev).
//   - http://... or https://...: a JSON endpoint (HTTPSource), the key sent as
//     a bearer token.
//
// Answers are cached for a bounded time (Options.TTL) for a bounded number of
// players; each fetch has a timeout and a response-size bound; concurrent asks
// for one player share one fetch. An error names the source and never reads as
// friendship: AreFriends answers false with it.
package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/types"
)

// Defaults and bounds of Options.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultTTL         = 30 * time.Second
	MaxTTL             = 10 * time.Minute
	DefaultMaxCached   = 10000    // players whose friend lists are cached
	DefaultMaxResponse = 64 << 10 // bytes of one answer
	// MaxFriends bounds the friend PIDs one answer may carry (a console holds
	// 100; a Pretendo server answers a player's 3DS and Wii U lists).
	MaxFriends = 1000
)

// Errors, wrapped with the source and the player asked about.
var (
	// ErrSource is a failed fetch: unreachable, refused, timed out, or a
	// status other than success.
	ErrSource = errors.New("friends source failed")
	// ErrMalformed is an answer that does not decode.
	ErrMalformed = errors.New("friends source answer malformed")
	// ErrTooLarge is an answer beyond Options.MaxResponse bytes or
	// MaxFriends PIDs.
	ErrTooLarge = errors.New("friends source answer too large")
)

// Options configure a Source; the zero value takes the defaults.
type Options struct {
	// Key authenticates gamewire to the source: the gRPC X-API-Key
	// metadata, or HTTP's bearer token. Empty sends none.
	Key string
	// Timeout bounds one fetch; default DefaultTimeout.
	Timeout time.Duration
	// TTL is how long an answer is used before it is asked again; default
	// DefaultTTL, at most MaxTTL, negative caches nothing.
	TTL time.Duration
	// MaxCached bounds the players whose answers are cached; default
	// DefaultMaxCached.
	MaxCached int
	// MaxResponse bounds one answer's bytes; default DefaultMaxResponse.
	MaxResponse int
	// Transport carries the requests; default an own http.Transport (HTTP/2
	// with prior knowledge for grpc://, TLS with ALPN h2 for grpcs://).
	Transport http.RoundTripper
	// Now returns the time; default time.Now.
	Now func() time.Time
}

// fetcher asks a source for one player's friends.
type fetcher interface {
	fetch(ctx context.Context, pid types.PID) ([]types.PID, error)
}

// Source is friends.Friends over a remote friends server. Its methods are
// safe for concurrent use.
type Source struct {
	name string // the source's address, without credentials
	f    fetcher
	o    Options
	tr   *http.Transport // ours to close, nil when Options.Transport was given

	mu     sync.Mutex
	cache  map[types.PID]entry
	flight map[types.PID]*call
}

var _ friends.Friends = (*Source)(nil)

type entry struct {
	pids    []types.PID
	expires time.Time
}

type call struct {
	done chan struct{}
	pids []types.PID
	err  error
}

// Open returns the Source that source names: grpc://HOST:PORT,
// grpcs://HOST:PORT, or an http:// or https:// URL (HTTPSource describes
// what it answers).
func Open(source string, o Options) (*Source, error) {
	u, err := url.Parse(source)
	if err != nil {
		return nil, fmt.Errorf("friends source %q: %w", source, err)
	}
	if u.User != nil {
		return nil, fmt.Errorf("friends source %q: credentials go in the key (GAMEWIRE_FRIENDS_KEY), not the URL", u.Redacted())
	}
	if o.TTL > MaxTTL {
		return nil, fmt.Errorf("friends source %s: a cache time of %v is beyond %v", u, o.TTL, MaxTTL)
	}
	if o.Timeout < 0 || o.MaxCached < 0 || o.MaxResponse < 0 {
		return nil, fmt.Errorf("friends source %s: negative timeout, cache size or response bound", u)
	}
	o.Timeout = orDefault(o.Timeout, DefaultTimeout)
	o.TTL = orDefault(o.TTL, DefaultTTL)
	o.MaxCached = orDefault(o.MaxCached, DefaultMaxCached)
	o.MaxResponse = orDefault(o.MaxResponse, DefaultMaxResponse)
	s := &Source{name: u.String(), o: o, cache: map[types.PID]entry{}, flight: map[types.PID]*call{}}
	rt := o.Transport
	switch u.Scheme {
	case "grpc", "grpcs":
		if u.Host == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("friends source %s: want %s://HOST:PORT", u, u.Scheme)
		}
		if rt == nil {
			s.tr = newTransport(u.Scheme == "grpc")
			rt = s.tr
		}
		scheme := "https"
		if u.Scheme == "grpc" {
			scheme = "http"
		}
		s.f = &grpcSource{src: s, base: scheme + "://" + u.Host, client: &http.Client{Transport: rt}}
	case "http", "https":
		if u.Host == "" {
			return nil, fmt.Errorf("friends source %s: no host", u)
		}
		if rt == nil {
			s.tr = http.DefaultTransport.(*http.Transport).Clone()
			rt = s.tr
		}
		s.f = &httpSource{src: s, url: u, client: &http.Client{Transport: rt, CheckRedirect: noRedirect}}
	default:
		return nil, fmt.Errorf("friends source %s: scheme %q is none of grpc, grpcs, http, https", u, u.Scheme)
	}
	return s, nil
}

func orDefault[T int | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// noRedirect keeps the bearer token with the configured host.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// newTransport is an HTTP/2-only transport: with prior knowledge over plain
// TCP (h2c, grpc://), or over TLS (grpcs://).
func newTransport(plain bool) *http.Transport {
	tr := &http.Transport{ForceAttemptHTTP2: true, MaxResponseHeaderBytes: 16 << 10, IdleConnTimeout: 90 * time.Second}
	var p http.Protocols
	if plain {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	tr.Protocols = &p
	return tr
}

// String returns the source's address (never its key).
func (s *Source) String() string { return s.name }

// Close releases the source's idle connections.
func (s *Source) Close() error {
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
	return nil
}

func (s *Source) now() time.Time {
	if s.o.Now != nil {
		return s.o.Now()
	}
	return time.Now()
}

// AreFriends implements friends.Friends: b is among a's friends as the
// source answers them. An error answers false.
func (s *Source) AreFriends(ctx context.Context, a, b types.PID) (bool, error) {
	if a == b {
		return false, nil
	}
	fs, err := s.FriendsOf(ctx, a)
	if err != nil {
		return false, err
	}
	return slices.Contains(fs, b), nil
}

// FriendsOf implements friends.Friends: pid's friends, from the cache while
// an answer is younger than Options.TTL, else from the source. The slice
// returned is the caller's.
func (s *Source) FriendsOf(ctx context.Context, pid types.PID) ([]types.PID, error) {
	s.mu.Lock()
	if e, ok := s.cache[pid]; ok && s.now().Before(e.expires) {
		s.mu.Unlock()
		return slices.Clone(e.pids), nil
	}
	c, ok := s.flight[pid]
	if !ok {
		c = &call{done: make(chan struct{})}
		s.flight[pid] = c
		// The fetch is shared: it runs on its own timeout, not on the
		// first asker's context.
		go s.run(context.WithoutCancel(ctx), pid, c)
	}
	s.mu.Unlock()
	select {
	case <-c.done:
		if c.err != nil {
			return nil, c.err
		}
		return slices.Clone(c.pids), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: friends source %s, PID %d: %w", ErrSource, s.name, pid, ctx.Err())
	}
}

func (s *Source) run(ctx context.Context, pid types.PID, c *call) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	pids, err := s.f.fetch(ctx, pid)
	if err == nil {
		pids, err = s.clean(pid, pids)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.flight, pid)
	c.pids, c.err = pids, err
	close(c.done)
	if err == nil && s.o.TTL > 0 {
		s.store(pid, pids)
	}
}

// clean drops repeats, zero and pid itself, and bounds the count.
func (s *Source) clean(pid types.PID, pids []types.PID) ([]types.PID, error) {
	if len(pids) > MaxFriends {
		return nil, fmt.Errorf("%w: friends source %s: %d friends of PID %d (at most %d)", ErrTooLarge, s.name, len(pids), pid, MaxFriends)
	}
	out := make([]types.PID, 0, len(pids))
	seen := make(map[types.PID]bool, len(pids))
	for _, p := range pids {
		if p != 0 && p != pid && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// store caches pids (s.mu held), making room when the cache is full:
// expired entries first, then any.
func (s *Source) store(pid types.PID, pids []types.PID) {
	now := s.now()
	if _, ok := s.cache[pid]; !ok && len(s.cache) >= s.o.MaxCached {
		for p, e := range s.cache {
			if !now.Before(e.expires) {
				delete(s.cache, p)
			}
		}
		for p := range s.cache {
			if len(s.cache) < s.o.MaxCached {
				break
			}
			delete(s.cache, p)
		}
	}
	s.cache[pid] = entry{pids: pids, expires: now.Add(s.o.TTL)}
}

// fail is an error of the source's about pid: sentinel, then format (whose
// %w verbs wrap too).
func (s *Source) fail(sentinel error, pid types.PID, format string, args ...any) error {
	return fmt.Errorf("%w: friends source %s, PID %d: "+format, append([]any{sentinel, s.name, pid}, args...)...)
}
