// Package gametest starts a game's NEX server (nex.Server, both PRUDP
// servers on 127.0.0.1) over a fresh SQLite store and logs players in to
// it, for the end-to-end tests of the nex/games packages; CallAll calls
// every method of a generated client.
package gametest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// Password is every test player's password; players are PIDs 2000 to 2015,
// named by their PID in decimal.
const Password = "pw"

// Server is a running game server.
type Server struct {
	Addr   string // the authentication server's
	Config prudp.Config
	NEX    *nex.Server
	Store  *accounts.Store
}

// Start opens a fresh SQLite store, lets setup register the game's
// protocols on srv (srv.Mux is set; srv.Hub() works), and serves until the
// test ends.
func Start(t testing.TB, cfg prudp.Config, version types.Version, setup func(srv *nex.Server, store *accounts.Store) error) *Server {
	t.Helper()
	store, _, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	players := new(auth.Memory)
	for _, sp := range auth.SpecialAccounts {
		players.Add(sp.PID, sp.Name, "secret-"+sp.Name)
	}
	for i := range 16 {
		players.Add(types.PID(2000+i), fmt.Sprint(2000+i), Password)
	}
	srv := &nex.Server{Config: cfg, Accounts: players, NEXVersion: version, Mux: rmc.NewMux()}
	if err := setup(srv, store); err != nil {
		t.Fatal(err)
	}
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(a, b) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return &Server{Addr: a.LocalAddr().String(), Config: cfg, NEX: srv, Store: store}
}

// Player is a logged-in client and the notification events it received.
type Player struct {
	Session *nex.Session
	Events  chan notifications.Event
}

// Login logs pid in (2000 to 2015) with the server's NEX version.
func (s *Server) Login(t testing.TB, pid types.PID) *Player {
	t.Helper()
	p := &Player{Events: make(chan notifications.Event, 64)}
	mux := rmc.NewMux()
	mux.HandleProtocol(notifications.Protocol, &notifications.Handler{F: func(_ context.Context, ev notifications.Event) { p.Events <- ev }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := nex.Login(ctx, s.Addr, nex.LoginConfig{User: fmt.Sprint(pid), Password: Password, Config: s.Config,
		NEXVersion: s.NEX.NEXVersion, Handler: mux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = sess.Close(ctx)
	})
	p.Session = sess
	return p
}

// Next waits (up to 10 seconds) for the next event of type typ, skipping
// others.
func (p *Player) Next(t testing.TB, typ uint32) notifications.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-p.Events:
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("PID %d: no notification %d", p.Session.PID, typ)
			return notifications.Event{}
		}
	}
}

// CallAll calls every method of a generated client (newClient returns, e.g.,
// datastoresmm.NewDataStoreSMMClient(c)) over c with zero arguments, one
// call each, and returns the error each method id got.
func CallAll(t testing.TB, newClient func(c rmc.Caller) any, c rmc.Caller) map[uint32]error {
	t.Helper()
	rec := &recordingCaller{Caller: c}
	client := reflect.ValueOf(newClient(rec))
	ctxType, errType := reflect.TypeFor[context.Context](), reflect.TypeFor[error]()
	errs := map[uint32]error{}
	for i := range client.NumMethod() {
		ft := client.Type().Method(i).Type // with the receiver
		if ft.NumIn() < 2 || ft.In(1) != ctxType || ft.NumOut() == 0 || ft.Out(ft.NumOut()-1) != errType {
			continue
		}
		args := []reflect.Value{reflect.ValueOf(context.Background())}
		for j := 2; j < ft.NumIn(); j++ {
			args = append(args, reflect.Zero(ft.In(j)))
		}
		rec.methods = rec.methods[:0]
		outs := client.Method(i).Call(args)
		if len(rec.methods) != 1 {
			t.Fatalf("%s: %d calls", client.Type().Method(i).Name, len(rec.methods))
		}
		err, _ := outs[len(outs)-1].Interface().(error)
		errs[rec.methods[0]] = err
	}
	return errs
}

// recordingCaller records the method ids called through it.
type recordingCaller struct {
	rmc.Caller
	methods []uint32
}

func (r *recordingCaller) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	r.methods = append(r.methods, method)
	return r.Caller.Call(ctx, protocol, method, params)
}

// CheckDeclared checks a game variant's Server with CallAll: through mux (a
// caller of the Mux it is registered on beside the parent's service), each
// method the variant declares (ids first to last) answers Core::NotImplemented
// exactly when it is not in answered; through alone (a caller whose handler
// is the Server alone), each inherited method (ids below first) answers the
// Result it answers through mux. name is the variant's <V>MethodName.
func CheckDeclared(t testing.TB, newClient func(c rmc.Caller) any, mux, alone rmc.Caller, first, last uint32, answered []uint32, name func(uint32) string) {
	t.Helper()
	errs := CallAll(t, newClient, mux)
	for id := first; id <= last; id++ {
		err, ok := errs[id]
		if !ok {
			t.Errorf("method %d: no client method", id)
			continue
		}
		if ans := slices.Contains(answered, id); ans == errors.Is(err, types.CoreNotImplemented) {
			t.Errorf("method %d %s (answered: %v): %v", id, name(id), ans, err)
		}
	}
	errsAlone := CallAll(t, newClient, alone)
	for id := uint32(1); id < first; id++ {
		var a, b types.Result
		errors.As(errs[id], &a)
		errors.As(errsAlone[id], &b)
		if a != b {
			t.Errorf("method %d %s: %v through the Mux, %v through the Server alone", id, name(id), errs[id], errsAlone[id])
		}
	}
}
