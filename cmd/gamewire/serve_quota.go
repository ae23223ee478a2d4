package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/quota"
)

// serveQuotaOptions are serve's per-player quotas, the sweeper's interval
// and the DataStore endpoint's upload caps (docs/security.md).
type serveQuotaOptions struct {
	gatherings, communities, categories, commonData int
	objects, pending                                int
	bytes                                           byteSize
	sweep                                           time.Duration
	uploads, playerUploads                          int
}

func (q *serveQuotaOptions) register(f *pflag.FlagSet) {
	d := quota.Default()
	f.IntVar(&q.gatherings, "quota-gatherings", d.Gatherings, "matchmake sessions one player may own at once (0: no limit); more are refused with RendezVous::LimitExceeded")
	f.IntVar(&q.communities, "quota-communities", d.Communities, "communities one player may own (0: no limit); RendezVous::PersistentGatheringCreationMax beyond")
	f.IntVar(&q.categories, "quota-ranking-categories", d.RankingCategories, "ranking categories one player may have scores in (0: no limit); Ranking::RegistrationError beyond")
	f.IntVar(&q.commonData, "quota-common-data", d.CommonData, "ranking common data entries (unique ids) one player may keep (0: no limit)")
	f.IntVar(&q.objects, "quota-objects", d.Objects, "DataStore objects one player may keep, pending ones included (0: no limit); DataStore::OverCapacity beyond")
	f.IntVar(&q.pending, "quota-pending", d.Pending, "DataStore posts one player may have prepared and not completed (0: no limit)")
	q.bytes = byteSize(d.Bytes)
	f.Var(&q.bytes, "quota-bytes", "DataStore bytes one player may keep, declared body sizes plus meta binaries (KiB, MiB, GiB; 0: no limit)")
	f.DurationVar(&q.sweep, "sweep-interval", time.Minute, "how often abandoned DataStore posts, uploads, staged bodies and temporary files are removed (also once at start)")
	f.IntVar(&q.uploads, "datastore-max-uploads", datastore.DefaultMaxUploads, "uploads the DataStore endpoint receives at once; more get 429")
	f.IntVar(&q.playerUploads, "datastore-player-uploads", datastore.DefaultMaxPlayerUploads, "uploads of one player's objects the DataStore endpoint receives at once; more get 429")
}

// quota checks the flags and returns the quota.
func (q *serveQuotaOptions) quota() (quota.Quota, error) {
	for _, v := range []struct {
		name string
		n    int64
	}{{"--quota-gatherings", int64(q.gatherings)}, {"--quota-communities", int64(q.communities)}, {"--quota-ranking-categories", int64(q.categories)},
		{"--quota-common-data", int64(q.commonData)}, {"--quota-objects", int64(q.objects)}, {"--quota-pending", int64(q.pending)}, {"--quota-bytes", int64(q.bytes)}} {
		if v.n < 0 {
			return quota.Quota{}, fmt.Errorf("%s %d: 0 (no limit) or more", v.name, v.n)
		}
	}
	if q.sweep <= 0 {
		return quota.Quota{}, fmt.Errorf("--sweep-interval %v: must be positive", q.sweep)
	}
	if q.uploads <= 0 || q.playerUploads <= 0 {
		return quota.Quota{}, fmt.Errorf("--datastore-max-uploads %d, --datastore-player-uploads %d: must be positive", q.uploads, q.playerUploads)
	}
	return quota.Quota{Gatherings: q.gatherings, Communities: q.communities, RankingCategories: q.categories, CommonData: q.commonData,
		Objects: q.objects, Pending: q.pending, Bytes: int64(q.bytes)}, nil
}

// sweepEvery runs ds.Sweep now and then every interval until ctx ends; the
// returned function stops it and waits.
func sweepEvery(ctx context.Context, ds *datastore.Server, interval time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	sweep := func() {
		if _, err := ds.Sweep(ctx); err != nil && ctx.Err() == nil && log != nil {
			log.Warn("nex datastore: sweep failed", "err", err)
		}
	}
	sweep()
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sweep()
			}
		}
	}()
	return func() { cancel(); <-done }
}
