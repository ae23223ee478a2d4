package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// countingRanking counts the calls made to a ranking.Store.
type countingRanking struct {
	s ranking.Store
	n *atomic.Uint64
}

func (c countingRanking) Category(ctx context.Context, id uint32) (ranking.Category, error) {
	c.n.Add(1)
	return c.s.Category(ctx, id)
}
func (c countingRanking) AddCategory(ctx context.Context, cat ranking.Category) error {
	c.n.Add(1)
	return c.s.AddCategory(ctx, cat)
}
func (c countingRanking) UploadScore(ctx context.Context, cat ranking.Category, pid types.PID, uid uint64, s ranking.ScoreData, now time.Time) (bool, error) {
	c.n.Add(1)
	return c.s.UploadScore(ctx, cat, pid, uid, s, now)
}
func (c countingRanking) DeleteScore(ctx context.Context, pid types.PID, uid uint64, cat uint32) (bool, error) {
	c.n.Add(1)
	return c.s.DeleteScore(ctx, pid, uid, cat)
}
func (c countingRanking) DeleteAllScores(ctx context.Context, pid types.PID, uid uint64) (int64, error) {
	c.n.Add(1)
	return c.s.DeleteAllScores(ctx, pid, uid)
}
func (c countingRanking) ChangeAttributes(ctx context.Context, pid types.PID, uid uint64, cat uint32, all bool, p ranking.ChangeAttributesParam) (int64, error) {
	c.n.Add(1)
	return c.s.ChangeAttributes(ctx, pid, uid, cat, all, p)
}
func (c countingRanking) PutCommonData(ctx context.Context, pid types.PID, uid uint64, data []byte, now time.Time) error {
	c.n.Add(1)
	return c.s.PutCommonData(ctx, pid, uid, data, now)
}
func (c countingRanking) CommonData(ctx context.Context, pid types.PID, uid uint64) ([]byte, error) {
	c.n.Add(1)
	return c.s.CommonData(ctx, pid, uid)
}
func (c countingRanking) DeleteCommonData(ctx context.Context, pid types.PID, uid uint64) (bool, error) {
	c.n.Add(1)
	return c.s.DeleteCommonData(ctx, pid, uid)
}
func (c countingRanking) List(ctx context.Context, q ranking.Query, offset, limit uint32) ([]ranking.Entry, error) {
	c.n.Add(1)
	return c.s.List(ctx, q, offset, limit)
}
func (c countingRanking) Find(ctx context.Context, q ranking.Query, pid types.PID, uid uint64) (ranking.Entry, uint32, error) {
	c.n.Add(1)
	return c.s.Find(ctx, q, pid, uid)
}
func (c countingRanking) FindUnique(ctx context.Context, q ranking.Query, uid uint64) (ranking.Entry, uint32, error) {
	c.n.Add(1)
	return c.s.FindUnique(ctx, q, uid)
}
func (c countingRanking) CountBetter(ctx context.Context, q ranking.Query, score uint32) (uint32, error) {
	c.n.Add(1)
	return c.s.CountBetter(ctx, q, score)
}
func (c countingRanking) Count(ctx context.Context, q ranking.Query) (uint32, error) {
	c.n.Add(1)
	return c.s.Count(ctx, q)
}
func (c countingRanking) Stats(ctx context.Context, q ranking.Query) (ranking.Stats, error) {
	c.n.Add(1)
	return c.s.Stats(ctx, q)
}

func (c countingRanking) Usage(ctx context.Context, pid types.PID, category uint32, uid uint64) (ranking.Usage, error) {
	c.n.Add(1)
	return c.s.Usage(ctx, pid, category, uid)
}

// countingDataStore counts the calls made to a datastore.Store.
// countingDataStore counts the calls of the methods the bench's DataStore post
// uses; the others (batches, ratings logs, notifications) pass through the
// embedded Store uncounted.
type countingDataStore struct {
	datastore.Store
	n *atomic.Uint64
}

func (c countingDataStore) CreateObject(ctx context.Context, o *datastore.Object, deleteLast bool) ([]datastore.Object, error) {
	c.n.Add(1)
	return c.Store.CreateObject(ctx, o, deleteLast)
}
func (c countingDataStore) Object(ctx context.Context, id uint64) (datastore.Object, error) {
	c.n.Add(1)
	return c.Store.Object(ctx, id)
}
func (c countingDataStore) ObjectInSlot(ctx context.Context, owner types.PID, slot uint16) (datastore.Object, error) {
	c.n.Add(1)
	return c.Store.ObjectInSlot(ctx, owner, slot)
}
func (c countingDataStore) Update(ctx context.Context, id uint64, f func(o *datastore.Object) error) (datastore.Object, error) {
	c.n.Add(1)
	return c.Store.Update(ctx, id, f)
}
func (c countingDataStore) DeleteObject(ctx context.Context, id uint64) error {
	c.n.Add(1)
	return c.Store.DeleteObject(ctx, id)
}
func (c countingDataStore) Search(ctx context.Context, q datastore.SearchQuery) ([]datastore.Object, uint32, error) {
	c.n.Add(1)
	return c.Store.Search(ctx, q)
}
func (c countingDataStore) AddUpload(ctx context.Context, u datastore.Upload) error {
	c.n.Add(1)
	return c.Store.AddUpload(ctx, u)
}
func (c countingDataStore) Upload(ctx context.Context, token string) (datastore.Upload, error) {
	c.n.Add(1)
	return c.Store.Upload(ctx, token)
}
func (c countingDataStore) FinishUpload(ctx context.Context, token string, now time.Time) error {
	c.n.Add(1)
	return c.Store.FinishUpload(ctx, token, now)
}
func (c countingDataStore) FinishedUpload(ctx context.Context, id uint64, version uint32) (datastore.Upload, error) {
	c.n.Add(1)
	return c.Store.FinishedUpload(ctx, id, version)
}
