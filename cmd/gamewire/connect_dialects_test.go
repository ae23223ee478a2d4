package main

import (
	"bytes"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/hyperscape"
)

// runConnectCLI runs gamewire with args and restores the connect and serve
// flags afterwards.
func runConnectCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	defer func() {
		rootCmd.SetArgs(nil)
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		for _, fs := range []*pflag.FlagSet{connectCmd.Flags(), serveCmd.Flags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Changed {
					f.Value.Set(f.DefValue)
					f.Changed = false
				}
			})
		}
	}()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	return out.String(), err
}

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
			out, err := runConnectCLI(t, "connect", addr, "--dialect", "quazal", "--access-key", "8dtRv2oj",
				"--checksum", v.checksum, "--rc4", v.rc4, "--count", "5", "--size", "2000")
			if err != nil || !strings.Contains(out, "quazal "+addr+": 5/5 echoed") {
				t.Fatalf("connect: %v\n%s", err, out)
			}
		})
	}
	if _, err := runConnectCLI(t, "connect", "127.0.0.1:9", "--dialect", "quazal", "--checksum", "2"); err == nil || !strings.Contains(err.Error(), "--checksum 2") {
		t.Fatalf("--checksum 2: %v", err)
	}
	if _, err := runConnectCLI(t, "connect", "127.0.0.1:9", "--dialect", "quazal", "--rc4", "both"); err == nil || !strings.Contains(err.Error(), "--rc4") {
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
	out, err := runConnectCLI(t, "connect", addr, "--dialect", "hyperscape", "--cert-pub", pub, "--count", "5", "--size", "3000")
	if err != nil || !strings.Contains(out, "hyperscape "+addr+": 5/5 echoed") {
		t.Fatalf("connect: %v\n%s", err, out)
	}
	// Another key pair's public key: the handshake is refused, saying why.
	other, _ := hyperscape.GenerateCertKey()
	_, otherPub, err := hyperscape.WriteKeyPair(filepath.Join(dir, "other"), other)
	if err != nil {
		t.Fatal(err)
	}
	_, err = runConnectCLI(t, "connect", addr, "--dialect", "hyperscape", "--cert-pub", otherPub, "--count", "1", "--timeout", "10s")
	if err == nil || !strings.Contains(err.Error(), "signature does not verify") {
		t.Fatalf("wrong certification key: %v", err)
	}
	if _, err := runConnectCLI(t, "connect", addr, "--dialect", "hyperscape"); err == nil || !strings.Contains(err.Error(), "--cert-pub") {
		t.Fatalf("no --cert-pub: %v", err)
	}
	if _, err := runConnectCLI(t, "serve", "--echo", "--dialect", "hyperscape", "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "--cert-key") {
		t.Fatalf("serve without --cert-key: %v", err)
	}
}
