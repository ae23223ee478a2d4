package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/smm"
	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rating"
	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/subscription"
	"github.com/gamewire/gamewire/nex/utility"
)

// backend is what serve keeps its state in: the SQLite store in --data, or a
// PostgreSQL database (--store postgres://...) that several machines share.
type backend struct {
	Accounts    accountFinder
	Nodes       nodes.Registry
	Matchmaking matchmaking.Store
	Ranking     ranking.Store
	DataStore   datastore.Store
	// SMM keeps Super Mario Maker's DataStore additions (nex/games/smm).
	SMM smm.Store
	// SSB4 keeps Super Smash Bros. 4's DataStore additions (nex/games/ssb4).
	SSB4 ssb4.Store
	// TKCD keeps Team Kirby Clash Deluxe's support ids (nex/games/tkcd).
	TKCD tkcd.Store
	// BadgeArcade keeps Badge Arcade's play logs (nex/games/badgearcade).
	BadgeArcade badgearcade.Store
	Messages    messagedelivery.Store // MessageDelivery's messages
	UniqueIDs   utility.Store         // Utility's unique ids
	Slots       storagemanager.Store  // Storage Manager's unique ids
	// Subscriptions and Ratings keep the Pokémon titles' Subscription (117)
	// and Rating (118) state.
	Subscriptions subscription.Store
	Ratings       rating.Store
	// Friends is the friends server's store; ranking's friends filter,
	// DataStore's friends permission and friend-only matchmake sessions
	// read it too.
	Friends friends.Store
	// Credentials holds NNIDs and the token secret (the account services,
	// token checks); Add creates a NEX account (NASC self-registration).
	Credentials credentials.Store
	Add         func(ctx context.Context, n accounts.NewAccount) (auth.Account, error)
	Ping        func(ctx context.Context) error
	// Where names the store for messages (a path, or a DSN without its password).
	Where string
	// Bodies is the directory DataStore bodies go to: "datastore" in the data
	// directory, also with PostgreSQL (bodies are not in the database).
	Bodies string
	// Created: the SQLite store was created by this start.
	Created bool
	// SetQuota gives the matchmaking and DataStore stores their per-player
	// limits (the Ranking server checks its own).
	SetQuota func(quota.Quota)
	close    []func() error
}

// Close closes what openBackend opened, the services before the store.
func (b *backend) Close() error {
	var errs []error
	for i := len(b.close) - 1; i >= 0; i-- {
		errs = append(errs, b.close[i]())
	}
	return errors.Join(errs...)
}

// isPostgres reports whether a --store value names a PostgreSQL database.
func isPostgres(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// openBackend opens the store serve runs on: PostgreSQL when store is a
// postgres:// URL, otherwise (store empty) the SQLite store in dataDir.
func openBackend(ctx context.Context, dataDir, store string) (*backend, error) {
	if store != "" && !isPostgres(store) {
		return nil, fmt.Errorf("--store %q: want a postgres:// or postgresql:// URL (the SQLite store is chosen with --data)", store)
	}
	if dataDir == "" {
		var err error
		if dataDir, err = accounts.DefaultDir(); err != nil {
			return nil, err
		}
	}
	if store != "" {
		s, err := pgstore.Open(ctx, store)
		if err != nil {
			return nil, pgHint(store, err)
		}
		mm, ds := s.Matchmaking(), s.DataStore()
		return &backend{Accounts: s, Nodes: s, Matchmaking: mm, Ranking: s.Ranking(), DataStore: ds, SMM: s.SMM(), SSB4: s.SSB4(), TKCD: s.TKCD(), BadgeArcade: s.BadgeArcade(), Messages: s.Messages(), UniqueIDs: s.UniqueIDs(), Slots: s.Slots(), Friends: s.Friends(),
			Subscriptions: s.Subscriptions(), Ratings: s.Ratings(),
			Credentials: s.Credentials(), Add: s.Add, Ping: s.Ping, Where: pgstore.Redact(store), Bodies: filepath.Join(dataDir, "datastore"), close: []func() error{s.Close},
			SetQuota: func(q quota.Quota) { mm.SetQuota(q); ds.SetQuota(q) }}, nil
	}
	s, created, err := openStore(ctx, dataDir)
	if err != nil {
		return nil, err
	}
	mm, err := s.Matchmaking()
	if err != nil {
		s.Close()
		return nil, err
	}
	ds := s.DataStore()
	return &backend{Accounts: s, Nodes: s, Matchmaking: mm, Ranking: s.Ranking(), DataStore: ds, SMM: s.SMM(), SSB4: s.SSB4(), TKCD: s.TKCD(), BadgeArcade: s.BadgeArcade(), Messages: s.Messages(), UniqueIDs: s.UniqueIDs(), Slots: s.Slots(), Friends: s.Friends(), Ping: s.Ping,
		Subscriptions: s.Subscriptions(), Ratings: s.Ratings(),
		Credentials: s.Credentials(), Add: s.Add,
		Where: s.Path(), Bodies: filepath.Join(filepath.Dir(s.Path()), "datastore"), Created: created,
		close: []func() error{s.Close, mm.Close}, SetQuota: func(q quota.Quota) { mm.SetQuota(q); ds.SetQuota(q) }}, nil
}

// pgHint adds to a PostgreSQL connection error what usually causes it: a
// server without TLS asked for it (sslmode=require against a local server).
func pgHint(dsn string, err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); strings.Contains(msg, "refused TLS") || strings.Contains(msg, "tls:") && strings.Contains(dsn, "sslmode=require") {
		return fmt.Errorf("%w (the server does not offer TLS, as a local PostgreSQL usually does not: use sslmode=disable or sslmode=prefer, or connect over its Unix socket, host=/run/postgresql)", err)
	}
	return err
}
