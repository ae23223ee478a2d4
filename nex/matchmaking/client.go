package matchmaking

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/protocols/common"
	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Client calls the matchmaking protocols over a logged-in secure connection,
// through the generated clients (nex/protocols/matchmaking).
type Client struct {
	RMC *rmc.Client
	// Version, when set, is the NEX version the client speaks; else the
	// connection's (RMC.Settings().NEXVersion()). Structures and some
	// parameters depend on it.
	Version types.Version
}

// versioned is a Caller whose settings carry the client's version.
type versioned struct {
	rmc.Caller
	v types.Version
}

func (v versioned) Settings() types.Settings {
	st := v.Caller.Settings()
	if v.v != 0 {
		st.Version = v.v
	}
	return st
}

func (c *Client) caller() rmc.Caller { return versioned{c.RMC, c.Version} }

func (c *Client) ext() mm.MatchmakeExtensionClient { return mm.MatchmakeExtensionClient{C: c.caller()} }

func (c *Client) mm() mm.MatchMakingClient { return mm.MatchMakingClient{C: c.caller()} }

func (c *Client) mmExt() mm.MatchMakingExtClient { return mm.MatchMakingExtClient{C: c.caller()} }

// session returns the MatchmakeSession an answer's AnyData holds.
func session(a types.AnyData, err error) (MatchmakeSession, error) {
	if err != nil {
		return MatchmakeSession{}, err
	}
	ms, _, err := FromAnyData(a)
	return ms, err
}

// AutoMatchmake calls AutoMatchmake_Postpone: join a session like ms or have it
// created.
func (c *Client) AutoMatchmake(ctx context.Context, ms MatchmakeSession, msg string) (MatchmakeSession, error) {
	return session(c.ext().AutoMatchmakePostpone(ctx, ms.AnyData(), msg))
}

// AutoMatchmakeWithCriteria calls AutoMatchmakeWithSearchCriteria_Postpone.
func (c *Client) AutoMatchmakeWithCriteria(ctx context.Context, crit []SearchCriteria, ms MatchmakeSession, msg string) (MatchmakeSession, error) {
	wc := make([]mm.MatchmakeSessionSearchCriteria, len(crit))
	for i := range crit {
		wc[i] = crit[i].Wire()
	}
	return session(c.ext().AutoMatchmakeWithSearchCriteriaPostpone(ctx, wc, ms.AnyData(), msg))
}

// CreateMatchmakeSession creates ms and returns its id and session key
// (participants is sent from NEX 3.4 on).
func (c *Client) CreateMatchmakeSession(ctx context.Context, ms MatchmakeSession, msg string, participants uint16) (uint32, []byte, error) {
	return c.ext().CreateMatchmakeSession(ctx, ms.AnyData(), msg, participants)
}

// JoinMatchmakeSession joins gid and returns the session key.
func (c *Client) JoinMatchmakeSession(ctx context.Context, gid uint32, msg string) ([]byte, error) {
	return c.ext().JoinMatchmakeSession(ctx, gid, msg)
}

// JoinWithParam calls JoinMatchmakeSessionWithParam.
func (c *Client) JoinWithParam(ctx context.Context, p JoinParam) (MatchmakeSession, error) {
	g, err := c.ext().JoinMatchmakeSessionWithParam(ctx, p.Wire())
	return SessionFromWire(&g), err
}

// SetParticipation calls OpenParticipation or CloseParticipation.
func (c *Client) SetParticipation(ctx context.Context, gid uint32, open bool) error {
	if open {
		return c.ext().OpenParticipation(ctx, gid)
	}
	return c.ext().CloseParticipation(ctx, gid)
}

// Find calls FindMatchmakeSessionBySingleGatheringId.
func (c *Client) Find(ctx context.Context, gid uint32) (MatchmakeSession, error) {
	g, err := c.ext().FindMatchmakeSessionBySingleGatheringId(ctx, gid)
	return SessionFromWire(&g), err
}

// Browse calls BrowseMatchmakeSessionNoHolder.
func (c *Client) Browse(ctx context.Context, crit SearchCriteria, rr types.ResultRange) ([]MatchmakeSession, error) {
	list, err := c.ext().BrowseMatchmakeSessionNoHolder(ctx, crit.Wire(), common.ResultRange(rr))
	if err != nil {
		return nil, err
	}
	out := make([]MatchmakeSession, len(list))
	for i := range list {
		out[i] = SessionFromWire(&list[i])
	}
	return out, nil
}

// EndParticipation leaves gid (Match Making Ext).
func (c *Client) EndParticipation(ctx context.Context, gid uint32, msg string) error {
	ok, err := c.mmExt().EndParticipation(ctx, gid, msg)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("matchmaking: EndParticipation(%d) answered false", gid)
	}
	return nil
}

// Participants calls Match Making Ext's GetParticipants.
func (c *Client) Participants(ctx context.Context, gid uint32) ([]types.PID, error) {
	return c.mmExt().GetParticipants(ctx, gid, true)
}

// ParticipantURLs calls Match Making's GetParticipantsURLs.
func (c *Client) ParticipantURLs(ctx context.Context, gid uint32) ([]types.StationURL, error) {
	return c.mm().GetParticipantsURLs(ctx, gid)
}

// UpdateSessionURL calls Match Making's UpdateSessionURL: the host gives the
// url its session is reached at.
func (c *Client) UpdateSessionURL(ctx context.Context, gid uint32, url string) error {
	_, err := c.mm().UpdateSessionURL(ctx, gid, url)
	return err
}

// SessionURLs calls Match Making's GetSessionURLs: the urls of a session's host.
func (c *Client) SessionURLs(ctx context.Context, gid uint32) ([]types.StationURL, error) {
	return c.mm().GetSessionURLs(ctx, gid)
}

// UpdateNotificationData calls UpdateNotificationData: the caller's data of
// one type, for its friends.
func (c *Client) UpdateNotificationData(ctx context.Context, typ uint32, p1, p2 types.PID, s string) error {
	return c.ext().UpdateNotificationData(ctx, typ, p1, p2, s)
}

// FriendNotificationData calls GetlstFriendNotificationData: the caller's
// friends' data of the given types.
func (c *Client) FriendNotificationData(ctx context.Context, typs []uint32) ([]notifications.Event, error) {
	list, err := c.ext().GetlstFriendNotificationData(ctx, typs)
	if err != nil {
		return nil, err
	}
	out := make([]notifications.Event, len(list))
	for i := range list {
		out[i] = notifications.EventFromWire(&list[i])
	}
	return out, nil
}

// BlockList calls GetMyBlackList.
func (c *Client) BlockList(ctx context.Context) ([]types.PID, error) {
	return c.ext().GetMyBlackList(ctx)
}

// Block calls AddToBlackList, or RemoveFromBlackList when unblock is set.
func (c *Client) Block(ctx context.Context, pids []types.PID, unblock bool) error {
	if unblock {
		return c.ext().RemoveFromBlackList(ctx, pids)
	}
	return c.ext().AddToBlackList(ctx, pids)
}
