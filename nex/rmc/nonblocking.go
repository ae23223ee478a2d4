package rmc

// NonBlockingHandler is a Handler that declares its calls never block: no
// I/O, no waiting on other goroutines, channels or locks held for long.
// Transports may run such calls where waiting would hold up other
// connections: nex.Server answers them on the PRUDP connection's own
// goroutine (prudp.InlineHandler), with no handler goroutine between the
// request and its response. The declaration is a promise the transport
// measures (see prudp.InlineHandler); a handler that may wait must not make
// it.
type NonBlockingHandler interface {
	Handler
	NonBlocking() bool
}

// NonBlocking declares h non-blocking (NonBlockingHandler), for handlers
// that cannot declare it themselves: register the result for the protocols
// or methods that never wait, e.g.
// mux.Handle(rmc.ProtocolHealth, health.MethodPingDaemon, rmc.NonBlocking(&healthServer)).
func NonBlocking(h Handler) Handler { return nonBlocking{h} }

type nonBlocking struct{ Handler }

func (nonBlocking) NonBlocking() bool { return true }

// IsNonBlocking reports whether h declared itself non-blocking.
func IsNonBlocking(h Handler) bool {
	nb, ok := h.(NonBlockingHandler)
	return ok && nb.NonBlocking()
}

// NonBlocking reports whether the handler a call of protocol and method goes
// to declared itself non-blocking. A call no handler takes is answered with
// Core::NotImplemented without waiting, so it counts as non-blocking.
func (m *Mux) NonBlocking(protocol uint16, method uint32) bool {
	h := m.Handler(protocol, method)
	return h == nil || IsNonBlocking(h)
}
