package prudp

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestServerStats moves a 256 KiB message and an echo over real loopback UDP
// and checks the server's counters (what package prudp/metrics exports): the
// open connection, packets and bytes both ways, messages, and (where the
// socket segments) the batched system calls.
func TestServerStats(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	segments := newOffload(pc) != nil
	srv := &Server{}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	defer func() { srv.Close(); <-done }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, pc.LocalAddr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Abort()
	msg := make([]byte, 256<<10)
	if err := c.Send(ctx, 0, msg); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Recv(ctx); err != nil || len(m.Data) != len(msg) {
		t.Fatalf("echo: %d bytes, %v", len(m.Data), err)
	}
	st := srv.Stats()
	for name, v := range map[string]struct{ got, min uint64 }{
		"connections":     {uint64(st.Connections), 1},
		"accepted":        {st.Accepted, 1},
		"SYNs answered":   {st.SYNsAnswered, 1},
		"datagrams in":    {st.DatagramsIn, 200}, // 256 KiB in 1,300-byte fragments
		"packets in":      {st.PacketsIn, 200},
		"packets out":     {st.PacketsOut, 200},
		"bytes in":        {st.BytesIn, 256 << 10},
		"bytes out":       {st.BytesOut, 256 << 10},
		"messages in":     {st.MessagesIn, 1},
		"messages out":    {st.MessagesOut, 1},
		"sessions (held)": {uint64(st.Sessions), 1},
	} {
		if v.got < v.min {
			t.Errorf("%s = %d, want at least %d", name, v.got, v.min)
		}
	}
	if segments && (st.SegmentedWrites == 0 || st.CoalescedReads == 0) {
		t.Errorf("batched system calls out %d, in %d: want both > 0 on a socket that segments", st.SegmentedWrites, st.CoalescedReads)
	}
	if st.WriteErrors != 0 {
		t.Errorf("%d write errors", st.WriteErrors)
	}
}
