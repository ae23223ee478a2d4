package datastore

import (
	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// Conversions between the package's structures and the generated wire types of
// nex/protocols/datastore (generated from nex/desc/defs/datastore.nexd). The
// generated codecs decide the bytes; these only move fields, so the service and
// its Client keep their names (RecipientIDs, DelPermission, ...) and the store
// its types.

func permFrom(p ds.DataStorePermission) Permission {
	return Permission{Permission: p.Permission, RecipientIDs: p.Recipients}
}

func (p Permission) wire() ds.DataStorePermission {
	return ds.DataStorePermission{Permission: p.Permission, Recipients: p.RecipientIDs}
}

func kvsFrom(kv []ds.DataStoreKeyValue) []KeyValue {
	if kv == nil {
		return nil
	}
	out := make([]KeyValue, len(kv))
	for i, x := range kv {
		out[i] = KeyValue{Key: x.Key, Value: x.Value}
	}
	return out
}

func kvsWire(kv []KeyValue) []ds.DataStoreKeyValue {
	if kv == nil {
		return nil
	}
	out := make([]ds.DataStoreKeyValue, len(kv))
	for i, x := range kv {
		out[i] = ds.DataStoreKeyValue{Key: x.Key, Value: x.Value}
	}
	return out
}

func targetFrom(t ds.DataStorePersistenceTarget) PersistenceTarget {
	return PersistenceTarget{OwnerID: t.OwnerID, SlotID: t.PersistenceID}
}

func (p PersistenceTarget) wire() ds.DataStorePersistenceTarget {
	return ds.DataStorePersistenceTarget{OwnerID: p.OwnerID, PersistenceID: p.SlotID}
}

func ratingInitsFrom(ps []ds.DataStoreRatingInitParamWithSlot) []RatingInitParam {
	if ps == nil {
		return nil
	}
	out := make([]RatingInitParam, len(ps))
	for i, p := range ps {
		q := p.Param
		out[i] = RatingInitParam{Slot: p.Slot, Flag: q.Flag, InternalFlag: q.InternalFlag, LockType: q.LockType,
			InitialValue: q.InitialValue, RangeMin: q.RangeMin, RangeMax: q.RangeMax, PeriodHour: q.PeriodHour,
			PeriodDuration: q.PeriodDuration}
	}
	return out
}

func ratingInitsWire(ps []RatingInitParam) []ds.DataStoreRatingInitParamWithSlot {
	if ps == nil {
		return nil
	}
	out := make([]ds.DataStoreRatingInitParamWithSlot, len(ps))
	for i, p := range ps {
		out[i] = ds.DataStoreRatingInitParamWithSlot{Slot: p.Slot, Param: ds.DataStoreRatingInitParam{Flag: p.Flag,
			InternalFlag: p.InternalFlag, LockType: p.LockType, InitialValue: p.InitialValue, RangeMin: p.RangeMin,
			RangeMax: p.RangeMax, PeriodHour: p.PeriodHour, PeriodDuration: p.PeriodDuration}}
	}
	return out
}

func preparePostFrom(p ds.DataStorePreparePostParam) PreparePostParam {
	return PreparePostParam{Size: p.Size, Name: p.Name, DataType: p.DataType, MetaBinary: p.MetaBinary,
		Permission: permFrom(p.Permission), DelPermission: permFrom(p.DeletePermission), Flag: p.Flag, Period: p.Period,
		ReferDataID: p.ReferDataID, Tags: p.Tags, RatingInitParams: ratingInitsFrom(p.RatingInitParam),
		PersistenceSlotID: p.PersistenceInitParam.PersistenceID, DeleteLastObject: p.PersistenceInitParam.DeleteLastObject,
		ExtraData: p.ExtraData}
}

func preparePostsFrom(ps []ds.DataStorePreparePostParam) []PreparePostParam {
	out := make([]PreparePostParam, len(ps))
	for i, p := range ps {
		out[i] = preparePostFrom(p)
	}
	return out
}

func preparePostFromV1(p ds.DataStorePreparePostParamV1) PreparePostParam {
	return PreparePostParam{V1: true, Size: p.Size, Name: p.Name, DataType: p.DataType, MetaBinary: p.MetaBinary,
		Permission: permFrom(p.Permission), DelPermission: permFrom(p.DeletePermission), Flag: p.Flag, Period: p.Period,
		ReferDataID: p.ReferDataID, Tags: p.Tags, RatingInitParams: ratingInitsFrom(p.RatingInitParam),
		PersistenceSlotID: NoPersistenceSlot}
}

func (p PreparePostParam) wire() ds.DataStorePreparePostParam {
	return ds.DataStorePreparePostParam{Size: p.Size, Name: p.Name, DataType: p.DataType, MetaBinary: p.MetaBinary,
		Permission: p.Permission.wire(), DeletePermission: p.DelPermission.wire(), Flag: p.Flag, Period: p.Period,
		ReferDataID: p.ReferDataID, Tags: p.Tags, RatingInitParam: ratingInitsWire(p.RatingInitParams),
		PersistenceInitParam: ds.DataStorePersistenceInitParam{PersistenceID: p.PersistenceSlotID, DeleteLastObject: p.DeleteLastObject},
		ExtraData:            p.ExtraData}
}

func preparePostsWire(ps []PreparePostParam) []ds.DataStorePreparePostParam {
	out := make([]ds.DataStorePreparePostParam, len(ps))
	for i, p := range ps {
		out[i] = p.wire()
	}
	return out
}

func (p ReqPostInfo) wire() ds.DataStoreReqPostInfo {
	return ds.DataStoreReqPostInfo{DataID: p.DataID, URL: p.URL, Headers: kvsWire(p.RequestHeaders),
		Form: kvsWire(p.FormFields), RootCaCert: p.RootCACert}
}

func (p ReqPostInfo) wireV1() ds.DataStoreReqPostInfoV1 {
	return ds.DataStoreReqPostInfoV1{DataID: uint32(p.DataID), URL: p.URL, Headers: kvsWire(p.RequestHeaders),
		Form: kvsWire(p.FormFields), RootCaCert: p.RootCACert}
}

func reqPostInfoFrom(p ds.DataStoreReqPostInfo) ReqPostInfo {
	return ReqPostInfo{DataID: p.DataID, URL: p.URL, RequestHeaders: kvsFrom(p.Headers), FormFields: kvsFrom(p.Form),
		RootCACert: p.RootCaCert}
}

func prepareGetFrom(p ds.DataStorePrepareGetParam) PrepareGetParam {
	return PrepareGetParam{DataID: p.DataID, LockID: p.LockID, PersistenceTarget: targetFrom(p.PersistenceTarget),
		AccessPassword: p.AccessPassword, ExtraData: p.ExtraData}
}

func (p PrepareGetParam) wire() ds.DataStorePrepareGetParam {
	return ds.DataStorePrepareGetParam{DataID: p.DataID, LockID: p.LockID, PersistenceTarget: p.PersistenceTarget.wire(),
		AccessPassword: p.AccessPassword, ExtraData: p.ExtraData}
}

func (p ReqGetInfo) wire() ds.DataStoreReqGetInfo {
	return ds.DataStoreReqGetInfo{URL: p.URL, Headers: kvsWire(p.RequestHeaders), Size: p.Size, RootCaCert: p.RootCACert, DataID: p.DataID}
}

func (p ReqGetInfo) wireV1() ds.DataStoreReqGetInfoV1 {
	return ds.DataStoreReqGetInfoV1{URL: p.URL, Headers: kvsWire(p.RequestHeaders), Size: p.Size, RootCaCert: p.RootCACert}
}

func reqGetInfoFrom(p ds.DataStoreReqGetInfo) ReqGetInfo {
	return ReqGetInfo{URL: p.URL, RequestHeaders: kvsFrom(p.Headers), Size: p.Size, RootCACert: p.RootCaCert, DataID: p.DataID}
}

func getMetaFrom(p ds.DataStoreGetMetaParam) GetMetaParam {
	return GetMetaParam{DataID: p.DataID, PersistenceTarget: targetFrom(p.PersistenceTarget), ResultOption: p.ResultOption,
		AccessPassword: p.AccessPassword}
}

func (p GetMetaParam) wire() ds.DataStoreGetMetaParam {
	return ds.DataStoreGetMetaParam{DataID: p.DataID, PersistenceTarget: p.PersistenceTarget.wire(), ResultOption: p.ResultOption,
		AccessPassword: p.AccessPassword}
}

func (p RatingInfo) wire() ds.DataStoreRatingInfo {
	return ds.DataStoreRatingInfo{TotalValue: p.TotalValue, Count: p.Count, InitialValue: p.InitialValue}
}

func (p RatingInfo) wireWithSlot() ds.DataStoreRatingInfoWithSlot {
	return ds.DataStoreRatingInfoWithSlot{Slot: uint8(p.Slot), Info: p.wire()}
}

func ratingInfoFrom(p ds.DataStoreRatingInfo) RatingInfo {
	return RatingInfo{TotalValue: p.TotalValue, Count: p.Count, InitialValue: p.InitialValue}
}

func ratingInfoWithSlotFrom(p ds.DataStoreRatingInfoWithSlot) RatingInfo {
	r := ratingInfoFrom(p.Info)
	r.Slot = int8(p.Slot)
	return r
}

func (mi MetaInfo) wire() ds.DataStoreMetaInfo {
	w := ds.DataStoreMetaInfo{DataID: mi.DataID, OwnerID: mi.OwnerID, Size: mi.Size, Name: mi.Name, DataType: mi.DataType,
		MetaBinary: mi.MetaBinary, Permission: mi.Permission.wire(), DeletePermission: mi.DelPermission.wire(),
		CreateTime: mi.CreatedTime, UpdateTime: mi.UpdatedTime, Period: mi.Period, Status: mi.Status,
		ReferredCount: mi.ReferredCnt, ReferDataID: mi.ReferDataID, Flag: mi.Flag, ReferredTime: mi.ReferredTime,
		ExpireTime: mi.ExpireTime, Tags: mi.Tags}
	if mi.Ratings != nil {
		w.Ratings = make([]ds.DataStoreRatingInfoWithSlot, len(mi.Ratings))
		for i, r := range mi.Ratings {
			w.Ratings[i] = r.wireWithSlot()
		}
	}
	return w
}

func metaInfosWire(mis []MetaInfo) []ds.DataStoreMetaInfo {
	out := make([]ds.DataStoreMetaInfo, len(mis))
	for i, mi := range mis {
		out[i] = mi.wire()
	}
	return out
}

func metaInfoFrom(w ds.DataStoreMetaInfo) MetaInfo {
	mi := MetaInfo{DataID: w.DataID, OwnerID: w.OwnerID, Size: w.Size, Name: w.Name, DataType: w.DataType,
		MetaBinary: w.MetaBinary, Permission: permFrom(w.Permission), DelPermission: permFrom(w.DeletePermission),
		CreatedTime: w.CreateTime, UpdatedTime: w.UpdateTime, Period: w.Period, Status: w.Status,
		ReferredCnt: w.ReferredCount, ReferDataID: w.ReferDataID, Flag: w.Flag, ReferredTime: w.ReferredTime,
		ExpireTime: w.ExpireTime, Tags: w.Tags}
	if w.Ratings != nil {
		mi.Ratings = make([]RatingInfo, len(w.Ratings))
		for i, r := range w.Ratings {
			mi.Ratings[i] = ratingInfoWithSlotFrom(r)
		}
	}
	return mi
}

func changeMetaFrom(p ds.DataStoreChangeMetaParam) ChangeMetaParam {
	c := p.CompareParam
	return ChangeMetaParam{DataID: p.DataID, ModifiesFlag: p.ModifiesFlag, Name: p.Name, Permission: permFrom(p.Permission),
		DelPermission: permFrom(p.DeletePermission), Period: p.Period, MetaBinary: p.MetaBinary, Tags: p.Tags,
		UpdatePassword: p.UpdatePassword, ReferredCnt: p.ReferredCount, DataType: p.DataType, Status: p.Status,
		Compare: CompareParam{ComparisonFlag: c.ComparisonFlag, Name: c.Name, Permission: permFrom(c.Permission),
			DelPermission: permFrom(c.DeletePermission), Period: c.Period, MetaBinary: c.MetaBinary, Tags: c.Tags,
			ReferredCnt: c.ReferredCount, DataType: c.DataType, Status: c.Status},
		PersistenceTarget: targetFrom(p.PersistenceTarget)}
}

func changeMetaFromV1(p ds.DataStoreChangeMetaParamV1) ChangeMetaParam {
	return ChangeMetaParam{DataID: p.DataID, ModifiesFlag: p.ModifiesFlag, Name: p.Name, Permission: permFrom(p.Permission),
		DelPermission: permFrom(p.DeletePermission), Period: p.Period, MetaBinary: p.MetaBinary, Tags: p.Tags,
		UpdatePassword: p.UpdatePassword, PersistenceTarget: PersistenceTarget{SlotID: NoPersistenceSlot}}
}

func (p ChangeMetaParam) wire() ds.DataStoreChangeMetaParam {
	c := p.Compare
	return ds.DataStoreChangeMetaParam{DataID: p.DataID, ModifiesFlag: p.ModifiesFlag, Name: p.Name,
		Permission: p.Permission.wire(), DeletePermission: p.DelPermission.wire(), Period: p.Period,
		MetaBinary: p.MetaBinary, Tags: p.Tags, UpdatePassword: p.UpdatePassword, ReferredCount: p.ReferredCnt,
		DataType: p.DataType, Status: p.Status,
		CompareParam: ds.DataStoreChangeMetaCompareParam{ComparisonFlag: c.ComparisonFlag, Name: c.Name,
			Permission: c.Permission.wire(), DeletePermission: c.DelPermission.wire(), Period: c.Period,
			MetaBinary: c.MetaBinary, Tags: c.Tags, ReferredCount: c.ReferredCnt, DataType: c.DataType, Status: c.Status},
		PersistenceTarget: p.PersistenceTarget.wire()}
}

func (p ChangeMetaParam) wireV1() ds.DataStoreChangeMetaParamV1 {
	return ds.DataStoreChangeMetaParamV1{DataID: p.DataID, ModifiesFlag: p.ModifiesFlag, Name: p.Name,
		Permission: p.Permission.wire(), DeletePermission: p.DelPermission.wire(), Period: p.Period,
		MetaBinary: p.MetaBinary, Tags: p.Tags, UpdatePassword: p.UpdatePassword}
}

func searchFrom(p ds.DataStoreSearchParam) SearchParam {
	return SearchParam{SearchTarget: p.SearchTarget, OwnerIDs: p.OwnerIDs, OwnerType: p.OwnerType,
		DestinationIDs: pidsFrom(p.DestinationIDs), DataType: p.DataType, CreatedAfter: p.CreatedAfter,
		CreatedBefore: p.CreatedBefore, UpdatedAfter: p.UpdatedAfter, UpdatedBefore: p.UpdatedBefore,
		ReferDataID: p.ReferDataID, Tags: p.Tags, ResultOrderColumn: p.ResultOrderColumn, ResultOrder: p.ResultOrder,
		ResultOffset: p.ResultRange.Offset, ResultSize: p.ResultRange.Size, ResultOption: p.ResultOption,
		MinimalRatingFrequency: p.MinimalRatingFrequency, UseCache: p.UseCache, TotalCountEnabled: p.TotalCountEnabled,
		DataTypes: p.DataTypes}
}

func (p SearchParam) wire() ds.DataStoreSearchParam {
	return ds.DataStoreSearchParam{SearchTarget: p.SearchTarget, OwnerIDs: p.OwnerIDs, OwnerType: p.OwnerType,
		DestinationIDs: pidsWire(p.DestinationIDs), DataType: p.DataType, CreatedAfter: p.CreatedAfter,
		CreatedBefore: p.CreatedBefore, UpdatedAfter: p.UpdatedAfter, UpdatedBefore: p.UpdatedBefore,
		ReferDataID: p.ReferDataID, Tags: p.Tags, ResultOrderColumn: p.ResultOrderColumn, ResultOrder: p.ResultOrder,
		ResultRange: common.ResultRange{Offset: p.ResultOffset, Size: p.ResultSize}, ResultOption: p.ResultOption,
		MinimalRatingFrequency: p.MinimalRatingFrequency, UseCache: p.UseCache, TotalCountEnabled: p.TotalCountEnabled,
		DataTypes: p.DataTypes}
}

// pidsFrom and pidsWire convert destinationIds, a List<PID> on the page and
// a list<u64> in NintendoClients' definition (the bytes agree with 8-byte PIDs).
func pidsFrom(ids []uint64) []types.PID {
	if ids == nil {
		return nil
	}
	out := make([]types.PID, len(ids))
	for i, id := range ids {
		out[i] = types.PID(id)
	}
	return out
}

func pidsWire(ids []types.PID) []uint64 {
	if ids == nil {
		return nil
	}
	out := make([]uint64, len(ids))
	for i, id := range ids {
		out[i] = uint64(id)
	}
	return out
}

func (p SearchResult) wire() ds.DataStoreSearchResult {
	return ds.DataStoreSearchResult{TotalCount: p.TotalCount, Result: metaInfosWire(p.Result), TotalCountType: p.TotalCountType}
}

func searchResultFrom(p ds.DataStoreSearchResult) SearchResult {
	r := SearchResult{TotalCount: p.TotalCount, TotalCountType: p.TotalCountType}
	if p.Result != nil {
		r.Result = make([]MetaInfo, len(p.Result))
		for i, mi := range p.Result {
			r.Result[i] = metaInfoFrom(mi)
		}
	}
	return r
}

func (p ReqUpdateInfo) wire() ds.DataStoreReqUpdateInfo {
	return ds.DataStoreReqUpdateInfo{Version: p.Version, URL: p.URL, Headers: kvsWire(p.RequestHeaders),
		Form: kvsWire(p.FormFields), RootCaCert: p.RootCACert}
}

func reqUpdateInfoFrom(p ds.DataStoreReqUpdateInfo) ReqUpdateInfo {
	return ReqUpdateInfo{Version: p.Version, URL: p.URL, RequestHeaders: kvsFrom(p.Headers), FormFields: kvsFrom(p.Form),
		RootCACert: p.RootCaCert}
}

func (t RatingTarget) wire() ds.DataStoreRatingTarget {
	return ds.DataStoreRatingTarget{DataID: t.DataID, Slot: t.Slot}
}

func ratingTargetFrom(t ds.DataStoreRatingTarget) RatingTarget {
	return RatingTarget{DataID: t.DataID, Slot: t.Slot}
}

func (p RateParam) wire() ds.DataStoreRateObjectParam {
	return ds.DataStoreRateObjectParam{RatingValue: p.Value, AccessPassword: p.AccessPassword}
}

func rateParamFrom(p ds.DataStoreRateObjectParam) RateParam {
	return RateParam{Value: p.RatingValue, AccessPassword: p.AccessPassword}
}

func (p PasswordInfo) wire() ds.DataStorePasswordInfo {
	return ds.DataStorePasswordInfo{DataID: p.DataID, AccessPassword: p.AccessPassword, UpdatePassword: p.UpdatePassword}
}

func (p PersistenceInfo) wire() ds.DataStorePersistenceInfo {
	return ds.DataStorePersistenceInfo{OwnerID: p.OwnerID, SlotID: p.SlotID, DataID: p.DataID}
}

func (a AdditionalMeta) wire() ds.DataStoreReqGetAdditionalMeta {
	return ds.DataStoreReqGetAdditionalMeta{OwnerID: a.OwnerID, DataType: a.DataType, Version: a.Version, MetaBinary: a.MetaBinary}
}

func (n NotificationURLInfo) wire() ds.DataStoreReqGetNotificationUrlInfo {
	return ds.DataStoreReqGetNotificationUrlInfo{URL: n.URL, Key: n.Key, Query: n.Query, RootCaCert: n.RootCACert}
}

func (l RatingLogInfo) wire() ds.DataStoreRatingLog {
	return ds.DataStoreRatingLog{IsRated: l.IsRated, PID: l.PID, RatingValue: l.RatingValue, LockExpirationTime: l.LockExpirationTime}
}

// wireList converts a slice with f (nil stays nil).
func wireList[T, W any](xs []T, f func(T) W) []W {
	if xs == nil {
		return nil
	}
	out := make([]W, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
