package datastore

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// The extension seams: what a game's variant of DataStore (nex/games/smm's
// DataStore_SMM) builds on without editing this package. The variant serves
// its own methods through ServeVariant (PrepareCall, its dispatch, Result,
// the service for the rest), calls the service's methods through Handler,
// and reads objects with the service's permission checks.

// ServeVariant serves a call to a game's variant of DataStore (a protocol
// declared ": DataStore", e.g. DataStore_SMM) as ServeRMC serves the
// service's own: PrepareCall first (an unauthenticated peer refused, the NEX
// version filled in), then own, the variant's dispatch (the generated
// Serve<V>Own with the variant's handler), whose failure goes through
// Result; a call own does not handle (a method the variant inherits) goes to
// the service's ServeRMC. A variant's rmc.Handler is then
//
//	func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
//		return s.DataStore.ServeVariant(ctx, c, out, s.serveOwn)
//	}
//
//	func (s *Server) serveOwn(ctx context.Context, c *rmc.Call, out []byte) ([]byte, bool, error) {
//		return sm.ServeDataStoreSMMOwn(s.own, ctx, c, out)
//	}
//
// own may map its own errors before returning them (a game store's
// not-found sentinel to DataStore::NotFound, say).
func (s *Server) ServeVariant(ctx context.Context, c *rmc.Call, out []byte, own func(ctx context.Context, c *rmc.Call, out []byte) (_ []byte, handled bool, err error)) ([]byte, error) {
	pc, err := s.PrepareCall(c)
	if err != nil {
		return out, err
	}
	out, handled, err := own(ctx, pc, out)
	switch {
	case !handled:
		return s.ServeRMC(ctx, c, out)
	case err != nil:
		return out, s.Result(ctx, c.Method, err)
	}
	return out, nil
}

// Handler returns the Server as the generated DataStore handler, for a
// variant's handler to embed: the inherited methods answer as the service
// does. Its methods' errors are raw; pass them through Result.
func (s *Server) Handler() (ds.DataStoreHandler, error) {
	if err := s.init(); err != nil {
		return nil, err
	}
	return handler{s}, nil
}

// PrepareCall is what ServeRMC does before dispatching a call: it refuses an
// unauthenticated peer (RendezVous::NotAuthenticated) and gives a connection
// without a NEX version the Server's NEXVersion.
func (s *Server) PrepareCall(c *rmc.Call) (*rmc.Call, error) {
	if err := s.init(); err != nil {
		return c, err
	}
	if c.Peer.PID == 0 {
		return c, types.RendezVousNotAuthenticated
	}
	if s.NEXVersion != 0 && c.Peer.Settings.Version == 0 {
		cc, peer := *c, *c.Peer
		peer.Settings.Version = types.Version(s.NEXVersion)
		cc.Peer = &peer
		c = &cc
	}
	return c, nil
}

// Result turns a method's failure into what the client is sent, as ServeRMC
// does: a types.Result as itself, ErrNotFound as DataStore::NotFound, anything
// else logged and sent as DataStore::Unknown.
func (s *Server) Result(ctx context.Context, method uint32, err error) error {
	if err == nil {
		return nil
	}
	return s.result(ctx, method, err)
}

// ItemResult is the Result of one item of a batch (a Result list entry):
// success, the failure's own code, DataStore::NotFound or DataStore::Unknown.
func ItemResult(err error) types.Result { return (&call{}).itemResult(err) }

// ReadableObject returns object dataID when the caller may read it: completed,
// not expired, and the owner's, readable by the caller's PID, or opened with
// its access password (DataStore::NotFound, Expired, PermissionDenied,
// InvalidPassword otherwise).
func (s *Server) ReadableObject(ctx context.Context, c *rmc.Call, dataID, accessPassword uint64) (Object, error) {
	k := s.call(ctx, c)
	o, err := s.Store.Object(ctx, dataID)
	if err != nil {
		return Object{}, err
	}
	return o, k.canRead(o, accessPassword)
}

// UpdatableObject returns object dataID when the caller may change it: its
// owner, or with its update password.
func (s *Server) UpdatableObject(ctx context.Context, c *rmc.Call, dataID, updatePassword uint64) (Object, error) {
	k := s.call(ctx, c)
	o, err := s.Store.Object(ctx, dataID)
	if err != nil {
		return Object{}, err
	}
	if err := k.live(o); err != nil {
		return Object{}, err
	}
	return o, k.canUpdate(o, updatePassword)
}

// WireMetaInfo is o's DataStoreMetaInfo on the wire, with tags, ratings and
// meta binary as option (ResultTags | ResultRatings | ResultMetaBinary) asks.
func WireMetaInfo(o Object, option uint8) ds.DataStoreMetaInfo { return metaInfo(o, option).wire() }

// GetInfo is where o's body is downloaded from (DataStore::OperationNotAllowed
// when it has none); it counts a reference, as PrepareGetObject does.
func (s *Server) GetInfo(ctx context.Context, c *rmc.Call, o Object) (ds.DataStoreReqGetInfo, error) {
	k := s.call(ctx, c)
	if !hasBody(o) {
		return ds.DataStoreReqGetInfo{}, errNoBody(o)
	}
	info, err := k.getInfo(o)
	if err != nil {
		return ds.DataStoreReqGetInfo{}, err
	}
	return info.wire(), k.refer(o.DataID)
}

// SearchObjects runs a DataStoreSearchParam as SearchObject does (the objects
// the caller may read, in the order and range asked, at most
// MaxSearchResults) and returns the objects themselves.
func (s *Server) SearchObjects(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam) ([]Object, error) {
	objs, _, err := s.call(ctx, c).searchObjects(searchFrom(p))
	return objs, err
}

// MetasByOwner is GetMetaByOwnerId, which games' variants declare (Super
// Mario Maker's 115.46, Badge Arcade's 115.45; the parameter is
// datastore_smm's DataStoreGetMetaByOwnerIdParam, whose fields are the
// arguments): the objects of owners, and of dataTypes when the list is not
// empty, that the caller may read (as SearchObjects selects them: permissions,
// friends, expiry), by data id, the page r asks from its offset, at most
// min(r.Size, MaxSearchResults-1), with meta infos as option asks, and
// whether more follow. No owners answer an empty list; more than MaxBatch
// owners or data types are DataStore::InvalidArgument.
func (s *Server) MetasByOwner(ctx context.Context, c *rmc.Call, owners []uint32, dataTypes []uint16, option uint8, r common.ResultRange) ([]ds.DataStoreMetaInfo, bool, error) {
	switch {
	case len(owners) > MaxBatch:
		return nil, false, fmt.Errorf("%w: %d owner ids (at most %d)", types.DataStoreInvalidArgument, len(owners), MaxBatch)
	case len(dataTypes) > MaxBatch:
		return nil, false, fmt.Errorf("%w: %d data types (at most %d)", types.DataStoreInvalidArgument, len(dataTypes), MaxBatch)
	case len(owners) == 0:
		return []ds.DataStoreMetaInfo{}, false, nil
	}
	size := min(r.Size, MaxSearchResults-1)
	p := SearchParam{OwnerIDs: make([]types.PID, len(owners)), DataType: AnyDataType, DataTypes: dataTypes,
		ResultOrderColumn: uint8(OrderDataID), ResultOffset: r.Offset, ResultSize: size + 1} // one more: has_next
	for i, id := range owners {
		p.OwnerIDs[i] = types.PID(id)
	}
	objs, _, err := s.call(ctx, c).searchObjects(p)
	if err != nil {
		return nil, false, err
	}
	more := uint32(len(objs)) > size
	if more {
		objs = objs[:size]
	}
	infos := make([]ds.DataStoreMetaInfo, len(objs))
	for i, o := range objs {
		infos[i] = WireMetaInfo(o, option)
	}
	return infos, more, nil
}
