package datastore

import (
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

// The object methods beyond the core post/get/update/delete: touching,
// perpetuation, the batched reads and changes, and posting under a chosen
// data id.

func (k *call) touchObject(id, pw uint64) error {
	o, err := k.s.Store.Object(k.ctx, id)
	if err != nil {
		return err
	}
	if err := k.canRead(o, pw); err != nil {
		return err
	}
	return k.refer(id)
}

func checkSlot(slot uint16) error {
	if slot >= NumPersistenceSlots {
		return fmt.Errorf("%w: persistence slot %d (0 to %d)", types.DataStoreInvalidArgument, slot, NumPersistenceSlots-1)
	}
	return nil
}

func (k *call) perpetuateObject(slot uint16, id uint64, deleteLast bool) error {
	if err := checkSlot(slot); err != nil {
		return err
	}
	o, err := k.s.Store.Object(k.ctx, id)
	if err != nil {
		return err
	}
	if err := k.live(o); err != nil {
		return err
	}
	if o.Owner != k.me {
		return fmt.Errorf("%w: object %d belongs to PID %d", types.DataStorePermissionDenied, id, o.Owner)
	}
	return k.perpetuate(slot, id, deleteLast)
}

func (k *call) unperpetuateObject(slot uint16, deleteLast bool) error {
	if err := checkSlot(slot); err != nil {
		return err
	}
	return k.perpetuate(slot, 0, deleteLast)
}

func (k *call) perpetuate(slot uint16, id uint64, deleteLast bool) error {
	deleted, err := k.s.Store.Perpetuate(k.ctx, k.me, slot, id, deleteLast)
	if err != nil {
		return err
	}
	for _, d := range deleted {
		k.s.deleteBodies(k.ctx, d)
	}
	return nil
}

// AdditionalMeta is the DataStoreReqGetAdditionalMeta structure: what
// PrepareGetObjectOrMetaBinary answers for an object without a body.
type AdditionalMeta struct {
	OwnerID    types.PID
	DataType   uint16
	Version    uint16
	MetaBinary []byte
}

// prepareGetOrMetaBinary answers a download URL for an object with a body
// and an empty additional meta, or, for one without (PostMetaBinary), an
// empty DataStoreReqGetInfo and the meta binary: one call gets either kind.
func (k *call) prepareGetOrMetaBinary(p PrepareGetParam) (ReqGetInfo, AdditionalMeta, error) {
	o, err := k.object(p.DataID, p.PersistenceTarget)
	if err != nil {
		return ReqGetInfo{}, AdditionalMeta{}, err
	}
	if err := k.canRead(o, p.AccessPassword); err != nil {
		return ReqGetInfo{}, AdditionalMeta{}, err
	}
	var info ReqGetInfo
	if hasBody(o) {
		if info, err = k.getInfo(o); err != nil {
			return ReqGetInfo{}, AdditionalMeta{}, err
		}
	}
	if err := k.refer(o.DataID); err != nil {
		return ReqGetInfo{}, AdditionalMeta{}, err
	}
	if hasBody(o) {
		return info, AdditionalMeta{}, nil
	}
	return ReqGetInfo{DataID: o.DataID}, AdditionalMeta{OwnerID: o.Owner, DataType: o.DataType, Version: uint16(o.Version), MetaBinary: o.MetaBinary}, nil
}

// objectInfos answers a download URL per object (each counts a reference).
func (k *call) objectInfos(ids []uint64) ([]ReqGetInfo, []types.Result, error) {
	if len(ids) > MaxBatch {
		return nil, nil, fmt.Errorf("%w: %d objects in one call (at most %d)", types.DataStoreInvalidArgument, len(ids), MaxBatch)
	}
	infos := make([]ReqGetInfo, len(ids))
	results := make([]types.Result, len(ids))
	for i, id := range ids {
		o, err := k.s.Store.Object(k.ctx, id)
		if err == nil {
			err = k.canRead(o, 0)
		}
		if err == nil && !hasBody(o) {
			err = fmt.Errorf("%w: object %d has no body (meta binary only)", types.DataStoreOperationNotAllowed, id)
		}
		if err == nil {
			infos[i], err = k.getInfo(o)
		}
		if err == nil {
			err = k.refer(id)
		}
		if results[i] = k.itemResult(err); results[i] == types.DataStoreUnknown {
			return nil, nil, err
		}
		if err != nil {
			infos[i] = ReqGetInfo{}
		}
	}
	return infos, results, nil
}

func (k *call) persistenceInfos(owner types.PID, slots []uint16) ([]PersistenceInfo, []types.Result, error) {
	if len(slots) > MaxBatch {
		return nil, nil, fmt.Errorf("%w: %d slots in one call (at most %d)", types.DataStoreInvalidArgument, len(slots), MaxBatch)
	}
	infos := make([]PersistenceInfo, len(slots))
	results := make([]types.Result, len(slots))
	for i, slot := range slots {
		infos[i] = PersistenceInfo{OwnerID: owner, SlotID: slot}
		o, err := k.s.Store.ObjectInSlot(k.ctx, owner, slot)
		if err == nil {
			err = k.canRead(o, 0)
		}
		if results[i] = k.itemResult(err); results[i] == types.DataStoreUnknown {
			return nil, nil, err
		}
		if err == nil {
			infos[i].DataID = o.DataID
		}
	}
	return infos, results, nil
}

func (k *call) passwordInfos(ids []uint64) ([]PasswordInfo, []types.Result, error) {
	if len(ids) > MaxBatch {
		return nil, nil, fmt.Errorf("%w: %d objects in one call (at most %d)", types.DataStoreInvalidArgument, len(ids), MaxBatch)
	}
	infos := make([]PasswordInfo, len(ids))
	results := make([]types.Result, len(ids))
	for i, id := range ids {
		infos[i].DataID = id
		o, err := k.s.Store.Object(k.ctx, id)
		if err == nil && o.Owner != k.me {
			err = fmt.Errorf("%w: the passwords of object %d are its owner's", types.DataStorePermissionDenied, id)
		}
		if results[i] = k.itemResult(err); results[i] == types.DataStoreUnknown {
			return nil, nil, err
		}
		if err == nil {
			infos[i].AccessPassword, infos[i].UpdatePassword = o.AccessPassword, o.UpdatePassword
		}
	}
	return infos, results, nil
}

// PasswordInfo is the DataStorePasswordInfo structure.
type PasswordInfo struct {
	DataID         uint64
	AccessPassword uint64
	UpdatePassword uint64
}

// PersistenceInfo is the DataStorePersistenceInfo structure.
type PersistenceInfo struct {
	OwnerID types.PID
	SlotID  uint16
	DataID  uint64
}

// changeMetas changes several objects: dataIds[i] names the object of
// params[i] (0: the param's persistence target).
func (k *call) changeMetas(ids []uint64, params []ChangeMetaParam, transactional bool) ([]types.Result, error) {
	if len(ids) > MaxBatch || len(params) != len(ids) {
		return nil, fmt.Errorf("%w: %d data ids, %d params (equal counts, at most %d)", types.DataStoreInvalidArgument, len(ids), len(params), MaxBatch)
	}
	// Checks and persistence targets first: a bad item fails a
	// transactional call before anything changes, and is its own Result
	// otherwise.
	targets := make([]uint64, len(ids))
	pre := make([]error, len(ids))
	for i, p := range params {
		pre[i] = checkChangeMeta(p)
		if pre[i] == nil {
			targets[i], pre[i] = k.changeMetaTarget(ids[i], p)
		}
		if pre[i] != nil && transactional {
			return nil, pre[i]
		}
	}
	results, err := k.batch(len(ids), transactional,
		func() error {
			return k.s.Store.UpdateObjects(k.ctx, targets, func(i int, o *Object) error { return k.applyChangeMeta(params[i])(o) })
		},
		func(i int) error {
			if pre[i] != nil {
				return pre[i]
			}
			_, err := k.s.Store.Update(k.ctx, targets[i], k.applyChangeMeta(params[i]))
			return err
		})
	return results, err
}

// MaxChosenDataID bounds the data ids clients may choose
// (PostMetaBinaryWithDataId, RateObjectWithPosting): the stores move their id
// sequence past a chosen id, and a client choosing the largest would leave
// none for later posts.
const MaxChosenDataID = 1 << 40

// postWithDataID stores a body-less object under a data id the client
// chose (PostMetaBinaryWithDataId): 0 or past MaxChosenDataID
// DataStore::InvalidArgument, a taken one DataStore::OperationNotAllowed.
func (k *call) postWithDataID(id uint64, p PreparePostParam) (Object, error) {
	if id == 0 || id > MaxChosenDataID {
		return Object{}, fmt.Errorf("%w: chosen data id %d (1 to %d)", types.DataStoreInvalidArgument, id, uint64(MaxChosenDataID))
	}
	p.Size = 0
	if err := k.checkPost(p, false); err != nil {
		return Object{}, err
	}
	o, err := k.newObjectWithID(id, p, false)
	if errors.Is(err, ErrExists) {
		return o, fmt.Errorf("%w: %w", types.DataStoreOperationNotAllowed, err)
	}
	if err != nil {
		return o, err
	}
	k.notifyArrival(o, DataFlagUseNotificationOnPost)
	return o, nil
}

// postMetaBinariesWithDataID posts several; transactional, every item is
// checked first and the objects posted are deleted again if a later one
// fails.
func (k *call) postMetaBinariesWithDataID(ids []uint64, params []PreparePostParam, transactional bool) ([]types.Result, error) {
	if len(ids) > MaxBatch || len(params) != len(ids) {
		return nil, fmt.Errorf("%w: %d data ids, %d params (equal counts, at most %d)", types.DataStoreInvalidArgument, len(ids), len(params), MaxBatch)
	}
	results, err := k.batch(len(ids), transactional,
		func() error {
			var posted []uint64
			for i, id := range ids {
				if _, err := k.postWithDataID(id, params[i]); err != nil {
					k.unpost(posted)
					return &ItemError{Index: i, Err: err}
				}
				posted = append(posted, id)
			}
			return nil
		},
		func(i int) error {
			_, err := k.postWithDataID(ids[i], params[i])
			return err
		})
	return results, err
}
