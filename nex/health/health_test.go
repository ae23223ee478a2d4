package health

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
	"github.com/gamewire/gamewire/nex/rmc"
)

func TestHealth(t *testing.T) {
	dbDown := errors.New("database down")
	srv := &Server{PingDatabase: func(context.Context) error { return dbDown }}
	mux := rmc.NewMux()
	mux.HandleProtocol(rmc.ProtocolHealth, srv)
	for _, tt := range []struct {
		method uint32
		params []byte
		want   string // response message, hex
	}{
		// size 0x0b, protocol 0x12, success, call 1, method|0x8000, Bool.
		{MethodPingDaemon, nil, "0b000000 12 01 01000000 01800000 01"},
		{MethodPingDatabase, nil, "0b000000 12 01 01000000 02800000 00"},
		{MethodRunSanityCheck, nil, "0b000000 12 01 01000000 03800000 01"},
		{MethodFixSanityErrors, nil, "0b000000 12 01 01000000 04800000 01"},
		// Unknown method: Core::NotImplemented; parameters: Core::InvalidArgument.
		{9, nil, "0a000000 12 00 02000180 01000000"},
		{MethodPingDaemon, []byte{1}, "0a000000 12 00 0a000180 01000000"},
	} {
		msg, _ := (&rmc.Request{Protocol: rmc.ProtocolHealth, CallID: 1, Method: tt.method, Params: tt.params}).Append(nil)
		out, err := rmc.Dispatch(context.Background(), mux, &rmc.Peer{}, msg, nil, nil)
		want := testutil.Unhex(t, tt.want)
		if err != nil || !bytes.Equal(out, want) {
			t.Errorf("method %d: got %x (%v), want %x", tt.method, out, err, want)
		}
	}
}
