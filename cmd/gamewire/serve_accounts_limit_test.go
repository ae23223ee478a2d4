package main

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestAccountListenerCap: the account services' listener is an
// internal/httplimit server with --account-max-conns as its cap: with the
// cap taken by connections that never send a request, a console's request
// still gets its answer (the longest-waiting silent connection is evicted),
// and the silent ones are closed by the server.
func TestAccountListenerCap(t *testing.T) {
	dir := t.TempDir()
	web := freeTCPAddr(t)
	startServeNEX(t, dir, "--account-listen", web, "--account-max-conns", "2")
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", web)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get("http://" + web + "/v1/api/admin/time")
	if err != nil {
		t.Fatalf("a request with the cap held by silent connections: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The first silent connection was evicted to make room: the server closed it.
	idle[0].SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := idle[0].Read(make([]byte, 1)); err == nil || n != 0 {
		t.Fatalf("the longest-waiting silent connection is still open (read %d, %v)", n, err)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the longest-waiting silent connection was not closed")
	}
}
