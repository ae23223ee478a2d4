package nintendoclients

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestNintendoClientsNATAwareAutoMatchmake: two gamewire clients each create
// a session and report their NAT (the first, older one endpoint-dependent
// mapping with port-independent filtering, the second endpoint-independent
// mapping with port-dependent filtering); NintendoClients registers, reports
// endpoint-independent mapping with port-dependent filtering with its own
// NATTraversalClient.report_nat_properties, and auto-matchmakes with
// MatchmakeExtensionClient.auto_matchmake_postpone. It can reach only the
// second owner (docs/nex.md "NAT-aware matchmaking"), so gamewire's default
// policy puts it there, past the first in the usual order; without its report
// both would be unknown and it would join the first.
func TestNintendoClientsNATAwareAutoMatchmake(t *testing.T) {
	dir, python := env(t)
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	srv, addr := startMatchmakingUsers(t, cfg, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var gids []uint32
	for i, props := range []nattraversal.Properties{{Mapping: 2, Filtering: 1}, {Mapping: 1, Filtering: 2}} {
		sess, err := nex.Login(ctx, addr, nex.LoginConfig{User: strconv.Itoa(userPID + i), Password: userPassword, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close(context.Background())
		mc := &matchmaking.Client{RMC: sess.RMC, Version: types.Version3_5}
		gid, _, err := mc.CreateMatchmakeSession(ctx, matchmaking.MatchmakeSession{
			Gathering: matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 4, Flags: matchmaking.FlagMigrateOwner},
			GameMode:  3, Attributes: []uint32{0, 0, 0, 0, 0, 0}, OpenParticipation: true, MatchmakeSystemType: 1,
		}, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := (&nattraversal.Client{RMC: sess.RMC}).ReportNATProperties(ctx, props); err != nil {
			t.Fatal(err)
		}
		gids = append(gids, gid)
	}

	_, port, _ := net.SplitHostPort(addr)
	out, err := pyCmd(ctx, dir, python, "nc_matchmake.py", "--port", port, "--access-key", "3d37fbdb",
		"--nex-version", "30500", "--nat", "1,2", "--timeout", "60").CombinedOutput()
	lines := steps(strings.Split(string(out), "\n"))
	if err != nil {
		t.Fatalf("nc_matchmake.py: %v\n%s", err, out)
	}
	if l, ok := lines.find("nat"); !ok || field(t, l, "natm") != 1 || field(t, l, "natf") != 2 {
		t.Fatalf("NintendoClients' NAT report: %q\n%s", l, out)
	}
	joined, ok := lines.find("automatchmake")
	if !ok || field(t, joined, "gid") != int(gids[1]) || field(t, joined, "owner") != userPID+1 || field(t, joined, "participants") != 2 {
		t.Fatalf("NintendoClients joined %q, want session %d of %d (sessions %v)\n%s", joined, gids[1], userPID+1, gids, out)
	}
	if preferred, _ := srv.MatchmakingServer().NATStats(); preferred != 1 {
		t.Fatalf("NAT-steered auto-matchmakes: %d, want 1", preferred)
	}
	t.Log(string(out))
}
