package dissect

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/gamewire/gamewire/internal/jsonstr"
)

// AppendJSON appends the flow statistics as one JSON object with "record":"flow".
func (s *FlowStats) AppendJSON(b []byte) []byte {
	b = append(b, `{"record":"flow","flow":`...)
	b = strconv.AppendInt(b, int64(s.ID), 10)
	b = append(b, `,"transport":"`...)
	b = append(b, s.Transport...)
	b = append(b, `","client":"`...)
	b = s.Client.AppendTo(b)
	b = append(b, `","server":"`...)
	b = s.Server.AppendTo(b)
	b = append(b, `","protocol":`...)
	b = jsonstr.Append(b, s.Protocol)
	if s.Dialect != "" {
		b = append(b, `,"dialect":`...)
		b = jsonstr.Append(b, s.Dialect)
	}
	for _, kv := range []struct {
		k string
		v int64
	}{{"packets", s.Packets}, {"messages", s.Messages}, {"retransmissions", s.Retransmissions}, {"bytes", s.Bytes}, {"errors", s.Errors}} {
		b = append(b, `,"`...)
		b = append(b, kv.k...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, kv.v, 10)
	}
	if s.Handshake != "" {
		b = append(b, `,"handshake":`...)
		b = jsonstr.Append(b, s.Handshake)
	}
	if s.RTT > 0 {
		b = append(b, `,"rtt_ms":`...)
		b = strconv.AppendFloat(b, float64(s.RTT)/float64(time.Millisecond), 'f', 3, 64)
	}
	if !s.First.IsZero() {
		b = append(b, `,"duration_s":`...)
		b = strconv.AppendFloat(b, s.Last.Sub(s.First).Seconds(), 'f', 6, 64)
	}
	return append(b, '}')
}

// WriteStatsTable writes flow statistics as an aligned text table.
func WriteStatsTable(w io.Writer, flows []FlowStats) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "flow\ttransport\tclient\tserver\tprotocol\tdialect\tpackets\tmessages\tretrans\tbytes\terrors\thandshake\trtt")
	for _, s := range flows {
		rtt := "-"
		if s.RTT > 0 {
			rtt = s.RTT.String()
		}
		hs := s.Handshake
		if hs == "" {
			hs = "-"
		}
		dia := s.Dialect
		if dia == "" {
			dia = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n",
			s.ID, s.Transport, s.Client, s.Server, s.Protocol, dia, s.Packets, s.Messages, s.Retransmissions, s.Bytes, s.Errors, hs, rtt)
	}
	return tw.Flush()
}
