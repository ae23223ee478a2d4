// Package badgearcade serves what Nintendo Badge Arcade (3DS) adds to the
// protocols every title speaks: its SecureConnection's GetMaintenanceStatus
// (protocol 11, method 9: SecureConnection_BadgeArcade), its Shop (protocol
// 200, Shop_BadgeArcade: GetRivToken, PostPlayLog) and its DataStore's
// GetMetaByOwnerId (115.45, DataStore_BadgeArcade, on the DataStore
// service's objects), through the Mux's per-method seam, so that nex/secure
// and nex/datastore keep answering the rest of their protocols unchanged
// (docs/nex.md "Adding a game variant").
//
// Wire formats are generated from nex/desc/defs/secure_badgearcade.nexd and
// shop_badgearcade.nexd (nex/protocols/securebadgearcade, shopbadgearcade);
// the play logs are kept in a Store (internal/sqlstore's BadgeArcade on
// SQLite and PostgreSQL).
package badgearcade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	dba "github.com/gamewire/gamewire/nex/protocols/datastorebadgearcade"
	"github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	sba "github.com/gamewire/gamewire/nex/protocols/securebadgearcade"
	"github.com/gamewire/gamewire/nex/protocols/shopbadgearcade"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// GameName is the title's name in the games table (nex/games): serve --game
// with it serves this package.
const GameName = "Badge Arcade"

// Limits on what a client sends.
const (
	// MaxPlayLogValues bounds a play log's unknown1 list.
	MaxPlayLogValues = 64
	// MaxPlayLogString bounds a play log's unknown2 string, in bytes.
	MaxPlayLogString = 1024
	// DefaultPlayLogsPerPlayer is how many play logs a player keeps (the
	// oldest go first).
	DefaultPlayLogsPerPlayer = 100
)

// Maintenance is what GetMaintenanceStatus answers. What the status and
// time mean is not public.
type Maintenance struct {
	Status    uint16 `json:"status"`
	Time      uint32 `json:"time"`
	IsSuccess bool   `json:"is_success"`
}

// DefaultMaintenance is GetMaintenanceStatus's answer when the operator sets
// none: the values Pretendo Network's server answers (status 0xFFFF, time 0,
// success; github.com/PretendoNetwork/nintendo-badge-arcade-secure, read for
// facts), with which the game plays.
var DefaultMaintenance = Maintenance{Status: 0xFFFF, Time: 0, IsSuccess: true}

// Config is what an operator sets per server.
type Config struct {
	// Maintenance: nil is DefaultMaintenance.
	Maintenance *Maintenance `json:"maintenance,omitempty"`
	// RivTokens are the rights tokens GetRivToken answers, by item code. An
	// item without one answers "", as Pretendo Network's server does for
	// every item: the eShop that issued the tokens is closed.
	RivTokens map[string]string `json:"riv_tokens,omitempty"`
	// PlayLogsPerPlayer: default DefaultPlayLogsPerPlayer.
	PlayLogsPerPlayer int `json:"play_logs_per_player,omitempty"`
}

// Server answers Badge Arcade's methods. Register it with Register.
type Server struct {
	// Store keeps the play logs; required.
	Store Store
	// DataStore is the DataStore service whose objects GetMetaByOwnerId
	// pages through; without it 115.45 is left to whatever answers 115.
	DataStore *datastore.Server
	// Config: see Config.
	Config Config
	// Now returns the time; default time.Now.
	Now func() time.Time
}

// Methods of Shop_BadgeArcade the Server answers (all of them).
var Methods = []uint32{shopbadgearcade.ShopBadgeArcadeMethodGetRivToken, shopbadgearcade.ShopBadgeArcadeMethodPostPlayLog}

var _ shopbadgearcade.ShopBadgeArcadeHandler = (*Server)(nil)

// Register registers s on mux for Shop_BadgeArcade and for SecureConnection's
// method 9 (GetMaintenanceStatus). A method registered on its own takes
// precedence over the protocol handler nex.Server registers for
// SecureConnection, whichever comes first.
func Register(mux *rmc.Mux, s *Server) error {
	if s.Store == nil {
		return errors.New("badgearcade: Server.Store is required")
	}
	shopbadgearcade.RegisterShopBadgeArcadeMethods(mux, s, Methods...)
	sba.RegisterSecureConnectionBadgeArcadeOwn(mux, sba.NewSecureConnectionBadgeArcadeOwnServer(s, nil))
	if s.DataStore != nil {
		dba.RegisterDataStoreBadgeArcadeOwn(mux, rmc.HandlerFunc(s.serveDataStore))
	}
	return nil
}

// serveDataStore answers the method DataStore_BadgeArcade declares (115.45)
// as the DataStore service answers its own methods (authenticated callers,
// its NEX version, its error mapping) and passes any other to the service
// (datastore.Server.ServeVariant).
func (s *Server) serveDataStore(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	return s.DataStore.ServeVariant(ctx, c, out, s.serveDataStoreOwn)
}

// serveDataStoreOwn is the generated dispatch of DataStore_BadgeArcade's
// method.
func (s *Server) serveDataStoreOwn(ctx context.Context, c *rmc.Call, out []byte) ([]byte, bool, error) {
	return dba.ServeDataStoreBadgeArcadeOwn(dataStoreHandler{s}, ctx, c, out)
}

// dataStoreHandler is the Server as the generated one-method handler.
type dataStoreHandler struct{ s *Server }

// ParamError answers parameters that do not decode with
// DataStore::InvalidArgument, as the DataStore service does.
func (dataStoreHandler) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %w", types.DataStoreInvalidArgument, err)
}

// GetMetaByOwnerId answers the objects of the owners (and, when given, of
// the data types) the caller may read, by data id, the page result_range
// asks, and whether more follow: the DataStore service's MetasByOwner.
func (h dataStoreHandler) GetMetaByOwnerId(ctx context.Context, c *rmc.Call, p datastoresmm.DataStoreGetMetaByOwnerIdParam) ([]ds.DataStoreMetaInfo, bool, error) {
	return h.s.DataStore.MetasByOwner(ctx, c, p.OwnerIDs, p.DataTypes, p.ResultOption, p.ResultRange)
}

// GetMaintenanceStatus answers the configured maintenance status.
func (s *Server) GetMaintenanceStatus(ctx context.Context, c *rmc.Call) (uint16, uint32, bool, error) {
	m := DefaultMaintenance
	if s.Config.Maintenance != nil {
		m = *s.Config.Maintenance
	}
	return m.Status, m.Time, m.IsSuccess, nil
}

// GetRivToken implements shopbadgearcade.ShopBadgeArcadeHandler: the item's
// configured token, else "".
func (s *Server) GetRivToken(ctx context.Context, c *rmc.Call, itemCode string, referenceID []byte) (string, error) {
	if _, err := caller(c); err != nil {
		return "", err
	}
	return s.Config.RivTokens[itemCode], nil
}

// PostPlayLog implements shopbadgearcade.ShopBadgeArcadeHandler: the entry is
// stored for the caller (the newest PlayLogsPerPlayer kept).
func (s *Server) PostPlayLog(ctx context.Context, c *rmc.Call, p shopbadgearcade.ShopPostPlayLogParam) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	switch {
	case len(p.Unknown1) > MaxPlayLogValues:
		return fmt.Errorf("%w: play log unknown1: %d values, at most %d", types.CoreInvalidArgument, len(p.Unknown1), MaxPlayLogValues)
	case len(p.Unknown2) > MaxPlayLogString:
		return fmt.Errorf("%w: play log unknown2: %d bytes, at most %d", types.CoreInvalidArgument, len(p.Unknown2), MaxPlayLogString)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	keep := s.Config.PlayLogsPerPlayer
	if keep <= 0 {
		keep = DefaultPlayLogsPerPlayer
	}
	l := PlayLog{PID: pid, Unknown1: p.Unknown1, Timestamp: p.Timestamp, Unknown2: p.Unknown2, Received: now().Truncate(time.Second)}
	return s.Store.AddPlayLog(ctx, l, keep) // a store failure is logged and answered Core::Exception
}

// caller returns the authenticated caller.
func caller(c *rmc.Call) (types.PID, error) {
	if c.Peer == nil || c.Peer.PID == 0 {
		return 0, fmt.Errorf("%w: Badge Arcade's Shop needs an authenticated caller", types.CoreAccessDenied)
	}
	return c.Peer.PID, nil
}
