package datastore

import (
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

// Structures of the DataStore protocol ("Types" on the nintendo-wiki page
// docs/nex/protocols/datastore) as the server and the Client use them. Their
// wire codecs are generated from the protocol description (package
// nex/protocols/datastore, see wire.go for the conversions): fields that
// appeared in a later NEX version are read and written when the connection's
// NEX version (types.Settings.Version) has them.

// Permission is the DataStorePermission structure.
type Permission struct {
	Permission   uint8       // PermissionEveryone ... PermissionOwner
	RecipientIDs []types.PID // recipientIds
}

// Permission values.
const (
	PermissionEveryone   uint8 = 0
	PermissionFriends    uint8 = 1
	PermissionRecipients uint8 = 2
	PermissionOwner      uint8 = 3
)

// KeyValue is the DataStoreKeyValue structure (HTTP headers and form fields).
type KeyValue struct{ Key, Value string }

// PersistenceTarget is the DataStorePersistenceTarget structure.
type PersistenceTarget struct {
	OwnerID types.PID
	SlotID  uint16 // persistenceSlotId
}

// NoPersistenceSlot is the slot id of "no persistence slot".
const NoPersistenceSlot = 0xFFFF

// RatingInitParam is the DataStoreRatingInitParam structure with its slot
// (DataStoreRatingInitParamWithSlot).
type RatingInitParam struct {
	Slot           int8
	Flag           uint8
	InternalFlag   uint8
	LockType       uint8
	InitialValue   int64
	RangeMin       int32
	RangeMax       int32
	PeriodHour     int8
	PeriodDuration int16
}

// PreparePostParam is DataStorePreparePostParam (and, with V1 set,
// DataStorePreparePostParamV1, which has no persistence and no extra data).
type PreparePostParam struct {
	Size              uint32
	Name              string
	DataType          uint16
	MetaBinary        []byte
	Permission        Permission
	DelPermission     Permission
	Flag              uint32
	Period            uint16
	ReferDataID       uint32
	Tags              []string
	RatingInitParams  []RatingInitParam
	PersistenceSlotID uint16 // persistenceInitParam.persistenceSlotId
	DeleteLastObject  bool   // persistenceInitParam.deleteLastObject
	ExtraData         []string
	V1                bool
}

// ReqPostInfo is DataStoreReqPostInfo (V1: a 32-bit data id).
type ReqPostInfo struct {
	DataID         uint64
	URL            string
	RequestHeaders []KeyValue
	FormFields     []KeyValue
	RootCACert     []byte
}

// PrepareGetParam is DataStorePrepareGetParam (V1: DataStorePrepareGetParamV1,
// a 32-bit data id and the lock id only).
type PrepareGetParam struct {
	DataID            uint64
	LockID            uint32
	PersistenceTarget PersistenceTarget
	AccessPassword    uint64
	ExtraData         []string
}

// ReqGetInfo is DataStoreReqGetInfo (V1 and before NEX 3.5: no data id).
type ReqGetInfo struct {
	URL            string
	RequestHeaders []KeyValue
	Size           uint32
	RootCACert     []byte
	DataID         uint64
}

// GetMetaParam is the DataStoreGetMetaParam structure.
type GetMetaParam struct {
	DataID            uint64
	PersistenceTarget PersistenceTarget
	ResultOption      uint8
	AccessPassword    uint64
}

// Result options of GetMetaParam and SearchParam ("Result options").
const (
	ResultTags       uint8 = 0x1
	ResultRatings    uint8 = 0x2
	ResultMetaBinary uint8 = 0x4
)

// RatingInfo is DataStoreRatingInfo with its slot (DataStoreRatingInfoWithSlot).
type RatingInfo struct {
	Slot         int8
	TotalValue   int64
	Count        uint32
	InitialValue int64
}

// MetaInfo is the DataStoreMetaInfo structure.
type MetaInfo struct {
	DataID        uint64
	OwnerID       types.PID
	Size          uint32
	Name          string
	DataType      uint16
	MetaBinary    []byte
	Permission    Permission
	DelPermission Permission
	CreatedTime   types.DateTime
	UpdatedTime   types.DateTime
	Period        uint16
	Status        uint8
	ReferredCnt   uint32
	ReferDataID   uint32
	Flag          uint32
	ReferredTime  types.DateTime
	ExpireTime    types.DateTime
	Tags          []string
	Ratings       []RatingInfo
}

// ChangeMetaParam is DataStoreChangeMetaParam (V1: DataStoreChangeMetaParamV1,
// which ends after updatePassword).
type ChangeMetaParam struct {
	DataID            uint64
	ModifiesFlag      uint32
	Name              string
	Permission        Permission
	DelPermission     Permission
	Period            uint16
	MetaBinary        []byte
	Tags              []string
	UpdatePassword    uint64
	ReferredCnt       uint32
	DataType          uint16
	Status            uint8
	Compare           CompareParam
	PersistenceTarget PersistenceTarget
}

// CompareParam is the DataStoreChangeMetaCompareParam structure: the values
// ChangeMeta expects to find before it changes anything.
type CompareParam struct {
	ComparisonFlag uint32
	Name           string
	Permission     Permission
	DelPermission  Permission
	Period         uint16
	MetaBinary     []byte
	Tags           []string
	ReferredCnt    uint32
	DataType       uint16
	Status         uint8
}

// Modification (and comparison) flags ("Modifies flag"). The page lists 0x80
// as "name" a second time; ChangeMetaParam's only field without a flag is
// dataType, so 0x80 is taken to be dataType.
const (
	ModifyName          uint32 = 0x001
	ModifyPermission    uint32 = 0x002
	ModifyDelPermission uint32 = 0x004
	ModifyPeriod        uint32 = 0x008
	ModifyMetaBinary    uint32 = 0x010
	ModifyTags          uint32 = 0x020
	ModifyUpdatedTime   uint32 = 0x040
	ModifyDataType      uint32 = 0x080
	ModifyReferredCnt   uint32 = 0x100
	ModifyStatus        uint32 = 0x200
	modifyAll                  = 0x3FF
)

// SearchParam is the DataStoreSearchParam structure, all revisions.
type SearchParam struct {
	SearchTarget           uint8
	OwnerIDs               []types.PID
	OwnerType              uint8
	DestinationIDs         []types.PID
	DataType               uint16 // AnyDataType: any
	CreatedAfter           types.DateTime
	CreatedBefore          types.DateTime
	UpdatedAfter           types.DateTime
	UpdatedBefore          types.DateTime
	ReferDataID            uint32
	Tags                   []string
	ResultOrderColumn      uint8
	ResultOrder            uint8
	ResultOffset           uint32 // resultRange.offset
	ResultSize             uint32 // resultRange.size
	ResultOption           uint8
	MinimalRatingFrequency uint32
	UseCache               bool
	TotalCountEnabled      bool
	DataTypes              []uint16
}

// AnyDataType is the dataType of a SearchParam that matches any.
const AnyDataType = 0xFFFF

// SearchResult is the DataStoreSearchResult structure.
type SearchResult struct {
	TotalCount     uint32
	Result         []MetaInfo
	TotalCountType uint8 // 0 all returned, 1 more than returned, 3 disabled
}

// ReqUpdateInfo is DataStoreReqUpdateInfo (a 16-bit version before NEX 3.0).
type ReqUpdateInfo struct {
	Version        uint32
	URL            string
	RequestHeaders []KeyValue
	FormFields     []KeyValue
	RootCACert     []byte
}

func badArg(err error) error { return fmt.Errorf("%w: %w", types.DataStoreInvalidArgument, err) }
