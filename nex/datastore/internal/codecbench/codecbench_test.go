// Package codecbench measures the generated DataStore codecs
// (nex/protocols/datastore) against the hand-written ones they replaced
// (handwritten_test.go), on the same bytes, and checks that both read those
// bytes alike. docs/performance.md "Generated protocol codecs" has the figures.
package codecbench

import (
	"bytes"
	"context"
	"net/netip"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

var settings = types.Settings{StructureHeader: true, Version: types.Version3_5}

func samplePost() PreparePostParam {
	return PreparePostParam{Size: 1024, Name: "level", DataType: 3, MetaBinary: bytes.Repeat([]byte{7}, 64),
		Permission:    Permission{Permission: PermissionRecipients, RecipientIDs: []types.PID{1001, 1002}},
		DelPermission: Permission{Permission: PermissionOwner}, Flag: 8, Period: 90, Tags: []string{"a", "bb", "ccc"},
		RatingInitParams:  []RatingInitParam{{Slot: 0, InitialValue: 5, RangeMin: 1, RangeMax: 5}},
		PersistenceSlotID: 2, DeleteLastObject: true, ExtraData: []string{"x"}}
}

func sampleMeta() MetaInfo {
	p := samplePost()
	return MetaInfo{DataID: 77, OwnerID: 1001, Size: p.Size, Name: p.Name, DataType: p.DataType, MetaBinary: p.MetaBinary,
		Permission: p.Permission, DelPermission: p.DelPermission, CreatedTime: 1 << 40, UpdatedTime: 1 << 41, Period: 90,
		ReferredCnt: 3, Flag: 8, ReferredTime: 1 << 40, ExpireTime: 1 << 42, Tags: p.Tags,
		Ratings: []RatingInfo{{Slot: 0, TotalValue: 12, Count: 3, InitialValue: 5}}}
}

func sampleSearch() SearchParam {
	return SearchParam{SearchTarget: 1, OwnerIDs: []types.PID{1001}, DataType: 3, Tags: []string{"a"}, ResultSize: 20,
		ResultOption: ResultTags | ResultRatings, UseCache: true, TotalCountEnabled: true, DataTypes: []uint16{3, 4}}
}

func encode(t testing.TB, f func(w *types.Writer)) []byte {
	w := types.NewWriter(nil, settings)
	f(&w)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSameBytes: for each benchmarked structure the generated codec writes
// the hand-written one's bytes, and reads them back.
func TestSameBytes(t *testing.T) {
	post := samplePost()
	old := encode(t, func(w *types.Writer) { post.append(w, version(settings.Version)) })
	var gp ds.DataStorePreparePostParam
	r := types.NewReader(old, settings)
	gp.Read(&r, "param")
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	if b := encode(t, gp.Append); !bytes.Equal(b, old) {
		t.Errorf("PreparePostParam:\n generated %x\n hand      %x", b, old)
	}
	mi := sampleMeta()
	old = encode(t, mi.Append)
	var gm ds.DataStoreMetaInfo
	r = types.NewReader(old, settings)
	gm.Read(&r, "info")
	if err := r.Done(); err != nil || gm.Name != mi.Name || len(gm.Ratings) != 1 {
		t.Fatalf("MetaInfo: %+v %v", gm, err)
	}
	if b := encode(t, gm.Append); !bytes.Equal(b, old) {
		t.Errorf("MetaInfo:\n generated %x\n hand      %x", b, old)
	}
	sp := sampleSearch()
	old = encode(t, func(w *types.Writer) { sp.append(w, version(settings.Version)) })
	var gs ds.DataStoreSearchParam
	r = types.NewReader(old, settings)
	gs.Read(&r, "param")
	if err := r.Done(); err != nil || !gs.TotalCountEnabled || len(gs.DataTypes) != 2 {
		t.Fatalf("SearchParam: %+v %v", gs, err)
	}
	if b := encode(t, gs.Append); !bytes.Equal(b, old) {
		t.Errorf("SearchParam:\n generated %x\n hand      %x", b, old)
	}
}

func BenchmarkDecodePreparePostParam(b *testing.B) {
	post := samplePost()
	data := encode(b, func(w *types.Writer) { post.append(w, version(settings.Version)) })
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, settings)
		_ = readPreparePostParam(&r, "param", version(settings.Version), false)
		return r.Done()
	}, func() error {
		r := types.NewReader(data, settings)
		var p ds.DataStorePreparePostParam
		p.Read(&r, "param")
		return r.Done()
	})
}

func BenchmarkEncodeMetaInfo(b *testing.B) {
	mi := sampleMeta()
	var gm ds.DataStoreMetaInfo
	r := types.NewReader(encode(b, mi.Append), settings)
	gm.Read(&r, "info")
	buf := make([]byte, 0, 1024)
	testutil.BenchPair(b, func() error {
		w := types.NewWriter(buf[:0], settings)
		mi.Append(&w)
		return w.Err()
	}, func() error {
		w := types.NewWriter(buf[:0], settings)
		gm.Append(&w)
		return w.Err()
	})
}

func BenchmarkDecodeSearchParam(b *testing.B) {
	sp := sampleSearch()
	data := encode(b, func(w *types.Writer) { sp.append(w, version(settings.Version)) })
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, settings)
		_ = readSearchParam(&r, "param", version(settings.Version))
		return r.Done()
	}, func() error {
		r := types.NewReader(data, settings)
		var p ds.DataStoreSearchParam
		p.Read(&r, "param")
		return r.Done()
	})
}

// BenchmarkDecodeGetMetaParam: fixed-size parameters (no strings, no lists).
func BenchmarkDecodeGetMetaParam(b *testing.B) {
	p := GetMetaParam{DataID: 77, PersistenceTarget: PersistenceTarget{SlotID: NoPersistenceSlot}, ResultOption: 7}
	data := encode(b, p.append)
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, settings)
		_ = readGetMetaParam(&r, "param")
		return r.Done()
	}, func() error {
		r := types.NewReader(data, settings)
		var p ds.DataStoreGetMetaParam
		p.Read(&r, "param")
		return r.Done()
	})
}

// passwords answers GetPasswordInfo from fixed values: a method whose
// parameters and results are fixed-size.
type passwords struct{ ds.UnimplementedDataStore }

func (passwords) GetPasswordInfo(ctx context.Context, c *rmc.Call, id uint64) (ds.DataStorePasswordInfo, error) {
	return ds.DataStorePasswordInfo{DataID: id, AccessPassword: 1, UpdatePassword: 2}, nil
}

// TestGeneratedDispatchAllocs: a call whose parameters and results are
// fixed-size goes through rmc.Dispatch, the generated dispatcher, its decoder,
// the typed handler and its encoder without allocating.
func TestGeneratedDispatchAllocs(t *testing.T) {
	mux := rmc.NewMux()
	ds.RegisterDataStore(mux, passwords{})
	peer := &rmc.Peer{Addr: netip.MustParseAddrPort("127.0.0.1:1"), PID: 1001, Settings: settings}
	w := types.NewWriter(nil, settings)
	w.U64(77)
	req := rmc.Request{Protocol: ds.DataStoreProtocolID, CallID: 1, Method: ds.DataStoreMethodGetPasswordInfo, Params: w.B}
	msg, err := req.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 0, 128)
	ctx := context.Background()
	resp, err := rmc.Dispatch(ctx, mux, peer, msg, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := rmc.ParseResponse(resp)
	if err != nil || r.IsError() || len(r.Data) != 5+24 {
		t.Fatalf("response %+v %v", r, err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := rmc.Dispatch(ctx, mux, peer, msg, out, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per generated fixed-size call", allocs)
	}
}
