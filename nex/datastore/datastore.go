// Package datastore implements the generic DataStore protocol (protocol 115,
// "Data Store (115)" in PretendoNetwork/nintendo-wiki, docs/nex/protocols/datastore):
// objects with metadata, permissions, periods, tags, ratings and persistence
// slots, whose bodies move over HTTP. The server hands out expiring upload
// URLs with form fields and signed download URLs, and serves them itself
// (HTTPHandler); metadata lives in a Store (accounts.Store's DataStore on
// SQLite), bodies in Blobs (DirBlobs: a directory). With Blobs on object
// storage (a Presigner: S3Blobs) the URLs are the bucket's presigned POST
// policies and GETs instead, and bodies never pass through the server.
//
// Every generic method of the page is answered (the table of docs/nex.md);
// other method ids (the game-specific extensions) answer Core::NotImplemented.
package datastore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// ProtocolID is the DataStore protocol's id.
const ProtocolID = ds.DataStoreProtocolID

// Method ids of the DataStore protocol ("Methods" on the page; the same ids
// in NintendoClients' datastore.py), from the generated package.
const (
	MethodPrepareGetObjectV1           = ds.DataStoreMethodPrepareGetObjectV1
	MethodPreparePostObjectV1          = ds.DataStoreMethodPreparePostObjectV1
	MethodCompletePostObjectV1         = ds.DataStoreMethodCompletePostObjectV1
	MethodDeleteObject                 = ds.DataStoreMethodDeleteObject
	MethodDeleteObjects                = ds.DataStoreMethodDeleteObjects
	MethodChangeMetaV1                 = ds.DataStoreMethodChangeMetaV1
	MethodChangeMetasV1                = ds.DataStoreMethodChangeMetasV1
	MethodGetMeta                      = ds.DataStoreMethodGetMeta
	MethodGetMetas                     = ds.DataStoreMethodGetMetas
	MethodPrepareUpdateObject          = ds.DataStoreMethodPrepareUpdateObject
	MethodCompleteUpdateObject         = ds.DataStoreMethodCompleteUpdateObject
	MethodSearchObject                 = ds.DataStoreMethodSearchObject
	MethodGetNotificationURL           = ds.DataStoreMethodGetNotificationUrl
	MethodGetNewArrivedNotificationsV1 = ds.DataStoreMethodGetNewArrivedNotificationsV1
	MethodRateObject                   = ds.DataStoreMethodRateObject
	MethodGetRating                    = ds.DataStoreMethodGetRating
	MethodGetRatings                   = ds.DataStoreMethodGetRatings
	MethodResetRating                  = ds.DataStoreMethodResetRating
	MethodResetRatings                 = ds.DataStoreMethodResetRatings
	MethodGetSpecificMetaV1            = ds.DataStoreMethodGetSpecificMetaV1
	MethodPostMetaBinary               = ds.DataStoreMethodPostMetaBinary
	MethodTouchObject                  = ds.DataStoreMethodTouchObject
	MethodGetRatingWithLog             = ds.DataStoreMethodGetRatingWithLog
	MethodPreparePostObject            = ds.DataStoreMethodPreparePostObject
	MethodPrepareGetObject             = ds.DataStoreMethodPrepareGetObject
	MethodCompletePostObject           = ds.DataStoreMethodCompletePostObject
	MethodGetNewArrivedNotifications   = ds.DataStoreMethodGetNewArrivedNotifications
	MethodGetSpecificMeta              = ds.DataStoreMethodGetSpecificMeta
	MethodGetPersistenceInfo           = ds.DataStoreMethodGetPersistenceInfo
	MethodGetPersistenceInfos          = ds.DataStoreMethodGetPersistenceInfos
	MethodPerpetuateObject             = ds.DataStoreMethodPerpetuateObject
	MethodUnperpetuateObject           = ds.DataStoreMethodUnperpetuateObject
	MethodPrepareGetObjectOrMetaBinary = ds.DataStoreMethodPrepareGetObjectOrMetaBinary
	MethodGetPasswordInfo              = ds.DataStoreMethodGetPasswordInfo
	MethodGetPasswordInfos             = ds.DataStoreMethodGetPasswordInfos
	MethodGetMetasMultipleParam        = ds.DataStoreMethodGetMetasMultipleParam
	MethodCompletePostObjects          = ds.DataStoreMethodCompletePostObjects
	MethodChangeMeta                   = ds.DataStoreMethodChangeMeta
	MethodChangeMetas                  = ds.DataStoreMethodChangeMetas
	MethodRateObjects                  = ds.DataStoreMethodRateObjects
	MethodPostMetaBinaryWithDataID     = ds.DataStoreMethodPostMetaBinaryWithDataId
	MethodPostMetaBinariesWithDataID   = ds.DataStoreMethodPostMetaBinariesWithDataId
	MethodRateObjectWithPosting        = ds.DataStoreMethodRateObjectWithPosting
	MethodRateObjectsWithPosting       = ds.DataStoreMethodRateObjectsWithPosting
	MethodGetObjectInfos               = ds.DataStoreMethodGetObjectInfos
	MethodSearchObjectLight            = ds.DataStoreMethodSearchObjectLight
)

// Defaults and limits of the Server.
const (
	DefaultURLTTL        = 15 * time.Minute
	DefaultMaxObjectSize = 16 << 20
	MaxMetaBinary        = 32 << 10
	MaxTags              = 32
	MaxTagLen            = 256
	MaxRecipients        = 100
	MaxNameLen           = 256
	MaxSearchResults     = 100
	MaxBatch             = 100 // ids in one GetMetas, DeleteObjects, ...
	MaxNotifications     = 100 // notifications in one GetNewArrivedNotifications
	// MaxKeptNotifications is how many notifications a user keeps; a new one
	// drops the oldest past it.
	MaxKeptNotifications = 1000
	// NumPersistenceSlots is how many persistence slots a user has (0 to
	// 15, NumPersistenceSlot in PretendoNetwork/nex-protocols-go); the
	// perpetuation methods refuse others.
	NumPersistenceSlots = 16
	// NotificationURLTTL is how long a GetNotificationUrl URL works.
	NotificationURLTTL = 7 * 24 * time.Hour
	// MaxSearchFriends bounds the friends a search admits friends-permission
	// objects of (a console keeps 100; a remote source answers at most
	// nex/friends/remote.MaxFriends, 1000).
	MaxSearchFriends = 1000
)

// Data flags of an object (DataStoreMetaInfo.flag; the page gives the field,
// PretendoNetwork/nex-protocols-go's datastore constants the bits). Those the
// server acts on; the others are kept and returned unread.
const (
	DataFlagPeriodFromLastReferred  uint32 = 0x02 // a reference restarts the period
	DataFlagUseNotificationOnPost   uint32 = 0x08 // recipients are notified of the post
	DataFlagUseNotificationOnUpdate uint32 = 0x10 // recipients are notified of each update
)

// Server answers the DataStore protocol and serves object bodies over HTTP.
// Register it with mux.HandleProtocol(datastore.ProtocolID, srv) and serve
// HTTPHandler at BaseURL.
type Server struct {
	// Store keeps the metadata; required.
	Store Store
	// Blobs keeps the bodies; required (DirBlobs for a directory, S3Blobs
	// for a bucket; OpenBlobs picks one).
	Blobs Blobs
	// BaseURL is where HTTPHandler is reachable by clients
	// ("http://127.0.0.1:60002"); required unless Blobs is a Presigner,
	// whose clients upload and download at the bucket.
	BaseURL string
	// UploadTTL and DownloadTTL are how long handed-out URLs work; default
	// DefaultURLTTL.
	UploadTTL, DownloadTTL time.Duration
	// MaxObjectSize caps a body; default DefaultMaxObjectSize.
	MaxObjectSize uint32
	// NEXVersion is the game's NEX version as major*10000+minor*100+patch
	// for connections whose settings carry none (types.Settings.Version,
	// which nex.Server.NEXVersion sets for every service): from 3.5.0 on the
	// prepare parameters carry extra data and DataStoreReqGetInfo its data
	// id. 0 leaves it to the connection (types.Settings.NEXVersion: 4.0 with
	// 8-byte PIDs, 3.5 with structure headers, else 3.4). The descriptions
	// start at NEX 3.0: the 2.x layouts (32-bit update ids, 16-bit versions)
	// are not served.
	NEXVersion int
	// Friends, when set, admits an object's owner's friends to objects with
	// the friends permission (nex/friends); without it only the owner.
	Friends friends.Friends
	// Now returns the time; default time.Now.
	Now func() time.Time
	// Logger receives store failures.
	Logger *slog.Logger
	// PendingGrace is how long after its upload URL expired a pending post
	// or an unused upload is kept before Sweep removes it; default
	// DefaultPendingGrace.
	PendingGrace time.Duration
	// MaxUploads bounds the uploads the HTTP endpoint receives at once, and
	// MaxPlayerUploads those of one player's objects; more are refused
	// with 429 Too Many Requests. Defaults DefaultMaxUploads,
	// DefaultMaxPlayerUploads.
	MaxUploads, MaxPlayerUploads int

	once     sync.Once
	initErr  error
	secret   [32]byte
	inflight sync.Map // upload token -> struct{}
	uploads  uploadSlots
}

func (s *Server) init() error {
	s.once.Do(func() {
		switch {
		case s.Store == nil:
			s.initErr = errors.New("datastore: Server.Store is required")
		case s.Blobs == nil:
			s.initErr = errors.New("datastore: Server.Blobs is required")
		case s.BaseURL == "" && !isPresigner(s.Blobs):
			s.initErr = errors.New("datastore: Server.BaseURL is required (bodies in a directory are served by HTTPHandler)")
		default:
			_, s.initErr = rand.Read(s.secret[:])
		}
	})
	return s.initErr
}

func isPresigner(b Blobs) bool {
	_, ok := b.(Presigner)
	return ok
}

// presigner returns Blobs as a Presigner, if it is one.
func (s *Server) presigner() (Presigner, bool) {
	p, ok := s.Blobs.(Presigner)
	return p, ok
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// call is one request being answered.
type call struct {
	s   *Server
	ctx context.Context
	me  types.PID
	now time.Time
}

func (s *Server) call(ctx context.Context, c *rmc.Call) *call {
	return &call{s: s, ctx: ctx, me: c.Peer.PID, now: s.now()}
}

// ServeRMC implements rmc.Handler: the generated DataStore dispatcher decodes
// the parameters by the connection's NEX version and calls the handler
// methods (handler.go).
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	if err := s.init(); err != nil {
		return out, err
	}
	c, err := s.PrepareCall(c)
	if err != nil {
		return out, err
	}
	out, err = ds.ServeDataStore(handler{s}, ctx, c, out)
	if err != nil {
		return out, s.result(ctx, c.Method, err)
	}
	return out, nil
}

// result turns a failure into what the client is sent.
func (s *Server) result(ctx context.Context, method uint32, err error) error {
	var res types.Result
	switch {
	case errors.As(err, &res):
		return err
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("%w: %w", types.DataStoreNotFound, err)
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex datastore: failure", slog.Uint64("method", uint64(method)), slog.String("error", err.Error()))
	}
	return fmt.Errorf("%w: %w", types.DataStoreUnknown, err)
}

// DeleteParam is the DataStoreDeleteParam structure.
type DeleteParam struct {
	DataID         uint64
	UpdatePassword uint64
}

func randomU64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func expiry(from time.Time, period uint16) time.Time {
	if period == 0 {
		return time.Time{}
	}
	return from.Add(time.Duration(period) * 24 * time.Hour)
}

// checkPermission refuses permission values the page does not give and
// oversized recipient lists.
func checkPermission(what string, p Permission) error {
	if p.Permission > PermissionOwner {
		return fmt.Errorf("%w: %s %d (0 to 3)", types.DataStoreInvalidArgument, what, p.Permission)
	}
	if len(p.RecipientIDs) > MaxRecipients {
		return fmt.Errorf("%w: %s with %d recipients (at most %d)", types.DataStoreInvalidArgument, what, len(p.RecipientIDs), MaxRecipients)
	}
	return nil
}

func checkTags(tags []string) error {
	if len(tags) > MaxTags {
		return fmt.Errorf("%w: %d tags (at most %d)", types.DataStoreInvalidArgument, len(tags), MaxTags)
	}
	for _, t := range tags {
		if len(t) > MaxTagLen {
			return fmt.Errorf("%w: tag of %d bytes (at most %d)", types.DataStoreInvalidArgument, len(t), MaxTagLen)
		}
	}
	return nil
}

func (k *call) checkPost(p PreparePostParam, withBody bool) error {
	max := k.s.MaxObjectSize
	if max == 0 {
		max = DefaultMaxObjectSize
	}
	switch {
	case withBody && p.Size > max:
		return fmt.Errorf("%w: object of %d bytes (at most %d)", types.DataStoreInvalidArgument, p.Size, max)
	case len(p.MetaBinary) > MaxMetaBinary:
		return fmt.Errorf("%w: metaBinary of %d bytes (at most %d)", types.DataStoreInvalidArgument, len(p.MetaBinary), MaxMetaBinary)
	case len(p.Name) > MaxNameLen:
		return fmt.Errorf("%w: name of %d bytes (at most %d)", types.DataStoreInvalidArgument, len(p.Name), MaxNameLen)
	}
	if err := checkPermission("permission", p.Permission); err != nil {
		return err
	}
	if err := checkPermission("delPermission", p.DelPermission); err != nil {
		return err
	}
	if err := checkTags(p.Tags); err != nil {
		return err
	}
	seen := map[int8]bool{}
	for _, r := range p.RatingInitParams {
		if r.Slot < 0 || r.Slot > 15 || seen[r.Slot] {
			return fmt.Errorf("%w: rating slot %d (0 to 15, once each)", types.DataStoreInvalidArgument, r.Slot)
		}
		seen[r.Slot] = true
	}
	return nil
}

// newObject stores the object a PreparePostParam describes.
func (k *call) newObject(p PreparePostParam, pending bool) (Object, error) {
	return k.newObjectWithID(0, p, pending)
}

// newObjectWithID is newObject under a chosen data id (0: the next one).
func (k *call) newObjectWithID(id uint64, p PreparePostParam, pending bool) (Object, error) {
	o := Object{DataID: id, Owner: k.me, Size: p.Size, Name: p.Name, DataType: p.DataType, MetaBinary: p.MetaBinary,
		Permission: p.Permission, DelPermission: p.DelPermission, Flag: p.Flag, Period: p.Period,
		ReferDataID: p.ReferDataID, Tags: p.Tags, Created: k.now, Updated: k.now, Expire: expiry(k.now, p.Period),
		AccessPassword: randomU64(), UpdatePassword: randomU64(), Pending: pending, PersistenceSlot: p.PersistenceSlotID}
	if p.V1 {
		o.PersistenceSlot = NoPersistenceSlot
	}
	for _, r := range p.RatingInitParams {
		o.Ratings = append(o.Ratings, Rating{Slot: r.Slot, Init: r, Total: r.InitialValue})
	}
	deleted, err := k.s.Store.CreateObject(k.ctx, &o, p.DeleteLastObject)
	if err != nil {
		return Object{}, err
	}
	for _, d := range deleted {
		k.s.deleteBodies(k.ctx, d)
	}
	return o, nil
}

// deleteBodies deletes the bodies of a deleted object: its current version
// and one uploaded for an update that never completed (older versions went
// when their successor completed); on object storage also the uploads
// still staged for it.
func (s *Server) deleteBodies(ctx context.Context, o Object) {
	_ = s.Blobs.Delete(ctx, blobKey(o.DataID, o.Version))
	_ = s.Blobs.Delete(ctx, blobKey(o.DataID, o.Version+1))
	if p, ok := s.presigner(); ok {
		s.deleteStaged(ctx, p, stagingPrefix(o.DataID))
	}
}

func (k *call) preparePost(p PreparePostParam) (ReqPostInfo, error) {
	if err := k.checkPost(p, true); err != nil {
		return ReqPostInfo{}, err
	}
	o, err := k.newObject(p, true)
	if err != nil {
		return ReqPostInfo{}, err
	}
	return k.handOutUpload(o.DataID, 1, p.Size)
}

// handOutUpload records an upload and describes it to the client: the
// server's own upload URL, or on object storage a presigned POST to the
// upload's staging key.
func (k *call) handOutUpload(id uint64, ver, size uint32) (ReqPostInfo, error) {
	u := Upload{Token: randomToken(), DataID: id, Version: ver, Size: size, Expires: k.now.Add(k.s.uploadTTL())}
	info := ReqPostInfo{DataID: id, URL: k.s.uploadURL(u.Token), FormFields: []KeyValue{{"key", blobKey(id, ver)}, {"token", u.Token}}}
	if p, ok := k.s.presigner(); ok {
		url, fields, err := p.PresignPost(k.ctx, stagingKey(id, ver, u.Token), int64(size), k.s.uploadTTL())
		if err != nil {
			return ReqPostInfo{}, err
		}
		info.URL, info.FormFields = url, fields
	}
	if err := k.s.Store.AddUpload(k.ctx, u); err != nil {
		return ReqPostInfo{}, err
	}
	return info, nil
}

func (k *call) postMetaBinary(p PreparePostParam) (uint64, error) {
	p.Size = 0
	if err := k.checkPost(p, false); err != nil {
		return 0, err
	}
	o, err := k.newObject(p, false)
	if err != nil {
		return 0, err
	}
	k.notifyArrival(o, DataFlagUseNotificationOnPost)
	return o.DataID, nil
}

func (k *call) completePost(id uint64, success bool) error {
	o, err := k.s.Store.Object(k.ctx, id)
	if err != nil {
		return err
	}
	if o.Owner != k.me {
		return fmt.Errorf("%w: object %d is not the caller's", types.DataStorePermissionDenied, id)
	}
	if !o.Pending {
		return fmt.Errorf("%w: object %d is complete already", types.DataStoreOperationNotAllowed, id)
	}
	if !success {
		// The client gave up: the object and any body go.
		if err := k.s.Store.DeleteObject(k.ctx, id); err != nil {
			return err
		}
		k.s.deleteBodies(k.ctx, o)
		return nil
	}
	p, staging := k.s.presigner()
	var staged BlobInfo
	if staging {
		if _, staged, err = k.claimStaged(p, id, 1); err != nil {
			return err
		}
	} else if _, err := k.s.Store.FinishedUpload(k.ctx, id, 1); errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: object %d: its body was never uploaded", types.DataStoreOperationNotAllowed, id)
	} else if err != nil {
		return err
	}
	o, err = k.s.Store.Update(k.ctx, id, func(o *Object) error {
		if !o.Pending {
			return fmt.Errorf("%w: object %d is complete already", types.DataStoreOperationNotAllowed, id)
		}
		if staging {
			if err := p.Copy(k.ctx, staged.Key, blobKey(id, 1)); err != nil {
				return err
			}
		}
		o.Pending, o.Version, o.Updated = false, 1, k.now
		o.Expire = expiry(k.now, o.Period)
		return nil
	})
	if err != nil {
		return err
	}
	if staging {
		_ = p.Delete(k.ctx, staged.Key)
	}
	k.notifyArrival(o, DataFlagUseNotificationOnPost)
	return nil
}

// live checks that an object is readable at all: completed, not expired.
func (k *call) live(o Object) error {
	if o.Pending {
		return fmt.Errorf("%w: object %d is not complete", types.DataStoreNotFound, o.DataID)
	}
	if !o.Expire.IsZero() && !k.now.Before(o.Expire) {
		return fmt.Errorf("%w: object %d expired %s", types.DataStoreExpired, o.DataID, o.Expire.UTC().Format(time.RFC3339))
	}
	return nil
}

// canRead applies an object's access permission ("Permission types"): the
// owner always; others as the permission says, or with the access password.
// "friends" admits the owner's friends when the server knows them
// (Server.Friends), else the owner only.
func (k *call) canRead(o Object, accessPassword uint64) error {
	if err := k.live(o); err != nil {
		return err
	}
	if o.Owner == k.me || (accessPassword != 0 && accessPassword == o.AccessPassword) {
		return nil
	}
	if allows(o.Permission, k.me) {
		return nil
	}
	if o.Permission.Permission == PermissionFriends && k.s.Friends != nil {
		ok, err := k.s.Friends.AreFriends(k.ctx, o.Owner, k.me)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	if accessPassword != 0 {
		return fmt.Errorf("%w: wrong access password for object %d", types.DataStoreInvalidPassword, o.DataID)
	}
	return fmt.Errorf("%w: object %d is not readable by PID %d", types.DataStorePermissionDenied, o.DataID, k.me)
}

func allows(p Permission, pid types.PID) bool {
	switch p.Permission {
	case PermissionEveryone:
		return true
	case PermissionRecipients:
		return slices.Contains(p.RecipientIDs, pid)
	}
	return false
}

// canUpdate admits the owner and holders of the update password.
func (k *call) canUpdate(o Object, updatePassword uint64) error {
	if o.Owner == k.me || (updatePassword != 0 && updatePassword == o.UpdatePassword) {
		return nil
	}
	if updatePassword != 0 {
		return fmt.Errorf("%w: wrong update password for object %d", types.DataStoreInvalidPassword, o.DataID)
	}
	return fmt.Errorf("%w: object %d belongs to PID %d", types.DataStorePermissionDenied, o.DataID, o.Owner)
}

// canDelete also admits whom the delete permission names.
func (k *call) canDelete(o Object, updatePassword uint64) error {
	if o.Owner != k.me && updatePassword == 0 && allows(o.DelPermission, k.me) {
		return nil
	}
	return k.canUpdate(o, updatePassword)
}

func (k *call) object(id uint64, target PersistenceTarget) (Object, error) {
	if id == 0 && target.SlotID != NoPersistenceSlot {
		return k.s.Store.ObjectInSlot(k.ctx, target.OwnerID, target.SlotID)
	}
	return k.s.Store.Object(k.ctx, id)
}

func (k *call) prepareGet(p PrepareGetParam) (ReqGetInfo, error) {
	o, err := k.object(p.DataID, p.PersistenceTarget)
	if err != nil {
		return ReqGetInfo{}, err
	}
	if err := k.canRead(o, p.AccessPassword); err != nil {
		return ReqGetInfo{}, err
	}
	if !hasBody(o) {
		return ReqGetInfo{}, errNoBody(o)
	}
	info, err := k.getInfo(o)
	if err != nil {
		return ReqGetInfo{}, err
	}
	return info, k.refer(o.DataID)
}

func hasBody(o Object) bool { return o.Size != 0 && o.Version != 0 }

func errNoBody(o Object) error {
	return fmt.Errorf("%w: object %d has no body (meta binary only)", types.DataStoreOperationNotAllowed, o.DataID)
}

// getInfo is where o's body is downloaded from.
func (k *call) getInfo(o Object) (ReqGetInfo, error) {
	url, err := k.s.bodyURL(k.ctx, o.DataID, o.Version)
	return ReqGetInfo{URL: url, Size: o.Size, DataID: o.DataID}, err
}

// refer counts a reference to an object (referredCnt, referredTime); an
// object flagged DataFlagPeriodFromLastReferred has its period restart.
func (k *call) refer(id uint64) error {
	_, err := k.s.Store.Update(k.ctx, id, func(o *Object) error {
		o.ReferredCnt++
		o.Referred = k.now
		if o.Flag&DataFlagPeriodFromLastReferred != 0 {
			o.Expire = expiry(k.now, o.Period)
		}
		return nil
	})
	return err
}

// metaInfo describes o, with tags, ratings and meta binary as option asks.
func metaInfo(o Object, option uint8) MetaInfo {
	mi := MetaInfo{DataID: o.DataID, OwnerID: o.Owner, Size: o.Size, Name: o.Name, DataType: o.DataType,
		Permission: o.Permission, DelPermission: o.DelPermission, CreatedTime: types.DateTimeFromTime(o.Created),
		UpdatedTime: types.DateTimeFromTime(o.Updated), Period: o.Period, Status: o.Status, ReferredCnt: o.ReferredCnt,
		ReferDataID: o.ReferDataID, Flag: o.Flag, ReferredTime: types.DateTimeFromTime(o.Referred),
		ExpireTime: neverExpires}
	if !o.Expire.IsZero() {
		mi.ExpireTime = types.DateTimeFromTime(o.Expire)
	}
	if o.Referred.IsZero() {
		mi.ReferredTime = mi.CreatedTime
	}
	if option&ResultTags != 0 {
		mi.Tags = o.Tags
	}
	if option&ResultRatings != 0 {
		for _, r := range o.Ratings {
			mi.Ratings = append(mi.Ratings, RatingInfo{Slot: r.Slot, TotalValue: r.Total, Count: r.Count, InitialValue: r.Init.InitialValue})
		}
	}
	if option&ResultMetaBinary != 0 {
		mi.MetaBinary = o.MetaBinary
	}
	return mi
}

// neverExpires is the expireTime of an object without a period.
var neverExpires = types.MakeDateTime(9999, 12, 31, 0, 0, 0)

func (k *call) meta(p GetMetaParam) (MetaInfo, error) {
	o, err := k.object(p.DataID, p.PersistenceTarget)
	if err != nil {
		return MetaInfo{}, err
	}
	if err := k.canRead(o, p.AccessPassword); err != nil {
		return MetaInfo{}, err
	}
	return metaInfo(o, p.ResultOption), nil
}

func (k *call) getMetas(ids []uint64, p GetMetaParam) ([]MetaInfo, []types.Result, error) {
	params := make([]GetMetaParam, len(ids))
	for i, id := range ids {
		params[i] = p
		params[i].DataID = id
	}
	return k.metas(params)
}

// metas answers one MetaInfo and one Result per param: an empty MetaInfo and
// the error's code for those that fail.
func (k *call) metas(params []GetMetaParam) ([]MetaInfo, []types.Result, error) {
	if len(params) > MaxBatch {
		return nil, nil, fmt.Errorf("%w: %d objects in one call (at most %d)", types.DataStoreInvalidArgument, len(params), MaxBatch)
	}
	infos := make([]MetaInfo, len(params))
	results := make([]types.Result, len(params))
	for i, p := range params {
		mi, err := k.meta(p)
		results[i] = k.itemResult(err)
		if err == nil {
			infos[i] = mi
		}
		if results[i] == types.DataStoreUnknown {
			return nil, nil, err
		}
	}
	return infos, results, nil
}

// itemResult is the Result of one item of a batch.
func (k *call) itemResult(err error) types.Result {
	var res types.Result
	switch {
	case err == nil:
		return types.ResultSuccess
	case errors.As(err, &res):
		return res
	case errors.Is(err, ErrNotFound):
		return types.DataStoreNotFound
	}
	return types.DataStoreUnknown
}

func (k *call) search(p SearchParam) (SearchResult, error) {
	objs, q, err := k.searchObjects(p)
	if err != nil {
		return SearchResult{}, err
	}
	total := q.total
	res := SearchResult{TotalCount: total, TotalCountType: 3}
	if q.CountTotal {
		res.TotalCountType = 1
		if int(q.Offset)+len(objs) >= int(total) && q.Offset == 0 {
			res.TotalCountType = 0
		}
	} else {
		res.TotalCount = uint32(len(objs))
	}
	for _, o := range objs {
		res.Result = append(res.Result, metaInfo(o, p.ResultOption))
	}
	return res, nil
}

// searchObjects runs a search: the objects and the query it ran.
func (k *call) searchObjects(p SearchParam) ([]Object, searched, error) {
	if len(p.OwnerIDs) > MaxBatch || len(p.DataTypes) > MaxBatch {
		return nil, searched{}, fmt.Errorf("%w: too many owners or data types", types.DataStoreInvalidArgument)
	}
	if err := checkTags(p.Tags); err != nil {
		return nil, searched{}, err
	}
	q := SearchQuery{Viewer: k.me, Owners: p.OwnerIDs, DataTypes: p.DataTypes, ReferDataID: p.ReferDataID, Tags: p.Tags,
		Order: SearchOrder(p.ResultOrderColumn), Descending: p.ResultOrder != 0, Offset: p.ResultOffset,
		Limit: min(p.ResultSize, MaxSearchResults), CountTotal: p.TotalCountEnabled, Now: k.now}
	if q.Order > OrderUpdated {
		q.Order = OrderDataID
	}
	if p.DataType != AnyDataType && len(q.DataTypes) == 0 {
		q.DataTypes = []uint16{p.DataType}
	}
	for _, t := range []struct {
		d types.DateTime
		t *time.Time
	}{{p.CreatedAfter, &q.CreatedAfter}, {p.CreatedBefore, &q.CreatedBefore}, {p.UpdatedAfter, &q.UpdatedAfter}, {p.UpdatedBefore, &q.UpdatedBefore}} {
		if t.d != 0 {
			*t.t = searchTime(t.d)
		}
	}
	q.Friends = k.searchFriends(q.Owners)
	objs, total, err := k.s.Store.Search(k.ctx, q)
	return objs, searched{q, total}, err
}

// searchFriends returns the owners whose friends-permission objects a
// search finds for the caller: the caller's friends as Server.Friends tells
// them (the same answer reads by id get), only those among owners when the
// search names owners (none asked when it names the caller alone), at most
// MaxSearchFriends. Without Server.Friends,
// none. A failed friends source is logged and the search goes on without
// friends (judgement call: a public search should not fail with the
// source; the friends' objects are then left out, never let in).
func (k *call) searchFriends(owners []types.PID) []types.PID {
	if k.s.Friends == nil || len(owners) > 0 && !slices.ContainsFunc(owners, func(p types.PID) bool { return p != k.me }) {
		return nil // a search of the caller's own objects needs no friends
	}
	fs, err := k.s.Friends.FriendsOf(k.ctx, k.me)
	if err != nil {
		k.warn("nex datastore: friends not read for a search", slog.Uint64("pid", uint64(k.me)), slog.String("error", err.Error()))
		return nil
	}
	var out []types.PID
	seen := make(map[types.PID]bool, min(len(fs), MaxSearchFriends))
	for _, f := range fs {
		if f == k.me || seen[f] || len(owners) > 0 && !slices.Contains(owners, f) {
			continue
		}
		if len(out) == MaxSearchFriends {
			k.warn("nex datastore: friends beyond the search bound left out", slog.Uint64("pid", uint64(k.me)),
				slog.Int("friends", len(fs)), slog.Int("bound", MaxSearchFriends))
			break
		}
		seen[f] = true
		out = append(out, f)
	}
	return out
}

// searchTime turns a search bound into a time the stores can compare in
// nanoseconds: dates past what an int64 of nanoseconds holds (the
// descriptions' "future" default is the year 9999) become the latest such
// time, so a "before" bound of the far future excludes nothing and an
// "after" one everything; dates before its range, the earliest.
func searchTime(d types.DateTime) time.Time {
	t := d.Time()
	if latest := time.Unix(0, math.MaxInt64); t.After(latest) {
		return latest
	}
	if earliest := time.Unix(0, math.MinInt64); t.Before(earliest) {
		return earliest
	}
	return t
}

// warn logs msg at warning level when the server has a Logger.
func (k *call) warn(msg string, attrs ...slog.Attr) {
	if k.s.Logger != nil {
		k.s.Logger.LogAttrs(k.ctx, slog.LevelWarn, msg, attrs...)
	}
}

// searched is a search's query and the total count it found.
type searched struct {
	SearchQuery
	total uint32
}

func (k *call) delete(p DeleteParam) error {
	o, err := k.s.Store.Object(k.ctx, p.DataID)
	if err != nil {
		return err
	}
	if err := k.canDelete(o, p.UpdatePassword); err != nil {
		return err
	}
	if err := k.s.Store.DeleteObject(k.ctx, p.DataID); err != nil {
		return err
	}
	k.s.deleteBodies(k.ctx, o)
	return nil
}

// deleteObjects deletes each object it may; transactional, it first checks
// them all and deletes none unless every one may go.
func (k *call) deleteObjects(params []DeleteParam, transactional bool) ([]types.Result, error) {
	if len(params) > MaxBatch {
		return nil, fmt.Errorf("%w: %d objects in one call (at most %d)", types.DataStoreInvalidArgument, len(params), MaxBatch)
	}
	results := make([]types.Result, len(params))
	if transactional {
		for _, p := range params {
			o, err := k.s.Store.Object(k.ctx, p.DataID)
			if err == nil {
				err = k.canDelete(o, p.UpdatePassword)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for i, p := range params {
		err := k.delete(p)
		if results[i] = k.itemResult(err); results[i] == types.DataStoreUnknown {
			return nil, err
		}
	}
	return results, nil
}

func (k *call) changeMeta(p ChangeMetaParam) error {
	if err := checkChangeMeta(p); err != nil {
		return err
	}
	id, err := k.changeMetaTarget(p.DataID, p)
	if err != nil {
		return err
	}
	_, err = k.s.Store.Update(k.ctx, id, k.applyChangeMeta(p))
	return err
}

// checkChangeMeta refuses flags the page does not give and oversized values.
func checkChangeMeta(p ChangeMetaParam) error {
	if p.ModifiesFlag&^modifyAll != 0 || p.Compare.ComparisonFlag&^modifyAll != 0 {
		return fmt.Errorf("%w: modifiesFlag 0x%x, comparisonFlag 0x%x", types.DataStoreInvalidArgument, p.ModifiesFlag, p.Compare.ComparisonFlag)
	}
	if err := checkPermission("permission", p.Permission); err != nil {
		return err
	}
	if err := checkPermission("delPermission", p.DelPermission); err != nil {
		return err
	}
	if err := checkTags(p.Tags); err != nil {
		return err
	}
	if len(p.MetaBinary) > MaxMetaBinary || len(p.Name) > MaxNameLen {
		return fmt.Errorf("%w: metaBinary or name too long", types.DataStoreInvalidArgument)
	}
	return nil
}

// changeMetaTarget is the object a ChangeMeta names: its data id, or, when
// that is 0, the object in its persistence target.
func (k *call) changeMetaTarget(id uint64, p ChangeMetaParam) (uint64, error) {
	if id == 0 && p.PersistenceTarget.SlotID != NoPersistenceSlot {
		o, err := k.s.Store.ObjectInSlot(k.ctx, p.PersistenceTarget.OwnerID, p.PersistenceTarget.SlotID)
		if err != nil {
			return 0, err
		}
		return o.DataID, nil
	}
	return id, nil
}

// applyChangeMeta is the change a ChangeMetaParam makes, for Store.Update.
func (k *call) applyChangeMeta(p ChangeMetaParam) func(o *Object) error {
	return func(o *Object) error {
		if err := k.live(*o); err != nil {
			return err
		}
		if err := k.canUpdate(*o, p.UpdatePassword); err != nil {
			return err
		}
		if err := compare(*o, p.Compare); err != nil {
			return err
		}
		f := p.ModifiesFlag
		if f&ModifyName != 0 {
			o.Name = p.Name
		}
		if f&ModifyPermission != 0 {
			o.Permission = p.Permission
		}
		if f&ModifyDelPermission != 0 {
			o.DelPermission = p.DelPermission
		}
		if f&ModifyPeriod != 0 {
			o.Period = p.Period
		}
		if f&ModifyMetaBinary != 0 {
			o.MetaBinary = p.MetaBinary
		}
		if f&ModifyTags != 0 {
			o.Tags = p.Tags
		}
		if f&ModifyDataType != 0 {
			o.DataType = p.DataType
		}
		if f&ModifyReferredCnt != 0 {
			o.ReferredCnt = p.ReferredCnt
		}
		if f&ModifyStatus != 0 {
			o.Status = p.Status
		}
		// Only a refresh (0x40) moves updatedTime and the expiry, with the
		// new period if 0x08 came too ("Modifies flag").
		if f&ModifyUpdatedTime != 0 {
			o.Updated = k.now
			o.Expire = expiry(k.now, o.Period)
		}
		return nil
	}
}

// compare checks the values a ChangeMeta expects (DataStore::ValueNotEqual).
func compare(o Object, c CompareParam) error {
	f := c.ComparisonFlag
	eqPerm := func(a, b Permission) bool {
		return a.Permission == b.Permission && slices.Equal(a.RecipientIDs, b.RecipientIDs)
	}
	switch {
	case f&ModifyName != 0 && o.Name != c.Name,
		f&ModifyPermission != 0 && !eqPerm(o.Permission, c.Permission),
		f&ModifyDelPermission != 0 && !eqPerm(o.DelPermission, c.DelPermission),
		f&ModifyPeriod != 0 && o.Period != c.Period,
		f&ModifyMetaBinary != 0 && string(o.MetaBinary) != string(c.MetaBinary),
		f&ModifyTags != 0 && !slices.Equal(o.Tags, c.Tags),
		f&ModifyDataType != 0 && o.DataType != c.DataType,
		f&ModifyReferredCnt != 0 && o.ReferredCnt != c.ReferredCnt,
		f&ModifyStatus != 0 && o.Status != c.Status:
		return fmt.Errorf("%w: object %d differs from compareParam", types.DataStoreValueNotEqual, o.DataID)
	}
	return nil
}

func (k *call) prepareUpdate(id uint64, size uint32, pw uint64) (ReqUpdateInfo, error) {
	max := k.s.MaxObjectSize
	if max == 0 {
		max = DefaultMaxObjectSize
	}
	if size > max {
		return ReqUpdateInfo{}, fmt.Errorf("%w: object of %d bytes (at most %d)", types.DataStoreInvalidArgument, size, max)
	}
	o, err := k.s.Store.Object(k.ctx, id)
	if err != nil {
		return ReqUpdateInfo{}, err
	}
	if err := k.live(o); err != nil {
		return ReqUpdateInfo{}, err
	}
	if err := k.canUpdate(o, pw); err != nil {
		return ReqUpdateInfo{}, err
	}
	info, err := k.handOutUpload(id, o.Version+1, size)
	if err != nil {
		return ReqUpdateInfo{}, err
	}
	return ReqUpdateInfo{Version: o.Version + 1, URL: info.URL, FormFields: info.FormFields}, nil
}

func (k *call) completeUpdate(id uint64, ver uint32, success bool) error {
	// The body's upload, looked up before the transaction: whoever made it
	// knew the object's update password or owns it. On object storage the
	// body waits under its staging key; success claims it.
	p, staging := k.s.presigner()
	var u Upload
	var staged BlobInfo
	var uerr error
	switch {
	case staging && success:
		u, staged, uerr = k.claimStaged(p, id, ver)
	case staging:
		_, _, uerr = k.findStaged(p, id, ver)
	default:
		u, uerr = k.s.Store.FinishedUpload(k.ctx, id, ver)
	}
	var res types.Result
	if uerr != nil && !errors.Is(uerr, ErrNotFound) && !(errors.As(uerr, &res) && res == types.DataStoreOperationNotAllowed) {
		return uerr
	}
	var old uint32
	o, err := k.s.Store.Update(k.ctx, id, func(o *Object) error {
		if err := k.live(*o); err != nil {
			return err
		}
		if o.Owner != k.me && uerr != nil {
			return fmt.Errorf("%w: object %d belongs to PID %d", types.DataStorePermissionDenied, id, o.Owner)
		}
		if ver != o.Version+1 {
			return fmt.Errorf("%w: object %d is at version %d, not %d", types.DataStoreInvalidArgument, id, o.Version, ver-1)
		}
		if !success {
			return nil
		}
		if uerr != nil {
			if errors.Is(uerr, ErrNotFound) {
				return fmt.Errorf("%w: object %d version %d: its body was never uploaded", types.DataStoreOperationNotAllowed, id, ver)
			}
			return uerr
		}
		// Copied inside the transaction, after the version check: of two
		// updates to the same version only the first writes its body.
		if staging {
			if err := p.Copy(k.ctx, staged.Key, blobKey(id, ver)); err != nil {
				return err
			}
		}
		old = o.Version
		o.Version, o.Size, o.Updated = ver, u.Size, k.now
		o.Expire = expiry(k.now, o.Period)
		return nil
	})
	if err != nil {
		return err
	}
	if !success {
		_ = k.s.Blobs.Delete(k.ctx, blobKey(id, ver))
		if staging {
			k.s.deleteStaged(k.ctx, p, stagingVersionPrefix(id, ver))
		}
		return nil
	}
	if staging {
		_ = p.Delete(k.ctx, staged.Key)
	}
	if old > 0 {
		_ = k.s.Blobs.Delete(k.ctx, blobKey(id, old))
	}
	k.notifyArrival(o, DataFlagUseNotificationOnUpdate)
	return nil
}

func (k *call) rateObject(t RatingTarget, p RateParam, fetch bool) (RatingInfo, error) {
	var info RatingInfo
	err := k.s.Store.Rate(k.ctx, k.me, []RatingTarget{t}, func(_ int, o *Object, log *RatingLog) error {
		var err error
		info, err = k.rate(o, log, t.Slot, p.Value, p.AccessPassword)
		return err
	})
	if err != nil {
		return RatingInfo{}, unwrapItem(err)
	}
	if !fetch {
		info = RatingInfo{}
	}
	return info, nil
}

func (k *call) getRating(t RatingTarget, pw uint64) (RatingInfo, error) {
	o, err := k.s.Store.Object(k.ctx, t.DataID)
	if err != nil {
		return RatingInfo{}, err
	}
	if err := k.canRead(o, pw); err != nil {
		return RatingInfo{}, err
	}
	i := slices.IndexFunc(o.Ratings, func(r Rating) bool { return r.Slot == t.Slot })
	if i < 0 {
		return RatingInfo{}, fmt.Errorf("%w: object %d has no rating slot %d", types.DataStoreNotFound, t.DataID, t.Slot)
	}
	r := o.Ratings[i]
	return RatingInfo{TotalValue: r.Total, Count: r.Count, InitialValue: r.Init.InitialValue}, nil
}

// specificMeta returns the objects of ids the caller may read, leaving out
// the others.
func (k *call) specificMeta(ids []uint64) ([]Object, error) {
	if len(ids) > MaxBatch {
		return nil, fmt.Errorf("%w: %d objects in one call (at most %d)", types.DataStoreInvalidArgument, len(ids), MaxBatch)
	}
	var objs []Object
	for _, id := range ids {
		o, err := k.s.Store.Object(k.ctx, id)
		if err == nil {
			err = k.canRead(o, 0)
		}
		if k.itemResult(err) == types.DataStoreUnknown {
			return nil, err
		}
		if err == nil {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

func (k *call) persistenceInfo(owner types.PID, slot uint16) (PersistenceInfo, error) {
	o, err := k.s.Store.ObjectInSlot(k.ctx, owner, slot)
	if err != nil {
		return PersistenceInfo{}, err
	}
	if err := k.canRead(o, 0); err != nil {
		return PersistenceInfo{}, err
	}
	return PersistenceInfo{OwnerID: owner, SlotID: slot, DataID: o.DataID}, nil
}

func (k *call) passwordInfo(id uint64) (PasswordInfo, error) {
	o, err := k.s.Store.Object(k.ctx, id)
	if err != nil {
		return PasswordInfo{}, err
	}
	if o.Owner != k.me {
		return PasswordInfo{}, fmt.Errorf("%w: the passwords of object %d are its owner's", types.DataStorePermissionDenied, id)
	}
	return PasswordInfo{DataID: o.DataID, AccessPassword: o.AccessPassword, UpdatePassword: o.UpdatePassword}, nil
}
