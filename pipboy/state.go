package pipboy

import "fmt"

// GameState follows what a game sends to an app: the type 1 greeting, the database,
// the latest local map frame, command responses and Busy. The Client, the decode
// command and tests use it to interpret a server-to-app stream.
type GameState struct {
	Hello     Hello
	HelloSeen bool
	Busy      bool
	DB        *Database
	Map       MapFrame          // latest frame; Pixels is a private copy
	MapFrames int               // frames seen
	Responses []CommandResponse // the latest responses, up to 64
	Messages  [7]int            // messages seen by type
}

// NewGameState returns a GameState with an empty database.
func NewGameState() *GameState { return &GameState{DB: NewDatabase()} }

// Handle interprets one game-to-app message. A message type the game does not send
// (command request) is an error; so is anything that fails to parse. A failed update
// leaves the database as it was.
func (s *GameState) Handle(m Message) error {
	if !m.Type.Valid() {
		return fmt.Errorf("pipboy: %w %d", ErrUnknownMessageType, m.Type)
	}
	s.Messages[m.Type]++
	switch m.Type {
	case TypeHeartbeat:
	case TypeNewConnection:
		h, err := ParseHello(m.Content)
		if err != nil {
			return err
		}
		s.Hello, s.HelloSeen = h, true
	case TypeBusy:
		s.Busy = true
	case TypeDataUpdate:
		return s.DB.Apply(m.Content)
	case TypeLocalMapUpdate:
		f, err := ParseMapFrame(m.Content)
		if err != nil {
			return err
		}
		f.Pixels = append(s.Map.Pixels[:0], f.Pixels...)
		s.Map = f
		s.MapFrames++
	case TypeCommandResponse:
		r, err := ParseCommandResponse(m.Content)
		if err != nil {
			return err
		}
		if len(s.Responses) >= 64 {
			s.Responses = append(s.Responses[:0], s.Responses[1:]...)
		}
		s.Responses = append(s.Responses, r)
	case TypeCommandRequest:
		return fmt.Errorf("pipboy: %s from the game side", m.Type)
	}
	return nil
}
