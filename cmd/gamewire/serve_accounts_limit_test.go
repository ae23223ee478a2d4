package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAccountListenerCap: the account services run under internal/httplimit
// with --account-max-conns: with the cap held by connections that send
// nothing, a NASC request still gets its answer, evicting the oldest of
// them, and each silent connection is closed by the server.
func TestAccountListenerCap(t *testing.T) {
	web := freeTCPAddr(t)
	_, out, _ := startServeNEX(t, t.TempDir(), "--account-listen", web, "--account-max-conns", "2")
	if !strings.Contains(out.String(), "account services on http://"+web) {
		t.Fatalf("banner:\n%s", out)
	}
	var silent []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", web)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Post("http://"+web+"/ac", "application/x-www-form-urlencoded", strings.NewReader("action=TE9HSU4*"))
	if err != nil {
		t.Fatalf("a request at the cap: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("NASC answer %s", resp.Status)
	}
	// The 5 s header timeout closes what eviction did not; 30 s only stops
	// a broken test.
	for i, c := range silent {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil && strings.Contains(err.Error(), "timeout") {
			t.Errorf("silent connection %d still open", i)
		}
	}
}
