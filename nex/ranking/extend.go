package ranking

import (
	"context"

	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// The extension seams: what a game's variant of Ranking (Ranking_MK8,
// Ranking_MK8D, the legacy Ranking of NEX 2 games) builds on without editing
// this package. The variant's handler embeds Handler for the methods it
// inherits, runs its calls through PrepareCall and Result as ServeRMC does,
// and registers its own methods on the Mux (rmc.Mux.Handle), which take
// precedence over the protocol handler.

// Handler returns the Server as the generated Ranking handler, for a variant's
// handler to embed: the inherited methods answer as the service does. Its
// methods' errors are raw; pass them through Result.
func (s *Server) Handler(ctx context.Context) (rk.RankingHandler, error) {
	if err := s.Init(ctx); err != nil {
		return nil, err
	}
	return handler{s}, nil
}

// PrepareCall is what ServeRMC does before dispatching a call: it declares the
// categories (Init), refuses an unauthenticated peer
// (RendezVous::NotAuthenticated) and gives a connection without a NEX version
// the Server's NEXVersion (defaultVersion).
func (s *Server) PrepareCall(ctx context.Context, c *rmc.Call) (*rmc.Call, error) {
	if err := s.Init(ctx); err != nil {
		return c, err
	}
	if c.Peer.PID == 0 {
		return c, types.RendezVousNotAuthenticated
	}
	if v := s.defaultVersion(c.Peer.Settings); v != 0 {
		cc, peer := *c, *c.Peer
		peer.Settings.Version = v
		cc.Peer = &peer
		c = &cc
	}
	return c, nil
}

// defaultVersion is the NEX version a connection whose settings carry none is
// served at: NEXVersion (0 leaves the settings as they are, and
// types.Settings.NEXVersion derives the version from them).
func (s *Server) defaultVersion(st types.Settings) types.Version {
	if st.Version != 0 || s.NEXVersion == 0 {
		return 0
	}
	return types.Version(s.NEXVersion)
}

// Result turns a method's failure into what the client is sent, as ServeRMC
// does: a types.Result as itself, ErrNotFound and ErrNoCategory as
// Ranking::NotFound, anything else logged and sent as Ranking::Unknown.
func (s *Server) Result(ctx context.Context, method uint32, err error) error {
	if err == nil {
		return nil
	}
	return s.result(ctx, method, err)
}

// Category returns category id when it exists (Ranking::NotFound when not, or
// when Categories is set and does not declare it).
func (s *Server) Category(ctx context.Context, id uint32) (Category, error) {
	return s.category(ctx, id)
}

// UploadScore records sd for pid under unique id uid as UploadScore does:
// the argument checks, the quota, the category (created on first upload when
// categories are open), then the store.
func (s *Server) UploadScore(ctx context.Context, pid types.PID, uid uint64, sd ScoreData) error {
	return s.uploadScore(ctx, pid, uid, sd)
}

// UploadCommonData stores data as pid's common data under uid as
// UploadCommonData does: the size limit, the quota, then the store.
func (s *Server) UploadCommonData(ctx context.Context, pid types.PID, uid uint64, data []byte) error {
	return s.uploadCommonData(ctx, pid, uid, data)
}
