package nattraversal

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/notifications"
	natproto "github.com/gamewire/gamewire/nex/protocols/nattraversal"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

type stations struct{ natm, natf uint32 }

func (s *stations) PublicURL(p *rmc.Peer) (types.StationURL, bool) {
	return types.NewStationURL("prudp", types.URLParam{Key: "address", Value: "1.2.3.4"}), p.PID != 0
}

func (s *stations) SetNATProperties(p *rmc.Peer, m, f uint32) bool {
	s.natm, s.natf = m, f
	return p.PID != 0
}

type sink struct{ n int }

func (s *sink) Send(context.Context, uint8, []byte) error { s.n++; return nil }

// serve calls method and fails t if it answers anything but an error or
// nothing (GetRelaySignatureKey: see serveData).
func serve(t testing.TB, srv *Server, p *rmc.Peer, method uint32, params []byte) error {
	data, err := serveData(t, srv, p, method, params)
	if err == nil && len(data) != 0 {
		t.Fatalf("method %d answered %x, expected nothing", method, data)
	}
	return err
}

// serveData calls method and returns its answer's data or its error result.
func serveData(t testing.TB, srv *Server, p *rmc.Peer, method uint32, params []byte) ([]byte, error) {
	req := rmc.Request{Protocol: Protocol, CallID: 1, Method: method, Params: params}
	msg, _ := req.Append(nil)
	out, err := rmc.Dispatch(context.Background(), srv, p, msg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := rmc.ParseResponse(out)
	if err != nil {
		t.Fatal(err)
	}
	if resp.IsError() {
		return nil, resp.Result
	}
	return resp.Data, nil
}

func TestNATTraversal(t *testing.T) {
	st := &stations{}
	hub := &notifications.Hub{}
	target := &sink{}
	hub.Add(&rmc.Peer{PID: 7, Conn: target})
	srv := &Server{Hub: hub, Stations: st}
	caller := &rmc.Peer{PID: 5}
	w := types.NewWriter(nil, types.Settings{})
	w.U32(1)
	w.U32(2)
	w.U32(30)
	if err := serve(t, srv, caller, MethodReportNATProperties, w.B); err != nil || st.natm != 1 || st.natf != 2 {
		t.Fatalf("ReportNATProperties: %v %+v", err, st)
	}
	w = types.NewWriter(nil, types.Settings{})
	u := types.NewStationURL("prudp", types.URLParam{Key: "PID", Value: "7"})
	types.WriteList(&w, []types.StationURL{u, u}, (*types.Writer).StationURL)
	if err := serve(t, srv, caller, MethodRequestProbeInitiation, w.B); err != nil || target.n != 2 {
		t.Fatalf("RequestProbeInitiation: %v, %d calls relayed", err, target.n)
	}
	// Wii U / Switch send an rtt, 3DS does not: both are accepted.
	for _, params := range [][]byte{{1, 0, 0, 0, 1}, {1, 0, 0, 0, 0, 9, 0, 0, 0}} {
		if err := serve(t, srv, caller, MethodReportNATTraversalResult, params); err != nil {
			t.Fatal(err)
		}
	}
	if p, r, f := srv.Stats(); p != 2 || r != 2 || f != 1 {
		t.Fatalf("stats %d %d %d", p, r, f)
	}
	if err := serve(t, srv, caller, MethodReportNATTraversalResult, []byte{1, 0}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("truncated: %v", err)
	}
	w = types.NewWriter(nil, types.Settings{})
	types.WriteList(&w, []types.StationURL{types.NewStationURL("prudp")}, (*types.Writer).StationURL)
	if err := serve(t, srv, caller, MethodRequestProbeInitiation, w.B); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("target without PID: %v", err)
	}
	if err := serve(t, srv, caller, MethodGetRelaySignatureKey, []byte{0}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("GetRelaySignatureKey with a parameter: %v", err)
	}
}

// TestGetRelaySignatureKey: no relay server (mode 0, no address, port 0,
// address type 0), the server's UTC time and the configured game server id, in
// the page's field order.
func TestGetRelaySignatureKey(t *testing.T) {
	srv := &Server{GameServerID: 0x1018DB00}
	before := time.Now().UTC().Truncate(time.Second)
	req := rmc.Request{Protocol: Protocol, CallID: 1, Method: MethodGetRelaySignatureKey}
	msg, _ := req.Append(nil)
	out, err := rmc.Dispatch(context.Background(), srv, &rmc.Peer{PID: 5}, msg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	resp, _, err := rmc.ParseResponse(out)
	if err != nil || resp.IsError() {
		t.Fatalf("response %+v, %v", resp, err)
	}
	// s32 relayMode, DateTime, String "" (length 1, NUL), u16 port, s32 type, u32 id.
	if len(resp.Data) != 4+8+3+2+4+4 {
		t.Fatalf("response %d bytes: %x", len(resp.Data), resp.Data)
	}
	r := types.NewReader(resp.Data, types.Settings{})
	var k natproto.NATTraversalGetRelaySignatureKeyResponse
	k.Read(&r)
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	if k.Mode != 0 || k.Address != "" || k.Port != 0 || k.AddressType != 0 || k.GameServerID != 0x1018DB00 {
		t.Fatalf("answer %+v", k)
	}
	if at := k.Time.Time(); at.Before(before) || at.After(after) {
		t.Fatalf("currentUTCTime %v, want between %v and %v", k.Time, before, after)
	}
}

// FuzzReadRelaySignatureKey decodes any GetRelaySignatureKey response with
// the generated codec without panicking, and what it decodes encodes to bytes
// that decode to the same answer (a String of length 0, which readers accept,
// is written with its NUL). Seeds: the answer gamewire and Pretendo's
// nex-protocols-common-go give (no relay), and one naming a relay.
func FuzzReadRelaySignatureKey(f *testing.F) {
	for _, k := range []natproto.NATTraversalGetRelaySignatureKeyResponse{
		{Time: types.MakeDateTime(2026, 11, 24, 17, 0, 0)},
		{Mode: 1, Time: types.MakeDateTime(2026, 11, 24, 17, 0, 0), Address: "192.0.2.7", Port: 50000,
			AddressType: 1, GameServerID: 0x1018DB00},
	} {
		w := types.NewWriter(nil, types.Settings{})
		k.Append(&w)
		f.Add(w.B)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := types.NewReader(b, types.Settings{})
		var k natproto.NATTraversalGetRelaySignatureKeyResponse
		k.Read(&r)
		if r.Err() != nil {
			return
		}
		w := types.NewWriter(nil, types.Settings{})
		k.Append(&w)
		r2 := types.NewReader(w.B, types.Settings{})
		var again natproto.NATTraversalGetRelaySignatureKeyResponse
		if again.Read(&r2); r2.Done() != nil || again != k {
			t.Fatalf("%x decoded to %+v, encoded as %x, which decodes to %+v (%v)", b, k, w.B, again, r2.Done())
		}
	})
}

func FuzzNATServe(f *testing.F) {
	f.Add(uint8(1), []byte{1, 0, 0, 0, 3, 0, 'a', ':', 0})
	f.Add(uint8(4), []byte{1, 0, 0, 0, 1, 9, 0, 0, 0})
	f.Add(uint8(5), []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0})
	f.Add(uint8(6), []byte(nil))
	f.Fuzz(func(t *testing.T, method uint8, params []byte) {
		hub := &notifications.Hub{}
		hub.Add(&rmc.Peer{PID: 7, Conn: &sink{}})
		srv := &Server{Hub: hub, Stations: &stations{}}
		if m := uint32(method % 8); m != MethodGetRelaySignatureKey {
			serve(t, srv, &rmc.Peer{PID: 5}, m, params)
			return
		}
		// GetRelaySignatureKey takes no parameters and answers a key.
		data, err := serveData(t, srv, &rmc.Peer{PID: 5}, MethodGetRelaySignatureKey, params)
		if err != nil {
			return
		}
		r := types.NewReader(data, types.Settings{})
		var k natproto.NATTraversalGetRelaySignatureKeyResponse
		k.Read(&r)
		if err := r.Done(); err != nil {
			t.Fatalf("GetRelaySignatureKey answered %x: %v", data, err)
		}
	})
}

// TestNATReportHooks: ReportNATProperties hands the reported mapping,
// filtering and rtt to OnProperties, whose error is the method's answer (and
// a caller that has not registered gets RendezVous::NotAuthenticated before
// it is called); a traversal result reaches OnResult with the reporting
// connection.
func TestNATReportHooks(t *testing.T) {
	var got []Properties
	var results []Result
	hookErr := error(nil)
	srv := &Server{Hub: &notifications.Hub{}, Stations: &stations{},
		OnProperties: func(_ context.Context, p *rmc.Peer, props Properties) error {
			if p.PID == 5 {
				got = append(got, props)
			}
			return hookErr
		},
		OnResult: func(_ context.Context, r Result) { results = append(results, r) }}
	caller := &rmc.Peer{PID: 5}
	params := []byte{2, 0, 0, 0, 1, 0, 0, 0, 40, 0, 0, 0}
	if err := serve(t, srv, caller, MethodReportNATProperties, params); err != nil {
		t.Fatal(err)
	}
	hookErr = types.CoreException
	if err := serve(t, srv, caller, MethodReportNATProperties, params); !errors.Is(err, types.CoreException) {
		t.Fatalf("hook failure answered %v", err)
	}
	if err := serve(t, srv, &rmc.Peer{}, MethodReportNATProperties, params); !errors.Is(err, types.RendezVousNotAuthenticated) {
		t.Fatalf("unregistered caller: %v", err)
	}
	want := Properties{Mapping: MappingEndpointDependent, Filtering: FilteringPortIndependent, RTT: 40}
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("OnProperties got %+v, want twice %+v", got, want)
	}
	if err := serve(t, srv, caller, MethodReportNATTraversalResultDetail, []byte{9, 0, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0] != (Result{Peer: caller, PID: 5, CID: 9, Detail: -2, RTT: 7}) {
		t.Fatalf("OnResult got %+v", results)
	}
	// ReportNATTraversalResult in the 3DS's form and in the Wii U's (with the rtt).
	for _, params := range [][]byte{{3, 0, 0, 0, 1}, {4, 0, 0, 0, 0, 12, 0, 0, 0}} {
		if err := serve(t, srv, caller, MethodReportNATTraversalResult, params); err != nil {
			t.Fatal(err)
		}
	}
	if len(results) != 3 || results[1] != (Result{Peer: caller, PID: 5, CID: 3, Success: true}) ||
		results[2] != (Result{Peer: caller, PID: 5, CID: 4, RTT: 12}) {
		t.Fatalf("OnResult got %+v", results[1:])
	}
	// InitiateProbe is the server's call: refused whatever its parameters.
	if err := serve(t, srv, caller, MethodInitiateProbe, []byte{1}); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("InitiateProbe: %v", err)
	}
}

// TestClient: the Client's calls against the Server over a pipe: NAT
// properties, a traversal result in both forms (the rtt only in the Wii U's)
// and the relay signature key.
func TestClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := &stations{}
	var results []Result
	srv := &Server{Hub: &notifications.Hub{}, Stations: st, GameServerID: 42,
		OnResult: func(_ context.Context, r Result) { results = append(results, r) }}
	mux := rmc.NewMux()
	mux.HandleProtocol(Protocol, srv)
	a, b := rmc.Pipe()
	defer a.Close()
	go rmc.Serve(ctx, b, mux, &rmc.Peer{PID: 5}, nil)
	rc := rmc.NewClient(a, rmc.ClientConfig{})
	defer rc.Close()
	c := &Client{RMC: rc}
	if err := c.ReportNATProperties(ctx, Properties{Mapping: 1, Filtering: 2, RTT: 30}); err != nil || st.natm != 1 || st.natf != 2 {
		t.Fatalf("ReportNATProperties: %v %+v", err, st)
	}
	if err := c.ReportNATTraversalResult(ctx, 8, true, false, 99); err != nil {
		t.Fatal(err)
	}
	if err := c.ReportNATTraversalResult(ctx, 9, false, true, 15); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].CID != 8 || !results[0].Success || results[0].RTT != 0 ||
		results[1].CID != 9 || results[1].Success || results[1].RTT != 15 {
		t.Fatalf("results %+v", results)
	}
	if k, err := c.GetRelaySignatureKey(ctx); err != nil || k.GameServerID != 42 || k.RelayMode != 0 || k.CurrentUTCTime == 0 {
		t.Fatalf("GetRelaySignatureKey: %+v %v", k, err)
	}
}
