package datastore_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/internal/s3test"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

func field(fields []datastore.KeyValue, name string) string {
	for _, kv := range fields {
		if kv.Key == name {
			return kv.Value
		}
	}
	return ""
}

// withField returns fields with one value replaced.
func withField(fields []datastore.KeyValue, name, value string) []datastore.KeyValue {
	out := slices.Clone(fields)
	for i := range out {
		if out[i].Key == name {
			out[i].Value = value
		}
	}
	return out
}

// TestS3Upload posts a body to the bucket through the presigned POST, as a
// console would (multipart/form-data: the form fields, then the file), and
// reads it back through the presigned GET; the S3 server refuses what the
// policy does not allow and Complete refuses what is not there.
func TestS3Upload(t *testing.T) {
	ctx := context.Background()
	f := newS3Fixture(t, t.TempDir())
	c := f.client(1001)
	p := post("x", datastore.PermissionEveryone)
	p.Size = 4
	info, err := c.PreparePostObject(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	// The bucket's URL and a POST policy for the upload's own staging key,
	// signed (AWS Signature Version 4); no gamewire token.
	key := field(info.FormFields, "key")
	if !strings.HasPrefix(info.URL, f.s3.Endpoint+"/"+f.bucket) || !strings.HasPrefix(key, "uploads/1/1/") || len(key) != len("uploads/1/1/")+32 ||
		field(info.FormFields, "x-amz-signature") == "" || field(info.FormFields, "x-amz-algorithm") != "AWS4-HMAC-SHA256" ||
		field(info.FormFields, "token") != "" || info.FormFields[0].Key != "key" {
		t.Fatalf("post info %+v", info)
	}
	policy, err := base64.StdEncoding.DecodeString(field(info.FormFields, "policy"))
	if err != nil || !strings.Contains(string(policy), `["content-length-range", 4, 4]`) || !strings.Contains(string(policy), `"$key","`+key+`"`) {
		t.Fatalf("policy %s %v", policy, err)
	}

	// Completing before the body came is refused.
	wantResult(t, c.CompletePostObject(ctx, info.DataID, true), types.DataStoreOperationNotAllowed)
	forged := base64.StdEncoding.EncodeToString(bytes.Replace(policy, []byte(`4, 4]`), []byte(`4, 9]`), 1))
	for _, tc := range []struct {
		name   string
		body   []byte
		fields []datastore.KeyValue
		want   string
	}{
		{"over the declared size", []byte("12345"), info.FormFields, "EntityTooLarge"},
		{"short of the declared size", []byte("123"), info.FormFields, "EntityTooSmall"},
		{"the readable key", []byte("1234"), withField(info.FormFields, "key", "1/1"), "Policy Condition failed"},
		{"a policy with another range", []byte("12345"), withField(info.FormFields, "policy", forged), "SignatureDoesNotMatch"},
	} {
		err := c.Upload(ctx, info.URL, tc.fields, tc.body)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v, want %s", tc.name, err, tc.want)
		}
		t.Logf("%s: %v", tc.name, err)
		if got := f.bodies(t); len(got) != 0 {
			t.Fatalf("%s: stored %v", tc.name, got)
		}
		wantResult(t, c.CompletePostObject(ctx, info.DataID, true), types.DataStoreOperationNotAllowed)
	}
	// gamewire's own endpoint takes no uploads when bodies are in a bucket.
	if err := c.Upload(ctx, f.srv.BaseURL+"/upload/"+key[len("uploads/1/1/"):], info.FormFields, []byte("1234")); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("upload to gamewire: %v", err)
	}

	// The right body: staged, then Complete moves it to the readable key.
	if err := c.Upload(ctx, info.URL, info.FormFields, []byte("1234")); err != nil {
		t.Fatal(err)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{key}) {
		t.Fatalf("staged %v", got)
	}
	if err := c.CompletePostObject(ctx, info.DataID, true); err != nil {
		t.Fatal(err)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{"1/1"}) {
		t.Fatalf("after complete %v", got)
	}
	g, err := c.PrepareGetObject(ctx, datastore.PrepareGetParam{DataID: info.DataID, PersistenceTarget: noSlot})
	if err != nil || !strings.HasPrefix(g.URL, f.s3.Endpoint+"/"+f.bucket+"/1/1?") || !strings.Contains(g.URL, "X-Amz-Signature=") {
		t.Fatalf("prepare get %+v %v", g, err)
	}
	if body, err := c.Download(ctx, g.URL, 10); err != nil || string(body) != "1234" {
		t.Fatalf("download %q %v", body, err)
	}
	if _, err := c.Download(ctx, strings.Replace(g.URL, "X-Amz-Signature=", "X-Amz-Signature=0", 1), 10); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("forged download: %v", err)
	}

	// The policy works until it expires, however often: a second POST
	// lands in the staging key, which nothing reads any more, and a second
	// Complete is refused.
	if err := c.Upload(ctx, info.URL, info.FormFields, []byte("abcd")); err != nil {
		t.Fatalf("second use: %v", err)
	}
	wantResult(t, c.CompletePostObject(ctx, info.DataID, true), types.DataStoreOperationNotAllowed)
	if _, body, err := c.Get(ctx, info.DataID, 0); err != nil || string(body) != "1234" {
		t.Fatalf("after a second use: %q %v", body, err)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{"1/1", key}) {
		t.Fatalf("after a second use %v", got)
	}
	// Deleting the object deletes its bodies, staged ones too.
	if err := c.DeleteObject(ctx, info.DataID, 0); err != nil {
		t.Fatal(err)
	}
	if got := f.bodies(t); len(got) != 0 {
		t.Fatalf("after delete %v", got)
	}
}

// TestS3Expiry checks the S3 server refuses a POST policy and a presigned
// GET after their expiry (the server's clock, real time here).
func TestS3Expiry(t *testing.T) {
	ctx := context.Background()
	f := newS3Fixture(t, t.TempDir())
	c := f.client(1001)
	id, err := c.Put(ctx, post("kept", datastore.PermissionEveryone), []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	f.srv.UploadTTL, f.srv.DownloadTTL = time.Second, time.Second
	g, err := c.PrepareGetObject(ctx, datastore.PrepareGetParam{DataID: id, PersistenceTarget: noSlot})
	if err != nil {
		t.Fatal(err)
	}
	p := post("late", datastore.PermissionEveryone)
	p.Size = 4
	info, err := c.PreparePostObject(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.UploadTTL, f.srv.DownloadTTL = 0, 0
	// A presigned GET's expiry counts from its X-Amz-Date, in whole seconds.
	time.Sleep(2100 * time.Millisecond)
	if err := c.Upload(ctx, info.URL, info.FormFields, []byte("1234")); err == nil || !strings.Contains(err.Error(), "xpired") {
		t.Fatalf("expired upload: %v", err)
	}
	wantResult(t, c.CompletePostObject(ctx, info.DataID, true), types.DataStoreOperationNotAllowed)
	if _, err := c.Download(ctx, g.URL, 10); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("expired download: %v", err)
	}
	// A new URL works.
	if _, body, err := c.Get(ctx, id, 0); err != nil || string(body) != "body" {
		t.Fatalf("with a new URL: %q %v", body, err)
	}
	// Giving up deletes the pending object.
	if err := c.CompletePostObject(ctx, info.DataID, false); err != nil {
		t.Fatal(err)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{"1/1"}) {
		t.Fatalf("bodies %v", got)
	}
}

// TestS3CompleteChecksSize stages a body of the wrong size behind the
// policy's back (as on storage that ignores content-length-range): Complete
// checks the size itself and refuses it.
func TestS3CompleteChecksSize(t *testing.T) {
	ctx := context.Background()
	f := newS3Fixture(t, t.TempDir())
	c := f.client(1001)
	p := post("x", datastore.PermissionEveryone)
	p.Size = 4
	info, err := c.PreparePostObject(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	key := field(info.FormFields, "key")
	if err := f.srv.Blobs.Put(ctx, key, strings.NewReader("123"), 3); err != nil {
		t.Fatal(err)
	}
	wantResult(t, c.CompletePostObject(ctx, info.DataID, true), types.DataStoreOperationNotAllowed)
	// S3Blobs.Put itself stores exactly the size it is told, or nothing.
	for _, tc := range []struct {
		body string
		want error
	}{{"12345", datastore.ErrTooLarge}, {"123", datastore.ErrTooShort}} {
		if err := f.srv.Blobs.Put(ctx, "9/1", strings.NewReader(tc.body), 4); !errors.Is(err, tc.want) {
			t.Fatalf("put %q: %v, want %v", tc.body, err, tc.want)
		}
	}
	if got := f.bodies(t); !slices.Equal(got, []string{key}) {
		t.Fatalf("bodies %v", got)
	}
	// The declared size under the same key completes.
	if err := f.srv.Blobs.Put(ctx, key, strings.NewReader("1234"), 4); err != nil {
		t.Fatal(err)
	}
	if err := c.CompletePostObject(ctx, info.DataID, true); err != nil {
		t.Fatal(err)
	}
	if _, body, err := c.Get(ctx, info.DataID, 0); err != nil || string(body) != "1234" {
		t.Fatalf("stored %q %v", body, err)
	}
}

// TestS3UpdateKeepsReadableBody checks a pending update does not touch the
// readable body, and of two updates prepared for one version only the
// first completed writes.
func TestS3UpdateKeepsReadableBody(t *testing.T) {
	ctx := context.Background()
	f := newS3Fixture(t, t.TempDir())
	owner, other := f.client(1001), f.client(1002)
	id, err := owner.Put(ctx, post("level", datastore.PermissionEveryone), []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	_, update, err := owner.GetPasswordInfo(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	a, err := owner.PrepareUpdateObject(ctx, id, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := other.PrepareUpdateObject(ctx, id, 5, update)
	if err != nil || a.Version != 2 || b.Version != 2 || field(a.FormFields, "key") == field(b.FormFields, "key") {
		t.Fatalf("prepare %+v %+v %v", a, b, err)
	}
	if err := other.Upload(ctx, b.URL, b.FormFields, []byte("other")); err != nil {
		t.Fatal(err)
	}
	if _, body, err := other.Get(ctx, id, 0); err != nil || string(body) != "one" {
		t.Fatalf("during the update: %q %v", body, err)
	}
	if err := other.CompleteUpdateObject(ctx, id, 2, true); err != nil {
		t.Fatal(err)
	}
	// The owner's upload for the same version comes too late: its body stays
	// staged, the readable one is untouched.
	if err := owner.Upload(ctx, a.URL, a.FormFields, []byte("two")); err != nil {
		t.Fatal(err)
	}
	wantResult(t, owner.CompleteUpdateObject(ctx, id, 2, true), types.DataStoreInvalidArgument)
	if mi, body, err := owner.Get(ctx, id, 0); err != nil || string(body) != "other" || mi.Size != 5 {
		t.Fatalf("after the update: %+v %q %v", mi, body, err)
	}
	// The other staged body stays until the object goes.
	if got := f.bodies(t); len(got) != 2 || got[0] != "1/2" || got[1] != field(a.FormFields, "key") {
		t.Fatalf("bodies %v", got)
	}
	if err := owner.DeleteObject(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if got := f.bodies(t); len(got) != 0 {
		t.Fatalf("after delete %v", got)
	}
}

// TestS3TwoNodes runs two DataStore servers on one store with their bodies
// in one bucket, as two secure nodes on two machines: an object posted
// through one is read through the other, updated through the other and
// deleted through the first. On SQLite the two servers share one store;
// on PostgreSQL each has its own pool on one database.
func TestS3TwoNodes(t *testing.T) {
	s3 := s3test.Start(t)
	t.Run("sqlite", func(t *testing.T) {
		st, _, err := accounts.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		testTwoNodes(t, s3, st.DataStore(), st.DataStore())
	})
	t.Run("postgresql", func(t *testing.T) {
		pg := pgtest.Start(t)
		dsn := pg.NewDatabase(t)
		var stores [2]datastore.Store
		for i := range stores {
			s, err := pgstore.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores[i] = s.DataStore()
		}
		testTwoNodes(t, s3, stores[0], stores[1])
	})
}

func testTwoNodes(t *testing.T, s3 *s3test.Server, a, b datastore.Store) {
	ctx := context.Background()
	bucket := s3.NewBucket(t)
	t.Setenv(datastore.EnvS3AccessKey, s3.AccessKey)
	t.Setenv(datastore.EnvS3SecretKey, s3.SecretKey)
	node := func(st datastore.Store) *datastore.Server {
		blobs, err := datastore.OpenBlobs(s3.Spec(bucket)+"&public-endpoint="+s3.Endpoint, "")
		if err != nil {
			t.Fatal(err)
		}
		srv := &datastore.Server{Store: st, Blobs: blobs}
		// No HTTP endpoint at all: bodies are the bucket's business.
		return srv
	}
	one, two := node(a), node(b)
	client := func(srv *datastore.Server, pid types.PID) *datastore.Client {
		return &datastore.Client{C: &rmc.InMemory{Handler: srv, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true}}}}
	}
	id, err := client(one, 1001).Put(ctx, post("shared", datastore.PermissionEveryone), []byte("posted on one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, body, err := client(two, 1002).Get(ctx, id, 0); err != nil || string(body) != "posted on one" {
		t.Fatalf("read on two: %q %v", body, err)
	}
	// Prepared on one, completed on two.
	info, err := client(one, 1001).PrepareUpdateObject(ctx, id, 13, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := client(one, 1001).Upload(ctx, info.URL, info.FormFields, []byte("updated by 2!")); err != nil {
		t.Fatal(err)
	}
	if err := client(two, 1001).CompleteUpdateObject(ctx, id, info.Version, true); err != nil {
		t.Fatal(err)
	}
	if _, body, err := client(one, 1003).Get(ctx, id, 0); err != nil || string(body) != "updated by 2!" {
		t.Fatalf("read on one: %q %v", body, err)
	}
	if err := client(two, 1001).DeleteObject(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	left, err := one.Blobs.(datastore.Presigner).List(ctx, "", 10)
	if err != nil || len(left) != 0 {
		t.Fatalf("left in the bucket: %v %v", left, err)
	}
	// Neither node serves bodies itself.
	ts := httptest.NewServer(one.HTTPHandler())
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/upload/x", "multipart/form-data; boundary=x", strings.NewReader("--x--"))
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("upload to a node: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestParseS3Config(t *testing.T) {
	env := map[string]string{"GAMEWIRE_S3_ACCESS_KEY": "ak", "GAMEWIRE_S3_SECRET_KEY": "sk"}
	aws := map[string]string{"AWS_ACCESS_KEY_ID": "aws-ak", "AWS_SECRET_ACCESS_KEY": "aws-sk", "AWS_SESSION_TOKEN": "tok"}
	for _, tc := range []struct {
		spec string
		env  map[string]string
		want datastore.S3Config
		err  string
	}{
		{"s3://bodies?endpoint=http://127.0.0.1:9000", env,
			datastore.S3Config{Endpoint: "127.0.0.1:9000", Bucket: "bodies", Region: "us-east-1", PathStyle: true, AccessKey: "ak", SecretKey: "sk"}, ""},
		{"s3://bodies/game1/?endpoint=https://s3.example.net&public-endpoint=https://cdn.example.net:8443&region=eu-west-3&path-style=false", env,
			datastore.S3Config{Endpoint: "s3.example.net", Secure: true, PublicEndpoint: "cdn.example.net:8443", PublicSecure: true, Bucket: "bodies",
				Prefix: "game1/", Region: "eu-west-3", AccessKey: "ak", SecretKey: "sk"}, ""},
		{"s3://bodies?region=eu-central-1", aws,
			datastore.S3Config{Secure: true, Bucket: "bodies", Region: "eu-central-1", AccessKey: "aws-ak", SecretKey: "aws-sk", SessionToken: "tok"}, ""},
		{"s3://bodies", nil, datastore.S3Config{}, "no credentials"},
		{"s3://ak:sk@bodies", env, datastore.S3Config{}, "not in the URL"},
		{"http://bodies", env, datastore.S3Config{}, "not scheme"},
		{"s3://?endpoint=http://x", env, datastore.S3Config{}, "no bucket"},
		{"s3://b?endpoint=x:9000", env, datastore.S3Config{}, "want http://"},
		{"s3://b?endpoint=http://x/path", env, datastore.S3Config{}, "want http://"},
		{"s3://b?endpoint=http://ak:sk@x", env, datastore.S3Config{}, "want http://"},
		{"s3://b?path-style=maybe&endpoint=http://x", env, datastore.S3Config{}, "path-style"},
		{"s3://b?public-endpoint=http://x", env, datastore.S3Config{}, "needs endpoint"},
		{"s3://b?endpoitn=http://x", env, datastore.S3Config{}, "unknown parameter"},
		{"s3://b/../x?endpoint=http://x", env, datastore.S3Config{}, "has .."},
		{"s3://ak:s k@b", env, datastore.S3Config{}, "REDACTED"},
	} {
		got, err := datastore.ParseS3Config(tc.spec, func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "sk@") || strings.Contains(err.Error(), "s k@") {
				t.Errorf("%s: %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s:\n got %+v %v\nwant %+v", tc.spec, got, err, tc.want)
		}
	}
	// Without a spec, the directory.
	if b, err := datastore.OpenBlobs("", "/srv/gamewire/datastore"); err != nil || b != (datastore.DirBlobs{Dir: "/srv/gamewire/datastore"}) {
		t.Fatalf("OpenBlobs without a spec: %#v %v", b, err)
	}
}
