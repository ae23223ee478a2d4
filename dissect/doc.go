// Package dissect turns a pcap or pcapng capture into decoded records, one per
// packet, per reassembled application message and per thing it skipped, as
// described in docs/dissector.md.
//
// It recognises PRUDP in every dialect of package [github.com/gamewire/gamewire/prudp/wire]
// (over UDP, and Lite inside a plain WebSocket over TCP), Pia and the Fallout 4
// Pip-Boy protocol; it decrypts what the [Keys] allow, reassembles IP fragments,
// TCP streams and PRUDP fragments, and can write the capture again with
// decrypted payloads ([NewDecryptedWriter]).
//
// A [Dissector] decodes one capture: [New] with a [Config], then
// [Dissector.Decode] with a callback that receives each [Record]. Nothing in a
// capture stops decoding: a frame that is truncated or garbage becomes a note
// record naming what was wrong and where.
package dissect
