package pipboy

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// CommandHandler answers a command an app sent (message type 5). A nil response sends
// nothing back, as the real game does for most commands. The handler may change the
// database through the Server (Set, Update), which pushes the change to the app.
type CommandHandler func(ctx context.Context, s *Server, cmd Command) (*CommandResponse, error)

// Server is a game emulator: it answers on the game's TCP port, greets an app with
// message type 1, sends the database as one dump, streams later updates, answers
// heartbeats and commands, sends local map frames when asked, and answers a second
// app with Busy ("Type 2: Busy" in the Pip-Boy PROTOCOL.md).
//
// The zero value serves an empty database (a root object with no keys) on
// 127.0.0.1:27000. Fields must not change once serving starts.
type Server struct {
	// Addr is the TCP address to listen on; default "127.0.0.1:27000". Use ":27000"
	// to serve apps on the network.
	Addr string
	// Hello is the type 1 greeting; default {"lang":"en","version":"1.1.30.0"}.
	Hello Hello
	// HeartbeatInterval is how often heartbeats are sent; default 1 s.
	HeartbeatInterval time.Duration
	// IdleTimeout closes an app that sends nothing for this long; default 20 s.
	IdleTimeout time.Duration
	// MaxMessageSize bounds the content of messages from the app; default 16 MiB.
	MaxMessageSize int
	// Handler answers commands; default DefaultCommandHandler.
	Handler CommandHandler
	// MapFrame supplies the local map frame sent for command 13; default a synthetic
	// frame drawn from $.Map.Local (see SyntheticMap).
	MapFrame func(db *Database) MapFrame
	// Replay, when set, makes the server play a recording to each app instead of
	// greeting it and sending the dump: the game-to-app messages of ReplaySession
	// (0: the recording's MainSession), with their original spacing divided by Speed
	// (0 or 1: real time).
	Replay        *Recording
	ReplaySession uint32
	Speed         float64
	// Logger receives connection events; default none.
	Logger *slog.Logger

	mu       sync.Mutex
	db       *Database
	ln       net.Listener
	active   *msgConn
	ready    bool // the active app has its dump: updates may be sent to it
	conns    map[*msgConn]struct{}
	wg       sync.WaitGroup
	closed   bool
	ctx      context.Context
	cancel   context.CancelFunc
	lastCmds []Command
	hidden   map[uint32][]hiddenMarker // quest markers taken off the maps, by quest formID

	acceptErrors atomic.Uint64
}

// NewServer returns a Server serving db (which it owns from now on).
func NewServer(db *Database) *Server { return &Server{db: db} }

func (s *Server) init() {
	if s.db == nil {
		s.db = NewDatabase()
	}
	if _, ok := s.db.Root(); !ok {
		e := Entry{Type: TypeObject, ID: RootID}
		b, _ := e.Append(nil)
		_ = s.db.Apply(b)
	}
	if s.conns == nil {
		s.conns = make(map[*msgConn]struct{})
	}
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(context.Background())
	}
}

// Listen opens the listening socket without serving yet, so callers can learn the
// port (Addr with port 0) before Serve.
func (s *Server) Listen() (net.Listener, error) {
	return net.Listen("tcp", loopbackAddr(s.Addr, StreamPort))
}

// ListenAndServe listens on Addr and serves until Shutdown or Close.
func (s *Server) ListenAndServe() error {
	ln, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts apps on ln until Shutdown or Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.init()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()
	loggerOr(s.Logger).Info("pipboy: game emulator listening", "addr", ln.Addr())
	return acceptLoop(ln, &s.mu, &s.closed, &s.wg, s.ctx.Done(), s.Logger, &s.acceptErrors, s.serveConn)
}

// AcceptErrors returns how many Accept errors (out of file descriptors, ...) Serve
// has waited out.
func (s *Server) AcceptErrors() uint64 { return s.acceptErrors.Load() }

// ListenAddr returns the address the server listens on, once it does.
func (s *Server) ListenAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops the server at once, closing every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.init()
	s.closed = true
	s.cancel()
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Shutdown closes the listener and the connections, and waits for their goroutines
// until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return closeWithin(ctx, s.Close) }

// View calls fn with the database under the server's lock. fn must not keep Values.
func (s *Server) View(fn func(db *Database)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	fn(s.db)
}

// Update applies a data update payload to the database and sends it to the connected
// app. A refused update changes nothing and sends nothing. Updates reach the app in
// the order they are applied, and never before its dump.
func (s *Server) Update(payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	return s.updateLocked(payload)
}

// updateLocked is Update with s.mu held.
func (s *Server) updateLocked(payload []byte) error {
	if err := s.db.Apply(payload); err != nil {
		return err
	}
	if s.active != nil && s.ready {
		// Written under the lock so that concurrent updates keep their order; the
		// write is bounded by the connection's write timeout.
		if err := s.active.write(TypeDataUpdate, payload); err != nil {
			loggerOr(s.Logger).Info("pipboy: sending update", "err", err)
			s.active.close()
		}
	}
	return nil
}

// Set replaces the scalar value at path (keeping its id and type) with v, and sends
// the change: the way a game changes one field. v must suit the value's type: bool,
// a number, or a string.
func (s *Server) Set(path string, v any) error {
	var payload []byte
	var err error
	s.View(func(db *Database) {
		var val Value
		val, err = db.Lookup(path)
		if err != nil {
			return
		}
		var e Entry
		e, err = ScalarEntry(val.ID(), val.Type(), v)
		if err != nil {
			err = fmt.Errorf("pipboy: set %s: %w", path, err)
			return
		}
		payload, err = e.Append(nil)
	})
	if err != nil {
		return err
	}
	return s.Update(payload)
}

// ScalarEntry builds a value of type t holding v (bool, integer, float or string).
func ScalarEntry(id uint32, t ValueType, v any) (Entry, error) {
	e := Entry{Type: t, ID: id}
	var f float64
	isNum := true
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint32:
		f = float64(x)
	case float32:
		f = float64(x)
	case float64:
		f = x
	default:
		isNum = false
	}
	switch t {
	case TypeBool:
		b, ok := v.(bool)
		if !ok {
			return e, fmt.Errorf("%T for a BOOLEAN", v)
		}
		e.Bool = b
	case TypeString:
		str, ok := v.(string)
		if !ok {
			return e, fmt.Errorf("%T for a STRING", v)
		}
		e.Str = []byte(str)
	case TypeInt8, TypeInt32:
		if !isNum {
			return e, fmt.Errorf("%T for an %s", v, t)
		}
		e.Int = int32(f)
	case TypeUint8, TypeUint32:
		if !isNum || f < 0 {
			return e, fmt.Errorf("%v for a %s", v, t)
		}
		e.Uint = uint32(f)
	case TypeFloat:
		if !isNum {
			return e, fmt.Errorf("%T for a FLOAT", v)
		}
		e.Float = float32(f)
	default:
		return e, fmt.Errorf("value is an %s, not a scalar", t)
	}
	return e, nil
}

// Busy reports whether an app is connected (for a discovery Responder).
func (s *Server) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active != nil
}

// Commands returns the last commands received (up to 64), oldest first.
func (s *Server) Commands() []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Command(nil), s.lastCmds...)
}

func (s *Server) serveConn(c net.Conn) {
	log := loggerOr(s.Logger).With("remote", c.RemoteAddr())
	mc := newMsgConn(c, s.MaxMessageSize, s.IdleTimeout, s.HeartbeatInterval)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	busy := s.active != nil
	if !busy {
		s.active = mc
	}
	s.conns[mc] = struct{}{}
	ctx := s.ctx
	s.mu.Unlock()
	defer func() {
		mc.close()
		mc.wait()
		s.mu.Lock()
		delete(s.conns, mc)
		if s.active == mc {
			s.active = nil
			s.ready = false
		}
		s.mu.Unlock()
	}()
	if busy {
		log.Info("pipboy: app refused: busy")
		_ = mc.write(TypeBusy, nil)
		return
	}
	log.Info("pipboy: app connected")
	if s.Replay != nil {
		mc.goWorker(func() { s.play(ctx, mc, log) })
	} else if err := s.greet(mc); err != nil {
		log.Info("pipboy: greeting app", "err", err)
		return
	}
	// Heartbeats start after the greeting and dump, which the game sends first.
	mc.goWorker(func() { mc.heartbeats(ctx, log) })
	for {
		m, err := mc.read()
		if err != nil {
			select {
			case <-mc.closed:
				log.Info("pipboy: app disconnected")
			default:
				log.Info("pipboy: app connection ended", "err", err)
			}
			return
		}
		switch m.Type {
		case TypeHeartbeat:
			if err := mc.answerHeartbeat(); err != nil {
				return
			}
		case TypeCommandRequest:
			cmd, err := ParseCommand(m.Content)
			if err != nil {
				// The frame was sound, so the stream is still in step: report and go on.
				log.Warn("pipboy: bad command from app", "err", err)
				continue
			}
			if err := s.command(ctx, mc, cmd, log); err != nil {
				log.Info("pipboy: answering command", "err", err)
				return
			}
		default:
			log.Warn("pipboy: unexpected message from app", "type", m.Type, "size", len(m.Content))
		}
	}
}

func (s *Server) greet(mc *msgConn) error {
	h := s.Hello
	if h == (Hello{}) {
		h = Hello{Lang: "en", Version: "1.1.30.0"}
	}
	hb, err := h.Append(nil)
	if err != nil {
		return err
	}
	if err := mc.write(TypeNewConnection, hb); err != nil {
		return err
	}
	// The dump and the permission to send updates happen under one lock, so no
	// update can fall between them or come before them.
	s.mu.Lock()
	defer s.mu.Unlock()
	dump, err := s.db.AppendDump(nil)
	if err != nil {
		return err
	}
	if err := mc.write(TypeDataUpdate, dump); err != nil {
		return err
	}
	s.ready = s.active == mc
	return nil
}

func (s *Server) command(ctx context.Context, mc *msgConn, cmd Command, log *slog.Logger) error {
	log.Info("pipboy: command", "type", cmd.Type, "id", cmd.ID, "args", cmd.Args)
	s.mu.Lock()
	s.lastCmds = append(s.lastCmds, cmd)
	if len(s.lastCmds) > 64 {
		s.lastCmds = s.lastCmds[len(s.lastCmds)-64:]
	}
	s.mu.Unlock()
	h := s.Handler
	if h == nil {
		h = DefaultCommandHandler
	}
	resp, err := h(ctx, s, cmd)
	if err != nil {
		log.Warn("pipboy: command refused", "type", cmd.Type, "id", cmd.ID, "err", err)
		return nil
	}
	if resp != nil {
		b, _ := resp.Append(nil)
		if err := mc.write(TypeCommandResponse, b); err != nil {
			return err
		}
	}
	if cmd.Type == CmdToggleLocalMap {
		return s.sendMap(mc)
	}
	return nil
}

// sendMap sends one local map frame to the app.
func (s *Server) sendMap(mc *msgConn) error {
	s.mu.Lock()
	var f MapFrame
	if s.MapFrame != nil {
		f = s.MapFrame(s.db)
	} else {
		f = SyntheticMap(s.db)
	}
	s.mu.Unlock()
	b, err := f.Append(nil)
	if err != nil {
		return err
	}
	return mc.write(TypeLocalMapUpdate, b)
}

// radioToggle builds the update that turns station id on (others off) or off.
func radioToggle(db *Database, id uint32) ([]byte, error) {
	radio, err := db.Lookup("$.Radio")
	if err != nil {
		return nil, err
	}
	found := false
	var payload []byte
	for _, st := range radio.Elems() {
		active := st.Key("active")
		if active.Type() != TypeBool || !active.IsValid() {
			continue
		}
		want := false
		if st.ID() == id {
			found = true
			want = !active.Bool()
		}
		if active.Bool() != want {
			e := Entry{Type: TypeBool, ID: active.ID(), Bool: want}
			payload, _ = e.Append(payload)
		}
	}
	if !found {
		return nil, fmt.Errorf("toggle radio: %w: no station with id %d in $.Radio", ErrNotFound, id)
	}
	return payload, nil
}

// SyntheticMap draws a deterministic local map frame for the emulator: 128x128 with
// rows padded to 136 bytes like the real game's, extents from $.Map.Local.Extents, and
// a grid with a bright cross at the player's position.
func SyntheticMap(db *Database) MapFrame {
	const w, h, stride = 128, 128, 136
	f := MapFrame{Width: w, Height: h, Stride: stride, Pixels: make([]byte, stride*h)}
	num := func(p string) float32 {
		v, err := db.Lookup(p)
		if err != nil || !v.IsNumber() {
			return 0
		}
		return float32(v.Float())
	}
	f.NW = Extent{num("$.Map.Local.Extents.NWX"), num("$.Map.Local.Extents.NWY")}
	f.NE = Extent{num("$.Map.Local.Extents.NEX"), num("$.Map.Local.Extents.NEY")}
	f.SW = Extent{num("$.Map.Local.Extents.SWX"), num("$.Map.Local.Extents.SWY")}
	px, py := w/2, h/2
	if dx, dy := f.NE.X-f.NW.X, f.SW.Y-f.NW.Y; dx != 0 && dy != 0 {
		x := int((num("$.Map.Local.Player.X") - f.NW.X) / dx * w)
		y := int((num("$.Map.Local.Player.Y") - f.NW.Y) / dy * h)
		if x >= 0 && x < w && y >= 0 && y < h {
			px, py = x, y
		}
	}
	for y := range h {
		for x := range w {
			v := byte(40)
			if x%16 == 0 || y%16 == 0 {
				v = 110
			}
			if (x == px && abs(y-py) < 6) || (y == py && abs(x-px) < 6) {
				v = 255
			}
			f.Pixels[y*stride+x] = v
		}
	}
	return f
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
