package friends

import (
	"context"
	"testing"

	"github.com/gamewire/gamewire/nex/nodes"
	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	nn "github.com/gamewire/gamewire/nex/protocols/nintendonotification"
	"github.com/gamewire/gamewire/nex/types"
)

// FuzzReceive feeds Receive (the decoder of the notifications other nodes
// post) arbitrary mail: an error or a delivery, never a panic.
func FuzzReceive(f *testing.F) {
	for _, ev := range []nn.NintendoNotificationEvent{
		{Type: EventWiiUPresence, PID: 1000, Data: types.AnyData{Object: &fp.NintendoPresenceV2{IsOnline: true, Message: "racing", Unk5: 3}}},
		{Type: Event3DSPresence, PID: 1001, Data: types.AnyData{Object: &fp.NintendoPresence{GameModeDescription: "x", ApplicationData: []byte{1, 2}}}},
		{Type: EventOffline, PID: 1002, Data: types.AnyData{Object: &nn.NintendoNotificationEventGeneral{Param2: 7, Text: "t"}}},
		{Type: EventWiiURequest, PID: 1003, Data: types.AnyData{Object: &fp.FriendRequest{Message: fp.FriendRequestMessage{Message: "hi"}}}},
	} {
		w := types.NewWriter([]byte{2}, mailSettings)
		ev.Append(&w)
		b, err := w.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	s := &Server{}
	f.Fuzz(func(t *testing.T, payload []byte) {
		err := s.Receive(context.Background(), nodes.Message{PID: 5, Kind: MailKind, Payload: payload})
		if len(payload) == 0 && err == nil {
			t.Fatal("empty mail accepted")
		}
	})
}
