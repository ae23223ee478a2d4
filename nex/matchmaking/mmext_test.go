package matchmaking_test

import (
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// fixedStations is a station directory with one registered url per PID.
type fixedStations map[types.PID]string

func (f fixedStations) StationURLs(pid types.PID) []types.StationURL {
	s, ok := f[pid]
	if !ok {
		return nil
	}
	u, err := types.ParseStationURLString(s)
	if err != nil {
		panic(err)
	}
	return []types.StationURL{u}
}

func urlStrings(us []types.StationURL) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	return out
}

// TestUpdateSessionURL: the host's url (UpdateSessionURL) comes first in
// GetSessionURLs and GetSessionURL, before the registered station; a
// participant that does not host is refused, a bad url refused; when the host
// moves (UpdateSessionHost) the old host's url goes.
func TestUpdateSessionURL(t *testing.T) {
	h := newHarness(t, types.Settings{StructureHeader: true, PIDSize: 8})
	h.srv.Stations = fixedStations{1: "prudps:/address=10.0.0.1;port=1;PID=1", 2: "prudps:/address=10.0.0.2;port=2;PID=2"}
	gid, _ := h.createSession(t, 1, room())
	h.mustCall(t, 2, matchmaking.ProtocolMatchmakeExtension, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer) { w.U32(gid); w.String("") })
	mm := matchmaking.ProtocolMatchMaking
	sessionURLs := func(pid types.PID) []string {
		r := h.mustCall(t, pid, mm, matchmaking.MethodGetSessionURLs, func(w *types.Writer) { w.U32(gid) })
		us := types.ReadList(&r, "lstURLs", (*types.Reader).StationURL)
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		return urlStrings(us)
	}
	if got := sessionURLs(2); len(got) != 1 || got[0] != "prudps:/address=10.0.0.1;port=1;PID=1" {
		t.Fatalf("before: %q", got)
	}
	const public = "prudps:/address=203.0.113.7;port=40000;natm=1;natf=1;type=3;PID=1"
	update := func(pid types.PID, url string) error {
		_, err := h.call(t, pid, mm, matchmaking.MethodUpdateSessionURL, func(w *types.Writer) { w.U32(gid); w.String(url) })
		return err
	}
	if err := update(2, public); !errors.Is(err, matchmaking.ResultPermissionDenied) {
		t.Fatalf("non-host: %v", err)
	}
	if err := update(1, "no scheme"); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("bad url: %v", err)
	}
	if err := update(1, public); err != nil {
		t.Fatal(err)
	}
	if got := sessionURLs(2); len(got) != 2 || got[0] != public || got[1] != "prudps:/address=10.0.0.1;port=1;PID=1" {
		t.Fatalf("after: %q", got)
	}
	r := h.mustCall(t, 3, mm, matchmaking.MethodGetSessionURL, func(w *types.Writer) { w.U32(gid) })
	if ok, u := r.Bool("retval"), r.String("strURL"); !ok || u != public || r.Done() != nil {
		t.Fatalf("GetSessionURL: %v %q %v", ok, u, r.Done())
	}
	h.mustCall(t, 2, mm, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(false) })
	if got := sessionURLs(1); len(got) != 1 || got[0] != "prudps:/address=10.0.0.2;port=2;PID=2" {
		t.Fatalf("new host: %q", got)
	}
}
