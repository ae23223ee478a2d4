package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
	"github.com/gamewire/gamewire/nex/types"
)

// TestSecureURLFor: a server spreading players over secure nodes hands each login
// the url its chooser picks, and refuses the login when no node can take it.
func TestSecureURLFor(t *testing.T) {
	s := types.Settings{}
	srv := testServer(s)
	var picked []types.PID
	nodeURL, _ := types.ParseStationURLString("prudps:/address=127.0.0.7;port=60011;CID=1;PID=2;sid=1;stream=10;type=2")
	full := false
	srv.SecureURLFor = func(ctx context.Context, a Account) (types.StationURL, error) {
		if full {
			return types.StationURL{}, errors.New("all nodes full")
		}
		picked = append(picked, a.PID)
		return nodeURL, nil
	}
	params := testutil.Unhex(t, "0600 677565737400") // Login("guest")
	resp := call(t, srv, s, MethodLogin, params)
	lr, err := parseLogin(resp.Data, s)
	if err != nil {
		t.Fatal(err)
	}
	if lr.Result != types.ResultSuccess || lr.Connection.MainStation.String() != nodeURL.String() {
		t.Fatalf("login sent to %s (result %v), want the chosen node %s", lr.Connection.MainStation, lr.Result, nodeURL)
	}
	if len(picked) != 1 || picked[0] != PIDGuest {
		t.Fatalf("chooser called for %v, want [guest]", picked)
	}
	full = true
	resp = call(t, srv, s, MethodLogin, params)
	lr, err = parseLogin(resp.Data, s)
	if err != nil {
		t.Fatal(err)
	}
	if lr.Result != types.RendezVousMaxConnectionsReached || len(lr.Ticket) != 0 {
		t.Fatalf("with no node: result %v, ticket %d bytes; want RendezVous::MaxConnectionsReached and no ticket", lr.Result, len(lr.Ticket))
	}
}
