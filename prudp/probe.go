package prudp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// EchoReport is what EchoProbe measured.
type EchoReport struct {
	Sent, Received                int
	RTTs                          []time.Duration // per message, in order
	Min, P50, P90, P99, Max, Mean time.Duration
	Elapsed                       time.Duration
}

// String formats the report on one line.
func (r EchoReport) String() string {
	return fmt.Sprintf("%d/%d echoed in %v; rtt min %v p50 %v p90 %v p99 %v max %v mean %v",
		r.Received, r.Sent, r.Elapsed.Round(time.Microsecond), r.Min, r.P50, r.P90, r.P99, r.Max, r.Mean)
}

// EchoProbe sends count messages of size bytes on a reliable substream one
// at a time, waits for each to come back unchanged from an echo server, and
// reports the round-trip times. It fails on the first missing or altered
// echo. This is what `gamewire connect` runs.
func EchoProbe(ctx context.Context, c *Conn, substream uint8, count, size int) (EchoReport, error) {
	size = max(size, 8)
	r := EchoReport{RTTs: make([]time.Duration, 0, count)}
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i)
	}
	start := time.Now()
	for i := range count {
		binary.LittleEndian.PutUint64(msg, uint64(i))
		t0 := time.Now()
		if err := c.Send(ctx, substream, msg); err != nil {
			return r.finish(start), fmt.Errorf("message %d: send: %w", i, err)
		}
		r.Sent++
		m, err := c.Recv(ctx)
		if err != nil {
			return r.finish(start), fmt.Errorf("message %d: no echo: %w", i, err)
		}
		if !bytes.Equal(m.Data, msg) || m.Substream != substream {
			return r.finish(start), fmt.Errorf("message %d: echo differs (%d bytes on substream %d, sent %d on %d)", i, len(m.Data), m.Substream, len(msg), substream)
		}
		r.Received++
		r.RTTs = append(r.RTTs, time.Since(t0))
	}
	return r.finish(start), nil
}

func (r EchoReport) finish(start time.Time) EchoReport {
	r.Elapsed = time.Since(start)
	if len(r.RTTs) == 0 {
		return r
	}
	s := slices.Clone(r.RTTs)
	slices.Sort(s)
	pct := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	r.Min, r.Max, r.Mean = s[0], s[len(s)-1], sum/time.Duration(len(s))
	r.P50, r.P90, r.P99 = pct(0.50), pct(0.90), pct(0.99)
	return r
}
