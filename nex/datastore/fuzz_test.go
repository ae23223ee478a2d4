package datastore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// FuzzServeRMC feeds arbitrary parameters to every DataStore method: each
// call must get an answer (a result code or data), never a panic.
func FuzzServeRMC(f *testing.F) {
	fx := newFixture(f, f.TempDir())
	ctx := context.Background()
	// Objects for the seeds to name: 1 with a body, 2 without.
	if _, err := fx.client(1000).Put(ctx, post("one", 0), []byte("x")); err != nil {
		f.Fatal(err)
	}
	if _, err := fx.client(1000).PostMetaBinary(ctx, post("two", 0)); err != nil {
		f.Fatal(err)
	}
	// Seeds: the parameters the client encodes.
	rec := &recorder{}
	c := &datastore.Client{C: rec}
	c.PreparePostObject(ctx, post("seed", 0, "tag"))
	c.SearchObject(ctx, datastore.SearchParam{DataType: datastore.AnyDataType, ResultSize: 5, Tags: []string{"a"}})
	c.ChangeMeta(ctx, datastore.ChangeMetaParam{DataID: 1, ModifiesFlag: 0x3ff, Tags: []string{"x"}})
	c.RateObject(ctx, 1, 0, 3, 0)
	c.PrepareUpdateObject(ctx, 1, 4, 0)
	// The methods beyond the core object API.
	tgt := []datastore.RatingTarget{{DataID: 1, Slot: 0}, {DataID: 2, Slot: 1}}
	rates := []datastore.RateParam{{Value: 3}, {Value: -1, AccessPassword: 7}}
	posts := []datastore.PreparePostParam{post("a", 0), post("b", 2)}
	change := datastore.ChangeMetaParam{DataID: 1, ModifiesFlag: 0x21, Name: "n", Tags: []string{"x"}}
	c.PostMetaBinary(ctx, post("meta", 0))
	c.GetNotificationURL(ctx, "http://old/")
	c.GetNewArrivedNotifications(ctx, 3, 10, true)
	c.GetNewArrivedNotifications(ctx, 3, 10, false)
	c.GetRating(ctx, tgt[0], 0)
	c.GetRatings(ctx, []uint64{1, 2}, 9)
	c.ResetRating(ctx, tgt[0], 5)
	c.ResetRatings(ctx, []uint64{1, 2}, true)
	c.TouchObject(ctx, 1, 0, 0)
	c.GetRatingWithLog(ctx, tgt[1], 0)
	c.GetPersistenceInfos(ctx, 1000, []uint16{0, 3})
	c.PerpetuateObject(ctx, 2, 1, true)
	c.UnperpetuateObject(ctx, 2, false)
	c.PrepareGetObjectOrMetaBinary(ctx, datastore.PrepareGetParam{DataID: 1, PersistenceTarget: noSlot})
	c.GetPasswordInfos(ctx, []uint64{1, 2})
	c.ChangeMetas(ctx, []uint64{1, 2}, []datastore.ChangeMetaParam{change, change}, false, true)
	c.ChangeMetas(ctx, []uint64{1, 2}, []datastore.ChangeMetaParam{change, change}, true, false)
	c.RateObjects(ctx, tgt, rates, true, true)
	c.PostMetaBinaryWithDataID(ctx, 900, post("chosen", 0))
	c.PostMetaBinariesWithDataID(ctx, []uint64{901, 902}, posts, false)
	c.RateObjectWithPosting(ctx, tgt[0], rates[0], posts[0], true)
	c.RateObjectsWithPosting(ctx, tgt, rates, posts, false, true)
	c.GetObjectInfos(ctx, []uint64{1, 2})
	for _, s := range rec.seen {
		f.Add(uint8(s.method), true, s.params)
	}
	f.Fuzz(func(t *testing.T, method uint8, header bool, params []byte) {
		msg, err := (&rmc.Request{Protocol: datastore.ProtocolID, CallID: 1, Method: uint32(method % 48), Params: params}).Append(nil)
		if err != nil {
			return
		}
		out, err := rmc.Dispatch(ctx, fx.srv, &rmc.Peer{PID: 1000, Settings: types.Settings{StructureHeader: header}}, msg, nil, nil)
		if err != nil || len(out) == 0 {
			t.Fatalf("no answer: %v", err)
		}
		if _, _, err := rmc.ParseResponse(out); err != nil {
			t.Fatalf("bad answer: %v", err)
		}
	})
}

type recorded struct {
	method uint32
	params []byte
}

// recorder keeps the calls a client makes and fails them.
type recorder struct{ seen []recorded }

func (r *recorder) Settings() types.Settings { return types.Settings{StructureHeader: true} }

func (r *recorder) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	r.seen = append(r.seen, recorded{method, append([]byte(nil), params...)})
	return nil, types.CoreNotImplemented
}

// FuzzParseS3Config feeds arbitrary strings to the S3 configuration parser:
// an error or a configuration with a bucket, a prefix without "..", an
// endpoint of host[:port] only, never a panic.
func FuzzParseS3Config(f *testing.F) {
	for _, seed := range []string{
		"s3://bodies?endpoint=http://127.0.0.1:9000&region=us-east-1&path-style=true",
		"s3://bodies/game1/?endpoint=https://s3.example.net&public-endpoint=https://cdn.example.net:8443&path-style=false",
		"s3://bodies?region=eu-central-1",
		"s3://ak:sk@bodies",
		"s3://b/../x?endpoint=http://x",
		"s3://%zz",
	} {
		f.Add(seed)
	}
	env := func(k string) string { return "x" }
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := datastore.ParseS3Config(spec, env)
		if err != nil {
			return
		}
		if c.Bucket == "" || strings.Contains(c.Prefix, "..") || strings.ContainsAny(c.Endpoint, "/?#") ||
			strings.ContainsAny(c.PublicEndpoint, "/?#") || c.AccessKey != "x" || c.Region == "" {
			t.Fatalf("%q: %+v", spec, c)
		}
	})
}
