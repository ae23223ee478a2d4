package rmc

import (
	"context"

	"github.com/gamewire/gamewire/nex/types"
)

// InMemory calls a Handler in the same process as one peer, with no transport:
// what protocol clients (ranking.Client, datastore.Client, ...) need to be
// tested against a server handler, or to drive one from a tool. A result code
// comes back as a *CallError, as over a connection.
type InMemory struct {
	Handler Handler
	Peer    *Peer
}

// Settings returns the peer's encoding settings.
func (m *InMemory) Settings() types.Settings { return m.Peer.Settings }

// Call encodes the request, dispatches it to the handler and returns the
// response's data.
func (m *InMemory) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	msg, err := (&Request{Protocol: protocol, CallID: 1, Method: method, Params: params}).Append(nil)
	if err != nil {
		return nil, err
	}
	out, err := Dispatch(ctx, m.Handler, m.Peer, msg, nil, nil)
	if err != nil {
		return nil, err
	}
	resp, _, err := ParseResponse(out)
	if err != nil {
		return nil, err
	}
	if resp.Result.IsError() {
		return nil, &CallError{Protocol: protocol, Method: method, Result: resp.Result}
	}
	return resp.Data, nil
}
