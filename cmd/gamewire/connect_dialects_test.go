package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/hyperscape"
)

// startEcho runs an echo server on loopback with the configuration the
// serve flags produce.
func startEcho(t *testing.T, f prudpFlags) string {
	t.Helper()
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &prudp.Server{Config: cfg, Handler: prudp.EchoHandler}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return pc.LocalAddr().String()
}

func TestConnectQuazalCLI(t *testing.T) {
	for _, v := range []struct{ checksum, rc4 string }{{"1", "per-packet"}, {"4", "stream"}} {
		t.Run(v.checksum+"/"+v.rc4, func(t *testing.T) {
			f := prudpFlags{dialect: "quazal", accessKey: "8dtRv2oj", vport: 1, rc4: v.rc4, quazalSigs: "connection"}
			f.checksum = int(v.checksum[0] - '0')
			addr := startEcho(t, f)
			out, err := runCLI(t, "connect", addr, "--dialect", "quazal", "--access-key", "8dtRv2oj",
				"--checksum", v.checksum, "--rc4", v.rc4, "--count", "5", "--size", "2000")
			if err != nil || !strings.Contains(out, "quazal "+addr+": 5/5 echoed") {
				t.Fatalf("connect: %v\n%s", err, out)
			}
		})
	}
	if _, err := runCLI(t, "connect", "127.0.0.1:9", "--dialect", "quazal", "--checksum", "2"); err == nil || !strings.Contains(err.Error(), "--checksum 2") {
		t.Fatalf("--checksum 2: %v", err)
	}
	if _, err := runCLI(t, "connect", "127.0.0.1:9", "--dialect", "quazal", "--rc4", "both"); err == nil || !strings.Contains(err.Error(), "--rc4") {
		t.Fatalf("--rc4 both: %v", err)
	}
}

func TestConnectHyperscapeCLI(t *testing.T) {
	dir := t.TempDir()
	k, err := hyperscape.GenerateCertKey()
	if err != nil {
		t.Fatal(err)
	}
	priv, pub, err := hyperscape.WriteKeyPair(dir, k)
	if err != nil {
		t.Fatal(err)
	}
	addr := startEcho(t, prudpFlags{dialect: "hyperscape", vport: 1, certKey: priv})
	out, err := runCLI(t, "connect", addr, "--dialect", "hyperscape", "--cert-pub", pub, "--count", "5", "--size", "3000")
	if err != nil || !strings.Contains(out, "hyperscape "+addr+": 5/5 echoed") {
		t.Fatalf("connect: %v\n%s", err, out)
	}
	// Another key pair's public key: the handshake is refused, saying why.
	other, _ := hyperscape.GenerateCertKey()
	_, otherPub, err := hyperscape.WriteKeyPair(filepath.Join(dir, "other"), other)
	if err != nil {
		t.Fatal(err)
	}
	_, err = runCLI(t, "connect", addr, "--dialect", "hyperscape", "--cert-pub", otherPub, "--count", "1", "--timeout", "10s")
	if err == nil || !strings.Contains(err.Error(), "signature does not verify") {
		t.Fatalf("wrong certification key: %v", err)
	}
	if _, err := runCLI(t, "connect", addr, "--dialect", "hyperscape"); err == nil || !strings.Contains(err.Error(), "--cert-pub") {
		t.Fatalf("no --cert-pub: %v", err)
	}
	if _, err := runCLI(t, "serve", "--echo", "--dialect", "hyperscape", "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "--cert-key") {
		t.Fatalf("serve without --cert-key: %v", err)
	}
}

// TestLoginOverQuazalCLI runs the NEX authentication and secure servers
// and the login flow with the configuration `--dialect quazal` gives serve
// and login: Quazal Kerberos settings and the OldRVSec stream type must reach
// the ticket server and the secure station URL, or the secure connection fails.
func TestLoginOverQuazalCLI(t *testing.T) {
	f := prudpFlags{dialect: "quazal", accessKey: defaultAccessKey, vport: 1, checksum: 4, rc4: "per-packet", quazalSigs: "connection"}
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	m := new(auth.Memory)
	m.Add(auth.PIDGuest, "guest", auth.GuestPassword)
	m.Add(2, "Quazal Rendez-Vous", "secure-server-secret")
	srv := &nex.Server{Config: cfg, Accounts: m}
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(a, b) }()
	defer func() { srv.Close(); <-done }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, err := nex.Login(ctx, a.LocalAddr().String(), nex.LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer ccancel()
		_ = sess.Close(cctx)
	}()
	if sess.PID != auth.PIDGuest || sess.SecureURL.String() == "" || !strings.Contains(sess.SecureURL.String(), "stream=3") {
		t.Fatalf("session: pid %d, secure url %s", sess.PID, sess.SecureURL)
	}
}

// TestConnectNoEncryptionCLI: serve and connect with --no-encryption talk
// (prudp's TestNoEncryption checks the wire). An echo cannot tell a
// mismatch: RC4 is its own inverse, so an encrypting client gets its
// ciphertext back from a plain server and decrypts it again.
func TestConnectNoEncryptionCLI(t *testing.T) {
	addr := startEcho(t, prudpFlags{dialect: "nex-v1", accessKey: defaultAccessKey, vport: 1, noEncryption: true})
	out, err := runCLI(t, "connect", addr, "--no-encryption", "--count", "5", "--size", "3000")
	if err != nil || !strings.Contains(out, "5/5 echoed") {
		t.Fatalf("connect --no-encryption: %v\n%s", err, out)
	}
}
