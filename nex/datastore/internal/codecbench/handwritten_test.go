// Code below is the hand-written DataStore codec the generated one replaced
// (nex/datastore/types.go before the port), kept as the benchmarks' peer.

package codecbench

import (
	"github.com/gamewire/gamewire/nex/types"
)

// Structures of the DataStore protocol ("Types" on the nintendo-wiki page
// docs/nex/protocols/datastore). Fields that appeared in a later NEX version
// are read and written when the version (see Server.NEXVersion) has them.
// Byte slices returned by the Read functions are copies.

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

func (p Permission) append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U8(p.Permission)
	types.WriteList(w, p.RecipientIDs, (*types.Writer).PID)
	w.EndStructure(m)
}

func readPermission(r *types.Reader, field string) Permission {
	m := r.EnterStructure(field)
	p := Permission{Permission: r.U8("permission"), RecipientIDs: types.ReadList(r, "recipientIds", (*types.Reader).PID)}
	r.LeaveStructure(m)
	return p
}

// KeyValue is the DataStoreKeyValue structure (HTTP headers and form fields).
type KeyValue struct{ Key, Value string }

// PersistenceTarget is the DataStorePersistenceTarget structure.
type PersistenceTarget struct {
	OwnerID types.PID
	SlotID  uint16 // persistenceSlotId
}

// NoPersistenceSlot is the slot id of "no persistence slot".
const NoPersistenceSlot = 0xFFFF

func (p PersistenceTarget) append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.PID(p.OwnerID)
	w.U16(p.SlotID)
	w.EndStructure(m)
}

func readPersistenceTarget(r *types.Reader, field string) PersistenceTarget {
	m := r.EnterStructure(field)
	p := PersistenceTarget{OwnerID: r.PID("ownerId"), SlotID: r.U16("persistenceSlotId")}
	r.LeaveStructure(m)
	return p
}

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

func (p RatingInitParam) append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U8(uint8(p.Slot))
	n := w.BeginStructure(0)
	w.U8(p.Flag)
	w.U8(p.InternalFlag)
	w.U8(p.LockType)
	w.S64(p.InitialValue)
	w.S32(p.RangeMin)
	w.S32(p.RangeMax)
	w.U8(uint8(p.PeriodHour))
	w.U16(uint16(p.PeriodDuration))
	w.EndStructure(n)
	w.EndStructure(m)
}

func readRatingInitParam(r *types.Reader, field string) RatingInitParam {
	m := r.EnterStructure(field)
	p := RatingInitParam{Slot: int8(r.U8("slot"))}
	n := r.EnterStructure("param")
	p.Flag, p.InternalFlag, p.LockType = r.U8("flag"), r.U8("internalFlag"), r.U8("lockType")
	p.InitialValue, p.RangeMin, p.RangeMax = r.S64("initialValue"), r.S32("rangeMin"), r.S32("rangeMax")
	p.PeriodHour, p.PeriodDuration = int8(r.U8("periodHour")), int16(r.U16("periodDuration"))
	r.LeaveStructure(n)
	r.LeaveStructure(m)
	return p
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

func (p PreparePostParam) append(w *types.Writer, v version) {
	m := w.BeginStructure(0)
	w.U32(p.Size)
	w.String(p.Name)
	w.U16(p.DataType)
	w.QBuffer(p.MetaBinary)
	p.Permission.append(w)
	p.DelPermission.append(w)
	w.U32(p.Flag)
	w.U16(p.Period)
	w.U32(p.ReferDataID)
	types.WriteList(w, p.Tags, (*types.Writer).String)
	types.WriteList(w, p.RatingInitParams, func(w *types.Writer, r RatingInitParam) { r.append(w) })
	if !p.V1 {
		n := w.BeginStructure(0)
		w.U16(p.PersistenceSlotID)
		w.Bool(p.DeleteLastObject)
		w.EndStructure(n)
		if v.extraData() {
			types.WriteList(w, p.ExtraData, (*types.Writer).String)
		}
	}
	w.EndStructure(m)
}

func readPreparePostParam(r *types.Reader, field string, v version, v1 bool) PreparePostParam {
	m := r.EnterStructure(field)
	p := PreparePostParam{V1: v1, Size: r.U32("size"), Name: r.String("name"), DataType: r.U16("dataType"),
		MetaBinary: clone(r.QBuffer("metaBinary"))}
	p.Permission = readPermission(r, "permission")
	p.DelPermission = readPermission(r, "delPermission")
	p.Flag, p.Period, p.ReferDataID = r.U32("flag"), r.U16("period"), r.U32("referDataId")
	p.Tags = types.ReadList(r, "tags", (*types.Reader).String)
	p.RatingInitParams = types.ReadList(r, "ratingInitParams", readRatingInitParam)
	p.PersistenceSlotID = NoPersistenceSlot
	if !v1 {
		n := r.EnterStructure("persistenceInitParam")
		p.PersistenceSlotID, p.DeleteLastObject = r.U16("persistenceSlotId"), r.Bool("deleteLastObject")
		r.LeaveStructure(n)
		if v.extraData() {
			p.ExtraData = types.ReadList(r, "extraData", (*types.Reader).String)
		}
	}
	r.LeaveStructure(m)
	return p
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

func (p GetMetaParam) append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U64(p.DataID)
	p.PersistenceTarget.append(w)
	w.U8(p.ResultOption)
	w.U64(p.AccessPassword)
	w.EndStructure(m)
}

func readGetMetaParam(r *types.Reader, field string) GetMetaParam {
	m := r.EnterStructure(field)
	p := GetMetaParam{DataID: r.U64("dataId"), PersistenceTarget: readPersistenceTarget(r, "persistenceTarget"),
		ResultOption: r.U8("resultOption"), AccessPassword: r.U64("accessPassword")}
	r.LeaveStructure(m)
	return p
}

// RatingInfo is DataStoreRatingInfo with its slot (DataStoreRatingInfoWithSlot).
type RatingInfo struct {
	Slot         int8
	TotalValue   int64
	Count        uint32
	InitialValue int64
}

func (p RatingInfo) appendInfo(w *types.Writer) {
	m := w.BeginStructure(0)
	w.S64(p.TotalValue)
	w.U32(p.Count)
	w.S64(p.InitialValue)
	w.EndStructure(m)
}

func readRatingInfo(r *types.Reader, field string) RatingInfo {
	m := r.EnterStructure(field)
	p := RatingInfo{TotalValue: r.S64("totalValue"), Count: r.U32("count"), InitialValue: r.S64("initialValue")}
	r.LeaveStructure(m)
	return p
}

func (p RatingInfo) appendWithSlot(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U8(uint8(p.Slot))
	p.appendInfo(w)
	w.EndStructure(m)
}

func readRatingInfoWithSlot(r *types.Reader, field string) RatingInfo {
	m := r.EnterStructure(field)
	slot := int8(r.U8("slot"))
	p := readRatingInfo(r, "rating")
	p.Slot = slot
	r.LeaveStructure(m)
	return p
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

// Append writes m as a structure.
func (mi MetaInfo) Append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U64(mi.DataID)
	w.PID(mi.OwnerID)
	w.U32(mi.Size)
	w.String(mi.Name)
	w.U16(mi.DataType)
	w.QBuffer(mi.MetaBinary)
	mi.Permission.append(w)
	mi.DelPermission.append(w)
	w.DateTime(mi.CreatedTime)
	w.DateTime(mi.UpdatedTime)
	w.U16(mi.Period)
	w.U8(mi.Status)
	w.U32(mi.ReferredCnt)
	w.U32(mi.ReferDataID)
	w.U32(mi.Flag)
	w.DateTime(mi.ReferredTime)
	w.DateTime(mi.ExpireTime)
	types.WriteList(w, mi.Tags, (*types.Writer).String)
	types.WriteList(w, mi.Ratings, func(w *types.Writer, r RatingInfo) { r.appendWithSlot(w) })
	w.EndStructure(m)
}

// ReadMetaInfo reads a DataStoreMetaInfo structure.
func ReadMetaInfo(r *types.Reader, field string) MetaInfo {
	m := r.EnterStructure(field)
	mi := MetaInfo{DataID: r.U64("dataId"), OwnerID: r.PID("ownerId"), Size: r.U32("size"), Name: r.String("name"),
		DataType: r.U16("dataType"), MetaBinary: clone(r.QBuffer("metaBinary"))}
	mi.Permission = readPermission(r, "permission")
	mi.DelPermission = readPermission(r, "delPermission")
	mi.CreatedTime, mi.UpdatedTime = r.DateTime("createdTime"), r.DateTime("updatedTime")
	mi.Period, mi.Status, mi.ReferredCnt = r.U16("period"), r.U8("status"), r.U32("referredCnt")
	mi.ReferDataID, mi.Flag = r.U32("referDataId"), r.U32("flag")
	mi.ReferredTime, mi.ExpireTime = r.DateTime("referredTime"), r.DateTime("expireTime")
	mi.Tags = types.ReadList(r, "tags", (*types.Reader).String)
	mi.Ratings = types.ReadList(r, "ratings", readRatingInfoWithSlot)
	r.LeaveStructure(m)
	return mi
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

// append writes every field: as revision 3 before NEX 4, which numbers that
// layout 0.
func (p SearchParam) append(w *types.Writer, v version) {
	rev := uint8(3)
	if v >= 40000 {
		rev = 0
	}
	m := w.BeginStructure(rev)
	w.U8(p.SearchTarget)
	types.WriteList(w, p.OwnerIDs, (*types.Writer).PID)
	w.U8(p.OwnerType)
	types.WriteList(w, p.DestinationIDs, (*types.Writer).PID)
	w.U16(p.DataType)
	w.DateTime(p.CreatedAfter)
	w.DateTime(p.CreatedBefore)
	w.DateTime(p.UpdatedAfter)
	w.DateTime(p.UpdatedBefore)
	w.U32(p.ReferDataID)
	types.WriteList(w, p.Tags, (*types.Writer).String)
	w.U8(p.ResultOrderColumn)
	w.U8(p.ResultOrder)
	rr := w.BeginStructure(0)
	w.U32(p.ResultOffset)
	w.U32(p.ResultSize)
	w.EndStructure(rr)
	w.U8(p.ResultOption)
	w.U32(p.MinimalRatingFrequency)
	w.Bool(p.UseCache)
	w.Bool(p.TotalCountEnabled)
	types.WriteList(w, p.DataTypes, (*types.Writer).U16)
	w.EndStructure(m)
}

// readSearchParam reads the revisions the page gives: 1 adds useCache, 2 adds
// dataTypes, 3 inserts totalCountEnabled before dataTypes, and NEX 4 numbers
// that last layout 0 again. A header's version says which one came; without
// a header (the structure is the method's last parameter) the bytes left do:
// after useCache, dataTypes alone leaves an even count, totalCountEnabled and
// dataTypes an odd one.
func readSearchParam(r *types.Reader, field string, v version) SearchParam {
	m := r.EnterStructure(field)
	var p SearchParam
	p.SearchTarget = r.U8("searchTarget")
	p.OwnerIDs = types.ReadList(r, "ownerIds", (*types.Reader).PID)
	p.OwnerType = r.U8("ownerType")
	p.DestinationIDs = types.ReadList(r, "destinationIds", (*types.Reader).PID)
	p.DataType = r.U16("dataType")
	p.CreatedAfter, p.CreatedBefore = r.DateTime("createdAfter"), r.DateTime("createdBefore")
	p.UpdatedAfter, p.UpdatedBefore = r.DateTime("updatedAfter"), r.DateTime("updatedBefore")
	p.ReferDataID = r.U32("referDataId")
	p.Tags = types.ReadList(r, "tags", (*types.Reader).String)
	p.ResultOrderColumn, p.ResultOrder = r.U8("resultOrderColumn"), r.U8("resultOrder")
	rr := r.EnterStructure("resultRange")
	p.ResultOffset, p.ResultSize = r.U32("offset"), r.U32("size")
	r.LeaveStructure(rr)
	p.ResultOption = r.U8("resultOption")
	p.MinimalRatingFrequency = r.U32("minimalRatingFrequency")
	rev := m.Version
	if rev < 0 {
		switch left := r.Remaining(); {
		case left == 0:
			rev = 0
		case left == 1:
			rev = 1
		case (left-1)%2 == 0:
			rev = 2
		default:
			rev = 3
		}
	} else if rev == 0 && v >= 40000 {
		rev = 3
	}
	if rev >= 1 {
		p.UseCache = r.Bool("useCache")
	}
	if rev >= 3 {
		p.TotalCountEnabled = r.Bool("totalCountEnabled")
	}
	if rev >= 2 {
		p.DataTypes = types.ReadList(r, "dataTypes", (*types.Reader).U16)
	}
	r.LeaveStructure(m)
	return p
}

// SearchResult is the DataStoreSearchResult structure.
type SearchResult struct {
	TotalCount     uint32
	Result         []MetaInfo
	TotalCountType uint8 // 0 all returned, 1 more than returned, 3 disabled
}

// ReadSearchResult reads a DataStoreSearchResult structure.
func ReadSearchResult(r *types.Reader, field string) SearchResult {
	m := r.EnterStructure(field)
	p := SearchResult{TotalCount: r.U32("totalCount"), Result: types.ReadList(r, "result", ReadMetaInfo), TotalCountType: r.U8("totalCountType")}
	r.LeaveStructure(m)
	return p
}

// ReqUpdateInfo is DataStoreReqUpdateInfo (a 16-bit version before NEX 3.0).
type ReqUpdateInfo struct {
	Version        uint32
	URL            string
	RequestHeaders []KeyValue
	FormFields     []KeyValue
	RootCACert     []byte
}

// version is a NEX version as major*10000 + minor*100 + patch.
type version int

func (v version) extraData() bool { return v >= 30500 } // "In NEX version 3.5, one more field was added"

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
