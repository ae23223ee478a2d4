package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/lite"
)

// syncWriter collects a command's output while it runs.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func freeTCPAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeLiteCLI: `serve --dialect nex-lite --tls-cert --tls-key --echo`
// serves wss:// and tls:// on ports 1 and 2; a client echoes over both and a
// wrong access key is refused (and said so on stderr).
func TestServeLiteCLI(t *testing.T) {
	srvTLS, roots, err := lite.SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := writePEM(certFile, keyFile, srvTLS.Certificates[0]); err != nil {
		t.Fatal(err)
	}
	addr := freeTCPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, "serve", "--dialect", "nex-lite", "--listen", addr, "--tls-cert", certFile,
			"--tls-key", keyFile, "--access-key", "6f599f81", "--echo")
	}()
	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer dcancel()
	var c *prudp.Conn
	for c == nil {
		c, err = lite.Dial(dctx, "wss://"+addr+"/", &prudp.Config{Dialect: prudp.NEXLite, AccessKey: "6f599f81", Port: 2},
			&lite.Config{TLS: &tls.Config{RootCAs: roots}})
		if err != nil && dctx.Err() != nil {
			t.Fatalf("dial: %v\n%s", err, out)
		}
		if c == nil {
			time.Sleep(20 * time.Millisecond) // serve is still starting
		}
	}
	rep, err := prudp.EchoProbe(dctx, c, 0, 5, 3000)
	if err != nil || rep.Received != 5 {
		t.Fatalf("echo: %v, %v", rep, err)
	}
	c.Close(dctx)
	bctx, bcancel := context.WithTimeout(context.Background(), time.Second)
	defer bcancel()
	if _, err := lite.Dial(bctx, "tls://"+addr, &prudp.Config{Dialect: prudp.NEXLite, AccessKey: "wrong", Port: 1},
		&lite.Config{TLS: &tls.Config{RootCAs: roots}}); err == nil {
		t.Error("a client with the wrong access key connected")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, out)
	}
	for _, want := range []string{"serving PRUDP nex-lite echo on wss://" + addr, "bad Lite signature", "port 2: served 1 connections"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve output lacks %q:\n%s", want, out)
		}
	}
}

// TestConnectLiteCLI: `connect ws://... --dialect nex-lite` against a Lite echo server.
func TestConnectLiteCLI(t *testing.T) {
	l, err := lite.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := &prudp.Server{Config: prudp.Config{Dialect: prudp.NEXLite, AccessKey: "6f599f81", Port: 1}}
	go srv.Serve(l.Port(1))
	defer srv.Close()
	out := &syncWriter{}
	err = runCLIContext(t, context.Background(), out, "connect", "ws://"+l.Addr().String()+"/", "--dialect", "nex-lite",
		"--access-key", "6f599f81", "--count", "7", "--size", "2000")
	if err != nil || !strings.Contains(out.String(), "7/7 echoed") {
		t.Fatalf("connect: %v\n%s", err, out)
	}
	err = runCLIContext(t, context.Background(), out, "connect", "127.0.0.1:1", "--dialect", "nex-lite")
	if err == nil || !strings.Contains(err.Error(), "URL") {
		t.Errorf("nex-lite without a URL: %v", err)
	}
	err = runCLIContext(t, context.Background(), out, "serve", "--dialect", "nex-lite", "--tls-cert", "cert.pem")
	if err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("serve nex-lite with --tls-cert but no --tls-key: %v", err)
	}
}

func writePEM(certFile, keyFile string, cert tls.Certificate) error {
	certPEM, keyPEM, err := lite.EncodePEM(cert)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyFile, keyPEM, 0o600)
}
