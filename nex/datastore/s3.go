package datastore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Presigner is Blobs on object storage that clients reach themselves: the
// Server hands out presigned URLs instead of its own, so bodies never pass
// through gamewire, and every node that shares the bucket serves the same
// bodies (docs/nex.md "Bodies"). S3Blobs implements it.
type Presigner interface {
	Blobs
	// PresignPost returns the URL and form fields of a multipart/form-data
	// POST that stores exactly size bytes under key, accepted by the storage
	// until ttl has passed.
	PresignPost(ctx context.Context, key string, size int64, ttl time.Duration) (string, []KeyValue, error)
	// PresignGet returns a URL that reads the body under key until ttl has
	// passed.
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	// Stat describes the body under key, or returns ErrNotFound.
	Stat(ctx context.Context, key string) (BlobInfo, error)
	// List describes at most max bodies whose keys start with prefix.
	List(ctx context.Context, prefix string, max int) ([]BlobInfo, error)
	// Copy copies the body under from to the key to, inside the storage.
	Copy(ctx context.Context, from, to string) error
}

// BlobInfo describes a stored body.
type BlobInfo struct {
	Key      string
	Size     int64
	Modified time.Time // when the storage took it, by the storage's clock
}

// S3Config says where S3Blobs keeps bodies. ParseS3Config reads it from one
// URL-like string.
type S3Config struct {
	// Endpoint is the server's host[:port]; empty: AWS S3 in Region.
	Endpoint string
	// Secure is HTTPS (true) or plain HTTP to Endpoint.
	Secure bool
	// PublicEndpoint and PublicSecure, when PublicEndpoint is set, are the
	// address clients reach the server at, if it differs from the one
	// gamewire uses (a compose network name, say): presigned URLs are
	// signed for that host.
	PublicEndpoint string
	PublicSecure   bool
	Bucket         string
	// Prefix is put before every key ("game1/"), so several servers can
	// share a bucket.
	Prefix string
	// Region is the bucket's region; default "us-east-1".
	Region string
	// PathStyle addresses the bucket in the path (http://host/bucket/key),
	// as most self-hosted servers want; false lets the client choose
	// (virtual-host style for AWS).
	PathStyle bool
	// AccessKey, SecretKey and SessionToken are the credentials; never part
	// of the string ParseS3Config reads.
	AccessKey, SecretKey, SessionToken string
}

// Environment variables ParseS3Config reads the credentials from: the
// GAMEWIRE_S3_ ones, else the AWS ones.
const (
	EnvS3AccessKey = "GAMEWIRE_S3_ACCESS_KEY"
	EnvS3SecretKey = "GAMEWIRE_S3_SECRET_KEY"
)

// ParseS3Config reads an S3 configuration from
//
//	s3://BUCKET[/PREFIX]?endpoint=http://127.0.0.1:9000&region=us-east-1&path-style=true
//
// Parameters: endpoint (http:// or https:// and host[:port]; absent: AWS S3),
// public-endpoint (where clients reach it, if elsewhere), region (default
// us-east-1), path-style (true or false; default true with an endpoint,
// false without). The credentials come from the environment variables
// GAMEWIRE_S3_ACCESS_KEY and GAMEWIRE_S3_SECRET_KEY, else AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; getenv reads them (nil:
// os.Getenv). A key or secret in the string itself is refused: it would end
// up in process lists and logs.
func ParseS3Config(spec string, getenv func(string) string) (S3Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	fail := func(format string, a ...any) (S3Config, error) {
		return S3Config{}, fmt.Errorf("datastore: S3 storage: "+format, a...)
	}
	u, err := url.Parse(spec)
	if err != nil {
		return fail("%s", redact(err.Error()))
	}
	if u.Scheme != "s3" {
		return fail("want s3://BUCKET?endpoint=..., not scheme %q", u.Scheme)
	}
	if u.User != nil {
		return fail("credentials go in %s and %s (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), not in the URL", EnvS3AccessKey, EnvS3SecretKey)
	}
	c := S3Config{Bucket: u.Host, Region: "us-east-1"}
	if c.Bucket == "" {
		return fail("no bucket (s3://BUCKET...)")
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if strings.Contains(p, "..") {
			return fail("prefix %q has ..", p)
		}
		c.Prefix = p + "/"
	}
	q := u.Query()
	for k := range q {
		if !slices.Contains([]string{"endpoint", "public-endpoint", "region", "path-style"}, k) {
			return fail("unknown parameter %q (endpoint, public-endpoint, region, path-style)", k)
		}
	}
	endpoint := func(name string) (string, bool, error) {
		v := q.Get(name)
		if v == "" {
			return "", false, nil
		}
		e, err := url.Parse(v)
		if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || e.User != nil || (e.Path != "" && e.Path != "/") || e.RawQuery != "" {
			return "", false, fmt.Errorf("%s %q: want http://HOST[:PORT] or https://HOST[:PORT]", name, redact(v))
		}
		return e.Host, e.Scheme == "https", nil
	}
	if c.Endpoint, c.Secure, err = endpoint("endpoint"); err != nil {
		return fail("%v", err)
	}
	if c.PublicEndpoint, c.PublicSecure, err = endpoint("public-endpoint"); err != nil {
		return fail("%v", err)
	}
	if c.Endpoint == "" {
		if c.PublicEndpoint != "" {
			return fail("public-endpoint needs endpoint")
		}
		c.Secure = true
	}
	if r := q.Get("region"); r != "" {
		c.Region = r
	}
	c.PathStyle = c.Endpoint != ""
	if v := q.Get("path-style"); v != "" {
		if c.PathStyle, err = strconv.ParseBool(v); err != nil {
			return fail("path-style %q: want true or false", v)
		}
	}
	c.AccessKey, c.SecretKey = getenv(EnvS3AccessKey), getenv(EnvS3SecretKey)
	if c.AccessKey == "" && c.SecretKey == "" {
		c.AccessKey, c.SecretKey, c.SessionToken = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return fail("no credentials: set %s and %s (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", EnvS3AccessKey, EnvS3SecretKey)
	}
	return c, nil
}

// userinfo matches the USER:PASSWORD@ of a URL, which error messages leave out.
var userinfo = regexp.MustCompile(`//[^/?#]*@`)

func redact(s string) string { return userinfo.ReplaceAllString(s, "//REDACTED@") }

// OpenBlobs opens where DataStore bodies are kept: the directory
// dataDir (DirBlobs) when spec is empty, an S3 bucket (S3Blobs, see
// ParseS3Config) when spec is an s3:// URL. It does not reach the bucket:
// S3Blobs.Check does.
func OpenBlobs(spec, dataDir string) (Blobs, error) {
	if spec == "" {
		if dataDir == "" {
			return nil, errors.New("datastore: no directory for bodies")
		}
		return DirBlobs{Dir: dataDir}, nil
	}
	c, err := ParseS3Config(spec, nil)
	if err != nil {
		return nil, err
	}
	return NewS3Blobs(c)
}

// S3Blobs keeps bodies in an S3 bucket (AWS S3, MinIO, Ceph RGW, versitygw,
// Garage, ...). It implements Presigner: clients upload with presigned POST
// policies and download with presigned GETs (AWS Signature Version 4).
type S3Blobs struct {
	cfg     S3Config
	client  *minio.Client // gamewire's own requests
	presign *minio.Client // signs the URLs clients get (PublicEndpoint)
}

var _ Presigner = (*S3Blobs)(nil)

// NewS3Blobs returns S3Blobs for c. It does not reach the server.
func NewS3Blobs(c S3Config) (*S3Blobs, error) {
	if c.Bucket == "" {
		return nil, errors.New("datastore: S3 storage: no bucket")
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = "s3." + c.Region + ".amazonaws.com"
	}
	open := func(host string, secure bool) (*minio.Client, error) {
		opts := &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, c.SessionToken), Secure: secure,
			Region: c.Region, BucketLookup: minio.BucketLookupAuto}
		if c.PathStyle {
			opts.BucketLookup = minio.BucketLookupPath
		}
		cl, err := minio.New(host, opts)
		if err != nil {
			return nil, fmt.Errorf("datastore: S3 storage at %s: %w", host, err)
		}
		return cl, nil
	}
	b := &S3Blobs{cfg: c}
	var err error
	if b.client, err = open(endpoint, c.Secure); err != nil {
		return nil, err
	}
	b.presign = b.client
	if c.PublicEndpoint != "" {
		if b.presign, err = open(c.PublicEndpoint, c.PublicSecure); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Config returns the configuration b was made with.
func (b *S3Blobs) Config() S3Config { return b.cfg }

// Check reaches the server and checks the bucket is there.
func (b *S3Blobs) Check(ctx context.Context) error {
	ok, err := b.client.BucketExists(ctx, b.cfg.Bucket)
	if err != nil {
		return fmt.Errorf("datastore: S3 bucket %s at %s: %w", b.cfg.Bucket, b.client.EndpointURL().Host, err)
	}
	if !ok {
		return fmt.Errorf("datastore: S3 bucket %s at %s does not exist", b.cfg.Bucket, b.client.EndpointURL().Host)
	}
	return nil
}

func (b *S3Blobs) key(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") || strings.ContainsRune(key, '\\') {
		return "", fmt.Errorf("datastore: bad body key %q", key)
	}
	return b.cfg.Prefix + key, nil
}

// s3Error maps a missing object to ErrNotFound.
func s3Error(what, key string, err error) error {
	if r := minio.ToErrorResponse(err); r.Code == "NoSuchKey" || (r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket") {
		return fmt.Errorf("%w: body %s", ErrNotFound, key)
	}
	return fmt.Errorf("datastore: S3 %s %s: %w", what, key, err)
}

// Put implements Blobs: exactly size bytes from r, or nothing.
func (b *S3Blobs) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	k, err := b.key(key)
	if err != nil {
		return err
	}
	er := &exactReader{r: r, left: size}
	_, err = b.client.PutObject(ctx, b.cfg.Bucket, k, er, size, minio.PutObjectOptions{ContentType: "application/octet-stream",
		DisableMultipart: true})
	if er.short {
		if err == nil {
			_ = b.Delete(context.WithoutCancel(ctx), key)
		}
		return fmt.Errorf("%w: %d bytes of the %d declared", ErrTooShort, size-er.left, size)
	}
	if err != nil {
		return fmt.Errorf("datastore: S3 put %s: %w", key, err)
	}
	// One byte more than declared tells an oversized body from an exact one.
	if n, _ := io.ReadFull(r, make([]byte, 1)); n > 0 {
		_ = b.Delete(context.WithoutCancel(ctx), key)
		return fmt.Errorf("%w: more than the %d bytes declared", ErrTooLarge, size)
	}
	return nil
}

// exactReader gives at most left bytes and notes a body that ends early.
type exactReader struct {
	r     io.Reader
	left  int64
	short bool
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		e.short = true
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// Open implements Blobs.
func (b *S3Blobs) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	k, err := b.key(key)
	if err != nil {
		return nil, 0, err
	}
	o, err := b.client.GetObject(ctx, b.cfg.Bucket, k, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, s3Error("get", key, err)
	}
	st, err := o.Stat()
	if err != nil {
		o.Close()
		return nil, 0, s3Error("get", key, err)
	}
	return o, st.Size, nil
}

// Delete implements Blobs.
func (b *S3Blobs) Delete(ctx context.Context, key string) error {
	k, err := b.key(key)
	if err != nil {
		return err
	}
	if err := b.client.RemoveObject(ctx, b.cfg.Bucket, k, minio.RemoveObjectOptions{}); err != nil {
		if errors.Is(s3Error("delete", key, err), ErrNotFound) {
			return nil
		}
		return s3Error("delete", key, err)
	}
	return nil
}

// PresignPost implements Presigner: a POST policy that binds the bucket, the
// key and the body's length to exactly size bytes (content-length-range), as
// Nintendo's servers handed out for their S3 buckets.
func (b *S3Blobs) PresignPost(ctx context.Context, key string, size int64, ttl time.Duration) (string, []KeyValue, error) {
	k, err := b.key(key)
	if err != nil {
		return "", nil, err
	}
	p := minio.NewPostPolicy()
	// A policy's range cannot be 0..0; Complete checks an empty body's size.
	err = errors.Join(p.SetBucket(b.cfg.Bucket), p.SetKey(k), p.SetExpires(time.Now().UTC().Add(ttl)),
		p.SetContentLengthRange(size, max(size, 1)))
	if err != nil {
		return "", nil, fmt.Errorf("datastore: S3 post policy for %s: %w", key, err)
	}
	u, form, err := b.presign.PresignedPostPolicy(ctx, p)
	if err != nil {
		return "", nil, fmt.Errorf("datastore: S3 post policy for %s: %w", key, err)
	}
	// The key first (S3 wants it before the file; order is otherwise free),
	// then the rest in a fixed order.
	names := make([]string, 0, len(form))
	for n := range form {
		if n != "key" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	fields := []KeyValue{{"key", form["key"]}}
	for _, n := range names {
		fields = append(fields, KeyValue{n, form[n]})
	}
	return u.String(), fields, nil
}

// PresignGet implements Presigner.
func (b *S3Blobs) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	k, err := b.key(key)
	if err != nil {
		return "", err
	}
	u, err := b.presign.PresignedGetObject(ctx, b.cfg.Bucket, k, ttl, nil)
	if err != nil {
		return "", fmt.Errorf("datastore: S3 presigned GET of %s: %w", key, err)
	}
	return u.String(), nil
}

// Stat implements Presigner (a HEAD request).
func (b *S3Blobs) Stat(ctx context.Context, key string) (BlobInfo, error) {
	k, err := b.key(key)
	if err != nil {
		return BlobInfo{}, err
	}
	st, err := b.client.StatObject(ctx, b.cfg.Bucket, k, minio.StatObjectOptions{})
	if err != nil {
		return BlobInfo{}, s3Error("stat", key, err)
	}
	return BlobInfo{Key: key, Size: st.Size, Modified: st.LastModified}, nil
}

// List implements Presigner.
func (b *S3Blobs) List(ctx context.Context, prefix string, max int) ([]BlobInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out []BlobInfo
	for o := range b.client.ListObjects(ctx, b.cfg.Bucket, minio.ListObjectsOptions{Prefix: b.cfg.Prefix + prefix, Recursive: true, MaxKeys: max}) {
		if o.Err != nil {
			return nil, fmt.Errorf("datastore: S3 list %s: %w", prefix, o.Err)
		}
		out = append(out, BlobInfo{Key: strings.TrimPrefix(o.Key, b.cfg.Prefix), Size: o.Size, Modified: o.LastModified})
		if len(out) == max {
			break
		}
	}
	return out, nil
}

// Copy implements Presigner (a server-side copy: the body does not pass
// through gamewire).
func (b *S3Blobs) Copy(ctx context.Context, from, to string) error {
	f, err := b.key(from)
	if err != nil {
		return err
	}
	t, err := b.key(to)
	if err != nil {
		return err
	}
	if _, err := b.client.CopyObject(ctx, minio.CopyDestOptions{Bucket: b.cfg.Bucket, Object: t},
		minio.CopySrcOptions{Bucket: b.cfg.Bucket, Object: f}); err != nil {
		return s3Error("copy "+from+" to", to, err)
	}
	return nil
}
