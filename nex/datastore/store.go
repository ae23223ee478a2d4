package datastore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Store keeps DataStore objects' metadata, ratings, persistence slots and
// pending uploads. accounts.Store's DataStore implements it on SQLite; another
// backend (PostgreSQL, ...) implements the same methods. Each method is one
// transaction.
type Store interface {
	// CreateObject stores o, giving it o.DataID (or, when o.DataID is not 0,
	// that id: ErrExists when an object has it). When o.PersistenceSlot is a
	// slot, o takes it; an object that held it before is deleted when
	// deleteLast is set (and returned, so its body can go too), and
	// otherwise loses the slot.
	CreateObject(ctx context.Context, o *Object, deleteLast bool) (deleted []Object, err error)
	// Object returns an object, pending or not, or ErrNotFound.
	Object(ctx context.Context, dataID uint64) (Object, error)
	// ObjectInSlot returns the object in owner's persistence slot, or ErrNotFound.
	ObjectInSlot(ctx context.Context, owner types.PID, slot uint16) (Object, error)
	// Update reads an object, lets f change it and writes it back, in one
	// transaction; an error from f changes nothing and is returned.
	Update(ctx context.Context, dataID uint64, f func(o *Object) error) (Object, error)
	// UpdateObjects is Update for several objects in one transaction: f sees
	// them in the order given (an id given twice the second time as the first
	// left it). An error from f or a missing object (ErrNotFound) changes
	// nothing and comes back as an *ItemError naming the item.
	UpdateObjects(ctx context.Context, ids []uint64, f func(i int, o *Object) error) error
	// Rate is UpdateObjects for ratings: f also gets rater's log of each
	// target's slot (the zero RatingLog when there is none), written back
	// when f leaves it Rated.
	Rate(ctx context.Context, rater types.PID, targets []RatingTarget, f func(i int, o *Object, log *RatingLog) error) error
	// RatingLog returns rater's log of an object's rating slot, or ErrNotFound.
	RatingLog(ctx context.Context, dataID uint64, slot int8, rater types.PID) (RatingLog, error)
	// Perpetuate puts owner's object dataID into owner's persistence slot
	// (leaving any slot it held), or, with dataID 0, empties the slot. The
	// object that held the slot is deleted when deleteLast is set (and
	// returned, so its body can go too) and otherwise loses the slot.
	// ErrNotFound: dataID is not owner's object, or with dataID 0 the slot
	// is empty.
	Perpetuate(ctx context.Context, owner types.PID, slot uint16, dataID uint64, deleteLast bool) (deleted []Object, err error)
	// DeleteObject deletes an object with its tags, ratings, rating logs,
	// slot and uploads; ErrNotFound when there is none.
	DeleteObject(ctx context.Context, dataID uint64) error
	// Search returns the objects q selects and, when q.CountTotal, how many
	// there are in all.
	Search(ctx context.Context, q SearchQuery) ([]Object, uint32, error)

	// AddUpload records an upload a client may make once before u.Expires.
	AddUpload(ctx context.Context, u Upload) error
	// Upload returns a recorded upload, or ErrNotFound.
	Upload(ctx context.Context, token string) (Upload, error)
	// FinishUpload marks an upload used if it is unused and unexpired at now
	// (ErrUploadUsed, ErrUploadExpired otherwise).
	FinishUpload(ctx context.Context, token string, now time.Time) error
	// FinishedUpload returns the used upload of an object's version, or
	// ErrNotFound when its body never arrived.
	FinishedUpload(ctx context.Context, dataID uint64, version uint32) (Upload, error)

	// AddNotifications records that object dataID arrived for each
	// recipient, numbering the notifications in one ascending sequence, and
	// keeps each recipient's newest keep (dropping older ones).
	AddNotifications(ctx context.Context, dataID uint64, recipients []types.PID, at time.Time, keep int) error
	// Notifications returns recipient's notifications numbered after
	// `after`, oldest first, at most limit.
	Notifications(ctx context.Context, recipient types.PID, after uint64, limit int) ([]Notification, error)
	// LatestNotification returns recipient's newest notification, or
	// ErrNotFound.
	LatestNotification(ctx context.Context, recipient types.PID) (Notification, error)

	// Usage sums what owner keeps (quota.Quota's DataStore part).
	Usage(ctx context.Context, owner types.PID) (Usage, error)
	// Sweep reclaims abandoned state: pending objects none of whose uploads
	// is still open at before (created before it) are deleted with their
	// rows, and unused uploads that expired before it; at most a few
	// hundred of each per call. It returns what it deleted, so the caller
	// deletes the bodies and staged uploads that went with them.
	Sweep(ctx context.Context, before time.Time) (Swept, error)
}

// Usage is what one player keeps in a Store.
type Usage struct {
	Objects int64 // objects, pending ones included
	Pending int64 // posts prepared and not completed
	Bytes   int64 // declared body sizes plus meta binaries
}

// Swept is what a Store's Sweep deleted.
type Swept struct {
	Objects []Object // pending objects, with their uploads
	Uploads []Upload // unused uploads of other objects that expired
}

// ItemError is the failure of one item of a Store batch.
type ItemError struct {
	Index int // the item's position in the batch
	Err   error
}

func (e *ItemError) Error() string { return fmt.Sprintf("item %d: %v", e.Index, e.Err) }
func (e *ItemError) Unwrap() error { return e.Err }

// RatingTarget is one object's rating slot (the DataStoreRatingTarget structure).
type RatingTarget struct {
	DataID uint64
	Slot   int8
}

// RatingLog is what a Store keeps of one rater's rating of one slot: what
// GetRatingWithLog answers and rating locks are decided on.
type RatingLog struct {
	Rated       bool
	Value       int32     // the rater's last rating
	At          time.Time // when it was given
	LockExpires time.Time // zero: no lock, or a permanent one (see the slot's lockType)
	Resets      uint32    // the slot's Rating.Resets it was given under; another value means reset since
}

// Notification is a DataStore notification of a new arrival: an object
// posted for its recipient.
type Notification struct {
	ID        uint64
	Recipient types.PID
	DataID    uint64
	Created   time.Time
}

// Errors of a Store and of Blobs.
var (
	ErrNotFound      = errors.New("datastore: not found")
	ErrExists        = errors.New("datastore: data id taken")
	ErrUploadUsed    = errors.New("datastore: upload already used")
	ErrUploadExpired = errors.New("datastore: upload expired")
	ErrTooLarge      = errors.New("datastore: body larger than declared")
	ErrTooShort      = errors.New("datastore: body shorter than declared")
)

// Object is one DataStore object: its metadata, and where its body is.
type Object struct {
	DataID          uint64
	Owner           types.PID
	Size            uint32 // the body's size
	Name            string
	DataType        uint16
	MetaBinary      []byte
	Permission      Permission
	DelPermission   Permission
	Flag            uint32
	Period          uint16 // days; 0 never expires
	ReferDataID     uint32
	Tags            []string
	Status          uint8
	ReferredCnt     uint32
	Created         time.Time
	Updated         time.Time
	Referred        time.Time
	Expire          time.Time // zero: never
	AccessPassword  uint64
	UpdatePassword  uint64
	Version         uint32 // the body's version: 0 until a body arrives
	Pending         bool   // prepared, not completed
	PersistenceSlot uint16 // NoPersistenceSlot: none
	Ratings         []Rating
}

// Rating is one rating slot of an object.
type Rating struct {
	Slot  int8
	Init  RatingInitParam
	Total int64
	Count uint32
	// Resets counts ResetRating(s) of the slot: rating logs given under
	// an earlier count are void.
	Resets uint32 `json:",omitzero"`
}

// SearchQuery is what SearchObject asks a Store, already checked.
type SearchQuery struct {
	Viewer        types.PID // only objects the viewer may read
	Owners        []types.PID
	DataTypes     []uint16 // empty: any
	CreatedAfter  time.Time
	CreatedBefore time.Time
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	ReferDataID   uint32 // 0: any
	Tags          []string
	Order         SearchOrder
	Descending    bool
	Offset, Limit uint32
	CountTotal    bool
	Now           time.Time // objects expired at Now are left out
	// Friends are the owners whose friends-permission objects the viewer
	// may find: the viewer's friends as Server.Friends tells them, at most
	// MaxSearchFriends (none: only the viewer's own such objects).
	Friends []types.PID
}

// SearchOrder is the column search results are ordered by.
type SearchOrder uint8

// Search orders (resultOrderColumn; judgement call, the page does not list them).
const (
	OrderDataID  SearchOrder = 0
	OrderCreated SearchOrder = 1
	OrderUpdated SearchOrder = 2
)

// Upload is a body upload the server handed out (PreparePostObject,
// PrepareUpdateObject).
type Upload struct {
	Token   string
	DataID  uint64
	Version uint32
	Size    uint32
	Expires time.Time
	Used    bool
}

// Blobs keeps object bodies by key. DirBlobs keeps them in a directory; an S3
// bucket can implement the same.
type Blobs interface {
	// Put stores exactly size bytes read from r under key, or nothing: more
	// or fewer bytes are ErrTooLarge or ErrTooShort and leave no trace.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Open returns the body under key and its size, or ErrNotFound.
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Delete removes the body under key (no error when there is none).
	Delete(ctx context.Context, key string) error
}
