package friends

import (
	"context"
	"fmt"
	"strconv"

	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// v2 answers Friends_V2 (102), the Wii U friends service.
type v2 struct{ s *Server }

var _ fp.FriendsV2Handler = v2{}

// ParamError answers parameters that do not decode with FPD::InvalidArgument.
func (v2) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %v", types.FPDInvalidArgument, err)
}

func checkMii(m fp.MiiV2) error {
	if err := checkSize("Mii data", len(m.Data), MaxMiiData); err != nil {
		return err
	}
	return checkSize("Mii name", len(m.Name), MaxComment)
}

// UpdateAndGetAllInformation is the Wii U's login: it records the account's
// NNID, Mii and birthday and its presence, tells its friends, and answers
// everything the console shows.
func (h v2) UpdateAndGetAllInformation(ctx context.Context, c *rmc.Call, nna fp.NNAInfo, presence fp.NintendoPresenceV2, birthday types.DateTime) (
	pref fp.PrincipalPreference, comment fp.Comment, friends []fp.FriendInfo, sent, received []fp.FriendRequest,
	blacklist []fp.BlacklistedPrincipal, unk1 bool, notifications []fp.PersistentNotification, unk2 bool, err error) {
	s := h.s
	pid := me(c)
	info := nna.PrincipalInfo
	if err = checkMii(info.Mii); err != nil {
		return
	}
	if err = checkSize("NNID", len(info.NNID), 64); err != nil {
		return
	}
	now := s.now()
	prof, err := s.Store.UpdateProfile(ctx, pid, func(p *Profile) error {
		p.NNID, p.Birthday, p.Platform = info.NNID, birthday, PlatformWiiU
		if info.Mii.Name != "" || len(info.Mii.Data) > 0 {
			p.Mii = Mii{Name: info.Mii.Name, Unk1: info.Mii.Unk1, Unk2: info.Mii.Unk2, Data: clone(info.Mii.Data), Changed: now}
		}
		return nil
	})
	if err != nil {
		return
	}
	if err = s.setPresence(ctx, pid, presenceFromV2(presence, now)); err != nil {
		return
	}
	pref = fp.PrincipalPreference{ShowOnlineStatus: !prof.HideOnline, ShowCurrentTitle: !prof.HideTitle, BlockFriendRequests: prof.BlockRequests}
	comment = fp.Comment{Unk: prof.CommentUnk, Text: prof.Comment, Changed: dt(prof.CommentChanged)}
	links, err := s.Store.Links(ctx, pid)
	if err != nil {
		return
	}
	if friends, err = s.friendInfos(ctx, links); err != nil {
		return
	}
	rs, rr, err := s.Store.Requests(ctx, pid, now)
	if err != nil {
		return
	}
	if sent, err = s.requests(ctx, rs, true); err != nil {
		return
	}
	if received, err = s.requests(ctx, rr, false); err != nil {
		return
	}
	if blacklist, err = s.blacklist(ctx, pid); err != nil {
		return
	}
	if notifications, err = s.persistent(ctx, pid); err != nil {
		return
	}
	return pref, comment, friends, sent, received, blacklist, false, notifications, false, nil
}

// persistent returns pid's kept notifications as the console receives them.
// The structure's fields have no published names; gamewire fills them so
// that each says what happened (judgement call, docs/nex.md "Friends"):
// unk1 the notification's id (DeletePersistentNotification names it), unk2
// the NintendoNotification event type it stands for (27 a friend request,
// 30 a friendship, 26 a removal or a withdrawn request), unk3 the PID of who
// caused it, unk4 its time in Unix seconds, string a request's message.
func (s *Server) persistent(ctx context.Context, pid types.PID) ([]fp.PersistentNotification, error) {
	ns, err := s.Store.Notifications(ctx, pid)
	if err != nil {
		return nil, err
	}
	out := make([]fp.PersistentNotification, len(ns))
	for i, n := range ns {
		out[i] = fp.PersistentNotification{Unk1: n.ID, Unk2: n.Type, Unk3: uint32(n.From), Unk4: uint32(n.At.Unix()), String: n.Text}
	}
	return out, nil
}

func (s *Server) blacklist(ctx context.Context, pid types.PID) ([]fp.BlacklistedPrincipal, error) {
	bs, err := s.Store.Blocks(ctx, pid)
	if err != nil {
		return nil, err
	}
	pids := make([]types.PID, len(bs))
	for i, b := range bs {
		pids[i] = b.PID
	}
	infos, err := s.basicInfos(ctx, pids)
	if err != nil {
		return nil, err
	}
	out := make([]fp.BlacklistedPrincipal, len(bs))
	for i, b := range bs {
		out[i] = blacklisted(b, infos[b.PID])
	}
	return out, nil
}

// request sends a request and answers it with the target's FriendInfo; when
// the target had asked already, the two are friends and the request answered
// is the target's.
func (h v2) request(ctx context.Context, c *rmc.Call, to types.PID, msg string, game GameKey) (fp.FriendRequest, fp.FriendInfo, error) {
	r, link, err := h.s.sendRequest(ctx, me(c), to, msg, game)
	if err != nil {
		return fp.FriendRequest{}, fp.FriendInfo{}, err
	}
	since := link
	l := Link{PID: to}
	if since != nil {
		l.Since = since.Since
	}
	infos, err := h.s.friendInfos(ctx, []Link{l})
	if err != nil {
		return fp.FriendRequest{}, fp.FriendInfo{}, err
	}
	return friendRequest(r, infos[0].NnaInfo.PrincipalInfo), infos[0], nil
}

func (h v2) AddFriend(ctx context.Context, c *rmc.Call, pid types.PID) (fp.FriendRequest, fp.FriendInfo, error) {
	return h.request(ctx, c, pid, "", GameKey{})
}

// AddFriendByName resolves name (Server.Names, else a PID in decimal).
func (h v2) AddFriendByName(ctx context.Context, c *rmc.Call, name string) (fp.FriendRequest, fp.FriendInfo, error) {
	var pid types.PID
	if h.s.Names != nil {
		p, err := h.s.Names(ctx, name)
		if err != nil {
			return fp.FriendRequest{}, fp.FriendInfo{}, fmt.Errorf("%w: %q: %v", types.FPDInvalidAccount, name, err)
		}
		pid = p
	} else {
		n, err := strconv.ParseUint(name, 10, 32)
		if err != nil {
			return fp.FriendRequest{}, fp.FriendInfo{}, fmt.Errorf("%w: %q is not a known name", types.FPDInvalidAccount, name)
		}
		pid = types.PID(n)
	}
	return h.request(ctx, c, pid, "", GameKey{})
}

func (h v2) RemoveFriend(ctx context.Context, c *rmc.Call, pid types.PID) error {
	return h.s.remove(ctx, me(c), pid)
}

// AddFriendRequest sends a request with a message: unk1 is the recipient's
// PID and unk3 the message (NintendoClients leaves the fields unnamed).
func (h v2) AddFriendRequest(ctx context.Context, c *rmc.Call, unk1 uint32, unk2 uint8, unk3 string, unk4 uint8, unk5 string,
	game fp.GameKey, unk6 types.DateTime) (fp.FriendRequest, fp.FriendInfo, error) {
	return h.request(ctx, c, types.PID(unk1), unk3, gameKey(game))
}

// CancelFriendRequest withdraws the caller's request and tells the
// recipient with event 26, which the nintendo-wiki names for a removed
// friend or a cancelled request alike (Pretendo's friends server sends the
// same); an offline recipient finds it among its persistent notifications.
func (h v2) CancelFriendRequest(ctx context.Context, c *rmc.Call, id uint64) error {
	r, err := h.s.Store.DeleteRequest(ctx, me(c), id, true)
	if err != nil {
		return err
	}
	h.s.unfriended(ctx, me(c), r.Recipient, false)
	return nil
}

func (h v2) AcceptFriendRequest(ctx context.Context, c *rmc.Call, id uint64) (fp.FriendInfo, error) {
	s := h.s
	r, link, err := s.Store.AcceptRequest(ctx, me(c), id, s.now(), s.Limits)
	if err != nil {
		return fp.FriendInfo{}, err
	}
	s.befriended(ctx, me(c), r.Sender, link.Since)
	infos, err := s.friendInfos(ctx, []Link{{PID: r.Sender, Since: link.Since}})
	if err != nil {
		return fp.FriendInfo{}, err
	}
	return infos[0], nil
}

func (h v2) DeleteFriendRequest(ctx context.Context, c *rmc.Call, id uint64) error {
	_, err := h.s.Store.DeleteRequest(ctx, me(c), id, false)
	return err
}

// DenyFriendRequest deletes the request and blocks its sender.
func (h v2) DenyFriendRequest(ctx context.Context, c *rmc.Call, id uint64) (fp.BlacklistedPrincipal, error) {
	s := h.s
	r, err := s.Store.DeleteRequest(ctx, me(c), id, false)
	if err != nil {
		return fp.BlacklistedPrincipal{}, err
	}
	b, err := s.Store.AddBlock(ctx, me(c), Block{PID: r.Sender, Game: r.Game, Since: s.now()}, s.Limits)
	if err != nil {
		return fp.BlacklistedPrincipal{}, err
	}
	infos, err := s.basicInfos(ctx, []types.PID{r.Sender})
	if err != nil {
		return fp.BlacklistedPrincipal{}, err
	}
	return blacklisted(b, infos[r.Sender]), nil
}

func (h v2) MarkFriendRequestsAsReceived(ctx context.Context, c *rmc.Call, ids []uint64) error {
	if err := checkList("request id list", len(ids)); err != nil {
		return err
	}
	return h.s.Store.MarkReceived(ctx, me(c), ids)
}

func (h v2) AddBlackList(ctx context.Context, c *rmc.Call, p fp.BlacklistedPrincipal) (fp.BlacklistedPrincipal, error) {
	s := h.s
	other := p.PrincipalInfo.PID
	wasFriend, err := s.Store.AreFriends(ctx, me(c), other)
	if err != nil {
		return fp.BlacklistedPrincipal{}, err
	}
	b, err := s.Store.AddBlock(ctx, me(c), Block{PID: other, Game: gameKey(p.GameKey), Since: s.now()}, s.Limits)
	if err != nil {
		return fp.BlacklistedPrincipal{}, err
	}
	if wasFriend {
		s.unfriended(ctx, me(c), other, true)
	}
	infos, err := s.basicInfos(ctx, []types.PID{other})
	if err != nil {
		return fp.BlacklistedPrincipal{}, err
	}
	return blacklisted(b, infos[other]), nil
}

func (h v2) RemoveBlackList(ctx context.Context, c *rmc.Call, pid types.PID) error {
	ok, err := h.s.Store.RemoveBlock(ctx, me(c), pid)
	if err == nil && !ok {
		err = fmt.Errorf("%w: PID %d", types.FPDNotInMyBlacklist, pid)
	}
	return err
}

func (h v2) UpdatePresence(ctx context.Context, c *rmc.Call, p fp.NintendoPresenceV2) error {
	return h.s.setPresence(ctx, me(c), presenceFromV2(p, h.s.now()))
}

func (h v2) UpdateMii(ctx context.Context, c *rmc.Call, m fp.MiiV2) (types.DateTime, error) {
	if err := checkMii(m); err != nil {
		return 0, err
	}
	now := h.s.now()
	_, err := h.s.Store.UpdateProfile(ctx, me(c), func(p *Profile) error {
		p.Mii = Mii{Name: m.Name, Unk1: m.Unk1, Unk2: m.Unk2, Data: clone(m.Data), Changed: now}
		return nil
	})
	return dt(now), err
}

func (h v2) UpdateComment(ctx context.Context, c *rmc.Call, cm fp.Comment) (types.DateTime, error) {
	if err := checkSize("comment", len(cm.Text), MaxComment); err != nil {
		return 0, err
	}
	now := h.s.now()
	_, err := h.s.Store.UpdateProfile(ctx, me(c), func(p *Profile) error {
		p.Comment, p.CommentUnk, p.CommentChanged = cm.Text, cm.Unk, now
		return nil
	})
	return dt(now), err
}

func (h v2) UpdatePreference(ctx context.Context, c *rmc.Call, p fp.PrincipalPreference) error {
	_, err := h.s.Store.UpdateProfile(ctx, me(c), func(pr *Profile) error {
		pr.HideOnline, pr.HideTitle, pr.BlockRequests = !p.ShowOnlineStatus, !p.ShowCurrentTitle, p.BlockFriendRequests
		return nil
	})
	return err
}

// GetBasicInfo answers the public information (NNID, Mii) of any player who
// has used the friends server.
func (h v2) GetBasicInfo(ctx context.Context, c *rmc.Call, pids []types.PID) ([]fp.PrincipalBasicInfo, error) {
	if err := checkList("PID list", len(pids)); err != nil {
		return nil, err
	}
	pids = uniq(pids)
	profs, err := h.s.Store.Profiles(ctx, pids)
	if err != nil {
		return nil, err
	}
	out := []fp.PrincipalBasicInfo{}
	for _, pid := range pids {
		if p, ok := profs[pid]; ok {
			out = append(out, basicInfo(pid, p))
		}
	}
	return out, nil
}

// DeletePersistentNotification deletes the caller's notifications named by
// their unk1 (the id UpdateAndGetAllInformation gave). A list none of which
// is the caller's is FPD::NotificationNotFound; one that is partly deleted
// already succeeds (a console repeating a call whose answer it lost).
func (h v2) DeletePersistentNotification(ctx context.Context, c *rmc.Call, ns []fp.PersistentNotification) error {
	if err := checkList("notification list", len(ns)); err != nil {
		return err
	}
	if len(ns) == 0 {
		return nil
	}
	ids := make([]uint64, len(ns))
	for i, n := range ns {
		ids[i] = n.Unk1
	}
	n, err := h.s.Store.DeleteNotifications(ctx, me(c), ids)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: none of %d notifications is PID %d's", types.FPDNotificationNotFound, len(ids), me(c))
	}
	return nil
}

// CheckSettingStatus answers 0xFF, as Pretendo's friends server does (the
// value's meaning is not published).
func (h v2) CheckSettingStatus(ctx context.Context, c *rmc.Call) (uint8, error) { return 0xFF, nil }

// GetRequestBlockSettings answers, per PID, whether a friend request from
// the caller would be refused: the player takes none, or blocked the caller.
func (h v2) GetRequestBlockSettings(ctx context.Context, c *rmc.Call, pids []uint32) ([]fp.PrincipalRequestBlockSetting, error) {
	if err := checkList("PID list", len(pids)); err != nil {
		return nil, err
	}
	profs, err := h.s.Store.Profiles(ctx, u32PIDs(pids))
	if err != nil {
		return nil, err
	}
	out := make([]fp.PrincipalRequestBlockSetting, len(pids))
	for i, p := range pids {
		blocked, err := h.s.Store.Blocked(ctx, types.PID(p), me(c))
		if err != nil {
			return nil, err
		}
		out[i] = fp.PrincipalRequestBlockSetting{PID: p, Blocked: blocked || profs[types.PID(p)].BlockRequests}
	}
	return out, nil
}
