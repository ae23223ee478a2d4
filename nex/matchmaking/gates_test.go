package matchmaking_test

import (
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// TestLearnsDisputedReading: at NEX 3.4 a connection that starts in the
// consoles' reading and sends a session without progress_score
// (NintendoClients' reading) is re-read that way, answered that way, and kept
// in that reading; a console's connection keeps its own. A request that parses
// in neither reading fails with Core::InvalidArgument and changes nothing.
func TestLearnsDisputedReading(t *testing.T) {
	console := types.Settings{Version: types.Version3_4, Learned: new(types.GateReading)}
	h := newHarness(t, types.Settings{Version: types.Version3_4})
	for _, p := range h.peers {
		p.Settings.Learned = new(types.GateReading)
	}
	ext := matchmaking.ProtocolMatchmakeExtension
	nc := types.Settings{Version: types.Version3_4, Gates: types.GatesNintendoClients}
	rm := room()
	ncRoom, _ := rm.Holder(nc)
	consoleRoom, _ := rm.Holder(console)

	// PID 1 speaks the consoles' reading: nothing changes.
	r := h.mustCall(t, 1, ext, matchmaking.MethodCreateMatchmakeSession, func(w *types.Writer) {
		w.AnyDataHolder(consoleRoom)
		w.String("")
		w.U16(1)
	})
	gid := r.U32("gid")
	if h.peers[1].Settings.NintendoClientsGates() {
		t.Fatal("a console's request switched its connection's reading")
	}

	// PID 2 speaks NintendoClients': its connection learns it.
	r = h.mustCall(t, 2, ext, matchmaking.MethodAutoMatchmakePostpone, func(w *types.Writer) {
		w.AnyDataHolder(ncRoom)
		w.String("")
	})
	if !h.peers[2].Settings.NintendoClientsGates() {
		t.Fatal("NintendoClients' request did not switch its connection's reading")
	}
	// The answer is in NintendoClients' reading (the peer's settings now).
	joined, _, err := matchmaking.ParseHolder(r.AnyDataHolder("joined"), nc)
	if err != nil || joined.ID != gid || joined.ParticipationCount != 2 {
		t.Fatalf("answer in NintendoClients' reading: %+v %v", joined.Gathering, err)
	}
	if _, _, err := matchmaking.ParseHolder(r.AnyDataHolder("joined"), types.Settings{Version: types.Version3_4, Gates: types.GatesConsole}); err == nil {
		t.Fatal("the answer also parses in the consoles' reading")
	}
	// Its notifications too: PID 1 leaves; PID 2 hears it (3008) and becomes
	// the owner (4000), in NintendoClients' bytes (no param3), while PID 1
	// heard PID 2's join (3001) in the consoles' (param3 present).
	if evs := h.conns[1].events(t, console, 0); len(evs) != 1 || evs[0].Type != notifications.TypeNewParticipant {
		t.Fatalf("PID 1's notifications: %+v", evs)
	}
	h.mustCall(t, 1, matchmaking.ProtocolMatchMakingExt, matchmaking.MethodEndParticipation, func(w *types.Writer) {
		w.U32(gid)
		w.String("bye")
	})
	if evs := h.conns[2].events(t, nc, 0); len(evs) != 2 {
		t.Fatalf("PID 2's notifications: %+v", evs)
	}

	// Garbage parses in neither reading.
	if _, err := h.call(t, 3, ext, matchmaking.MethodAutoMatchmakePostpone, func(w *types.Writer) {
		hd := ncRoom
		hd.Data = hd.Data[:len(hd.Data)-2]
		w.AnyDataHolder(hd)
		w.String("")
	}); err == nil || h.peers[3].Settings.NintendoClientsGates() {
		t.Fatalf("a truncated session: %v, learned %v", err, h.peers[3].Settings.NintendoClientsGates())
	}
}
