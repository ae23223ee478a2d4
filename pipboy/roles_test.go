package pipboy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"
	"time"
)

// testLogger logs only when -v is given and the test fails... simply to the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(b)))
	return len(b), nil
}

// startEmulator serves the recorded database on 127.0.0.1 with an ephemeral port.
// locationID returns the value id of the named location of $.Map.World.Locations:
// the argument of FastTravel.
func locationID(t *testing.T, srv *Server, name string) uint32 {
	t.Helper()
	var id uint32
	srv.View(func(db *Database) {
		w, err := ReadWorld(db)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range w.Locations {
			if l.Name == name {
				id = l.ID
			}
		}
	})
	if id == 0 {
		t.Fatalf("no location %q", name)
	}
	return id
}

func startEmulator(t *testing.T, configure func(*Server)) (*Server, string) {
	t.Helper()
	s := loadStream(t)
	srv := NewServer(s.DB)
	srv.Addr = "127.0.0.1:0"
	srv.Hello = s.Hello
	srv.HeartbeatInterval = 50 * time.Millisecond
	srv.Logger = testLogger(t)
	if configure != nil {
		configure(srv)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, ln.Addr().String()
}

// waitIdle waits until the emulator has noticed its app left.
func waitIdle(t *testing.T, ctx context.Context, srv *Server) {
	t.Helper()
	for srv.Busy() {
		if ctx.Err() != nil {
			t.Fatal("the emulator never released its app")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialTest(t *testing.T, ctx context.Context, addr string) *Client {
	t.Helper()
	c, err := Dial(ctx, addr, &ClientConfig{HeartbeatInterval: 50 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func lookup(t *testing.T, c *Client, path string) any {
	t.Helper()
	var out any
	c.View(func(db *Database) {
		v, err := db.Lookup(path)
		if err != nil {
			t.Fatal(err)
		}
		out = v.Interface()
	})
	return out
}

func TestClientAgainstEmulator(t *testing.T) {
	ctx := testCtx(t)
	srv, addr := startEmulator(t, nil)

	// Discovery on loopback.
	resp := &Responder{Addr: "127.0.0.1:0", MachineType: "PC", Busy: srv.Busy, Logger: testLogger(t)}
	pc, err := resp.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go resp.Serve(pc)
	defer resp.Close()
	// A malformed datagram does not stop the responder.
	junk, _ := net.Dial("udp", pc.LocalAddr().String())
	junk.Write([]byte(`{"cmd":`))
	junk.Close()
	games, err := Discover(ctx, pc.LocalAddr().String(), time.Second)
	if err != nil || len(games) != 1 || games[0].MachineType != "PC" || games[0].IsBusy || games[0].Addr.String() != "127.0.0.1" {
		t.Fatalf("discover: %+v %v", games, err)
	}

	c := dialTest(t, ctx, addr)
	if c.Hello().Version != "1.1.30.0" {
		t.Fatalf("hello %+v", c.Hello())
	}
	if got := lookup(t, c, "$.PlayerInfo.PlayerName"); got != "Gavin Sterling" {
		t.Fatalf("player name %v", got)
	}
	c.View(func(db *Database) {
		if db.Len() != 12554 {
			t.Errorf("client database holds %d values, want 12554", db.Len())
		}
	})
	games, err = Discover(ctx, pc.LocalAddr().String(), time.Second)
	if err != nil || len(games) != 1 || !games[0].IsBusy {
		t.Fatalf("discover while an app is connected: %+v %v", games, err)
	}

	// Busy for a second app.
	if _, err := Dial(ctx, addr, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("second app: got %v, want ErrBusy", err)
	}

	// Live updates.
	if err := srv.Set("$.PlayerInfo.XPLevel", 9); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(db *Database) bool {
		v, _ := db.Lookup("$.PlayerInfo.XPLevel")
		return v.Int() == 9
	}); err != nil {
		t.Fatal(err)
	}
	// A refused update on the server changes nothing and is not sent.
	if err := srv.Update(entries(t, arr(999999, 123456789))); !errors.Is(err, ErrUnknownID) {
		t.Fatalf("bad server update: %v", err)
	}

	// Commands and responses: fast travel is answered.
	r, err := c.Do(ctx, FastTravel(locationID(t, srv, "Sanctuary")))
	if err != nil || !r.Allowed || !r.Success || r.ID < 1 {
		t.Fatalf("fast travel: %+v %v", r, err)
	}
	if x := lookup(t, c, "$.Map.World.Player.X"); x != float64(float32(-80768.19)) {
		t.Fatalf("after fast travel to Sanctuary the player is at X %v", x)
	}
	r2, err := c.Do(ctx, FastTravel(48364)) // no such location: refused
	if err != nil || r2.ID != r.ID+1 || r2.Allowed || r2.Success {
		t.Fatalf("command ids must increase: %d then %d (%v)", r.ID, r2.ID, err)
	}
	// Toggling a radio station changes the database.
	var classical uint32
	c.View(func(db *Database) {
		v, err := db.Lookup("$.Radio[0]")
		if err != nil {
			t.Fatal(err)
		}
		classical = v.ID()
	})
	if _, err := c.Send(ToggleRadio(classical)); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(db *Database) bool {
		a, _ := db.Lookup("$.Radio[0].active")
		b, _ := db.Lookup("$.Radio[1].active")
		return a.Bool() && !b.Bool()
	}); err != nil {
		t.Fatal(err)
	}
	if cmds := srv.Commands(); len(cmds) != 3 || cmds[2].Type != CmdToggleRadio {
		t.Fatalf("server saw commands %+v", cmds)
	}

	// Map frames.
	f, err := c.RequestMap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Fast travel moved the local map from its recorded NW corner X -72968.92 by
	// Sanctuary's X (-80768.19) minus the recorded player's (-78972.78).
	if f.Width != 128 || f.Height != 128 || f.Stride != 136 || f.Blank() || f.NW.X != -74764.33 {
		t.Fatalf("map frame %dx%d stride %d NW %v", f.Width, f.Height, f.Stride, f.NW)
	}
	var png bytes.Buffer
	var tint = DefaultTint
	c.View(func(db *Database) { tint = db.EffectColor() })
	if err := f.WritePNG(&png, tint); err != nil || png.Len() < 100 {
		t.Fatalf("png: %v", err)
	}

	// After the app leaves, the next one is served.
	c.Close()
	waitIdle(t, ctx, srv)
	c2 := dialTest(t, ctx, addr)
	if got := lookup(t, c2, "$.PlayerInfo.XPLevel"); got != int64(9) {
		t.Fatalf("level seen by the next app: %v", got)
	}
}

// rawConn speaks the framing directly, to test heartbeats and bad input.
func rawConn(t *testing.T, addr string) (net.Conn, *Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, NewReader(c)
}

func TestEmulatorHeartbeats(t *testing.T) {
	_, addr := startEmulator(t, nil)
	c, r := rawConn(t, addr)
	// Greeting and dump first.
	for _, want := range []MessageType{TypeNewConnection, TypeDataUpdate} {
		m, err := r.ReadMessage()
		if err != nil || m.Type != want {
			t.Fatalf("got %v %v, want %v", m.Type, err, want)
		}
	}
	// The emulator sends heartbeats on its own and answers ours.
	if err := WriteMessage(c, TypeHeartbeat, nil); err != nil {
		t.Fatal(err)
	}
	beats := 0
	for beats < 3 {
		m, err := r.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if m.Type != TypeHeartbeat || len(m.Content) != 0 {
			t.Fatalf("unexpected %v", m.Type)
		}
		beats++
	}
}

func TestClientHeartbeats(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx := testCtx(t)
	go func() {
		c, err := Dial(ctx, ln.Addr().String(), &ClientConfig{HeartbeatInterval: 20 * time.Millisecond})
		if err == nil {
			<-ctx.Done()
			c.Close()
		}
	}()
	game, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer game.Close()
	game.SetDeadline(time.Now().Add(10 * time.Second))
	h, _ := Hello{Lang: "en", Version: "1.1.30.0"}.Append(nil)
	WriteMessage(game, TypeNewConnection, h)
	r := NewReader(game)
	for range 3 {
		m, err := r.ReadMessage()
		if err != nil || m.Type != TypeHeartbeat {
			t.Fatalf("app sent %v %v, want heartbeats", m.Type, err)
		}
	}
}

func TestEmulatorSurvivesBadApps(t *testing.T) {
	ctx := testCtx(t)
	srv, addr := startEmulator(t, func(s *Server) { s.MaxMessageSize = 1 << 10 })
	tests := []struct {
		name string
		send []byte
	}{
		{"size above limit", []byte{0, 0, 0, 1, 5}},
		{"unknown message type", []byte{0, 0, 0, 0, 9}},
		{"truncated frame", []byte{10, 0, 0, 0, 5, '{'}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, r := rawConn(t, addr)
			c.Write(tc.send)
			if tc.name == "truncated frame" {
				c.(*net.TCPConn).CloseWrite()
			}
			// The emulator closes this connection: reading reaches the end.
			for {
				_, err := r.ReadMessage()
				if err != nil {
					if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTruncated) && !isReset(err) {
						t.Fatalf("expected the emulator to close, got %v", err)
					}
					break
				}
			}
			c.Close()
		})
	}
	// A malformed command is reported and the connection goes on.
	waitIdle(t, ctx, srv)
	cl := dialTest(t, ctx, addr)
	if err := cl.mc.write(TypeCommandRequest, []byte(`{"type":9,"args":[1],`)); err != nil {
		t.Fatal(err)
	}
	if r, err := cl.Do(ctx, FastTravel(locationID(t, srv, "Concord"))); err != nil || !r.Success {
		t.Fatalf("command after a malformed one: %+v %v", r, err)
	}
	if n := len(srv.Commands()); n != 1 {
		t.Fatalf("server recorded %d commands, want 1", n)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

func TestClientRefusesBadGame(t *testing.T) {
	tests := []struct {
		name  string
		first []byte
		want  error
	}{
		{"busy", []byte{0, 0, 0, 0, 2}, ErrBusy},
		{"bad hello JSON", append([]byte{3, 0, 0, 0, 1}, "{x}"...), ErrBadJSON},
		{"oversized", []byte{0, 0, 0, 2, 1}, ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err == nil {
					c.Write(tc.first)
					time.Sleep(100 * time.Millisecond)
					c.Close()
				}
			}()
			_, err = Dial(testCtx(t), ln.Addr().String(), nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	// An update naming an unknown id ends the session with ErrUnknownID.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		h, _ := Hello{Lang: "en", Version: "1.1.30.0"}.Append(nil)
		WriteMessage(c, TypeNewConnection, h)
		WriteMessage(c, TypeDataUpdate, entries(t, i32(1, 1), obj(0, nil, "x", 1)))
		WriteMessage(c, TypeDataUpdate, entries(t, arr(2, 77)))
		io.Copy(io.Discard, c)
	}()
	ctx := testCtx(t)
	c, err := Dial(ctx, ln.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-c.Done()
	if !errors.Is(c.Err(), ErrUnknownID) {
		t.Fatalf("got %v, want ErrUnknownID", c.Err())
	}
	c.View(func(db *Database) {
		if db.Len() != 2 {
			t.Fatalf("database after a refused update: %d values", db.Len())
		}
	})
}

// TestDialSilentGame: a game that accepts the connection but never greets does
// not hold Dial past its context's cancellation.
func TestDialSilentGame(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Dial(ctx, ln.Addr().String(), nil)
		done <- err
	}()
	c := <-accepted // the silent game holds the connection open
	defer c.Close()
	// Give Dial time to get past connecting and wait for the greeting; it must
	// return context.Canceled either way, so the outcome does not depend on it.
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial: %v, want context.Canceled", err)
		}
	case <-time.After(15 * time.Second): // the default idle timeout is 20 s
		t.Fatal("Dial still waiting for a greeting after its context was cancelled")
	}
}

// TestRelayRecordReplay: app -> relay -> emulator, recorded; the replay of the
// recording yields the same final database.
func TestRelayRecordReplay(t *testing.T) {
	ctx := testCtx(t)
	srv, gameAddr := startEmulator(t, nil)
	var file bytes.Buffer
	rec, err := NewRecorder(&file, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	relay := &Relay{Addr: "127.0.0.1:0", Game: gameAddr, Recorder: rec, Logger: testLogger(t), MaxMessageSize: 1 << 20}
	ln, err := relay.Listen()
	if err != nil {
		t.Fatal(err)
	}
	relayDone := make(chan error, 1)
	go func() { relayDone <- relay.Serve(ln) }()

	// A bad app does not stop the relay.
	bad, _ := rawConn(t, ln.Addr().String())
	bad.Write([]byte{0xff, 0xff, 0xff, 0x7f, 5})
	io.Copy(io.Discard, bad)
	bad.Close()
	// The game may not have seen the bad session end yet; an app retries on Busy.
	var c *Client
	for {
		var err error
		c, err = Dial(ctx, ln.Addr().String(), &ClientConfig{HeartbeatInterval: 50 * time.Millisecond, Logger: testLogger(t)})
		if err == nil {
			break
		}
		if !errors.Is(err, ErrBusy) || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.Set("$.PlayerInfo.PlayerName", "Nate"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(db *Database) bool {
		v, _ := db.Lookup("$.PlayerInfo.PlayerName")
		return v.Str() == "Nate"
	}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Do(ctx, FastTravel(locationID(t, srv, "Sanctuary"))); err != nil || !r.Success {
		t.Fatalf("fast travel through the relay: %+v %v", r, err)
	}
	if _, err := c.RequestMap(ctx); err != nil {
		t.Fatal(err)
	}
	var want []byte
	c.View(func(db *Database) {
		r, _ := db.Root()
		want, _ = r.AppendJSON(nil, "")
	})
	c.Close()
	relay.Close()
	if err := <-relayDone; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("relay Serve: %v", err)
	}

	// The recording decodes to the same database.
	recording, err := LoadRecording(bytes.NewReader(file.Bytes()), 0)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[Direction]int{}
	for _, x := range recording.Records {
		dirs[x.Dir]++
	}
	if dirs[FromGame] < 4 || dirs[FromApp] < 2 {
		t.Fatalf("recorded directions %v", dirs)
	}
	st, err := recording.FinalState(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, st.DB); got != string(want) {
		t.Fatal("recording's final database differs from the app's")
	}
	if st.MapFrames != 1 || len(st.Responses) != 1 {
		t.Fatalf("recording holds %d map frames, %d responses", st.MapFrames, len(st.Responses))
	}
	// decode recognises the recording too.
	if st2, kind, err := DecodeInput(file.Bytes(), nil); err != nil || kind != InputRecording || jsonOf(t, st2.DB) != string(want) {
		t.Fatalf("DecodeInput on a recording: %v %v", kind, err)
	}

	// Replay it (fast) to a new app.
	_, replayAddr := startEmulator(t, func(s *Server) {
		s.db = nil
		s.Replay = recording
		s.Speed = 50
	})
	c2 := dialTest(t, ctx, replayAddr)
	// The last recorded update is the fast travel's (the player moved): wait for the
	// whole database to match, which it does only once the replay is through.
	if err := c2.WaitFor(ctx, func(db *Database) bool {
		r, _ := db.Root()
		got, _ := r.AppendJSON(nil, "")
		return bytes.Equal(got, want)
	}); err != nil {
		t.Fatalf("replayed database never matched the recorded session's: %v", err)
	}
	if os.Getenv("GAMEWIRE_ARTIFACTS") != "" {
		os.WriteFile(os.Getenv("GAMEWIRE_ARTIFACTS")+"/pipboy-session.rec", file.Bytes(), 0o644)
	}
	_ = strconv.Itoa
}

func TestRecordingBadInput(t *testing.T) {
	var file bytes.Buffer
	rec, _ := NewRecorder(&file, time.Unix(100, 0))
	rec.Record(time.Unix(101, 0), 1, FromGame, Message{Type: TypeHeartbeat})
	rec.Record(time.Unix(102, 0), 1, FromApp, Message{Type: TypeCommandRequest, Content: []byte(`{"type":13,"args":[],"id":1}`)})
	good := file.Bytes()
	r, err := LoadRecording(bytes.NewReader(good), 0)
	if err != nil || len(r.Records) != 2 || r.Records[1].Time != time.Second*2 || r.Records[1].Dir != FromApp || !r.Start.Equal(time.Unix(100, 0)) {
		t.Fatalf("load: %+v %v", r, err)
	}
	for i := range len(good) {
		if i == recordingHeaderSize || i == recordingHeaderSize+recordHeaderSize+HeaderSize {
			continue // record boundaries: a shorter, valid recording
		}
		if _, err := LoadRecording(bytes.NewReader(good[:i]), 0); !errors.Is(err, ErrBadRecording) {
			t.Fatalf("prefix %d: got %v", i, err)
		}
	}
	bad := append([]byte(nil), good...)
	bad[0] = 'X'
	if _, err := LoadRecording(bytes.NewReader(bad), 0); !errors.Is(err, ErrBadRecording) {
		t.Fatalf("bad magic: %v", err)
	}
	bad = append([]byte(nil), good...)
	bad[recordingHeaderSize+12] = 7
	if _, err := LoadRecording(bytes.NewReader(bad), 0); !errors.Is(err, ErrBadRecording) {
		t.Fatalf("bad direction: %v", err)
	}
}

// TestRelayForwardsUnchanged: the bytes an app gets through the relay are the bytes the
// game sent, and the app's odd-but-valid JSON reaches the game (and the recording) as is.
func TestRelayForwardsUnchanged(t *testing.T) {
	srv, gameAddr := startEmulator(t, nil)
	var file bytes.Buffer
	rec, _ := NewRecorder(&file, time.Now())
	relay := &Relay{Addr: "127.0.0.1:0", Game: gameAddr, Recorder: rec}
	ln, err := relay.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go relay.Serve(ln)
	defer relay.Close()

	c, r := rawConn(t, ln.Addr().String())
	var wantHello, wantDump []byte
	srv.View(func(db *Database) {
		wantHello, _ = srv.Hello.Append(nil)
		wantDump, _ = db.AppendDump(nil)
	})
	for _, want := range []Message{{TypeNewConnection, wantHello}, {TypeDataUpdate, wantDump}} {
		m, err := r.ReadMessage()
		if err != nil || m.Type != want.Type || !bytes.Equal(m.Content, want.Content) {
			t.Fatalf("through the relay: %v %v, %d bytes; want %v, %d bytes", m.Type, err, len(m.Content), want.Type, len(want.Content))
		}
	}
	odd := fmt.Appendf(nil, " {\"id\" : 77, \"args\":[ %d ],\"type\":9}\n", locationID(t, srv, "Sanctuary"))
	if err := WriteMessage(c, TypeCommandRequest, odd); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := r.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == TypeCommandResponse {
			resp, err := ParseCommandResponse(m.Content)
			if err != nil || resp.ID != 77 || !resp.Success {
				t.Fatalf("response %+v %v", resp, err)
			}
			break
		}
	}
	c.Close()
	relay.Close()
	recording, err := LoadRecording(bytes.NewReader(file.Bytes()), 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range recording.Records {
		if x.Dir == FromApp && x.Message.Type == TypeCommandRequest {
			found = bytes.Equal(x.Message.Content, odd)
		}
	}
	if !found {
		t.Fatal("the recording does not hold the app's command byte for byte")
	}
}

// TestRecorderMaxBytes: a recorder with MaxBytes stops before the record that would
// cross it, the file stays a valid recording of whole records, and a relay with a
// full recorder goes on relaying: an app gets its whole database through it.
func TestRecorderMaxBytes(t *testing.T) {
	var file bytes.Buffer
	rec, err := NewRecorder(&file, time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	rec.MaxBytes = 1000
	m := Message{Type: TypeDataUpdate, Content: make([]byte, 100)}
	written := 0
	for i := range 100 {
		err := rec.Record(time.Unix(100, int64(i)), 1, FromGame, m)
		if errors.Is(err, ErrRecordingFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		written++
	}
	if written == 0 || written >= 100 || int64(file.Len()) > rec.MaxBytes || rec.Size() != int64(file.Len()) {
		t.Fatalf("%d records, %d bytes (Size %d), limit %d", written, file.Len(), rec.Size(), rec.MaxBytes)
	}
	if err := rec.Record(time.Unix(101, 0), 1, FromGame, Message{Type: TypeHeartbeat}); !errors.Is(err, ErrRecordingFull) {
		t.Fatalf("a record after the limit: %v", err)
	}
	rr, err := NewRecordingReader(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := rr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		n++
	}
	if n != written {
		t.Fatalf("read %d records, wrote %d", n, written)
	}

	// Through a relay: the dump alone is far above 4 KiB.
	ctx := testCtx(t)
	_, gameAddr := startEmulator(t, nil)
	file.Reset()
	rec, _ = NewRecorder(&file, time.Now())
	rec.MaxBytes = 4096
	relay := &Relay{Addr: "127.0.0.1:0", Game: gameAddr, Recorder: rec, Logger: testLogger(t)}
	ln, err := relay.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go relay.Serve(ln)
	defer relay.Close()
	c, err := Dial(ctx, ln.Addr().String(), &ClientConfig{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(db *Database) bool {
		v, err := db.Lookup("$.PlayerInfo.PlayerName")
		return err == nil && v.Str() != ""
	}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	relay.Close()
	if file.Len() > 4096 || rec.Size() > 4096 {
		t.Fatalf("the recording grew to %d bytes, limit 4096", file.Len())
	}
}
