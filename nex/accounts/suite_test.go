package accounts_test

import (
	"context"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/storetest"
	"github.com/gamewire/gamewire/nex/utility"
)

// TestStoreSuite runs the suite every backend runs (nex/storetest) on SQLite.
func TestStoreSuite(t *testing.T) {
	storetest.Accounts(t, func(t *testing.T) storetest.AccountStore {
		s, _, err := accounts.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestNodeRegistrySuite(t *testing.T) {
	storetest.Nodes(t, func(t *testing.T) nodes.Registry {
		s, _, err := accounts.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestMailboxSuite(t *testing.T) {
	storetest.Mailbox(t, func(t *testing.T) storetest.MailStore {
		s, _, err := accounts.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestMessagesSuite(t *testing.T) {
	storetest.Messages(t, func(t *testing.T) messagedelivery.Store {
		s, _, err := accounts.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.Messages()
	})
}

func TestUniqueIDsSuite(t *testing.T) {
	storetest.UniqueIDs(t, func(t *testing.T) utility.Store {
		s, _, err := accounts.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.UniqueIDs()
	})
}

// TestMemoryUniqueIDs runs the same suite on utility.Memory.
func TestMemoryUniqueIDs(t *testing.T) {
	storetest.UniqueIDs(t, func(t *testing.T) utility.Store { return new(utility.Memory) })
}

func TestSlotsSuite(t *testing.T) {
	storetest.Slots(t, func(t *testing.T) storagemanager.Store {
		s, _, err := accounts.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.Slots()
	})
}
