package main

import (
	"fmt"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/rating"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/subscription"
)

// pokemonGameConfig is --game-config for the titles that use Subscription and
// Rating (Pokémon X/Y, ORAS): their limits. Zero values keep the packages'
// defaults; times are in seconds.
type pokemonGameConfig struct {
	MaxDataSize      int `json:"max_data_size,omitempty"`
	MaxTargets       int `json:"max_targets,omitempty"`
	MaxActivePlayers int `json:"max_active_players,omitempty"`
	// ActiveWindowSeconds: -1 lists every player with data as active.
	ActiveWindowSeconds  int     `json:"active_window_seconds,omitempty"`
	DefaultPrivacyLevel  *uint32 `json:"default_privacy_level,omitempty"`
	TokensPerPlayer      int     `json:"tokens_per_player,omitempty"`
	TokenLifetimeSeconds int     `json:"token_lifetime_seconds,omitempty"`
}

// maxConfigSeconds bounds the times of --game-config (a year).
const maxConfigSeconds = 365 * 24 * 3600

func (c pokemonGameConfig) check() error {
	for _, v := range []struct {
		name string
		n    int
		min  int
	}{
		{"max_data_size", c.MaxDataSize, 0}, {"max_targets", c.MaxTargets, 0}, {"max_active_players", c.MaxActivePlayers, 0},
		{"active_window_seconds", c.ActiveWindowSeconds, -1}, {"tokens_per_player", c.TokensPerPlayer, 0},
		{"token_lifetime_seconds", c.TokenLifetimeSeconds, 0},
	} {
		if v.n < v.min {
			return fmt.Errorf("--game-config: %s %d is negative", v.name, v.n)
		}
	}
	if c.MaxDataSize > 0xffff {
		return fmt.Errorf("--game-config: max_data_size %d is more than a qBuffer holds (65535)", c.MaxDataSize)
	}
	if c.ActiveWindowSeconds > maxConfigSeconds || c.TokenLifetimeSeconds > maxConfigSeconds {
		return fmt.Errorf("--game-config: times are at most %d seconds (a year)", maxConfigSeconds)
	}
	return nil
}

// serveGameProtocols registers the game-specific protocols --game's variants
// name: Subscription (117) and Rating (118) for the Pokémon titles, with the
// limits of --game-config, on the secure Mux before the HTTP listener (HPP)
// starts. Subscription's friends are the server's friend lists and its
// notifications reach players on every secure node (NotifyAnywhere).
func (o *serveOptions) serveGameProtocols(srv *nex.Server, store *backend) error {
	g, err := games.Find(o.game)
	if o.game == "" || err != nil || !g.HasVariant(games.VariantSubscription) && !g.HasVariant(games.VariantRating) {
		return nil
	}
	var c pokemonGameConfig
	if err := o.readGameConfig(&c); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	if srv.Mux == nil {
		srv.Mux = rmc.NewMux()
	}
	if g.HasVariant(games.VariantSubscription) {
		window := time.Duration(c.ActiveWindowSeconds) * time.Second
		if c.ActiveWindowSeconds < 0 {
			window = -1
		}
		sub := &subscription.Server{Store: store.Subscriptions, Friends: srv.FriendLists, Notify: srv.NotifyAnywhere, Logger: srv.Logger,
			Config: subscription.Config{MaxDataSize: c.MaxDataSize, MaxTargets: c.MaxTargets, MaxActivePlayers: c.MaxActivePlayers,
				ActiveWindow: window, DefaultPrivacyLevel: c.DefaultPrivacyLevel}}
		sub.Register(srv.Mux)
	}
	if g.HasVariant(games.VariantRating) {
		r := &rating.Server{Store: store.Ratings, TokensPerPlayer: c.TokensPerPlayer,
			TokenLifetime: time.Duration(c.TokenLifetimeSeconds) * time.Second}
		r.Register(srv.Mux)
	}
	return nil
}
