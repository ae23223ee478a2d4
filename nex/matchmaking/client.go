package matchmaking

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Client calls the matchmaking protocols over a logged-in secure connection.
type Client struct {
	RMC *rmc.Client
	// Version is the NEX version the client speaks (structures and optional
	// parameters depend on it).
	Version types.Version
}

func (c *Client) call(ctx context.Context, protocol uint16, method uint32, params func(w *types.Writer)) (types.Reader, error) {
	w := types.NewWriter(nil, c.RMC.Settings())
	params(&w)
	b, err := w.Bytes()
	if err != nil {
		return types.Reader{}, err
	}
	data, err := c.RMC.Call(ctx, protocol, method, b)
	if err != nil {
		return types.Reader{}, err
	}
	return types.NewReader(data, c.RMC.Settings()), nil
}

func (c *Client) readHolder(r *types.Reader) (MatchmakeSession, error) {
	h := r.AnyDataHolder("joinedGathering")
	if err := r.Done(); err != nil {
		return MatchmakeSession{}, err
	}
	ms, _, _, err := ParseHolder(h, c.RMC.Settings(), c.Version)
	return ms, err
}

// AutoMatchmake calls AutoMatchmake_Postpone: join a session like ms or have it
// created.
func (c *Client) AutoMatchmake(ctx context.Context, ms MatchmakeSession, msg string) (MatchmakeSession, error) {
	h, err := ms.Holder(c.RMC.Settings(), c.Version)
	if err != nil {
		return ms, err
	}
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodAutoMatchmakePostpone, func(w *types.Writer) {
		w.AnyDataHolder(h)
		w.String(msg)
	})
	if err != nil {
		return ms, err
	}
	return c.readHolder(&r)
}

// AutoMatchmakeWithCriteria calls AutoMatchmakeWithSearchCriteria_Postpone.
func (c *Client) AutoMatchmakeWithCriteria(ctx context.Context, crit []SearchCriteria, ms MatchmakeSession, msg string) (MatchmakeSession, error) {
	h, err := ms.Holder(c.RMC.Settings(), c.Version)
	if err != nil {
		return ms, err
	}
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodAutoMatchmakeWithSearchCriteriaPostpone, func(w *types.Writer) {
		types.WriteList(w, crit, func(w *types.Writer, sc SearchCriteria) { sc.Append(w, c.Version) })
		w.AnyDataHolder(h)
		w.String(msg)
	})
	if err != nil {
		return ms, err
	}
	return c.readHolder(&r)
}

// CreateMatchmakeSession creates ms and returns its id and session key.
func (c *Client) CreateMatchmakeSession(ctx context.Context, ms MatchmakeSession, msg string, participants uint16) (uint32, []byte, error) {
	h, err := ms.Holder(c.RMC.Settings(), c.Version)
	if err != nil {
		return 0, nil, err
	}
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodCreateMatchmakeSession, func(w *types.Writer) {
		w.AnyDataHolder(h)
		w.String(msg)
		if c.Version >= types.Version3_4 {
			w.U16(participants)
		}
	})
	if err != nil {
		return 0, nil, err
	}
	gid := r.U32("gid")
	var key []byte
	if c.Version >= types.Version3 {
		key = append([]byte(nil), r.Buffer("sessionKey")...)
	}
	return gid, key, r.Done()
}

// JoinMatchmakeSession joins gid and returns the session key.
func (c *Client) JoinMatchmakeSession(ctx context.Context, gid uint32, msg string) ([]byte, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodJoinMatchmakeSession, func(w *types.Writer) {
		w.U32(gid)
		w.String(msg)
	})
	if err != nil {
		return nil, err
	}
	var key []byte
	if c.Version >= types.Version3 {
		key = append([]byte(nil), r.Buffer("sessionKey")...)
	}
	return key, r.Done()
}

// JoinWithParam calls JoinMatchmakeSessionWithParam.
func (c *Client) JoinWithParam(ctx context.Context, p JoinParam) (MatchmakeSession, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodJoinMatchmakeSessionWithParam, func(w *types.Writer) { p.Append(w, c.Version) })
	if err != nil {
		return MatchmakeSession{}, err
	}
	ms, _ := ReadMatchmakeSession(&r, c.Version)
	return ms, r.Done()
}

// SetParticipation calls OpenParticipation or CloseParticipation.
func (c *Client) SetParticipation(ctx context.Context, gid uint32, open bool) error {
	m := MethodCloseParticipation
	if open {
		m = MethodOpenParticipation
	}
	r, err := c.call(ctx, ProtocolMatchmakeExtension, m, func(w *types.Writer) { w.U32(gid) })
	if err != nil {
		return err
	}
	return r.Done()
}

// Find calls FindMatchmakeSessionBySingleGatheringId.
func (c *Client) Find(ctx context.Context, gid uint32) (MatchmakeSession, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodFindMatchmakeSessionBySingleGatheringID, func(w *types.Writer) { w.U32(gid) })
	if err != nil {
		return MatchmakeSession{}, err
	}
	ms, _ := ReadMatchmakeSession(&r, c.Version)
	return ms, r.Done()
}

// Browse calls BrowseMatchmakeSessionNoHolder.
func (c *Client) Browse(ctx context.Context, crit SearchCriteria, rr types.ResultRange) ([]MatchmakeSession, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodBrowseMatchmakeSessionNoHolder, func(w *types.Writer) {
		crit.Append(w, c.Version)
		if w.Err() == nil {
			if b, err := rr.Append(w.B, w.S); err == nil {
				w.B = b
			}
		}
	})
	if err != nil {
		return nil, err
	}
	list := types.ReadList(&r, "lstMatchmakeSession", func(r *types.Reader, _ string) MatchmakeSession {
		ms, _ := ReadMatchmakeSession(r, c.Version)
		return ms
	})
	return list, r.Done()
}

// EndParticipation leaves gid (Match Making Ext).
func (c *Client) EndParticipation(ctx context.Context, gid uint32, msg string) error {
	r, err := c.call(ctx, ProtocolMatchMakingExt, MethodEndParticipation, func(w *types.Writer) {
		w.U32(gid)
		w.String(msg)
	})
	if err != nil {
		return err
	}
	ok := r.Bool("%retval%")
	if err := r.Done(); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("matchmaking: EndParticipation(%d) answered false", gid)
	}
	return nil
}

// Participants calls Match Making Ext's GetParticipants.
func (c *Client) Participants(ctx context.Context, gid uint32) ([]types.PID, error) {
	r, err := c.call(ctx, ProtocolMatchMakingExt, MethodExtGetParticipants, func(w *types.Writer) {
		w.U32(gid)
		w.Bool(true)
	})
	if err != nil {
		return nil, err
	}
	pids := types.ReadList(&r, "lstParticipants", (*types.Reader).PID)
	return pids, r.Done()
}

// ParticipantURLs calls Match Making's GetParticipantsURLs.
func (c *Client) ParticipantURLs(ctx context.Context, gid uint32) ([]types.StationURL, error) {
	r, err := c.call(ctx, ProtocolMatchMaking, MethodGetParticipantsURLs, func(w *types.Writer) { w.U32(gid) })
	if err != nil {
		return nil, err
	}
	urls := types.ReadList(&r, "lstStationURL", (*types.Reader).StationURL)
	return urls, r.Done()
}

// UpdateSessionURL calls Match Making's UpdateSessionURL: the host gives the
// url its session is reached at.
func (c *Client) UpdateSessionURL(ctx context.Context, gid uint32, url string) error {
	r, err := c.call(ctx, ProtocolMatchMaking, MethodUpdateSessionURL, func(w *types.Writer) {
		w.U32(gid)
		w.String(url)
	})
	if err != nil {
		return err
	}
	r.Bool("retval")
	return r.Done()
}

// SessionURLs calls Match Making's GetSessionURLs: the urls of a session's host.
func (c *Client) SessionURLs(ctx context.Context, gid uint32) ([]types.StationURL, error) {
	r, err := c.call(ctx, ProtocolMatchMaking, MethodGetSessionURLs, func(w *types.Writer) { w.U32(gid) })
	if err != nil {
		return nil, err
	}
	urls := types.ReadList(&r, "lstURLs", (*types.Reader).StationURL)
	return urls, r.Done()
}

// UpdateNotificationData calls UpdateNotificationData: the caller's data of
// one type, for its friends.
func (c *Client) UpdateNotificationData(ctx context.Context, typ uint32, p1, p2 types.PID, s string) error {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodUpdateNotificationData, func(w *types.Writer) {
		w.U32(typ)
		w.PID(p1)
		w.PID(p2)
		w.String(s)
	})
	if err != nil {
		return err
	}
	return r.Done()
}

// FriendNotificationData calls GetlstFriendNotificationData: the caller's
// friends' data of the given types.
func (c *Client) FriendNotificationData(ctx context.Context, typs []uint32) ([]notifications.Event, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodGetlstFriendNotificationData, func(w *types.Writer) {
		types.WriteList(w, typs, (*types.Writer).U32)
	})
	if err != nil {
		return nil, err
	}
	evs := types.ReadList(&r, "dataList", func(r *types.Reader, _ string) notifications.Event { return notifications.ReadEvent(r, c.Version) })
	return evs, r.Done()
}

// BlockList calls GetMyBlackList.
func (c *Client) BlockList(ctx context.Context) ([]types.PID, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodGetMyBlockList, func(*types.Writer) {})
	if err != nil {
		return nil, err
	}
	pids := types.ReadList(&r, "lstPrincipalId", (*types.Reader).PID)
	return pids, r.Done()
}

// Block calls AddToBlackList, or RemoveFromBlackList when unblock is set.
func (c *Client) Block(ctx context.Context, pids []types.PID, unblock bool) error {
	m := MethodAddToBlockList
	if unblock {
		m = MethodRemoveFromBlockList
	}
	r, err := c.call(ctx, ProtocolMatchmakeExtension, m, func(w *types.Writer) { types.WriteList(w, pids, (*types.Writer).PID) })
	if err != nil {
		return err
	}
	return r.Done()
}
