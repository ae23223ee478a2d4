package main

import (
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeAnnouncesPublicHost: with --public-host every endpoint serve
// announces names it: the secure station url a login is handed, the
// DataStore URL and the metrics URL, none the address bound.
func TestServeAnnouncesPublicHost(t *testing.T) {
	metricsAddr := freeTCPAddr(t)
	_, mport, _ := net.SplitHostPort(metricsAddr)
	addr, out, _ := startServeNEX(t, t.TempDir(), "--public-host", "localhost", "--metrics", metricsAddr)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "metrics on"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no metrics line:\n%s", out)
		}
	}
	banner := out.String()
	if !regexp.MustCompile(`HTTP endpoint on http://localhost:\d+,`).MatchString(banner) {
		t.Errorf("DataStore URL not at --public-host:\n%s", banner)
	}
	if !strings.Contains(banner, "metrics on http://localhost:"+mport+"/metrics") {
		t.Errorf("metrics URL not at --public-host:\n%s", banner)
	}
	got, err := runCLI(t, "login", addr, "--user", "guest", "--password", "MMQea3n!fsik", "--timeout", "20s")
	if err != nil {
		t.Fatalf("login: %v\n%s", err, got)
	}
	if !strings.Contains(got, "address=localhost;") {
		t.Errorf("the secure station url is not at --public-host:\n%s", got)
	}
}

// TestServeAnnounce: what clients are told for a bound socket: the public
// host when given, the bound host otherwise, never a wildcard.
func TestServeAnnounce(t *testing.T) {
	for _, c := range []struct{ public, bound, want string }{
		{"", "127.0.0.1:60002", "127.0.0.1:60002"},
		{"", "0.0.0.0:60002", "127.0.0.1:60002"},
		{"", "[::]:60002", "127.0.0.1:60002"},
		{"", ":60002", "127.0.0.1:60002"},
		{"game.example.org", "[::]:60002", "game.example.org:60002"},
		{"2001:db8::1", "0.0.0.0:9100", "[2001:db8::1]:9100"},
		{"", "10.0.0.5:60002", "10.0.0.5:60002"},
	} {
		if got := announce(c.public, c.bound); got != c.want {
			t.Errorf("announce(%q, %q) = %q, want %q", c.public, c.bound, got, c.want)
		}
	}
}

// TestServeDefaultAddresses: each role's default ports follow the addresses
// it listens on: the secure server at --listen + 1, the DataStore endpoint at
// the secure server's + 1, so a second --role secure node with its own
// --secure-listen gets its own DataStore port.
func TestServeDefaultAddresses(t *testing.T) {
	for _, c := range []struct {
		listen, secure, ds string
		wantSecure, wantDS string
	}{
		{"127.0.0.1:60000", "", "", "127.0.0.1:60001", "127.0.0.1:60002"},
		{"127.0.0.1:60000", "127.0.0.1:60011", "", "127.0.0.1:60011", "127.0.0.1:60012"},
		{"127.0.0.1:60000", "0.0.0.0:60021", "", "0.0.0.0:60021", "0.0.0.0:60022"},
		{"127.0.0.1:60000", "127.0.0.1:60011", "127.0.0.1:8080", "127.0.0.1:60011", "127.0.0.1:8080"},
		{"127.0.0.1:0", "", "", "127.0.0.1:0", "127.0.0.1:0"},
	} {
		o := &serveOptions{listen: c.listen, nex: serveNEXOptions{secureListen: c.secure, dsListen: c.ds}}
		if err := o.addresses(); err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		if o.nex.secureAddr != c.wantSecure || o.nex.dsAddr != c.wantDS {
			t.Errorf("--listen %s --secure-listen %q --datastore-listen %q: secure %s, DataStore %s; want %s, %s",
				c.listen, c.secure, c.ds, o.nex.secureAddr, o.nex.dsAddr, c.wantSecure, c.wantDS)
		}
	}
}

// TestServeAddressErrorsNameTheFlag: a bad address is reported against the
// flag the user set (not against a port derived from it), and nothing claims
// to serve; a busy --metrics port fails before the banner.
func TestServeAddressErrorsNameTheFlag(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	data := t.TempDir()
	for _, c := range []struct {
		args    []string
		want    string
		notWant string
	}{
		{[]string{"--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999"`, "100001"},
		{[]string{"--listen", "127.0.0.1"}, `--listen "127.0.0.1"`, ""},
		{[]string{"--listen", "127.0.0.1:65535"}, "set --secure-listen", ""},
		{[]string{"--listen", "127.0.0.1:0", "--secure-listen", "127.0.0.1:65535"}, "set --datastore-listen", ""},
		{[]string{"--listen", "127.0.0.1:0", "--secure-listen", "127.0.0.1:0", "--datastore-listen", "127.0.0.1:70000"}, `--datastore-listen "127.0.0.1:70000"`, ""},
		{[]string{"--listen", "127.0.0.1:0", "--secure-listen", "127.0.0.1:0", "--datastore-listen", busy.Addr().String()}, "(--datastore-listen", ""},
		{[]string{"--listen", "127.0.0.1:0", "--secure-listen", "127.0.0.1:0", "--metrics", busy.Addr().String()}, "(--metrics)", ""},
		{[]string{"--echo", "--listen", "127.0.0.1:0", "--metrics", busy.Addr().String()}, "(--metrics)", ""},
		{[]string{"--echo", "--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999"`, ""},
	} {
		out, err := runCLI(t, append([]string{"serve", "--data", data}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || c.notWant != "" && strings.Contains(err.Error(), c.notWant) {
			t.Errorf("serve %s: %v; want an error with %q", strings.Join(c.args, " "), err, c.want)
		}
		if strings.Contains(out, "server on") || strings.Contains(out, "serving") {
			t.Errorf("serve %s: a banner before the failure:\n%s", strings.Join(c.args, " "), out)
		}
	}
}

// TestServeGuestPasswordAfterFailedStart: a first start that fails after
// creating the store (its port is busy) does not hide the guest password
// from the next start's banner.
func TestServeGuestPasswordAfterFailedStart(t *testing.T) {
	busy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	data := t.TempDir()
	if out, err := runCLI(t, "serve", "--data", data, "--listen", busy.LocalAddr().String()); err == nil {
		t.Fatalf("serve on a busy port started:\n%s", out)
	}
	_, out, _ := startServeNEX(t, data)
	if s := out.String(); strings.Contains(s, "created") || !strings.Contains(s, "guest password MMQea3n!fsik") {
		t.Errorf("the second start's banner:\n%s", s)
	}
}
