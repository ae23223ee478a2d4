package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp/kerberos"
)

// TestClusterSQLite starts an auth node and two secure nodes on a shared SQLite
// directory: logins go to both nodes; a killed node is restarted on
// the same address and announces itself again; players log in on it again.
func TestClusterSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gamewire and starts three processes")
	}
	c := StartT(t, Options{Secure: 2, SQLite: true, Heartbeat: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ps, err := AddPlayers(ctx, c.Store, 5000, 4, "cluster test")
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[*Node]int{}
	for _, p := range ps {
		if _, err := p.Login(ctx, c.AuthAddr(), ClientConfig()); err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		n := c.NodeOfPort(p.Port())
		if n == nil {
			t.Fatalf("player %d logged in on port %s, no node of the cluster", p.PID, p.Port())
		}
		perNode[n]++
	}
	// Both nodes serve (not an exact 2/2: a node's heartbeat replaces the
	// count of logins picked for it with its connections, see docs/deploy.md).
	if perNode[c.Secure[0]] == 0 || perNode[c.Secure[1]] == 0 {
		t.Fatalf("4 logins over 2 nodes: %d and %d, want some on each", perNode[c.Secure[0]], perNode[c.Secure[1]])
	}
	// Read to the nanosecond (schedstat): a process that has run reads > 0.
	cpu := c.Secure[0].CPU()
	if cpu <= 0 {
		t.Fatalf("node1's CPU time is %v after serving logins", cpu)
	}
	c.Secure[0].Kill()
	if c.Secure[0].Running() {
		t.Fatal("node1 runs after Kill")
	}
	if err := c.Restart(ctx, c.Secure[0]); err != nil {
		t.Fatal(err)
	}
	if !c.Secure[0].Running() {
		t.Fatal("node1 does not run after Restart")
	}
	if _, err := ps[0].Login(ctx, c.AuthAddr(), ClientConfig()); err != nil {
		t.Fatalf("login after node1's restart: %v", err)
	}
}

// TestProcessCPU: the reading of this process advances while it spins (the
// loop waits for that, bounded only so a broken reader fails), and a process
// that does not exist reads 0.
func TestProcessCPU(t *testing.T) {
	before := ProcessCPU(os.Getpid())
	if before <= 0 {
		t.Fatalf("this process's CPU time: %v", before)
	}
	x := 0
	for i := 0; ProcessCPU(os.Getpid()) <= before; i++ {
		for j := 0; j < 1_000_000; j++ {
			x += j
		}
		if i == 100_000 {
			t.Fatalf("this process's CPU time stays %v over 10^11 additions", before)
		}
	}
	_ = x
	if got := ProcessCPU(-1); got != 0 {
		t.Fatalf("CPU of no process: %v", got)
	}
}

// TestPlayerKeys: the incremental keys are DeriveKey's, across a modulus
// boundary too.
func TestPlayerKeys(t *testing.T) {
	const first = 2*kerberos.DerivePIDModulus - 3
	keys := playerKeys(first, 6, "a password")
	for i, k := range keys {
		if want := kerberos.DeriveKey("a password", uint64(first+i)); k != want {
			t.Fatalf("PID %d: key %x, DeriveKey %x", first+i, k, want)
		}
	}
}
