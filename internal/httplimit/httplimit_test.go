package httplimit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// start serves h with lim on a loopback port until the test ends.
func start(t *testing.T, h http.Handler, lim Limits) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: h, Limits: lim}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

func hello(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }

// waitClosed reads c until the server closes it; the 30 s bound only stops a
// broken test, the server's timeouts in these tests are a fraction of a second.
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("connection %v still open after 30 s", c.LocalAddr())
	}
}

// TestIdleConnectionsClosed: 300 keep-alive connections left idle after a
// request are all closed by the server at IdleTimeout, and 300 connections
// that never send a byte at ReadHeaderTimeout. (Two servers: the one whose
// connections make a request gives their headers ample time, so a busy
// machine does not cut a request short.)
func TestIdleConnectionsClosed(t *testing.T) {
	const n = 300
	idleSrv, idleAddr := start(t, http.HandlerFunc(hello), Limits{IdleTimeout: 50 * time.Millisecond, MaxConns: 1000})
	silentSrv, silentAddr := start(t, http.HandlerFunc(hello), Limits{ReadHeaderTimeout: 50 * time.Millisecond, MaxConns: 1000})
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", idleAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "hello" || resp.Close {
			t.Fatalf("response %d %q close=%v", resp.StatusCode, b, resp.Close)
		}
		s, err := net.Dial("tcp", silentAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		conns = append(conns, s)
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { waitClosed(t, c) })
	}
	wg.Wait()
	for idleSrv.Stats().Open+silentSrv.Stats().Open != 0 {
		runtimeYield()
	}
	if a, b := idleSrv.Stats().Accepted, silentSrv.Stats().Accepted; a != n || b != n {
		t.Fatalf("accepted %d and %d, want %d each", a, b, n)
	}
}

// runtimeYield lets the server's goroutines finish closing.
func runtimeYield() { time.Sleep(time.Millisecond) }

// TestMinRate: a body that stops arriving fails the handler's read with a
// timeout once Grace has passed, though ReadTimeout is far away; a body
// sent at once is read whole, though it is a thousand times Grace × MinRate.
func TestMinRate(t *testing.T) {
	readErr := make(chan error, 1)
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			readErr <- err
			return
		}
		fmt.Fprint(w, n)
	}), Limits{Grace: time.Second, MinRate: 1000, ReadTimeout: time.Hour})

	// A stalled body: 10 of 100,000 bytes, then nothing.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n0123456789")
	if err := <-readErr; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled body: handler read error %v, want a deadline", err)
	}
	waitClosed(t, c)

	// A fast body of 1 MB: 10 s worth at MinRate.
	resp, err := http.Post("http://"+addr+"/", "application/octet-stream", strings.NewReader(strings.Repeat("x", 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != fmt.Sprint(1<<20) {
		t.Fatalf("fast body: %d %q", resp.StatusCode, b)
	}
}

// TestSlowReaderCut: a client that does not take its response is cut once
// a write has waited Grace plus its size at MinRate: the handler's write
// fails, though WriteTimeout is far away.
func TestSlowReaderCut(t *testing.T) {
	writeErr := make(chan error, 1)
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("y", 64<<10))
		for {
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
	}), Limits{Grace: 100 * time.Millisecond, MinRate: 1 << 20, WriteTimeout: time.Hour})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	// Never read: the socket buffers fill and the server's writes stop.
	if err := <-writeErr; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("handler write error %v, want a deadline", err)
	}
}

// TestCapEvictsWaiting: at MaxConns a new connection evicts the oldest one
// not in a handler, so silent clients cannot keep a request out; when every
// connection is in a handler the new one is closed instead.
func TestCapEvictsWaiting(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	s, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, "hello")
	}), Limits{MaxConns: 4, ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour})

	// Four silent connections fill the cap.
	var silent []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	for s.Stats().Accepted != 4 {
		runtimeYield()
	}
	// A request still gets through, evicting the oldest silent one.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st := s.Stats(); st.Evicted != 1 || st.Refused != 0 {
		t.Fatalf("stats %+v, want 1 eviction", st)
	}
	waitClosed(t, silent[0])
	for s.Stats().Open != 3 { // the request's connection closes after it
		runtimeYield()
	}

	// Four requests in handlers: a fifth connection is refused, the four finish.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp, err := client.Get("http://" + addr + "/block")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	for range 4 {
		<-entered
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitClosed(t, c)
	close(release)
	wg.Wait()
	for _, c := range silent[1:] {
		waitClosed(t, c)
	}
	if st := s.Stats(); st.Refused != 1 || st.Evicted != 4 {
		t.Fatalf("stats %+v, want 1 refused and 4 evicted (1 + the 3 silent left)", st)
	}
}

// flakyListener fails its first n Accepts with EMFILE.
type flakyListener struct {
	net.Listener
	mu sync.Mutex
	n  int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// TestAcceptSurvivesEMFILE: Accept failing with EMFILE is waited out and
// counted; the next connection is served.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: http.HandlerFunc(hello)}
	done := make(chan error, 1)
	go func() { done <- s.Serve(&flakyListener{Listener: ln, n: 3}) }()
	defer func() {
		s.Shutdown(context.Background())
		<-done
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st := s.Stats(); st.AcceptErrors["EMFILE"] != 3 {
		t.Fatalf("accept errors %v, want 3 EMFILE", st.AcceptErrors)
	}
}

// TestDefaults: a zero Limits takes the documented defaults, and
// DefaultMaxConns follows the descriptor limit.
func TestDefaults(t *testing.T) {
	l := (&Server{}).EffectiveLimits()
	if l.ReadHeaderTimeout != DefaultReadHeaderTimeout || l.IdleTimeout != DefaultIdleTimeout || l.MinRate != DefaultMinRate ||
		l.Grace != DefaultGrace || l.MaxConns != DefaultMaxConns() || l.MaxHeaderBytes != DefaultMaxHeaderBytes {
		t.Fatalf("defaults %+v", l)
	}
	if n := nofile(); n > 0 && DefaultMaxConns() != int(min(max(n/8, 16), 4096)) {
		t.Fatalf("DefaultMaxConns %d with RLIMIT_NOFILE %d", DefaultMaxConns(), n)
	}
}

// TestSlowHandlerAfterBody: a handler that has read its whole body (and
// read again after EOF) may take longer than Grace to answer: its request
// context is not cancelled by the body's deadline. Grace is a second, not
// less: the answer's write deadline runs from the handler's Write to the
// flush after it returns, and a loaded machine can stall a goroutine for a
// tenth of a second between the two (the test failed so with 100 ms).
func TestSlowHandlerAfterBody(t *testing.T) {
	_, addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		// Readers often read once more after EOF (a multipart reader, a
		// decoder checking for trailing data).
		if n, err := r.Body.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			http.Error(w, "read after EOF", 500)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "cancelled", 500)
		case <-time.After(1200 * time.Millisecond): // past Grace and the body's 10 ms at MinRate
			io.WriteString(w, "done")
		}
	}), Limits{Grace: time.Second, MinRate: 1000})
	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("small body"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "done" {
		t.Fatalf("answer %d %q", resp.StatusCode, b)
	}
}

// TestTLS: with TLSConfig the server speaks HTTPS under the same cap: two
// connections that never finish their handshake fill it, and a client's
// request still gets through by evicting the older one.
func TestTLS(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	defer ts.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: http.HandlerFunc(hello), TLSConfig: ts.TLS, Limits: Limits{MaxConns: 2, ReadHeaderTimeout: time.Hour}}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	defer func() {
		s.Close()
		<-done
	}()
	var silent []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	for s.Stats().Accepted != 2 {
		runtimeYield()
	}
	client := ts.Client()
	resp, err := client.Get("https://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" || resp.TLS == nil {
		t.Fatalf("answer %q over TLS %v", b, resp.TLS != nil)
	}
	waitClosed(t, silent[0])
	if st := s.Stats(); st.Evicted != 1 {
		t.Fatalf("stats %+v, want 1 eviction", st)
	}
}
