package s3test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestStart starts a server, stores an object in a new bucket and reads it
// back, and checks the server refuses a request without a signature.
func TestStart(t *testing.T) {
	s := Start(t)
	bucket := s.NewBucket(t)
	ctx := context.Background()
	if _, err := s.client.PutObject(ctx, bucket, "a/b", bytes.NewReader([]byte("body")), 4, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := s.client.GetObject(ctx, bucket, "a/b", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if b, err := io.ReadAll(o); err != nil || string(b) != "body" {
		t.Fatalf("read back %q %v", b, err)
	}
	resp, err := http.Get(s.Endpoint + "/" + bucket + "/a/b")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unsigned GET: %s", resp.Status)
	}
	// A presigned GET works, and not once it has expired.
	u, err := s.client.PresignedGetObject(ctx, bucket, "a/b", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(u.String()); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned GET: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if resp, err := http.Get(strings.Replace(u.String(), "X-Amz-Signature=", "X-Amz-Signature=0", 1)); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged presigned GET: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}
