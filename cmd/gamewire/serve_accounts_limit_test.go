package main

import (
	"net"
	"testing"
	"time"
)

// TestAccountListenerCap: the account services' listener holds at most its
// cap of connections; the next is accepted only when one of them closes.
func TestAccountListenerCap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := &limitListener{Listener: ln, sem: make(chan struct{}, 2)}
	defer lim.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := lim.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted while two were held")
	case <-time.After(100 * time.Millisecond):
	}
	first.Close()
	first.Close() // a second Close releases nothing more
	third := <-accepted
	third.Close()
	second.Close()
	// Both slots are free again: two more connections are taken.
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		(<-accepted).Close()
	}
}
