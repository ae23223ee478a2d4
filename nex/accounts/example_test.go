package accounts_test

import (
	"context"
	"log"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/prudp"
)

// A NEX server for a Wii U game: authentication on 127.0.0.1:60000, secure
// server on 60001, accounts in ./data.
func Example_server() {
	ctx := context.Background()
	store, _, err := accounts.Open(ctx, "data")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	srv := &nex.Server{
		Addr:     "127.0.0.1:60000",
		Config:   prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"},
		Accounts: store,
	}
	srv.Health.PingDatabase = store.Ping
	// srv.Mux.HandleProtocol(...) adds the game's own protocols.
	log.Fatal(srv.ListenAndServe())
}
