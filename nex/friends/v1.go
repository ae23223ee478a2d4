package friends

import (
	"context"
	"errors"
	"fmt"

	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	nn "github.com/gamewire/gamewire/nex/protocols/nintendonotification"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// v1 answers Friends_V1 (101), the 3DS friends service.
type v1 struct{ s *Server }

var _ fp.FriendsV1Handler = v1{}

// ParamError answers parameters that do not decode with FPD::InvalidArgument.
func (v1) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %v", types.FPDInvalidArgument, err)
}

func me(c *rmc.Call) types.PID { return c.Peer.PID }

func (h v1) update(ctx context.Context, c *rmc.Call, f func(p *Profile) error) (Profile, error) {
	return h.s.Store.UpdateProfile(ctx, me(c), f)
}

func (h v1) UpdateProfile(ctx context.Context, c *rmc.Call, p fp.MyProfile) error {
	if err := checkSize("MAC address", len(p.MacAddress), 64); err != nil {
		return err
	}
	if err := checkSize("serial number", len(p.SerialNumber), 64); err != nil {
		return err
	}
	_, err := h.update(ctx, c, func(pr *Profile) error {
		pr.Region, pr.Country, pr.Area, pr.Language, pr.Platform = p.Region, p.Country, p.Area, p.Language, p.Platform
		pr.LFCS, pr.MAC, pr.Serial = p.LocalFriendCodeSeed, p.MacAddress, p.SerialNumber
		return nil
	})
	return err
}

func (h v1) UpdateMii(ctx context.Context, c *rmc.Call, m fp.Mii) error {
	if err := checkSize("Mii data", len(m.MiiData), MaxMiiData); err != nil {
		return err
	}
	if err := checkSize("Mii name", len(m.Name), MaxComment); err != nil {
		return err
	}
	now := h.s.now()
	if _, err := h.update(ctx, c, func(pr *Profile) error {
		pr.Mii = Mii{Name: m.Name, Unk1: boolByte(m.Unk1), Unk2: m.Unk2, Data: clone(m.MiiData), Changed: now}
		return nil
	}); err != nil {
		return err
	}
	h.s.profileChanged(ctx, me(c), func() nn.NintendoNotificationEvent {
		return general(Event3DSMii, me(c), nn.NintendoNotificationEventGeneral{})
	})
	return nil
}

func (h v1) UpdateMiiList(ctx context.Context, c *rmc.Call, l fp.MiiList) error {
	if err := checkSize("Mii list", len(l.MiiDatas), MaxMiiList); err != nil {
		return err
	}
	datas := make([][]byte, len(l.MiiDatas))
	for i, d := range l.MiiDatas {
		if err := checkSize("Mii data", len(d), MaxMiiData); err != nil {
			return err
		}
		datas[i] = clone(d)
	}
	now := h.s.now()
	_, err := h.update(ctx, c, func(pr *Profile) error {
		pr.MiiList = MiiList{Unk1: l.Unk1, Unk2: l.Unk2, Unk3: l.Unk3, Datas: datas, Changed: now}
		return nil
	})
	return err
}

func (h v1) UpdatePlayedGames(ctx context.Context, c *rmc.Call, games []fp.PlayedGame) error {
	if err := checkSize("played games list", len(games), MaxPlayed); err != nil {
		return err
	}
	played := make([]PlayedGame, len(games))
	for i, g := range games {
		played[i] = PlayedGame{Game: gameKey(g.GameKey), At: g.Datetime.Time()}
	}
	_, err := h.update(ctx, c, func(pr *Profile) error { pr.Played = played; return nil })
	return err
}

func (h v1) UpdatePreference(ctx context.Context, c *rmc.Call, showOnline, showTitle, blockRequests bool) error {
	_, err := h.update(ctx, c, func(pr *Profile) error {
		pr.HideOnline, pr.HideTitle, pr.BlockRequests = !showOnline, !showTitle, blockRequests
		return nil
	})
	return err
}

// keyPIDs are the PIDs of FriendKeys (their first field).
func keyPIDs(keys []fp.FriendKey) []types.PID {
	out := make([]types.PID, len(keys))
	for i, k := range keys {
		out[i] = types.PID(k.Unk1)
	}
	return out
}

// friendProfiles returns the profiles of those of want who are pid's friends.
func (s *Server) friendProfiles(ctx context.Context, pid types.PID, want []types.PID) ([]types.PID, map[types.PID]Profile, error) {
	pids, err := s.friendsAmong(ctx, pid, want)
	if err != nil {
		return nil, nil, err
	}
	profs, err := s.Store.Profiles(ctx, pids)
	return pids, profs, err
}

// perFriend answers f for each of want that is pid's friend (or pid), in
// want's order; f's false leaves one out.
func perFriend[T any](ctx context.Context, s *Server, pid types.PID, want []types.PID, f func(pid types.PID, p Profile) (T, bool)) ([]T, error) {
	pids, profs, err := s.friendProfiles(ctx, pid, want)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(pids))
	for _, p := range pids {
		if v, ok := f(p, profs[p]); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

func (h v1) GetFriendMii(ctx context.Context, c *rmc.Call, keys []fp.FriendKey) ([]fp.FriendMii, error) {
	return perFriend(ctx, h.s, me(c), keyPIDs(keys), func(pid types.PID, p Profile) (fp.FriendMii, bool) {
		m := p.Mii
		return fp.FriendMii{PID: pid, Mii: fp.Mii{Name: m.Name, Unk1: m.Unk1 != 0, Unk2: m.Unk2, MiiData: clone(m.Data)},
			ModifiedAt: dt(m.Changed)}, true
	})
}

func (h v1) GetFriendMiiList(ctx context.Context, c *rmc.Call, keys []fp.FriendKey) ([]fp.FriendMiiList, error) {
	return perFriend(ctx, h.s, me(c), keyPIDs(keys), func(pid types.PID, p Profile) (fp.FriendMiiList, bool) {
		l := p.MiiList
		datas := make([][]byte, len(l.Datas))
		for i, d := range l.Datas {
			datas[i] = clone(d)
		}
		return fp.FriendMiiList{Unk1: uint32(pid), Mii: fp.MiiList{Unk1: l.Unk1, Unk2: l.Unk2, Unk3: l.Unk3, MiiDatas: datas},
			Unk2: dt(l.Changed)}, true
	})
}

func u32PIDs(ids []uint32) []types.PID {
	out := make([]types.PID, len(ids))
	for i, id := range ids {
		out[i] = types.PID(id)
	}
	return out
}

// IsActiveGame answers which of the given friends are online playing game.
func (h v1) IsActiveGame(ctx context.Context, c *rmc.Call, pids []uint32, game fp.GameKey) ([]uint32, error) {
	friends, err := h.s.friendsAmong(ctx, me(c), u32PIDs(pids))
	if err != nil {
		return nil, err
	}
	pres, err := h.s.Store.Presences(ctx, friends)
	if err != nil {
		return nil, err
	}
	profs, err := h.s.Store.Profiles(ctx, friends)
	if err != nil {
		return nil, err
	}
	out := []uint32{}
	for _, pid := range friends {
		p, ok := pres[pid]
		if ok && pid != me(c) && !profs[pid].HideOnline && !profs[pid].HideTitle && p.Game.TitleID == game.TitleID {
			out = append(out, uint32(pid))
		}
	}
	return out, nil
}

// relationships returns pid's FriendRelationship with each of others that is
// a friend (complete) or that pid asked (not complete).
func (s *Server) relationships(ctx context.Context, pid types.PID, others []types.PID) ([]fp.FriendRelationship, error) {
	if err := checkList("PID list", len(others)); err != nil {
		return nil, err
	}
	links, err := s.Store.Links(ctx, pid)
	if err != nil {
		return nil, err
	}
	sent, _, err := s.Store.Requests(ctx, pid, s.now())
	if err != nil {
		return nil, err
	}
	state := map[types.PID]bool{} // present: related; true: complete
	for _, r := range sent {
		state[r.Recipient] = false
	}
	for _, l := range links {
		state[l.PID] = true
	}
	out := []fp.FriendRelationship{}
	seen := map[types.PID]bool{}
	for _, o := range others {
		if complete, ok := state[o]; ok && !seen[o] {
			seen[o] = true
			out = append(out, relationship(o, complete))
		}
	}
	return out, nil
}

// GetPrincipalIdByLocalFriendCode resolves friend codes (checked as
// FriendCode makes them; invalid ones are left out) to the PIDs they name,
// with the caller's relationship to each.
func (h v1) GetPrincipalIdByLocalFriendCode(ctx context.Context, c *rmc.Call, mine uint64, codes []uint64) ([]fp.FriendRelationship, error) {
	if err := checkList("friend code list", len(codes)); err != nil {
		return nil, err
	}
	out := []fp.FriendRelationship{}
	for _, code := range codes {
		pid, err := PIDOfFriendCode(code)
		if err != nil {
			continue
		}
		ok, err := h.s.Store.AreFriends(ctx, me(c), pid)
		if err != nil {
			return nil, err
		}
		out = append(out, relationship(pid, ok))
	}
	return out, nil
}

func (h v1) GetFriendRelationships(ctx context.Context, c *rmc.Call, pids []types.PID) ([]fp.FriendRelationship, error) {
	return h.s.relationships(ctx, me(c), pids)
}

// add is a 3DS adding pid's friend code: a request until pid adds back.
func (h v1) add(ctx context.Context, c *rmc.Call, pid types.PID) (fp.FriendRelationship, error) {
	_, link, err := h.s.sendRequest(ctx, me(c), pid, "", GameKey{})
	if errors.Is(err, types.FPDFriendAlreadyAdded) {
		return relationship(pid, true), nil
	}
	if err != nil {
		return fp.FriendRelationship{}, err
	}
	return relationship(pid, link != nil), nil
}

func (h v1) AddFriendByPrincipalId(ctx context.Context, c *rmc.Call, lfcs uint64, pid types.PID) (fp.FriendRelationship, error) {
	return h.add(ctx, c, pid)
}

func (h v1) AddFriendByPrincipalIds(ctx context.Context, c *rmc.Call, lfcs uint64, pids []types.PID) ([]fp.FriendRelationship, error) {
	if err := checkList("PID list", len(pids)); err != nil {
		return nil, err
	}
	out := make([]fp.FriendRelationship, 0, len(pids))
	for _, pid := range pids {
		r, err := h.add(ctx, c, pid)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// remove ends a friendship (or withdraws a request) and tells the other.
func (s *Server) remove(ctx context.Context, pid, other types.PID) error {
	wasFriend, err := s.Store.AreFriends(ctx, pid, other)
	if err != nil {
		return err
	}
	ok, err := s.Store.RemoveFriend(ctx, pid, other)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: PID %d", types.FPDNotInMyFriendList, other)
	}
	s.unfriended(ctx, pid, other, wasFriend)
	return nil
}

func (h v1) RemoveFriendByLocalFriendCode(ctx context.Context, c *rmc.Call, code uint64) error {
	pid, err := PIDOfFriendCode(code)
	if err != nil {
		return err
	}
	return h.s.remove(ctx, me(c), pid)
}

func (h v1) RemoveFriendByPrincipalId(ctx context.Context, c *rmc.Call, pid types.PID) error {
	return h.s.remove(ctx, me(c), pid)
}

// allFriends is a 3DS's friend list: friends (complete) and the players it
// added that have not added back.
func (s *Server) allFriends(ctx context.Context, pid types.PID) ([]fp.FriendRelationship, error) {
	links, err := s.Store.Links(ctx, pid)
	if err != nil {
		return nil, err
	}
	sent, _, err := s.Store.Requests(ctx, pid, s.now())
	if err != nil {
		return nil, err
	}
	out := make([]fp.FriendRelationship, 0, len(links)+len(sent))
	for _, l := range links {
		out = append(out, relationship(l.PID, true))
	}
	for _, r := range sent {
		out = append(out, relationship(r.Recipient, false))
	}
	return out, nil
}

func (h v1) GetAllFriends(ctx context.Context, c *rmc.Call) ([]fp.FriendRelationship, error) {
	return h.s.allFriends(ctx, me(c))
}

func (h v1) UpdateBlackList(ctx context.Context, c *rmc.Call, pids []uint32) error {
	if err := checkList("block list", len(pids)); err != nil {
		return err
	}
	return h.s.Store.SetBlocks(ctx, me(c), u32PIDs(pids), h.s.now(), h.s.Limits)
}

// SyncFriend takes the console's friend list: players it lists that the
// server does not relate to it are added (the console added them offline),
// and the server's list is the answer.
func (h v1) SyncFriend(ctx context.Context, c *rmc.Call, lfcs uint64, pids []types.PID, codes []uint64) ([]fp.FriendRelationship, error) {
	known, err := h.s.relationships(ctx, me(c), pids)
	if err != nil {
		return nil, err
	}
	related := map[types.PID]bool{}
	for _, r := range known {
		related[r.PID] = true
	}
	for _, pid := range pids {
		if pid == 0 || pid == me(c) || related[pid] {
			continue
		}
		related[pid] = true
		if _, err := h.add(ctx, c, pid); err != nil {
			var res types.Result
			if !errors.As(err, &res) {
				return nil, err
			}
			// Refused for this player (blocked, limits): it stays off the list.
		}
	}
	return h.s.allFriends(ctx, me(c))
}

// setPresence records pid online with p and tells its friends.
func (s *Server) setPresence(ctx context.Context, pid types.PID, p Presence) error {
	if err := checkSize("presence description", len(p.Message), MaxMessage); err != nil {
		return err
	}
	if err := checkSize("presence application data", len(p.AppData), MaxAppData); err != nil {
		return err
	}
	if err := s.Store.SetPresence(ctx, pid, s.node(), p); err != nil {
		return err
	}
	if _, err := s.Store.UpdateProfile(ctx, pid, func(pr *Profile) error { pr.LastOnline = p.Updated; return nil }); err != nil {
		return err
	}
	s.presenceChanged(ctx, pid, p)
	return nil
}

func (h v1) UpdatePresence(ctx context.Context, c *rmc.Call, p fp.NintendoPresence, unk bool) error {
	return h.s.setPresence(ctx, me(c), presenceFromV1(p, h.s.now()))
}

func (h v1) UpdateFavoriteGameKey(ctx context.Context, c *rmc.Call, g fp.GameKey) error {
	now := h.s.now()
	if _, err := h.update(ctx, c, func(pr *Profile) error { pr.Favorite, pr.FavoriteChanged = gameKey(g), now; return nil }); err != nil {
		return err
	}
	h.s.profileChanged(ctx, me(c), func() nn.NintendoNotificationEvent {
		k := g
		return nn.NintendoNotificationEvent{Type: Event3DSFavorite, PID: me(c), Data: types.AnyData{Object: &k}}
	})
	return nil
}

func (h v1) UpdateComment(ctx context.Context, c *rmc.Call, comment string) error {
	if err := checkSize("comment", len(comment), MaxComment); err != nil {
		return err
	}
	now := h.s.now()
	if _, err := h.update(ctx, c, func(pr *Profile) error { pr.Comment, pr.CommentChanged = comment, now; return nil }); err != nil {
		return err
	}
	h.s.profileChanged(ctx, me(c), func() nn.NintendoNotificationEvent {
		return general(Event3DSComment, me(c), nn.NintendoNotificationEventGeneral{Text: comment})
	})
	return nil
}

func (h v1) UpdatePicture(ctx context.Context, c *rmc.Call, unk uint32, picture []byte) error {
	if err := checkSize("picture", len(picture), MaxPicture); err != nil {
		return err
	}
	now := h.s.now()
	_, err := h.update(ctx, c, func(pr *Profile) error {
		pr.PictureUnk, pr.Picture, pr.PictureChanged = unk, clone(picture), now
		return nil
	})
	return err
}

func (h v1) GetFriendPresence(ctx context.Context, c *rmc.Call, pids []types.PID) ([]fp.FriendPresence, error) {
	friends, profs, err := h.s.friendProfiles(ctx, me(c), pids)
	if err != nil {
		return nil, err
	}
	pres, err := h.s.Store.Presences(ctx, friends)
	if err != nil {
		return nil, err
	}
	out := []fp.FriendPresence{}
	for _, pid := range friends {
		p, ok := pres[pid]
		if !ok || pid == me(c) || profs[pid].HideOnline {
			continue
		}
		if profs[pid].HideTitle {
			p.Game = GameKey{}
		}
		out = append(out, fp.FriendPresence{PID: pid, Presence: presenceV1(p.Presence)})
	}
	return out, nil
}

func (h v1) GetFriendComment(ctx context.Context, c *rmc.Call, keys []fp.FriendKey) ([]fp.FriendComment, error) {
	return perFriend(ctx, h.s, me(c), keyPIDs(keys), func(pid types.PID, p Profile) (fp.FriendComment, bool) {
		return fp.FriendComment{PID: uint32(pid), Comment: p.Comment, ModifiedAt: dt(p.CommentChanged)}, true
	})
}

// GetFriendPicture answers each friend's picture; the structure has no PID
// field, so its first field carries the friend's PID (judgement call).
func (h v1) GetFriendPicture(ctx context.Context, c *rmc.Call, pids []types.PID) ([]fp.FriendPicture, error) {
	return perFriend(ctx, h.s, me(c), pids, func(pid types.PID, p Profile) (fp.FriendPicture, bool) {
		return fp.FriendPicture{Unk: uint32(pid), Data: clone(p.Picture), Datetime: dt(p.PictureChanged)}, len(p.Picture) > 0
	})
}

func (h v1) GetFriendPersistentInfo(ctx context.Context, c *rmc.Call, pids []types.PID) ([]fp.FriendPersistentInfo, error) {
	friends, profs, err := h.s.friendProfiles(ctx, me(c), pids)
	if err != nil {
		return nil, err
	}
	links, err := h.s.Store.Links(ctx, me(c))
	if err != nil {
		return nil, err
	}
	since := map[types.PID]types.DateTime{}
	for _, l := range links {
		since[l.PID] = dt(l.Since)
	}
	out := make([]fp.FriendPersistentInfo, 0, len(friends))
	for _, pid := range friends {
		p := profs[pid]
		out = append(out, fp.FriendPersistentInfo{PID: pid, Region: p.Region, Country: p.Country, Area: p.Area, Language: p.Language,
			Platform: p.Platform, GameKey: wireKey(p.Favorite), Message: p.Comment, MessageUpdated: dt(p.CommentChanged),
			Friended: since[pid], LastOnline: dt(p.LastOnline)})
	}
	return out, nil
}

// SendInvitation invites friends: each invitee on a 3DS is told (event 9,
// on this node or another through the mailbox). Every invitee must be a
// friend (FPD::NotFriend otherwise, and nobody is told); an invitation to
// oneself is FPD::InvalidPrincipalID.
func (h v1) SendInvitation(ctx context.Context, c *rmc.Call, pids []uint32) error {
	want := uniq(u32PIDs(pids))
	for _, p := range want {
		if p == me(c) {
			return fmt.Errorf("%w: PID %d invites itself", types.FPDInvalidPrincipalID, p)
		}
	}
	friends, err := h.s.friendsAmong(ctx, me(c), want)
	if err != nil {
		return err
	}
	if len(friends) != len(want) {
		return fmt.Errorf("%w: an invitee is not a friend of PID %d", types.FPDNotFriend, me(c))
	}
	h.s.invited(ctx, me(c), friends)
	return nil
}

func uniq(pids []types.PID) []types.PID {
	seen := map[types.PID]bool{}
	var out []types.PID
	for _, p := range pids {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
