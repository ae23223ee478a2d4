package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/internal/httplimit"
)

// httpLimitFlags are the limits of every HTTP listener a command runs
// (serve's DataStore endpoint and metrics, pipboy dashboard): the
// --http-* flags (internal/httplimit, docs/security.md).
type httpLimitFlags struct {
	maxConns      int
	headerTimeout time.Duration
	idleTimeout   time.Duration
	readTimeout   time.Duration
	writeTimeout  time.Duration
	minRate       byteSize
	grace         time.Duration
}

func (h *httpLimitFlags) register(f *pflag.FlagSet) {
	f.IntVar(&h.maxConns, "http-max-conns", httplimit.DefaultMaxConns(), "most connections each HTTP listener holds; at the cap a new one evicts the connection waiting longest outside a request (default: an eighth of the descriptor limit, 16 to 4096)")
	f.DurationVar(&h.headerTimeout, "http-header-timeout", httplimit.DefaultReadHeaderTimeout, "HTTP: time a connection has to send a request's headers")
	f.DurationVar(&h.idleTimeout, "http-idle-timeout", httplimit.DefaultIdleTimeout, "HTTP: how long a keep-alive connection may wait for its next request")
	f.DurationVar(&h.readTimeout, "http-read-timeout", httplimit.DefaultReadTimeout, "HTTP: most time to receive a request body, however fast")
	f.DurationVar(&h.writeTimeout, "http-write-timeout", httplimit.DefaultWriteTimeout, "HTTP: most time to send a response, however fast")
	h.minRate = httplimit.DefaultMinRate
	f.Var(&h.minRate, "http-min-rate", "HTTP: bytes a second a body must sustain after --http-grace (KiB, MiB); slower clients are cut; 0 for no minimum")
	f.DurationVar(&h.grace, "http-grace", httplimit.DefaultGrace, "HTTP: time a body may take before --http-min-rate applies")
}

// limits checks the flags and returns them as httplimit.Limits.
func (h *httpLimitFlags) limits() (httplimit.Limits, error) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--http-header-timeout", h.headerTimeout}, {"--http-idle-timeout", h.idleTimeout}, {"--http-read-timeout", h.readTimeout},
		{"--http-write-timeout", h.writeTimeout}, {"--http-grace", h.grace}} {
		if d.v <= 0 {
			return httplimit.Limits{}, fmt.Errorf("%s %v: must be positive", d.name, d.v)
		}
	}
	if h.maxConns <= 0 {
		return httplimit.Limits{}, fmt.Errorf("--http-max-conns %d: must be positive", h.maxConns)
	}
	rate := int64(h.minRate)
	if rate == 0 {
		rate = -1 // httplimit: negative is no minimum
	}
	return httplimit.Limits{MaxConns: h.maxConns, ReadHeaderTimeout: h.headerTimeout, IdleTimeout: h.idleTimeout,
		ReadTimeout: h.readTimeout, WriteTimeout: h.writeTimeout, MinRate: rate, Grace: h.grace}, nil
}
