package secure

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func call(t *testing.T, srv *Server, p *rmc.Peer, method uint32, params []byte) rmc.Response {
	t.Helper()
	mux := rmc.NewMux()
	mux.HandleProtocol(rmc.ProtocolSecureConnection, srv)
	msg, _ := (&rmc.Request{Protocol: rmc.ProtocolSecureConnection, CallID: 3, Method: method, Params: params}).Append(nil)
	out, err := rmc.Dispatch(context.Background(), mux, p, msg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := rmc.ParseResponse(out)
	if err != nil || resp.CallID != 3 {
		t.Fatalf("%x: %v", out, err)
	}
	return resp
}

func urlList(t *testing.T, urls ...string) []byte {
	w := types.NewWriter(nil, types.Settings{})
	types.WriteList(&w, urls, func(w *types.Writer, s string) { w.String(s) })
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRegister(t *testing.T) {
	srv := new(Server)
	peer := &rmc.Peer{PID: 1000, Addr: netip.MustParseAddrPort("203.0.113.7:51000")}
	// Register request: List<StationURL> with one url "prudp:/address=192.168.1.2;port=51000".
	params := unhex(t, "01000000 2600 7072756470 3a2f 616464726573733d3139322e3136382e312e32 3b 706f72743d3531303030 00")
	resp := call(t, srv, peer, MethodRegister, params)
	if resp.IsError() {
		t.Fatal(resp.Result)
	}
	// Response: Result success, connection id 1, the public url.
	wantURL := "prudp:/address=203.0.113.7;port=51000;natf=0;natm=0;type=3;PID=1000;RVCID=1"
	want := append(unhex(t, "01000100 01000000"), mustString(t, wantURL)...)
	if !bytes.Equal(resp.Data, want) {
		t.Fatalf("got  %x\nwant %x", resp.Data, want)
	}
	st, ok := srv.Lookup(1)
	if !ok || st.PID != 1000 || len(st.URLs) != 1 || st.Public.String() != wantURL {
		t.Fatalf("recorded %+v", st)
	}
	// Registering again keeps the connection id; a second connection gets id 2.
	if resp := call(t, srv, peer, MethodRegister, params); !bytes.Equal(resp.Data[4:8], []byte{1, 0, 0, 0}) {
		t.Fatalf("re-register: %x", resp.Data)
	}
	other := &rmc.Peer{PID: 1001, Addr: netip.MustParseAddrPort("192.168.1.2:51000"), Scheme: "prudps"}
	resp = call(t, srv, other, MethodRegister, urlList(t))
	want = append(unhex(t, "01000100 02000000"), mustString(t, "prudps:/address=192.168.1.2;port=51000;natf=0;natm=0;type=2;PID=1001;RVCID=2")...)
	if !bytes.Equal(resp.Data, want) {
		t.Fatalf("second station: got %x\nwant %x", resp.Data, want)
	}
	// An unauthenticated connection (no ticket, PID 0) cannot register.
	if resp := call(t, srv, &rmc.Peer{}, MethodRegister, params); resp.Result != types.RendezVousNotAuthenticated {
		t.Fatalf("unauthenticated: %v", resp.Result)
	}
	// Lookups by connection id and PID.
	resp = call(t, srv, other, MethodRequestUrls, unhex(t, "01000000 e8030000"))
	r := types.NewReader(resp.Data, types.Settings{})
	found := r.Bool("retval")
	urls := types.ReadList(&r, "urls", (*types.Reader).StationURL)
	if r.Done() != nil || !found || len(urls) != 2 || urls[1].String() != wantURL {
		t.Fatalf("RequestUrls: %v %v %v", found, urls, r.Err())
	}
	resp = call(t, srv, other, MethodRequestUrls, unhex(t, "01000000 e9030000")) // wrong PID
	if !bytes.Equal(resp.Data, unhex(t, "00 00000000")) {
		t.Fatalf("RequestUrls with wrong PID: %x", resp.Data)
	}
	resp = call(t, srv, other, MethodRequestConnectionData, unhex(t, "01000000 e8030000"))
	r = types.NewReader(resp.Data, types.Settings{})
	found = r.Bool("retval")
	type cd struct {
		url string
		cid uint32
	}
	data := types.ReadList(&r, "data", func(r *types.Reader, f string) cd {
		m := r.EnterStructure(f)
		v := cd{r.StationURL("m_StationUrl").String(), r.U32("m_ConnectionID")}
		r.LeaveStructure(m)
		return v
	})
	if r.Done() != nil || !found || len(data) != 2 || data[0].cid != 1 {
		t.Fatalf("RequestConnectionData: %v %v", data, r.Err())
	}
	// The private url others get names the station too; reported NAT
	// properties show in both urls (and in StationURLs).
	if urls[0].String() != "prudp:/address=192.168.1.2;port=51000;PID=1000;RVCID=1;natm=0;natf=0" {
		t.Fatalf("private url %s", urls[0])
	}
	if !srv.SetNATProperties(peer, 1, 2) || srv.SetNATProperties(&rmc.Peer{PID: 5}, 1, 2) {
		t.Fatal("SetNATProperties: registered peer refused or unknown peer accepted")
	}
	resp = call(t, srv, other, MethodRequestUrls, unhex(t, "01000000 e8030000"))
	r = types.NewReader(resp.Data, types.Settings{})
	r.Bool("retval")
	urls = types.ReadList(&r, "urls", (*types.Reader).StationURL)
	for _, u := range append(urls, srv.StationURLs(1000)...) {
		if m, _ := u.Uint("natm"); m != 1 {
			t.Errorf("%s: natm, want 1", u)
		}
		if f, _ := u.Uint("natf"); f != 2 {
			t.Errorf("%s: natf, want 2", u)
		}
	}
	if got := srv.StationURLs(1000); len(got) != 2 || got[0].Address() != "203.0.113.7" || got[1].Address() != "192.168.1.2" {
		t.Fatalf("StationURLs: %v", got)
	}
	// Forget frees the id.
	srv.Forget(peer)
	if _, ok := srv.Lookup(1); ok || len(srv.Stations()) != 1 {
		t.Fatal("Forget kept the station")
	}
}

func mustString(t *testing.T, s string) []byte {
	b, err := types.AppendString(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUpdateReplaceReport(t *testing.T) {
	var got []Report
	srv := &Server{OnReport: func(_ context.Context, r Report) { got = append(got, r) }}
	peer := &rmc.Peer{PID: 5, Addr: netip.MustParseAddrPort("127.0.0.1:4000")}
	if resp := call(t, srv, peer, MethodUpdateURLs, urlList(t)); resp.Result != types.RendezVousNotAuthenticated {
		t.Fatalf("update before register: %v", resp.Result)
	}
	call(t, srv, peer, MethodRegisterEx, append(urlList(t, "prudp:/address=127.0.0.1;port=4000"),
		unhex(t, "0900 4e756c6c4461746100 04000000 00000000")...))
	if resp := call(t, srv, peer, MethodUpdateURLs, urlList(t, "prudp:/address=10.0.0.1;port=1", "prudp:/address=10.0.0.2;port=2")); resp.IsError() || len(resp.Data) != 0 {
		t.Fatalf("UpdateURLs: %v %x", resp.Result, resp.Data)
	}
	w := types.NewWriter(nil, types.Settings{})
	w.String("prudp:/port=2;address=10.0.0.2") // same address and port, other order
	w.String("prudp:/address=10.0.0.3;port=3")
	params, _ := w.Bytes()
	if resp := call(t, srv, peer, MethodReplaceURL, params); resp.IsError() {
		t.Fatal(resp.Result)
	}
	st, _ := srv.Lookup(1)
	if len(st.URLs) != 2 || st.URLs[1].String() != "prudp:/address=10.0.0.3;port=3" || st.LoginData.TypeName != "NullData" {
		t.Fatalf("%+v", st)
	}
	if resp := call(t, srv, peer, MethodReplaceURL, params); resp.Result != types.CoreInvalidArgument {
		t.Fatalf("replacing a missing url: %v", resp.Result)
	}
	if resp := call(t, srv, peer, MethodSendReport, unhex(t, "07000000 0300 616263")); resp.IsError() || len(got) != 1 ||
		got[0].ID != 7 || string(got[0].Data) != "abc" || got[0].PID != 5 {
		t.Fatalf("SendReport: %v %+v", resp.Result, got)
	}
	if resp := call(t, srv, peer, MethodTestConnectivity, nil); resp.IsError() || len(resp.Data) != 0 {
		t.Fatalf("TestConnectivity: %v", resp.Result)
	}
	if resp := call(t, srv, peer, MethodTestConnectivity, []byte{0}); resp.Result != types.CoreInvalidArgument {
		t.Fatalf("TestConnectivity with parameters: %v", resp.Result)
	}
	if resp := call(t, srv, peer, 9, nil); resp.Result != types.CoreNotImplemented {
		t.Fatalf("method 9: %v", resp.Result)
	}
}

// FuzzSecureServe feeds arbitrary parameters to every method: no panic, and every
// call gets a well-formed response.
func FuzzSecureServe(f *testing.F) {
	f.Add(uint8(1), []byte("\x01\x00\x00\x00\x08\x00prudp:/\x00"))
	f.Add(uint8(7), []byte("\x08\x00prudp:/\x00\x08\x00prudp:/\x00"))
	f.Add(uint8(8), []byte("\x01\x00\x00\x00\x01\x00a"))
	f.Add(uint8(4), []byte("\x00\x00\x00\x00\x09\x00NullData\x00\x04\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, method uint8, params []byte) {
		srv := new(Server)
		peer := &rmc.Peer{PID: 1, Addr: netip.MustParseAddrPort("127.0.0.1:1")}
		call(t, srv, peer, MethodRegister, urlList(t, "prudp:/address=127.0.0.1;port=1"))
		call(t, srv, peer, uint32(method%10), params)
	})
}
