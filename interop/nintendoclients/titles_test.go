package nintendoclients

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/nex/utility"
	"github.com/gamewire/gamewire/prudp"
)

// TestNintendoClientsMessageDeliveryAndUtility runs NintendoClients' own
// MessageDeliveryClient, MessageDeliveryServer and UtilityClient
// (nintendo/nex/messaging.py, utility.py; NEX 4.0 settings, whose UserMessage
// layout is the one NintendoClients describes) against gamewire's
// MessageDelivery and Utility on an SQLite store: a delivered message arrives
// at the recipient's MessageDeliveryServer with the id and sender the server
// gave it, and a unique id acquired with its password is associated and
// read back.
func TestNintendoClientsMessageDeliveryAndUtility(t *testing.T) {
	dir, python := env(t)
	for _, f := range []string{"nintendo/nex/messaging.py", "nintendo/nex/utility.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%v: add NintendoClients' %s to the copy (docs/interop.md)", err, f)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, _, err := accounts.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, pid := range []int{3001, 3002} {
		if _, err := store.Add(ctx, accounts.NewAccount{PID: types.PID(pid), Name: strconv.Itoa(pid), Password: "nc-titles"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	srv := &nex.Server{Config: cfg, Accounts: store, Messages: store.Messages(), Utility: &utility.Server{Store: store.UniqueIDs()},
		NEXVersion: types.Version4}
	addr, stop := serveNEX(t, srv)
	defer stop()
	host, port, _ := net.SplitHostPort(addr)
	cmd := pyCmd(ctx, dir, python, "nc_titles.py", "--host", host, "--port", port, "--access-key", "3d37fbdb", "--timeout", "50",
		"--sender", "3001", "--recipient", "3002", "--password", "nc-titles")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("NintendoClients:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("NintendoClients driver failed: %v\nstderr:\n%s", err, stderr.String())
	}
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	kept, err := store.Messages().Inbox(ctx, 3002, 10)
	if err != nil || len(kept) != 1 {
		t.Fatalf("recipient's inbox: %+v, %v", kept, err)
	}
	for name, want := range map[string]string{
		"message-received":    "cls=TextMessage id=" + strconv.Itoa(int(kept[0].ID)) + " sender=3001 subject='hello' body='from NintendoClients' recipient=3002",
		"unique-id-acquired":  "nonzero=True",
		"unique-id-read-back": "same=True",
	} {
		line, ok := out.find(name)
		if !ok || !strings.Contains(line, want) {
			t.Errorf("%s: got %q, want %q", name, line, want)
		}
	}
	if got, err := store.UniqueIDs().AssociatedUniqueIDs(ctx, 3001); err != nil || len(got) != 1 {
		t.Errorf("associated in the store: %+v, %v", got, err)
	}
}
