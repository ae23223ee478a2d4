// Package coverage measures how much of a title a NEX server serves: it logs in
// and calls every (protocol, method) the title's Pretendo Network server
// answers (nex/games' facts copy of the Pretendo tables), with parameters
// encoded from the method's description (nex/desc, nex/desc/dyn: each
// parameter its default or its type's zero value), and counts the methods
// answered with anything other than Core::NotImplemented. `gamewire games
// check` runs it against an in-process `serve --game` or any server.
package coverage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/desc/dyn"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// DefaultCallTimeout bounds each call.
const DefaultCallTimeout = 5 * time.Second

// Config configures Check.
type Config struct {
	// Addr is the authentication server's address.
	Addr string
	// Login logs in to the secure server (user, password, PRUDP configuration).
	Login nex.LoginConfig
	// Set holds the protocol descriptions parameters are encoded by; default
	// desc.Builtin.
	Set *desc.Set
	// CallTimeout bounds each call; default DefaultCallTimeout.
	CallTimeout time.Duration
}

// Outcome is what one method's call gave.
type Outcome struct {
	Method games.PretendoMethod
	// Result is the error's name ("Core::NotImplemented",
	// "Core::InvalidArgument"), "" when the call succeeded.
	Result string
	// Err is a failure other than an RMC error (a timeout, a lost connection).
	Err error
	// Encoded says whether the parameters were encoded by a description
	// (false: the method has no description and was called with none).
	Encoded bool
	// NoAnswer: the protocol is described as never answered and the call was
	// not answered within NoResponseWait.
	NoAnswer bool
}

// Served reports whether the method was answered with something other than
// Core::NotImplemented.
func (o Outcome) Served() bool {
	return o.Err == nil && o.Result != types.CoreNotImplemented.Name()
}

// Report is a title's coverage.
type Report struct {
	Game     games.Game
	Outcomes []Outcome
}

// Served counts the served methods.
func (r Report) Served() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Served() {
			n++
		}
	}
	return n
}

// Missing returns the outcomes not served.
func (r Report) Missing() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if !o.Served() {
			out = append(out, o)
		}
	}
	return out
}

// ErrNoPretendoServer reports a game Pretendo Network runs no server for.
var ErrNoPretendoServer = errors.New("coverage: no Pretendo Network server for this game")

// Check calls every method of g's Pretendo server (methods.Of(g.Pretendo)) on
// the server at cfg.Addr: Ticket Granting's on the authentication server, the
// rest on the secure server after logging in.
func Check(ctx context.Context, cfg Config, g games.Game, methods games.PretendoMethods) (Report, error) {
	if g.Pretendo == "" {
		return Report{}, fmt.Errorf("%w: %s", ErrNoPretendoServer, g.Name)
	}
	if cfg.Set == nil {
		set, err := desc.Builtin()
		if err != nil {
			return Report{}, err
		}
		cfg.Set = set
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	c := &checker{cfg: cfg, game: g, variant: dyn.GameVariant(g.Name)}
	defer c.close()
	rep := Report{Game: g}
	for _, m := range methods.Of(g.Pretendo) {
		o, err := c.call(ctx, m)
		if err != nil {
			return rep, err
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	return rep, nil
}

type checker struct {
	cfg     Config
	game    games.Game
	variant string
	sess    *nex.Session
}

func (c *checker) close() {
	if c.sess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = c.sess.Close(ctx)
		cancel()
		c.sess = nil
	}
}

// NoResponseWait is how long a call to a protocol described as never answered
// (MessageDelivery) waits for an answer: none within it means the method was
// taken (an unserved one is answered Core::NotImplemented at once).
const NoResponseWait = time.Second

// noResponse reports whether m's protocol is described as never answered.
func (c *checker) noResponse(m games.PretendoMethod) bool {
	p := dyn.SelectProtocol(c.cfg.Set, m.ProtocolID, "")
	return p != nil && p.Root().NoResponse
}

// describe finds the description of m: the game's variant of the protocol id
// when the table names a variant, the generic protocol otherwise.
func (c *checker) describe(m games.PretendoMethod) *desc.Method {
	variant := ""
	if strings.Contains(m.Protocol, "(") {
		variant = c.variant
	}
	p := dyn.SelectProtocol(c.cfg.Set, m.ProtocolID, variant)
	if p == nil {
		return nil
	}
	// A description of another protocol on the same id (Storage Manager on
	// Utility's 110) does not describe this one's parameters.
	if d := p.Method(m.MethodID); d != nil && !d.Opaque && sameName(d.Name, m.Method) {
		return d
	}
	return nil
}

// sameName compares method names ignoring case and underscores (nintendo-wiki
// and Pretendo spell some differently: GetMetaByOwnerId, GetMetaByOwnerID), and
// the two spellings of an unnamed method (the wiki's UnknownMethod0x1,
// Pretendo's Unk1).
func sameName(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
		if n, ok := strings.CutPrefix(s, "unknownmethod0x"); ok {
			return "unk" + n
		}
		return s
	}
	return norm(a) == norm(b)
}

// params encodes m's parameters from their defaults, or none.
func (c *checker) params(m games.PretendoMethod, st types.Settings) ([]byte, bool) {
	d := c.describe(m)
	if d == nil {
		return nil, false
	}
	codec := dyn.Codec{Set: c.cfg.Set, Settings: st, Version: types.Version(c.game.NEXVersion)}
	b, err := codec.AppendFields(nil, d.Params, nil)
	if err != nil {
		return nil, false
	}
	return b, true
}

func (c *checker) call(ctx context.Context, m games.PretendoMethod) (Outcome, error) {
	o := Outcome{Method: m}
	var (
		resp func(ctx context.Context, body []byte) error
		st   types.Settings
	)
	if m.Server == "auth" {
		conn, cl, err := c.dialAuth(ctx)
		if err != nil {
			return o, err
		}
		defer conn.Abort()
		defer cl.Close()
		st = cl.Settings()
		resp = func(ctx context.Context, body []byte) error {
			_, err := cl.Call(ctx, m.ProtocolID, m.MethodID, body)
			return err
		}
	} else {
		if c.sess == nil {
			lctx, cancel := context.WithTimeout(ctx, 4*c.cfg.CallTimeout)
			s, err := nex.Login(lctx, c.cfg.Addr, c.cfg.Login)
			cancel()
			if err != nil {
				return o, fmt.Errorf("coverage: login: %w", err)
			}
			c.sess = s
		}
		st = c.sess.RMC.Settings()
		resp = func(ctx context.Context, body []byte) error {
			_, err := c.sess.RMC.Call(ctx, m.ProtocolID, m.MethodID, body)
			return err
		}
	}
	body, ok := c.params(m, st)
	o.Encoded = ok
	timeout := c.cfg.CallTimeout
	noResp := c.noResponse(m)
	if noResp {
		timeout = min(timeout, NoResponseWait)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	err := resp(cctx, body)
	cancel()
	var ce *rmc.CallError
	switch {
	case noResp && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		o.Result = "" // taken without an answer, as the protocol is described
		o.NoAnswer = true
	case err == nil:
	case errors.As(err, &ce):
		o.Result = ce.Result.Name()
	default:
		if ctx.Err() != nil {
			return o, ctx.Err()
		}
		o.Err = err
		if m.Server != "auth" {
			c.close() // log in again for the next call
		}
	}
	return o, nil
}

// dialAuth opens a connection to the authentication server, as a client does
// before logging in.
func (c *checker) dialAuth(ctx context.Context) (*prudp.Conn, *rmc.Client, error) {
	cfg := c.cfg.Login.Config
	cfg.Ticket, cfg.PID = nil, 0
	dial := c.cfg.Login.Dial
	if dial == nil {
		dial = prudp.Dial
	}
	dctx, cancel := context.WithTimeout(ctx, 4*c.cfg.CallTimeout)
	defer cancel()
	conn, err := dial(dctx, c.cfg.Addr, &cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("coverage: connect to the authentication server %s: %w", c.cfg.Addr, err)
	}
	st := nex.ConnSettings(cfg, conn.MinorVersion())
	if c.cfg.Login.Settings != nil {
		st = *c.cfg.Login.Settings
	}
	if c.cfg.Login.NEXVersion != 0 {
		st.Version = c.cfg.Login.NEXVersion
	}
	return conn, rmc.NewClient(nex.ConnTransport{Conn: conn}, rmc.ClientConfig{Settings: st}), nil
}
