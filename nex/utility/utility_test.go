package utility

import (
	"bytes"
	"context"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

func call(t *testing.T, srv *Server, p *rmc.Peer, method uint32, params []byte) rmc.Response {
	t.Helper()
	mux := rmc.NewMux()
	mux.HandleProtocol(ProtocolID, srv)
	msg, _ := (&rmc.Request{Protocol: ProtocolID, CallID: 1, Method: method, Params: params}).Append(nil)
	out, err := rmc.Dispatch(context.Background(), mux, p, msg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := rmc.ParseResponse(out)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestUtility(t *testing.T) {
	srv := &Server{
		Rand:            bytes.NewReader(bytes.Repeat([]byte{0xab}, 64)),
		IntegerSettings: map[uint32]map[uint16]int32{1: {2: -1, 1: 5}},
		StringSettings:  map[uint32]map[uint16]string{0: {7: "hi"}},
	}
	s := types.Settings{StructureHeader: true}
	me := &rmc.Peer{PID: 1000, Settings: s}

	// AcquireNexUniqueId: Uint64 1.
	if r := call(t, srv, me, MethodAcquireNexUniqueID, nil); !bytes.Equal(r.Data, testutil.Unhex(t, "0100000000000000")) {
		t.Fatalf("AcquireNexUniqueId: %x %v", r.Data, r.Result)
	}
	// AcquireNexUniqueIdWithPassword: UniqueIdInfo{2, 0xabab...} with its header.
	want := testutil.Unhex(t, "00 10000000 0200000000000000 abababababababab")
	r := call(t, srv, me, MethodAcquireNexUniqueIDWithPassword, nil)
	if !bytes.Equal(r.Data, want) {
		t.Fatalf("AcquireNexUniqueIdWithPassword: %x %v", r.Data, r.Result)
	}
	// Associating needs the right password.
	if r := call(t, srv, me, MethodAssociateNexUniqueIDWithMyPrincipalID, testutil.Unhex(t, "00 10000000 0200000000000000 0000000000000000")); r.Result != types.CoreInvalidArgument {
		t.Fatalf("wrong password: %v", r.Result)
	}
	if r := call(t, srv, me, MethodAssociateNexUniqueIDWithMyPrincipalID, want); r.IsError() || len(r.Data) != 0 {
		t.Fatalf("associate: %v", r.Result)
	}
	if r := call(t, srv, &rmc.Peer{Settings: s}, MethodAssociateNexUniqueIDWithMyPrincipalID, want); r.Result != types.RendezVousNotAuthenticated {
		t.Fatalf("associate without PID: %v", r.Result)
	}
	if r := call(t, srv, me, MethodGetAssociatedNexUniqueIDWithMyPrincipalID, nil); !bytes.Equal(r.Data, want) {
		t.Fatalf("get associated: %x", r.Data)
	}
	if r := call(t, srv, me, MethodGetAssociatedNexUniqueIDsWithMyPrincipalID, nil); !bytes.Equal(r.Data, append(testutil.Unhex(t, "01000000"), want...)) {
		t.Fatalf("get associated list: %x", r.Data)
	}
	// A list with an id acquired without password (password 0).
	list := testutil.Unhex(t, "01000000 00 10000000 0100000000000000 0000000000000000")
	if r := call(t, srv, me, MethodAssociateNexUniqueIDsWithMyPrincipalID, list); r.IsError() || len(srv.Associated(1000)) != 1 || srv.Associated(1000)[0].ID != 1 {
		t.Fatalf("associate list: %v %v", r.Result, srv.Associated(1000))
	}
	// Settings: Map<Uint16, Sint32> in key order; missing index: empty map.
	if r := call(t, srv, me, MethodGetIntegerSettings, testutil.Unhex(t, "01000000")); !bytes.Equal(r.Data, testutil.Unhex(t, "02000000 0100 05000000 0200 ffffffff")) {
		t.Fatalf("integer settings: %x", r.Data)
	}
	if r := call(t, srv, me, MethodGetIntegerSettings, testutil.Unhex(t, "09000000")); !bytes.Equal(r.Data, testutil.Unhex(t, "00000000")) {
		t.Fatalf("missing integer settings: %x", r.Data)
	}
	if r := call(t, srv, me, MethodGetStringSettings, testutil.Unhex(t, "00000000")); !bytes.Equal(r.Data, testutil.Unhex(t, "01000000 0700 0300 686900")) {
		t.Fatalf("string settings: %x", r.Data)
	}
	if r := call(t, srv, me, MethodGetStringSettings, testutil.Unhex(t, "000000")); r.Result != types.CoreInvalidArgument {
		t.Fatalf("truncated index: %v", r.Result)
	}
	if r := call(t, srv, me, 9, nil); r.Result != types.CoreNotImplemented {
		t.Fatalf("method 9: %v", r.Result)
	}
}

// FuzzUtilityServe feeds arbitrary parameters to every method: no panic, and every
// call gets a well-formed response.
func FuzzUtilityServe(f *testing.F) {
	f.Add(uint8(3), []byte("\x00\x10\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(uint8(4), []byte("\x01\x00\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(uint8(7), []byte("\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, method uint8, params []byte) {
		srv := &Server{IntegerSettings: map[uint32]map[uint16]int32{1: {1: 1}}}
		p := &rmc.Peer{PID: 1, Settings: types.Settings{StructureHeader: method&0x80 != 0}}
		call(t, srv, p, MethodAcquireNexUniqueID, nil)
		call(t, srv, p, uint32(method&0x7f%10), params)
	})
}
