package rmc

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// Names maps the protocol and method names of the verbose variation to the ids the
// handlers of a Mux are registered with, so that one set of handlers serves both
// variations. Method names are the full names sent on the wire (which carry the
// protocol name as a prefix). The zero Names is empty; it is safe for concurrent use.
type Names struct {
	mu        sync.RWMutex
	protocols map[string]uint16
	methods   map[string]methodID
}

type methodID struct {
	protocol uint16
	method   uint32
}

// Add names a protocol and its methods.
func (n *Names) Add(protocol string, id uint16, methods map[string]uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.protocols == nil {
		n.protocols = make(map[string]uint16)
		n.methods = make(map[string]methodID)
	}
	n.protocols[protocol] = id
	for name, m := range methods {
		n.methods[name] = methodID{id, m}
	}
}

func (n *Names) lookup(protocol, method string) (methodID, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	m, ok := n.methods[method]
	if !ok || n.protocols[protocol] != m.protocol {
		return methodID{}, false
	}
	return m, true
}

// DispatchVerbose is Dispatch for the verbose variation: it parses a VerboseRequest,
// maps its names to ids with names, calls h with Call.ClassVersions set, and appends
// a VerboseResponse whose method name ends with "*" as real servers write it.
// Unknown names are answered with Core::NotImplemented. The parameters of verbose
// requests have no structure headers (the class versions replace them), so
// peer.Settings.StructureHeader should be false.
func DispatchVerbose(ctx context.Context, h Handler, names *Names, peer *Peer, msg []byte, out []byte, log *slog.Logger) ([]byte, error) {
	req, _, err := ParseVerboseRequest(msg)
	if err != nil {
		return out, err
	}
	start := len(out)
	resp := VerboseResponse{Protocol: req.Protocol, CallID: req.CallID, Method: strings.TrimSuffix(req.Method, "*") + "*"}
	id, ok := names.lookup(req.Protocol, req.Method)
	var data []byte
	if !ok {
		err = fmt.Errorf("%w: verbose protocol %q method %q", errNotImplemented, req.Protocol, req.Method)
	} else {
		c := Call{Request: Request{Protocol: id.protocol, CallID: req.CallID, Method: id.method, Params: req.Params},
			Peer: peer, ClassVersions: req.ClassVersions}
		data, err = h.ServeRMC(ctx, &c, nil)
		if c.after != nil {
			defer c.after() // after the response is encoded; the caller sends it
		}
	}
	if err != nil {
		// Reuse the packed path's error mapping, then re-encode verbosely.
		packed, perr := errorResponse(ctx, nil, Request{Protocol: id.protocol, CallID: req.CallID, Method: id.method}, err, log)
		if perr != nil {
			return out[:start], perr
		}
		if len(packed) == 0 {
			return out[:start], nil // ErrNoResponse
		}
		p, _, perr := ParseResponse(packed)
		if perr != nil {
			return out[:start], perr
		}
		resp.Result = p.Result
		return resp.Append(out[:start])
	}
	resp.Data = data
	return resp.Append(out[:start])
}
