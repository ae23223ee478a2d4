// Package messagedelivery serves MessageDelivery (protocol 27; nintendo-wiki
// "Messaging (23)" for the messages, Pretendo Network's nex-protocols-go
// message-delivery for DeliverMessageMultiTarget): a player sends a message (a
// TextMessage or BinaryMessage in an AnyDataHolder) to a player, to the
// participants of a gathering, or to a list of players. The server fills in
// the message's id, sender and reception time, keeps it for every recipient in
// the store (Store), and hands it to each recipient online on this server by
// calling DeliverMessage on their connection, as NEX servers do (NintendoClients'
// MessageDeliveryServer is that client side). The protocol is answered with
// nothing, as its description says.
package messagedelivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/protocols/messaging"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// MaxRecipients bounds the recipients of one message (a DeliverMessageMultiTarget
// list, a gathering's participants): more is refused with Core::InvalidArgument.
const MaxRecipients = 256

// Message is a delivered message as the store keeps it.
type Message struct {
	ID     uint32
	Sender types.PID
	// Class is the message's class ("TextMessage", "BinaryMessage").
	Class string
	// Body is the message (its AnyDataHolder's data), encoded with
	// BodySettings at BodyVersion, id included.
	Body    []byte
	Created time.Time
}

// BodySettings encodes messages in the store, whatever the sender's version:
// 8-byte PIDs, structure headers, the NEX 4 layout of UserMessage (its
// recipient a MessageRecipient).
var BodySettings = types.Settings{PIDSize: 8, StructureHeader: true, Version: types.Version4}

// Store keeps delivered messages for their recipients.
type Store interface {
	// DeliverMessage stores a message from sender for recipients and returns
	// its id; body encodes the message with that id (in the store's
	// transaction).
	DeliverMessage(ctx context.Context, sender types.PID, recipients []types.PID, class string, body func(id uint32) ([]byte, error)) (uint32, error)
	// Inbox returns up to limit messages kept for pid, oldest first.
	Inbox(ctx context.Context, pid types.PID, limit int) ([]Message, error)
}

// Participants lists the players of a gathering, for messages to a gathering.
type Participants func(ctx context.Context, gid uint32) ([]types.PID, error)

// Server answers MessageDelivery.
type Server struct {
	Store Store
	// Hub reaches the recipients' connections; nil only stores messages.
	Hub *notifications.Hub
	// Participants resolves gathering recipients; nil refuses them.
	Participants Participants
	// Now returns the reception time; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

var _ messaging.MessageDeliveryHandler = (*Server)(nil)

// Register registers s for MessageDelivery on mux.
func (s *Server) Register(mux *rmc.Mux) { messaging.RegisterMessageDelivery(mux, s) }

// ErrNotUserMessage: the AnyDataHolder does not carry a UserMessage.
var ErrNotUserMessage = errors.New("messagedelivery: not a UserMessage")

// userMessage returns the UserMessage of a decoded message.
func userMessage(a types.AnyData) (*messaging.UserMessage, error) {
	switch m := a.Object.(type) {
	case *messaging.TextMessage:
		return &m.UserMessage, nil
	case *messaging.BinaryMessage:
		return &m.UserMessage, nil
	case *messaging.UserMessage:
		return m, nil
	}
	return nil, fmt.Errorf("%w: class %q", ErrNotUserMessage, a.ClassName())
}

// DeliverMessage implements messaging.MessageDeliveryHandler: the recipient is
// the message's (a principal, or a gathering's participants).
func (s *Server) DeliverMessage(ctx context.Context, c *rmc.Call, message types.AnyData) error {
	um, err := userMessage(message)
	if err != nil {
		return fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
	}
	typ, pid, gid := um.Recipient.Type, um.Recipient.PID, um.Recipient.GID
	if c.Peer.Settings.NEXVersion() < types.Version4 {
		// The NEX 3 layout: an id, a principal's or a gathering's.
		typ, pid, gid = um.RecipientType, types.PID(um.RecipientID), um.RecipientID
		um.Recipient = messaging.MessageRecipient{Type: typ}
		if messaging.RecipientType(typ) == messaging.RecipientTypeGathering {
			um.Recipient.GID = gid
		} else {
			um.Recipient.PID = pid
		}
	} else {
		um.RecipientType, um.RecipientID = typ, uint32(pid)
		if messaging.RecipientType(typ) == messaging.RecipientTypeGathering {
			um.RecipientID = gid
		}
	}
	var to []types.PID
	switch messaging.RecipientType(typ) {
	case messaging.RecipientTypePrincipal:
		to = []types.PID{pid}
	case messaging.RecipientTypeGathering:
		if s.Participants == nil {
			return fmt.Errorf("%w: messages to a gathering are not served here", types.CoreNotImplemented)
		}
		if to, err = s.Participants(ctx, gid); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: recipient type %d", types.CoreInvalidArgument, typ)
	}
	return s.deliver(ctx, c, to, message, um)
}

// DeliverMessageMultiTarget implements messaging.MessageDeliveryHandler.
func (s *Server) DeliverMessageMultiTarget(ctx context.Context, c *rmc.Call, targets []types.PID, message types.AnyData) error {
	um, err := userMessage(message)
	if err != nil {
		return fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
	}
	return s.deliver(ctx, c, targets, message, um)
}

func (s *Server) deliver(ctx context.Context, c *rmc.Call, to []types.PID, message types.AnyData, um *messaging.UserMessage) error {
	slices.Sort(to)
	to = slices.Compact(to)
	to = slices.DeleteFunc(to, func(p types.PID) bool { return p == 0 })
	if len(to) == 0 {
		return fmt.Errorf("%w: no recipient", types.CoreInvalidArgument)
	}
	if len(to) > MaxRecipients {
		return fmt.Errorf("%w: %d recipients (at most %d)", types.CoreInvalidArgument, len(to), MaxRecipients)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	um.Sender = c.Peer.PID
	um.ReceptionTime = types.DateTimeFromTime(now().UTC())
	id, err := s.Store.DeliverMessage(ctx, c.Peer.PID, to, message.ClassName(), func(id uint32) ([]byte, error) {
		um.ID = id
		w := types.NewWriter(nil, BodySettings)
		message.Object.Append(&w)
		return w.Bytes()
	})
	if err != nil {
		return err
	}
	um.ID = id
	if s.Hub == nil {
		return nil
	}
	for _, pid := range to {
		err := s.Hub.Call(ctx, pid, messaging.MessageDeliveryProtocolID, messaging.MessageDeliveryMethodDeliverMessage,
			func(w *types.Writer, _ types.Version) {
				(&messaging.MessageDeliveryDeliverMessageRequest{Message: message}).Append(w)
			})
		if err != nil && !errors.Is(err, notifications.ErrOffline) && s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex: message not handed over", slog.Uint64("pid", uint64(pid)),
				slog.Uint64("message", uint64(id)), slog.String("error", err.Error()))
		}
	}
	return nil
}
