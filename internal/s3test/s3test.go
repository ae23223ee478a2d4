// Package s3test starts a real, throwaway S3-compatible server for tests:
// versitygw (github.com/versity/versitygw, Apache-2.0), an S3 gateway written
// in Go, with its posix backend on a temporary directory, listening on
// 127.0.0.1 only, stopped and removed when the test ends. No mock: it checks
// AWS Signature Version 4 on requests and presigned URLs, and evaluates POST
// policies (signature, expiration, key, content-length-range) as AWS S3
// does, from release v1.6.0 on.
//
// The binary is found as $GAMEWIRE_VERSITYGW, versitygw on PATH, or
// $HOME/.cache/gamewire-s3/versitygw, where .ci/run installs it with
//
//	GOBIN=$HOME/.cache/gamewire-s3 go install github.com/versity/versitygw/cmd/versitygw@v1.7.0
//
// When it is missing, Start skips the test with that command, except under
// CI (CI=true), where the test fails: CI installs it, so a missing server
// there is a broken machine, not a reason to pass.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Version is the versitygw release .ci/run installs.
const Version = "v1.7.0"

// InstallCommand installs the server where BinPath looks.
const InstallCommand = "GOBIN=$HOME/.cache/gamewire-s3 go install github.com/versity/versitygw/cmd/versitygw@" + Version

// Server is a running throwaway S3 server.
type Server struct {
	// Endpoint is "http://127.0.0.1:PORT".
	Endpoint string
	// Region, AccessKey and SecretKey are what it accepts.
	Region, AccessKey, SecretKey string
	// Dir holds the buckets (a directory each) and the server's log.
	Dir string

	client *minio.Client
}

var bucketSeq atomic.Uint64

// BinPath returns the versitygw binary, or an error saying how to install it.
func BinPath() (string, error) {
	if p := os.Getenv("GAMEWIRE_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("GAMEWIRE_VERSITYGW=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "gamewire-s3", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("versitygw is not installed (install it with: " + InstallCommand + ")")
}

// Start starts a server for tb and stops it when tb ends. It skips tb when
// versitygw is missing, unless CI=true.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := BinPath()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("s3test: %v (CI installs it: .ci/run)", err)
		}
		tb.Skipf("s3test: %v; skipping", err)
	}
	dir, err := os.MkdirTemp("", "gamewire-s3-")
	if err != nil {
		tb.Fatalf("s3test: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	root := filepath.Join(dir, "buckets")
	if err := os.Mkdir(root, 0o700); err != nil {
		tb.Fatalf("s3test: %v", err)
	}
	s := &Server{Region: "us-east-1", AccessKey: "gamewire-test", SecretKey: "gamewire-test-secret-key", Dir: dir}
	// A port picked by the kernel, then handed to the server: another
	// process may take it in between, so a server that does not come up
	// is tried again on another port.
	var lastErr error
	for try := 0; try < 3; try++ {
		if lastErr = s.start(tb, bin, root); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		tb.Fatalf("s3test: %v\n%s", lastErr, log)
	}
	s.client, err = minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: s.Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		tb.Fatalf("s3test: %v", err)
	}
	return s
}

func (s *Server) start(tb testing.TB, bin, root string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	log, err := os.Create(filepath.Join(s.Dir, "server.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(bin, "--port", addr, "--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
		"--quiet", "posix", root)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = cleanEnv()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	// Up when it answers HTTP (an anonymous request: 403).
	deadline := time.Now().Add(30 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("versitygw on %s exited: %v", addr, err)
		default:
		}
		resp, err := hc.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
			if strings.Contains(resp.Header.Get("Server"), "VERSITYGW") {
				break
			}
			stop()
			return fmt.Errorf("something else answers on %s", addr)
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("versitygw on %s did not answer within 30s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Endpoint = "http://" + addr
	tb.Cleanup(stop)
	return nil
}

// cleanEnv is the environment without the variables versitygw reads its
// configuration from, so a developer's settings do not change the server.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "VGW_") || strings.HasPrefix(name, "ROOT_") || name == "LOGFILE" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// NewBucket creates an empty bucket and returns its name.
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("gw-%d-%d", os.Getpid(), bucketSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.client.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		tb.Fatalf("s3test: create bucket %s: %v", name, err)
	}
	return name
}

// Env returns the credentials as the environment variables gamewire reads
// (GAMEWIRE_S3_ACCESS_KEY, GAMEWIRE_S3_SECRET_KEY), for a getenv function.
func (s *Server) Env() func(string) string {
	return func(name string) string {
		switch name {
		case "GAMEWIRE_S3_ACCESS_KEY":
			return s.AccessKey
		case "GAMEWIRE_S3_SECRET_KEY":
			return s.SecretKey
		}
		return ""
	}
}

// Spec returns the s3:// string of a bucket on the server.
func (s *Server) Spec(bucket string) string {
	return fmt.Sprintf("s3://%s?endpoint=%s&region=%s&path-style=true", bucket, s.Endpoint, s.Region)
}
