package friends

import (
	"context"
	"time"

	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	"github.com/gamewire/gamewire/nex/types"
)

// Conversions between the store's shapes and the generated wire structures.

func dt(t time.Time) types.DateTime {
	if t.IsZero() {
		return 0
	}
	return types.DateTimeFromTime(t)
}

func gameKey(g fp.GameKey) GameKey { return GameKey{TitleID: g.TitleID, Version: g.TitleVersion} }
func wireKey(g GameKey) fp.GameKey { return fp.GameKey{TitleID: g.TitleID, TitleVersion: g.Version} }
func clone(b []byte) []byte        { return append([]byte(nil), b...) }
func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func presenceFromV1(p fp.NintendoPresence, now time.Time) Presence {
	return Presence{Platform: Platform3DS, ChangedFlags: p.ChangedBitFlag, Game: gameKey(p.GameKey), Message: p.GameModeDescription,
		JoinFlags: p.JoinAvailabilityFlag, MatchmakeType: p.MatchmakeSystemType, JoinGameID: p.JoinGameID,
		JoinGameMode: p.JoinGameMode, OwnerPID: uint64(p.OwnerPID), GatheringID: p.JoinGroupID, AppData: clone(p.ApplicationData), Updated: now}
}

func presenceV1(p Presence) fp.NintendoPresence {
	return fp.NintendoPresence{ChangedBitFlag: p.ChangedFlags, GameKey: wireKey(p.Game), GameModeDescription: p.Message,
		JoinAvailabilityFlag: p.JoinFlags, MatchmakeSystemType: p.MatchmakeType, JoinGameID: p.JoinGameID,
		JoinGameMode: p.JoinGameMode, OwnerPID: types.PID(p.OwnerPID), JoinGroupID: p.GatheringID, ApplicationData: clone(p.AppData)}
}

func presenceFromV2(p fp.NintendoPresenceV2, now time.Time) Presence {
	return Presence{Platform: PlatformWiiU, ChangedFlags: p.Flags, Game: gameKey(p.GameKey), Message: p.Message,
		GameServerID: p.GameServerID, OwnerPID: uint64(p.PID), GatheringID: p.GatheringID, AppData: clone(p.ApplicationData),
		V2Unk: [7]uint32{uint32(p.Unk1), p.Unk2, uint32(p.Unk3), p.Unk4, uint32(p.Unk5), uint32(p.Unk6), uint32(p.Unk7)}, Updated: now}
}

// presenceV2 is p as a Wii U reads it; a 3DS player's presence has no Wii U
// fields, and gets the defaults NintendoClients' description gives them.
func presenceV2(pid types.PID, p Presence, online bool) fp.NintendoPresenceV2 {
	out := fp.NintendoPresenceV2{Flags: p.ChangedFlags, IsOnline: online, GameKey: wireKey(p.Game), Message: p.Message,
		GameServerID: p.GameServerID, PID: uint32(pid), GatheringID: p.GatheringID, ApplicationData: clone(p.AppData),
		Unk5: 3, Unk6: 3, Unk7: 3}
	if p.Platform == PlatformWiiU {
		u := p.V2Unk
		out.Unk1, out.Unk2, out.Unk3, out.Unk4 = uint8(u[0]), u[1], uint8(u[2]), u[3]
		out.Unk5, out.Unk6, out.Unk7 = uint8(u[4]), uint8(u[5]), uint8(u[6])
	}
	return out
}

func miiV2(m Mii) fp.MiiV2 {
	return fp.MiiV2{Name: m.Name, Unk1: m.Unk1, Unk2: m.Unk2, Data: clone(m.Data), Datetime: dt(m.Changed)}
}

func basicInfo(pid types.PID, p Profile) fp.PrincipalBasicInfo {
	return fp.PrincipalBasicInfo{PID: pid, NNID: p.NNID, Mii: miiV2(p.Mii), Unk: 2}
}

// basicInfos returns the PrincipalBasicInfo of pids (those without a profile
// get one with their PID only).
func (s *Server) basicInfos(ctx context.Context, pids []types.PID) (map[types.PID]fp.PrincipalBasicInfo, error) {
	profs, err := s.Store.Profiles(ctx, pids)
	if err != nil {
		return nil, err
	}
	out := make(map[types.PID]fp.PrincipalBasicInfo, len(pids))
	for _, pid := range pids {
		out[pid] = basicInfo(pid, profs[pid])
	}
	return out, nil
}

func friendRequest(r Request, from fp.PrincipalBasicInfo) fp.FriendRequest {
	return fp.FriendRequest{PrincipalInfo: from, Sent: dt(r.Sent), Message: fp.FriendRequestMessage{
		FriendRequestID: r.ID, Unk1: boolByte(r.Received), Message: r.Message, GameKey: wireKey(r.Game),
		Datetime: dt(r.Sent), Expires: dt(r.Expires)}}
}

// requests returns rs as FriendRequests carrying the other player's info
// (the recipient's for sent ones, the sender's for received ones).
func (s *Server) requests(ctx context.Context, rs []Request, sent bool) ([]fp.FriendRequest, error) {
	pids := make([]types.PID, len(rs))
	for i, r := range rs {
		pids[i] = r.Sender
		if sent {
			pids[i] = r.Recipient
		}
	}
	infos, err := s.basicInfos(ctx, pids)
	if err != nil {
		return nil, err
	}
	out := make([]fp.FriendRequest, len(rs))
	for i, r := range rs {
		out[i] = friendRequest(r, infos[pids[i]])
	}
	return out, nil
}

// friendInfos returns the FriendInfo of each link's player: profile, comment
// and presence (online only when they show it).
func (s *Server) friendInfos(ctx context.Context, links []Link) ([]fp.FriendInfo, error) {
	pids := make([]types.PID, len(links))
	for i, l := range links {
		pids[i] = l.PID
	}
	profs, err := s.Store.Profiles(ctx, pids)
	if err != nil {
		return nil, err
	}
	pres, err := s.Store.Presences(ctx, pids)
	if err != nil {
		return nil, err
	}
	out := make([]fp.FriendInfo, len(links))
	for i, l := range links {
		p := profs[l.PID]
		np, online := pres[l.PID]
		if p.HideOnline {
			np, online = NodePresence{}, false
		}
		if p.HideTitle {
			np.Game = GameKey{}
		}
		out[i] = fp.FriendInfo{NnaInfo: fp.NNAInfo{PrincipalInfo: basicInfo(l.PID, p), Unk1: 94, Unk2: 11},
			Presence: presenceV2(l.PID, np.Presence, online), Comment: fp.Comment{Unk: p.CommentUnk, Text: p.Comment, Changed: dt(p.CommentChanged)},
			Befriended: dt(l.Since), LastOnline: dt(p.LastOnline)}
	}
	return out, nil
}

func blacklisted(b Block, info fp.PrincipalBasicInfo) fp.BlacklistedPrincipal {
	return fp.BlacklistedPrincipal{PrincipalInfo: info, GameKey: wireKey(b.Game), Since: dt(b.Since)}
}

// relationship is a 3DS FriendRelationship: complete once both added.
func relationship(pid types.PID, complete bool) fp.FriendRelationship {
	return fp.FriendRelationship{PID: pid, FriendCode: FriendCode(pid), IsComplete: boolByte(complete)}
}
