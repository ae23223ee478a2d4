package prototest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Protocol is what Clients checks of one generated protocol.
type Protocol struct {
	ID         uint16
	MethodName func(id uint32) string // <P>MethodName
	Methods    []uint32               // every method id, inherited included
	// NewClient returns New<P>Client(c).
	NewClient func(c rmc.Caller) any
	// Server is New<P>Server(Unimplemented<P>{}).
	Server rmc.Handler
	// For a variant: the ids of the methods it declares, New<P>OwnServer over
	// Unimplemented<P>{} and parent, and its parent protocol's Server.
	Own       []uint32
	OwnServer func(parent rmc.Handler) rmc.Handler
	Parent    rmc.Handler
}

// clientSettings are the settings the clients are checked at.
var clientSettings = []types.Settings{Settings[1], Settings[4]}

// Clients checks every generated client against the generated servers: each
// method of the client (its own and, for a variant, those its embedded parent
// client promotes) is called with zero arguments and must call the method id
// whose name it has, once, and get Core::NotImplemented from the Unimplemented
// handler, which the server reaches only after decoding the parameters to their
// end; every method id has one client method. A variant's client is also
// checked against its OwnServer: the parent's server gets exactly the methods
// the variant inherits, never one it declares.
func Clients(t *testing.T, protocols []Protocol) {
	t.Helper()
	for _, p := range protocols {
		for _, s := range clientSettings {
			checkClient(t, p, p.Server, s, "server")
			if p.OwnServer == nil {
				continue
			}
			parent := &recorder{h: p.Parent}
			checkClient(t, p, p.OwnServer(parent), s, "own server")
			var inherited []uint32
			for _, id := range p.Methods {
				if !slices.Contains(p.Own, id) {
					inherited = append(inherited, id)
				}
			}
			slices.Sort(parent.ids)
			if !slices.Equal(parent.ids, inherited) {
				t.Errorf("protocol %d own server: the parent got methods %v, want the inherited %v", p.ID, parent.ids, inherited)
			}
		}
	}
}

// recorder is an rmc.Handler that records the method ids it passes to h.
type recorder struct {
	h   rmc.Handler
	ids []uint32
}

func (r *recorder) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	r.ids = append(r.ids, c.Method)
	return r.h.ServeRMC(ctx, c, out)
}

// caller is an rmc.Caller over rmc.InMemory that records the calls.
type caller struct {
	rmc.InMemory
	protocols []uint16
	methods   []uint32
}

func (c *caller) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	c.protocols = append(c.protocols, protocol)
	c.methods = append(c.methods, method)
	return c.InMemory.Call(ctx, protocol, method, params)
}

func checkClient(t *testing.T, p Protocol, h rmc.Handler, s types.Settings, what string) {
	t.Helper()
	ctx := context.Background()
	c := &caller{InMemory: rmc.InMemory{Handler: h, Peer: &rmc.Peer{PID: 1000, Settings: s}}}
	client := reflect.ValueOf(p.NewClient(c))
	seen := map[uint32]string{}
	errType := reflect.TypeFor[error]()
	for i := range client.NumMethod() {
		m := client.Type().Method(i)
		ft := m.Type // with the receiver
		if ft.NumIn() < 2 || ft.In(1) != reflect.TypeFor[context.Context]() || ft.NumOut() == 0 || ft.Out(ft.NumOut()-1) != errType {
			continue // not a call
		}
		args := []reflect.Value{reflect.ValueOf(ctx)}
		for j := 2; j < ft.NumIn(); j++ {
			args = append(args, reflect.Zero(ft.In(j)))
		}
		c.protocols, c.methods = nil, nil
		outs := client.Method(i).Call(args)
		err, _ := outs[len(outs)-1].Interface().(error)
		where := what + ", NEX " + s.NEXVersion().String() + ": " + m.Name
		if len(c.methods) != 1 {
			t.Errorf("protocol %d %s: %d calls", p.ID, where, len(c.methods))
			continue
		}
		id := c.methods[0]
		if c.protocols[0] != p.ID {
			t.Errorf("%s: called protocol %d, want %d", where, c.protocols[0], p.ID)
		}
		if name := p.MethodName(id); desc.GoName(name) != m.Name {
			t.Errorf("protocol %d %s: called method %d (%q)", p.ID, where, id, name)
		}
		if prev, dup := seen[id]; dup {
			t.Errorf("protocol %d %s: method %d is %s's too", p.ID, where, id, prev)
		}
		seen[id] = m.Name
		if !errors.Is(err, types.CoreNotImplemented) {
			t.Errorf("protocol %d %s (method %d): %v, want Core::NotImplemented from the handler", p.ID, where, id, err)
		}
	}
	for _, id := range p.Methods {
		if _, ok := seen[id]; !ok {
			t.Errorf("protocol %d %s: no client method calls method %d (%s)", p.ID, what, id, p.MethodName(id))
		}
	}
	if len(seen) != len(p.Methods) {
		t.Errorf("protocol %d %s: the client calls %d methods, the protocol has %d", p.ID, what, len(seen), len(p.Methods))
	}
}
