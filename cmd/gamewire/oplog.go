package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// opsLogWindow is how long the operator log stays quiet about one class of
// event after printing a line for it (opsHandler).
const opsLogWindow = 10 * time.Second

// opsHandler is serve's log without --verbose: what an operator must see and
// nothing else, so that a failure is never silent and a flood never buries it.
//
//   - Warnings and errors (a database error behind an RMC call, a failed
//     heartbeat, a refused CONNECT) print, one line per class (the message,
//     with the protocol and method of a failed call) per opsLogWindow; the
//     next line of a class says how many were left out.
//   - Every failed login ("nex login" with a result other than success) is a
//     warning of its class: its result (RendezVous::InvalidUsername,
//     RendezVous::MaxConnectionsReached, ...).
//   - Other records (a successful login, connection events) are only counted.
//
// summary returns the counts for the shutdown line.
type opsHandler struct {
	out   slog.Handler
	st    *opsState
	attrs []slog.Attr // from WithAttrs, for the classes
}

type opsState struct {
	mu      sync.Mutex
	window  time.Duration
	now     func() time.Time
	classes map[string]*opsClass
	order   []string // classes in order of first appearance
	logins  int      // successful logins
}

type opsClass struct {
	last       time.Time
	total      int
	suppressed int // since the last line printed
}

// newOpsLogger returns serve's operator logger writing to w, and its handler
// (for the shutdown summary).
func newOpsLogger(w io.Writer) (*slog.Logger, *opsHandler) {
	h := &opsHandler{
		out: slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}),
		st:  &opsState{window: opsLogWindow, now: time.Now, classes: map[string]*opsClass{}},
	}
	return slog.New(h), h
}

// Enabled implements slog.Handler: Info and above reach Handle (a login's
// result is an Info record).
func (h *opsHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

// Handle implements slog.Handler.
func (h *opsHandler) Handle(ctx context.Context, r slog.Record) error {
	class, level, ok := h.classify(r)
	if !ok {
		return nil
	}
	st := h.st
	st.mu.Lock()
	c := st.classes[class]
	if c == nil {
		c = &opsClass{}
		st.classes[class] = c
		st.order = append(st.order, class)
	}
	c.total++
	now := st.now()
	if !c.last.IsZero() && now.Sub(c.last) < st.window {
		c.suppressed++
		st.mu.Unlock()
		return nil
	}
	left, since := c.suppressed, now.Sub(c.last)
	c.last, c.suppressed = now, 0
	st.mu.Unlock()
	out := slog.NewRecord(r.Time, level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool { out.AddAttrs(a); return true })
	if left > 0 {
		out.AddAttrs(slog.String("left_out", fmt.Sprintf("%d more like this in the last %v", left, since.Round(time.Second))))
	}
	return h.out.Handle(ctx, out)
}

// classify returns the class of r and the level to print it at; ok is false
// for a record that is only counted.
func (h *opsHandler) classify(r slog.Record) (class string, level slog.Level, ok bool) {
	attr := func(key string) string {
		v := ""
		for _, a := range h.attrs {
			if a.Key == key {
				v = a.Value.String()
			}
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				v = a.Value.String()
				return false
			}
			return true
		})
		return v
	}
	if r.Message == "nex login" {
		res := attr("result")
		if strings.HasPrefix(res, "success") {
			h.st.mu.Lock()
			h.st.logins++
			h.st.mu.Unlock()
			return "", 0, false
		}
		// "RendezVous::InvalidUsername (0x80030064)": the name is the class.
		name, _, _ := strings.Cut(res, " ")
		return "login failed: " + name, slog.LevelWarn, true
	}
	if r.Level < slog.LevelWarn {
		return "", 0, false
	}
	class = r.Message
	if p := attr("protocol"); p != "" {
		class += " protocol " + p + " method " + attr("method")
	}
	return class, r.Level, true
}

// WithAttrs implements slog.Handler.
func (h *opsHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &opsHandler{out: h.out.WithAttrs(attrs), st: h.st, attrs: append(slices.Clip(h.attrs), attrs...)}
}

// WithGroup implements slog.Handler.
func (h *opsHandler) WithGroup(name string) slog.Handler {
	return &opsHandler{out: h.out.WithGroup(name), st: h.st, attrs: h.attrs}
}

// summary describes what the log saw since the start: successful logins,
// then every class of warning with its count ("" when nothing).
func (h *opsHandler) summary() string {
	if h == nil {
		return ""
	}
	st := h.st
	st.mu.Lock()
	defer st.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "logins %d", st.logins)
	for _, class := range st.order {
		fmt.Fprintf(&b, "; %s: %d", class, st.classes[class].total)
	}
	return b.String()
}
