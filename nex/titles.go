package nex

import (
	"context"
	"slices"
	"strings"

	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/ranking/legacy"
	"github.com/gamewire/gamewire/nex/types"
)

// Variant names of nex/games (Game.Variants) the server acts on.
const (
	// VariantStorageManager: Storage Manager in place of Utility on 110
	// (Mario Kart 7, Puyo Puyo!! 20th Anniversary).
	VariantStorageManager = "Storage Manager"
	// VariantRankingLegacy: the legacy Ranking methods (nex/ranking/legacy)
	// ahead of Ranking's on 112 (Puyo Puyo!! 20th Anniversary), when Ranking
	// is set.
	VariantRankingLegacy = "Ranking (legacy)"
)

// hasVariant reports whether Variants names v.
func (s *Server) hasVariant(v string) bool {
	return slices.ContainsFunc(s.Variants, func(x string) bool { return strings.EqualFold(x, v) })
}

// startTitleServices registers, on the secure mux, the protocols the titles of
// nex/games use beyond matchmaking, Ranking and DataStore (docs/games.md):
// MessageDelivery (27) when Messages is set, Utility (110) when Utility is
// set and the game's variants do not put Storage Manager on its id, Storage
// Manager (110) when StorageManager is set and they do, and the legacy
// Ranking methods (112) when Ranking is set and they name it.
func (s *Server) startTitleServices() {
	if s.Ranking != nil && s.hasVariant(VariantRankingLegacy) {
		(&legacy.Server{Ranking: s.Ranking}).Register(s.Mux)
	}
	if s.Utility != nil && !s.hasVariant(VariantStorageManager) {
		s.Utility.Register(s.Mux)
	}
	if s.StorageManager != nil && s.hasVariant(VariantStorageManager) {
		s.StorageManager.Register(s.Mux)
	}
	if s.Messages != nil {
		md := &messagedelivery.Server{Store: s.Messages, Hub: &s.hub, Logger: s.Logger}
		if s.Matchmaking != nil {
			md.Participants = func(ctx context.Context, gid uint32) ([]types.PID, error) {
				_, ps, err := s.Matchmaking.Get(ctx, gid)
				pids := make([]types.PID, len(ps))
				for i, p := range ps {
					pids[i] = p.PID
				}
				return pids, err
			}
		}
		md.Register(s.Mux)
	}
}
