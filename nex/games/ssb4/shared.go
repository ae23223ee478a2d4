package ssb4

import (
	"cmp"
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/datastore"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	sb "github.com/gamewire/gamewire/nex/protocols/datastoressb4"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Shared data: what players share with everyone (the game's shared content:
// its data type, region, two attributes and the fighters it shows), kept as
// a DataStore object whose data id is the shared data's, searched by those
// attributes and hidden once Config.ReportThreshold players reported it.

// checkSharedData bounds shared data's fighters and comment.
func checkSharedData(p sb.DataStorePreparePostSharedDataParam) error {
	if err := tooMany("shared data fighters", len(p.Fighter), MaxSharedDataFighters); err != nil {
		return err
	}
	return tooMany("comment bytes", len(p.Comment), MaxCommentSize)
}

// newPost is the DataStore post of a public object of dataType living
// period days, owned by the caller.
func newPost(size uint32, name string, dataType, period uint16, meta []byte, extra []string) ds.DataStorePreparePostParam {
	post := ds.NewDataStorePreparePostParam()
	post.Size, post.Name, post.DataType, post.Period = size, name, dataType, period
	post.MetaBinary = append([]byte{}, meta...)
	post.Permission = ds.DataStorePermission{Permission: datastore.PermissionEveryone, Recipients: []types.PID{}}
	post.DeletePermission = ds.DataStorePermission{Permission: datastore.PermissionOwner, Recipients: []types.PID{}}
	post.Tags, post.RatingInitParam = []string{}, []ds.DataStoreRatingInitParamWithSlot{}
	post.ExtraData = append([]string{}, extra...)
	return post
}

// prepare prepares post with the DataStore service and records what the
// object is with record(its data id).
func (h handler) prepare(ctx context.Context, c *rmc.Call, post ds.DataStorePreparePostParam, record func(id uint64) error) (ds.DataStoreReqPostInfo, error) {
	base, err := h.s.DataStore.Handler()
	if err != nil {
		return ds.DataStoreReqPostInfo{}, err
	}
	info, err := base.PreparePostObject(ctx, c, post)
	if err != nil {
		return ds.DataStoreReqPostInfo{}, err
	}
	return info, record(info.DataID)
}

// complete completes the upload of what (replay or shared data) id through
// the DataStore service, once id agrees with p's and known says it was
// prepared as one.
func (h handler) complete(ctx context.Context, c *rmc.Call, what string, id uint64, p ds.DataStoreCompletePostParam, known func() error) error {
	if id != p.DataID {
		return fmt.Errorf("%w: %s %d completed as data id %d", types.DataStoreInvalidArgument, what, id, p.DataID)
	}
	if err := known(); err != nil {
		return err
	}
	base, err := h.s.DataStore.Handler()
	if err != nil {
		return err
	}
	return base.CompletePostObject(ctx, c, p)
}

// PreparePostSharedData starts shared data's upload: a public DataStore
// object of Config.SharedDataType with the meta binary, living
// Config.SharedDataPeriod days, prepared by the service (which bounds its
// size and meta binary). It answers the object's parameters and where to
// upload.
func (h handler) PreparePostSharedData(ctx context.Context, c *rmc.Call, p sb.DataStorePreparePostSharedDataParam) (ds.DataStorePreparePostParam, ds.DataStoreReqPostInfo, error) {
	if err := checkSharedData(p); err != nil {
		return ds.DataStorePreparePostParam{}, ds.DataStoreReqPostInfo{}, err
	}
	post := newPost(p.Size, "shared data", cmp.Or(h.s.Config.SharedDataType, DefaultSharedDataType),
		cmp.Or(h.s.Config.SharedDataPeriod, DefaultSharedDataPeriod), p.MetaBinary, p.ExtraData)
	info, err := h.prepare(ctx, c, post, func(id uint64) error {
		return h.s.Store.AddSharedData(ctx, SharedData{ID: id, Owner: c.Peer.PID, DataType: p.DataType, Region: p.Region,
			Attribute1: p.Attribute1, Attribute2: p.Attribute2, Fighters: append([]byte{}, p.Fighter...), Comment: p.Comment, Posted: h.s.now()})
	})
	return post, info, err
}

// CompletePostSharedData ends shared data's upload: the DataStore service's
// CompletePostObject of its object (the ids must agree). Only then is it
// found.
func (h handler) CompletePostSharedData(ctx context.Context, c *rmc.Call, p sb.DataStoreCompletePostSharedDataParam) error {
	return h.complete(ctx, c, "shared data", p.DataID, p.CompleteParam, func() error {
		_, err := h.s.Store.SharedData(ctx, p.DataID)
		return err
	})
}

// SearchSharedData answers the shared data of the data type the search
// selects: its owner unless 0; its region, attributes and a fighter it
// shows unless Any (0xFF); not reported by Config.ReportThreshold players;
// uploaded and not expired; newest first, in the range asked (at most
// datastore.MaxSearchResults). Each comes with its owner's profile, its
// meta binary and rating (the object's slot 0) and where it is downloaded
// (which counts a reference, as PrepareGetObject does).
func (h handler) SearchSharedData(ctx context.Context, c *rmc.Call, p sb.DataStoreSearchSharedDataParam) ([]sb.DataStoreSharedDataInfo, error) {
	found, err := h.s.Store.SearchSharedData(ctx, SharedDataQuery{DataType: p.DataType, Owner: types.PID(p.Owner), Region: p.Region,
		Attribute1: p.Attribute1, Attribute2: p.Attribute2, Fighter: p.Fighter,
		MaxReports: cmp.Or(h.s.Config.ReportThreshold, DefaultReportThreshold),
		Offset:     p.ResultRange.Offset, Limit: min(p.ResultRange.Size, datastore.MaxSearchResults)})
	if err != nil {
		return nil, err
	}
	owners := make([]types.PID, len(found))
	for i, d := range found {
		owners[i] = d.Owner
	}
	ps, err := h.s.Store.Profiles(ctx, owners)
	if err != nil {
		return nil, err
	}
	profiles := map[types.PID][]byte{}
	for _, p := range ps {
		profiles[p.PID] = p.Profile
	}
	out := []sb.DataStoreSharedDataInfo{}
	for _, d := range found {
		o, err := h.s.DataStore.ReadableObject(ctx, c, d.ID, 0)
		var info ds.DataStoreReqGetInfo
		if err == nil {
			info, err = h.s.DataStore.GetInfo(ctx, c, o)
		}
		if err != nil {
			if datastore.ItemResult(err) == types.DataStoreUnknown {
				return nil, err
			}
			continue // not uploaded, expired, deleted: not listed
		}
		var rating int64
		for _, r := range o.Ratings {
			if r.Slot == 0 {
				rating = r.Total
			}
		}
		out = append(out, sb.DataStoreSharedDataInfo{DataID: d.ID, OwnerID: uint32(d.Owner), DataType: d.DataType, Comment: d.Comment,
			MetaBinary: append([]byte{}, o.MetaBinary...), Profile: append([]byte{}, profiles[d.Owner]...), Rating: rating,
			CreatedTime: types.DateTimeFromTime(o.Created), Info: sb.DataStoreFileServerObjectInfo{DataID: d.ID, GetInfo: info}})
	}
	return out, nil
}

// ReportSharedData records the caller's report of shared data it can read
// (once per player); Config.ReportThreshold reports hide it from searches.
func (h handler) ReportSharedData(ctx context.Context, c *rmc.Call, id uint64) error {
	if _, err := h.s.DataStore.ReadableObject(ctx, c, id, 0); err != nil {
		return err
	}
	_, err := h.s.Store.ReportSharedData(ctx, id, c.Peer.PID)
	return err
}
