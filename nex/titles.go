package nex

import (
	"context"

	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/types"
)

// startTitleServices registers, on the secure mux, the protocols the titles of
// nex/games use beyond matchmaking, Ranking and DataStore (docs/games.md):
// MessageDelivery (27) when Messages is set.
func (s *Server) startTitleServices() {
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
