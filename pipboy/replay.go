package pipboy

import (
	"context"
	"io"
	"log/slog"
	"time"
)

// Recording is a recording file held in memory (format in docs/pipboy.md).
type Recording struct {
	Start   time.Time
	Records []Record // contents are private copies
}

// LoadRecording reads a whole recording. Message sizes are bounded by maxSize
// (0: DefaultMaxMessageSize) and memory grows only with bytes actually read.
func LoadRecording(r io.Reader, maxSize int) (*Recording, error) {
	rr, err := NewRecordingReader(r)
	if err != nil {
		return nil, err
	}
	rr.MaxSize = maxSize
	rec := &Recording{Start: rr.Start()}
	for {
		x, err := rr.Next()
		if err == io.EOF {
			return rec, nil
		}
		if err != nil {
			return nil, err
		}
		x.Message.Content = append([]byte(nil), x.Message.Content...)
		rec.Records = append(rec.Records, x)
	}
}

// Sessions returns the session numbers present, in order of first appearance.
func (r *Recording) Sessions() []uint32 {
	var out []uint32
	seen := map[uint32]bool{}
	for _, x := range r.Records {
		if !seen[x.Session] {
			seen[x.Session] = true
			out = append(out, x.Session)
		}
	}
	return out
}

// MainSession returns the session with the most game-to-app messages (the earliest
// on a tie): a relay's recording can also hold short sessions (a Busy answer, an app
// that failed), and this picks the real one.
func (r *Recording) MainSession() uint32 {
	counts := map[uint32]int{}
	best, bestN := uint32(0), -1
	for _, x := range r.Records {
		if x.Dir == FromGame {
			counts[x.Session]++
		}
	}
	for _, id := range r.Sessions() {
		if counts[id] > bestN {
			best, bestN = id, counts[id]
		}
	}
	return best
}

// GameMessages returns the game-to-app records of one session (0: MainSession).
func (r *Recording) GameMessages(session uint32) []Record {
	if session == 0 {
		session = r.MainSession()
	}
	var out []Record
	for _, x := range r.Records {
		if x.Session == session && x.Dir == FromGame {
			out = append(out, x)
		}
	}
	return out
}

// FinalState decodes the game-to-app side of one session and returns what an app would
// hold at its end.
func (r *Recording) FinalState(session uint32) (*GameState, error) {
	s := NewGameState()
	for _, x := range r.GameMessages(session) {
		if err := s.Handle(x.Message); err != nil {
			return s, err
		}
	}
	return s, nil
}

// play sends the recording's main session (or Server.ReplaySession) to one app, keeping its timing.
func (s *Server) play(ctx context.Context, mc *msgConn, log *slog.Logger) {
	speed := s.Speed
	if speed <= 0 {
		speed = 1
	}
	msgs := s.Replay.GameMessages(s.ReplaySession)
	start := time.Now()
	var base time.Duration
	if len(msgs) > 0 {
		base = msgs[0].Time
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i, x := range msgs {
		due := start.Add(time.Duration(float64(x.Time-base) / speed))
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-mc.closed:
				return
			case <-timer.C:
			}
		}
		// Under the server's lock, so that Update (Set, commands) and the replay keep
		// one order; after the first replayed update the app may get live updates too.
		s.mu.Lock()
		if x.Message.Type == TypeDataUpdate {
			// Keep the server's view in step so Set and commands work during and after the replay.
			if err := s.db.Apply(x.Message.Content); err != nil {
				log.Warn("pipboy: replayed update refused by the emulator's database", "record", i, "err", err)
			}
		}
		err := mc.write(x.Message.Type, x.Message.Content)
		if err == nil && x.Message.Type == TypeDataUpdate && s.active == mc {
			s.ready = true
		}
		s.mu.Unlock()
		if err != nil {
			log.Info("pipboy: replay", "err", err)
			mc.close()
			return
		}
	}
	log.Info("pipboy: replay finished", "messages", len(msgs))
}

// RecordingFromStream turns a raw server-to-app stream (like
// testdata/pipboy/fo4-1.1.30-server-stream.bin) into a one-session recording whose
// messages all come from the game at time zero, so it can be replayed. Message sizes
// are bounded by maxSize (0: DefaultMaxMessageSize).
func RecordingFromStream(r io.Reader, maxSize int) (*Recording, error) {
	rd := NewReader(r)
	rd.MaxSize = maxSize
	rec := &Recording{Start: time.Now()}
	for {
		m, err := rd.ReadMessage()
		if err == io.EOF {
			return rec, nil
		}
		if err != nil {
			return nil, err
		}
		m.Content = append([]byte(nil), m.Content...)
		rec.Records = append(rec.Records, Record{Session: 1, Dir: FromGame, Message: m})
	}
}
