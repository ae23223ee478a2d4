package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
)

// TestServeNEXOverLiteCLI: `serve --dialect nex-lite` without --echo runs the NEX
// authentication and secure servers on virtual ports 1 and 2 of one WebSocket
// listener with Switch settings; guest logs in over ws:// through the library
// (the same LoginConfig `gamewire login` builds), a wrong password is refused.
func TestServeNEXOverLiteCLI(t *testing.T) {
	addr := freeTCPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, "serve", "--dialect", "nex-lite", "--listen", addr, "--data", t.TempDir())
	}()
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lcancel()
	login := func(password string) (*nex.Session, error) {
		return nex.Login(lctx, "ws://"+addr+"/", nex.LoginConfig{User: "guest", Password: password,
			Config:     prudp.Config{Dialect: prudp.NEXLite, AccessKey: defaultAccessKey, Port: 1, Kerberos: kerberos.Switch},
			Derivation: auth.DeriveSwitch,
			Dial: func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
				return lite.Dial(ctx, url, c, nil)
			}})
	}
	var sess *nex.Session
	var err error
	for sess == nil {
		if sess, err = login(auth.GuestPassword); err != nil {
			if lctx.Err() != nil || !strings.Contains(err.Error(), "connect") {
				t.Fatalf("login over ws: %v\n%s", err, out)
			}
			time.Sleep(20 * time.Millisecond) // serve is still starting
		}
	}
	if sess.PID != 100 || sess.SecureURL.Address() != "0.0.0.1" {
		t.Errorf("session: pid %d, secure url %s", sess.PID, sess.SecureURL)
	}
	sess.Close(lctx)
	if _, err := login("wrong"); err == nil || !strings.Contains(err.Error(), "wrong password") {
		t.Errorf("wrong password: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, out)
	}
	if want := "authentication server on ws://" + addr; !strings.Contains(out.String(), want) {
		t.Errorf("serve output lacks %q:\n%s", want, out)
	}
}

// TestLoginOverLiteCLI: `gamewire login ws://... --dialect nex-lite` against NEX
// servers on a Lite listener prints the PID and the shared-address secure url;
// a non-URL address with nex-lite is refused with a clear error.
func TestLoginOverLiteCLI(t *testing.T) {
	l, err := lite.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	accounts := new(auth.Memory)
	for _, sp := range auth.SpecialAccounts {
		pw := "test-" + sp.Name
		if sp.PID == auth.PIDGuest {
			pw = auth.GuestPassword
		}
		accounts.Add(sp.PID, sp.Name, pw)
	}
	srv := &nex.Server{Config: prudp.Config{Dialect: prudp.NEXLite, AccessKey: defaultAccessKey, Port: 1, Kerberos: kerberos.Switch},
		Accounts: accounts, SharedAddress: true, SecurePort: 2, Auth: auth.Server{Derivation: auth.DeriveSwitch}}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l.Port(1), l.Port(2)) }()
	defer func() {
		srv.Close()
		<-done
		l.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := &syncWriter{}
	if err := runCLIContext(t, ctx, out, "login", "ws://"+l.Addr().String()+"/", "--dialect", "nex-lite",
		"--user", "guest", "--password", auth.GuestPassword); err != nil {
		t.Fatalf("login: %v\n%s", err, out)
	}
	for _, want := range []string{"pid 100\n", "secure prudps:/address=0.0.0.1;"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("login output lacks %q:\n%s", want, out)
		}
	}
	err = runCLIContext(t, ctx, &syncWriter{}, "login", l.Addr().String(), "--dialect", "nex-lite", "--user", "guest")
	if err == nil || !strings.Contains(err.Error(), "logs in at a URL") {
		t.Errorf("login without a URL: %v", err)
	}
}
