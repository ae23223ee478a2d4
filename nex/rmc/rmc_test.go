package rmc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"

	"github.com/gamewire/gamewire/nex/types"
)

// Golden messages, checked by hand against the tables of nintendo-wiki "RMC Protocol".
var (
	goldenRequests = []struct {
		name string
		hex  string
		req  Request
	}{
		{"Login(guest)", "11000000 8a 01000000 01000000 0600 677565737400",
			Request{Protocol: 10, CallID: 1, Method: 1, Params: []byte("\x06\x00guest\x00")}},
		{"extended", "0b000000 ff c800 07000000 05000000", Request{Protocol: 200, CallID: 7, Method: 5, Params: []byte{}}},
		{"extended 0x7f", "0b000000 ff 7f00 02000000 01000000", Request{Protocol: 0x7f, CallID: 2, Method: 1, Params: []byte{}}},
	}
	goldenResponses = []struct {
		name string
		hex  string
		resp Response
	}{
		{"GetPID success", "0e000000 0a 01 01000000 04800000 64000000",
			Response{Protocol: 10, Result: types.ResultSuccess, CallID: 1, Method: 4, Data: []byte{100, 0, 0, 0}}},
		{"error", "0a000000 0b 00 06000180 03000000",
			Response{Protocol: 11, Result: types.CoreAccessDenied, CallID: 3}},
		{"extended success", "0c000000 7f 0001 01 02000000 01800000",
			Response{Protocol: 0x100, Result: types.ResultSuccess, CallID: 2, Method: 1, Data: []byte{}}},
		{"extended error", "0c000000 7f 0001 00 02000180 09000000",
			Response{Protocol: 0x100, Result: types.CoreNotImplemented, CallID: 9}},
	}
	goldenVerboseRequest = "22000000 0400 486c7400 01 01000000 0800 486c7450696e6700 01000000 0500 4461746100 0000"
	goldenVerboseResp    = "18000000 0400 486c7400 00 01 01000000 0900 486c7450696e672a00 01"
	goldenVerboseError   = "10000000 0400 486c7400 00 00 0a000180 05000000"
)

func TestRequestGolden(t *testing.T) {
	for _, g := range goldenRequests {
		t.Run(g.name, func(t *testing.T) {
			want := testutil.Unhex(t, g.hex)
			got, err := g.req.Append([]byte{0xee})
			if err != nil || !bytes.Equal(got[1:], want) {
				t.Fatalf("Append: %x, %v\nwant %x", got[1:], err, want)
			}
			req, n, err := ParseRequest(want)
			if err != nil || n != len(want) || !reflect.DeepEqual(req, g.req) {
				t.Fatalf("Parse: %+v %d %v", req, n, err)
			}
			if !IsRequest(want) {
				t.Fatal("IsRequest false")
			}
			if _, _, err := ParseResponse(want); !errors.Is(err, ErrNotResponse) {
				t.Fatalf("ParseResponse of a request: %v", err)
			}
			for i := range want {
				if _, _, err := ParseRequest(want[:i]); err == nil {
					t.Fatalf("prefix %d parsed", i)
				}
			}
		})
	}
}

func TestResponseGolden(t *testing.T) {
	for _, g := range goldenResponses {
		t.Run(g.name, func(t *testing.T) {
			want := testutil.Unhex(t, g.hex)
			got, err := g.resp.Append(nil)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Append: %x, %v\nwant %x", got, err, want)
			}
			resp, n, err := ParseResponse(want)
			if err != nil || n != len(want) || !reflect.DeepEqual(resp, g.resp) {
				t.Fatalf("Parse: %+v %d %v", resp, n, err)
			}
			if _, _, err := ParseRequest(want); !errors.Is(err, ErrNotRequest) {
				t.Fatalf("ParseRequest of a response: %v", err)
			}
			for i := range want {
				if _, _, err := ParseResponse(want[:i]); err == nil {
					t.Fatalf("prefix %d parsed", i)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		hex  string
		want error
	}{
		{"size beyond data", "ff000000 8a 01000000 01000000", ErrTruncated},
		{"size zero", "00000000 8a", ErrBadSize},
		{"error response with trailing bytes", "0b000000 0b 00 06000180 03000000 00", ErrTrailingData},
		{"request without method", "05000000 8a 01000000", ErrTruncated},
	} {
		b := testutil.Unhex(t, tt.hex)
		_, _, err1 := ParseRequest(b)
		_, _, err2 := ParseResponse(b)
		if !errors.Is(err1, tt.want) && !errors.Is(err2, tt.want) {
			t.Errorf("%s: got %v / %v, want %v", tt.name, err1, err2, tt.want)
		}
	}
	if _, err := (&Response{Protocol: 1, Method: 0x8000}).Append(nil); !errors.Is(err, ErrBadMethod) {
		t.Errorf("method 0x8000: %v", err)
	}
}

func TestVerboseGolden(t *testing.T) {
	req := VerboseRequest{Protocol: "Hlt", CallID: 1, Method: "HltPing", ClassVersions: []ClassVersion{{"Data", 0}}, Params: []byte{}}
	want := testutil.Unhex(t, goldenVerboseRequest)
	got, err := req.Append(nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("request Append: %x %v\nwant %x", got, err, want)
	}
	if back, n, err := ParseVerboseRequest(want); err != nil || n != len(want) || !reflect.DeepEqual(back, req) {
		t.Fatalf("request Parse: %+v %v", back, err)
	}
	resp := VerboseResponse{Protocol: "Hlt", Result: types.ResultSuccess, CallID: 1, Method: "HltPing*", Data: []byte{1}}
	want = testutil.Unhex(t, goldenVerboseResp)
	if got, err = resp.Append(nil); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("response Append: %x %v\nwant %x", got, err, want)
	}
	if back, _, err := ParseVerboseResponse(want); err != nil || !reflect.DeepEqual(back, resp) {
		t.Fatalf("response Parse: %+v %v", back, err)
	}
	eresp := VerboseResponse{Protocol: "Hlt", Result: types.CoreInvalidArgument, CallID: 5}
	want = testutil.Unhex(t, goldenVerboseError)
	if got, err = eresp.Append(nil); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("error Append: %x %v\nwant %x", got, err, want)
	}
	if back, _, err := ParseVerboseResponse(want); err != nil || !reflect.DeepEqual(back, eresp) {
		t.Fatalf("error Parse: %+v %v", back, err)
	}
	for _, h := range []string{goldenVerboseRequest, goldenVerboseResp, goldenVerboseError} {
		b := testutil.Unhex(t, h)
		for i := range b {
			_, _, e1 := ParseVerboseRequest(b[:i])
			_, _, e2 := ParseVerboseResponse(b[:i])
			if e1 == nil || e2 == nil {
				t.Fatalf("prefix %d of %s parsed", i, h)
			}
		}
	}
	if _, _, err := ParseVerboseRequest(testutil.Unhex(t, goldenVerboseResp)); !errors.Is(err, ErrNotRequest) {
		t.Fatalf("verbose response as request: %v", err)
	}
}

// testMux has one of each kind of handler.
func testMux() *Mux {
	m := NewMux()
	m.HandleFunc(18, 1, func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		return types.AppendBool(out, true), nil
	})
	m.HandleFunc(18, 2, func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		return out, types.CoreAccessDenied
	})
	m.HandleFunc(18, 3, func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		return out, errors.New("database on fire")
	})
	m.HandleFunc(18, 4, func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		return out, ErrNoResponse
	})
	m.HandleProtocol(0x200, HandlerFunc(func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		r := c.Reader()
		v := r.U32("value")
		if err := r.Done(); err != nil {
			return out, types.CoreInvalidArgument
		}
		return binary.LittleEndian.AppendUint32(out, v+c.Method), nil
	}))
	return m
}

func TestDispatch(t *testing.T) {
	m := testMux()
	peer := &Peer{}
	for _, tt := range []struct {
		name string
		req  Request
		want Response
	}{
		{"success", Request{Protocol: 18, CallID: 5, Method: 1}, Response{Protocol: 18, Result: types.ResultSuccess, CallID: 5, Method: 1, Data: []byte{1}}},
		{"result error", Request{Protocol: 18, CallID: 6, Method: 2}, Response{Protocol: 18, Result: types.CoreAccessDenied, CallID: 6}},
		{"go error", Request{Protocol: 18, CallID: 7, Method: 3}, Response{Protocol: 18, Result: types.CoreException, CallID: 7}},
		{"unknown method", Request{Protocol: 18, CallID: 8, Method: 9}, Response{Protocol: 18, Result: types.CoreNotImplemented, CallID: 8}},
		{"unknown protocol", Request{Protocol: 99, CallID: 9, Method: 1}, Response{Protocol: 99, Result: types.CoreNotImplemented, CallID: 9}},
		{"protocol handler, extended id", Request{Protocol: 0x200, CallID: 10, Method: 3, Params: []byte{4, 0, 0, 0}},
			Response{Protocol: 0x200, Result: types.ResultSuccess, CallID: 10, Method: 3, Data: []byte{7, 0, 0, 0}}},
		{"bad parameters", Request{Protocol: 0x200, CallID: 11, Method: 3, Params: []byte{4, 0, 0}},
			Response{Protocol: 0x200, Result: types.CoreInvalidArgument, CallID: 11}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg, _ := tt.req.Append(nil)
			out, err := Dispatch(context.Background(), m, peer, msg, []byte{0xee}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := tt.want.Append([]byte{0xee})
			if !bytes.Equal(out, want) {
				t.Fatalf("got %x\nwant %x", out, want)
			}
		})
	}
	msg, _ := (&Request{Protocol: 18, CallID: 1, Method: 4}).Append(nil)
	if out, err := Dispatch(context.Background(), m, peer, msg, nil, nil); err != nil || len(out) != 0 {
		t.Fatalf("no-response handler: %x %v", out, err)
	}
	resp, _ := (&Response{Protocol: 18, CallID: 1, Method: 1}).Append(nil)
	if _, err := Dispatch(context.Background(), m, peer, resp, nil, nil); !errors.Is(err, ErrNotRequest) {
		t.Fatalf("response dispatched: %v", err)
	}
}

func TestMuxDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate registration did not panic")
		}
	}()
	m := testMux()
	m.HandleFunc(18, 1, func(ctx context.Context, c *Call, out []byte) ([]byte, error) { return out, nil })
}

func TestDispatchAllocs(t *testing.T) {
	m := testMux()
	peer := &Peer{}
	msg, _ := (&Request{Protocol: 0x200, CallID: 10, Method: 3, Params: []byte{4, 0, 0, 0}}).Append(nil)
	out := make([]byte, 0, 64)
	n := testing.AllocsPerRun(200, func() {
		var err error
		out, err = Dispatch(context.Background(), m, peer, msg, out[:0], nil)
		if err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per dispatch, want 0", n)
	}
}

func TestClientOverPipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b := Pipe()
	defer a.Close()
	go Serve(ctx, b, testMux(), &Peer{}, nil)
	c := NewClient(a, ClientConfig{})
	defer c.Close()

	data, err := c.Call(ctx, 0x200, 2, []byte{40, 0, 0, 0})
	if err != nil || !bytes.Equal(data, []byte{42, 0, 0, 0}) {
		t.Fatalf("call: %x %v", data, err)
	}
	_, err = c.Call(ctx, 18, 2, nil)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Result != types.CoreAccessDenied || !errors.Is(err, types.CoreAccessDenied) {
		t.Fatalf("error call: %v", err)
	}
	// Concurrent calls are matched by call id.
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			data, err := c.Call(ctx, 0x200, uint32(i), []byte{byte(i), 0, 0, 0})
			if err == nil && binary.LittleEndian.Uint32(data) != uint32(2*i) {
				err = errors.New("response of another call")
			}
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	if _, err := c.Call(ctx, 18, 1, nil); err == nil {
		t.Fatal("call on closed pipe succeeded")
	}
}

func BenchmarkDispatch(b *testing.B) {
	m := testMux()
	peer := &Peer{}
	msg, _ := (&Request{Protocol: 0x200, CallID: 10, Method: 3, Params: []byte{4, 0, 0, 0}}).Append(nil)
	out := make([]byte, 0, 64)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		out, _ = Dispatch(context.Background(), m, peer, msg, out[:0], nil)
	}
}

func TestDispatchVerbose(t *testing.T) {
	names := new(Names)
	names.Add("Hlt", 18, map[string]uint32{"HltPing": 1, "HltDeny": 2})
	names.Add("Ext", 0x200, map[string]uint32{"ExtAdd": 3})
	mux := testMux()
	var seen []ClassVersion
	mux.HandleFunc(0x200, 9, func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		seen = c.ClassVersions
		return out, nil
	})
	names.Add("Ext", 0x200, map[string]uint32{"ExtVersions": 9})

	// The golden verbose request ("Hlt", call 1, "HltPing", one class version)
	// dispatches to protocol 18 method 1 and gets the golden verbose response.
	out, err := DispatchVerbose(context.Background(), mux, names, &Peer{}, testutil.Unhex(t, goldenVerboseRequest), nil, nil)
	if err != nil || !bytes.Equal(out, testutil.Unhex(t, goldenVerboseResp)) {
		t.Fatalf("got %x (%v)\nwant %s", out, err, goldenVerboseResp)
	}
	for _, tt := range []struct {
		protocol, method string
		params           []byte
		want             types.Result
		data             []byte
	}{
		{"Hlt", "HltDeny", nil, types.CoreAccessDenied, nil},
		{"Hlt", "HltNope", nil, types.CoreNotImplemented, nil},
		{"Nope", "HltPing", nil, types.CoreNotImplemented, nil},
		{"Ext", "ExtAdd", []byte{4, 0, 0, 0}, types.ResultSuccess, []byte{7, 0, 0, 0}},
	} {
		req := VerboseRequest{Protocol: tt.protocol, CallID: 9, Method: tt.method, Params: tt.params}
		msg, _ := req.Append(nil)
		out, err := DispatchVerbose(context.Background(), mux, names, &Peer{}, msg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, _, err := ParseVerboseResponse(out)
		if err != nil || resp.Result != tt.want || resp.CallID != 9 || !bytes.Equal(resp.Data, tt.data) {
			t.Fatalf("%s.%s: %+v %v", tt.protocol, tt.method, resp, err)
		}
		if !tt.want.IsError() && resp.Method != tt.method+"*" {
			t.Fatalf("method name %q", resp.Method)
		}
	}
	req := VerboseRequest{Protocol: "Ext", CallID: 1, Method: "ExtVersions", ClassVersions: []ClassVersion{{"Gathering", 2}}}
	msg, _ := req.Append(nil)
	if _, err := DispatchVerbose(context.Background(), mux, names, &Peer{}, msg, nil, nil); err != nil || len(seen) != 1 || seen[0] != (ClassVersion{"Gathering", 2}) {
		t.Fatalf("class versions %v (%v)", seen, err)
	}
}
