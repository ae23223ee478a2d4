package rmc_test

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// A game's protocol plugs into a Mux without touching the core: here a made-up
// protocol 0x83 whose method 1 takes a String and answers its length.
func ExampleMux() {
	mux := rmc.NewMux()
	mux.HandleFunc(0x83, 1, func(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		r := c.Reader()
		name := r.String("name")
		if err := r.Done(); err != nil {
			return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
		}
		w := types.NewWriter(out, c.Peer.Settings)
		w.U32(uint32(len(name)))
		return w.Bytes()
	})

	params, _ := types.AppendString(nil, "gamewire")
	req := rmc.Request{Protocol: 0x83, CallID: 1, Method: 1, Params: params}
	msg, _ := req.Append(nil)
	out, _ := rmc.Dispatch(context.Background(), mux, &rmc.Peer{}, msg, nil, nil)
	resp, _, _ := rmc.ParseResponse(out)
	fmt.Printf("protocol %#x call %d: %v, data % x\n", resp.Protocol, resp.CallID, resp.Result, resp.Data)

	req.Method = 2 // not registered
	msg, _ = req.Append(nil)
	out, _ = rmc.Dispatch(context.Background(), mux, &rmc.Peer{}, msg, nil, nil)
	resp, _, _ = rmc.ParseResponse(out)
	fmt.Println(resp.Result)
	// Output:
	// protocol 0x83 call 1: success (0x00010001), data 08 00 00 00
	// Core::NotImplemented (0x80010002)
}
