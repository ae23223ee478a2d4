package rmc

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

func seed(f *testing.F) {
	for _, g := range goldenRequests {
		f.Add(testutil.Unhex(f, g.hex))
	}
	for _, g := range goldenResponses {
		f.Add(testutil.Unhex(f, g.hex))
	}
	for _, h := range []string{goldenVerboseRequest, goldenVerboseResp, goldenVerboseError} {
		f.Add(testutil.Unhex(f, h))
	}
}

// FuzzParseRequest: no panic; parse -> append -> parse gives the same request.
func FuzzParseRequest(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		req, n, err := ParseRequest(b)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("used %d of %d", n, len(b))
		}
		enc, err := req.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		req2, _, err := ParseRequest(enc)
		if err != nil || !reflect.DeepEqual(req, req2) {
			t.Fatalf("round trip %+v -> %+v (%v)", req, req2, err)
		}
		// Dispatching any valid request yields a valid response with its call id.
		out, err := Dispatch(context.Background(), testMux(), &Peer{}, b, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 0 {
			resp, _, err := ParseResponse(out)
			if err != nil || resp.CallID != req.CallID || resp.Protocol != req.Protocol {
				t.Fatalf("dispatch answered %x (%v)", out, err)
			}
		}
	})
}

// FuzzParseResponse: no panic; parse -> append -> parse gives the same response.
func FuzzParseResponse(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		resp, _, err := ParseResponse(b)
		if err != nil {
			return
		}
		enc, err := resp.Append(nil)
		if err != nil {
			return // a method id >= 0x8000 cannot be re-encoded; reported, fine
		}
		resp2, _, err := ParseResponse(enc)
		if err != nil || !reflect.DeepEqual(resp, resp2) {
			t.Fatalf("round trip %+v -> %+v (%v)", resp, resp2, err)
		}
	})
}

// FuzzParseVerbose: no panic; verbose requests and responses round-trip; verbose
// dispatch answers every valid request with a valid response.
func FuzzParseVerbose(f *testing.F) {
	seed(f)
	names := new(Names)
	names.Add("Hlt", 18, map[string]uint32{"HltPing": 1, "HltDeny": 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		if out, err := DispatchVerbose(context.Background(), testMux(), names, &Peer{}, b, nil, nil); err == nil && len(out) > 0 {
			if _, _, err := ParseVerboseResponse(out); err != nil {
				t.Fatalf("verbose dispatch answered %x: %v", out, err)
			}
		}
		if req, _, err := ParseVerboseRequest(b); err == nil {
			enc, err := req.Append(nil)
			if err != nil {
				t.Fatal(err)
			}
			req2, _, err := ParseVerboseRequest(enc)
			if err != nil || req.Protocol != req2.Protocol || req.Method != req2.Method || req.CallID != req2.CallID ||
				!bytes.Equal(req.Params, req2.Params) || len(req.ClassVersions) != len(req2.ClassVersions) {
				t.Fatalf("round trip (%v)", err)
			}
		}
		if resp, _, err := ParseVerboseResponse(b); err == nil {
			enc, err := resp.Append(nil)
			if err != nil {
				t.Fatal(err)
			}
			resp2, _, err := ParseVerboseResponse(enc)
			if err != nil || !reflect.DeepEqual(resp, resp2) {
				t.Fatalf("round trip %+v -> %+v (%v)", resp, resp2, err)
			}
		}
	})
}
