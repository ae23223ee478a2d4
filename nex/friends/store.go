package friends

import (
	"context"
	"errors"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Friends is what other services know of friendships: a ranking's friends
// filter, DataStore's "friends" permission and friend-only matchmake sessions
// ask it. Store implementations have it; so does any adapter over a friends
// server elsewhere.
type Friends interface {
	// AreFriends reports whether a and b are friends (both accepted).
	AreFriends(ctx context.Context, a, b types.PID) (bool, error)
	// FriendsOf returns pid's friends, at most a friend list's worth.
	FriendsOf(ctx context.Context, pid types.PID) ([]types.PID, error)
}

// GameKey names a title and its version.
type GameKey struct {
	TitleID uint64 `json:"title"`
	Version uint16 `json:"version,omitempty"`
}

// Mii is a player's Mii as a console sends it (3DS Mii or Wii U MiiV2: the name,
// two flag bytes whose meaning is not published, and the Mii data).
type Mii struct {
	Name    string    `json:"name"`
	Unk1    uint8     `json:"unk1,omitempty"`
	Unk2    uint8     `json:"unk2,omitempty"`
	Data    []byte    `json:"data,omitempty"`
	Changed time.Time `json:"changed"`
}

// MiiList is the 3DS's list of Miis (UpdateMiiList).
type MiiList struct {
	Unk1    string    `json:"unk1,omitempty"`
	Unk2    bool      `json:"unk2,omitempty"`
	Unk3    uint8     `json:"unk3,omitempty"`
	Datas   [][]byte  `json:"datas,omitempty"`
	Changed time.Time `json:"changed"`
}

// PlayedGame is one entry of a 3DS's "played recently" list.
type PlayedGame struct {
	Game GameKey   `json:"game"`
	At   time.Time `json:"at"`
}

// Profile is what a player tells the friends server about themselves: kept
// across sessions, shown to friends.
type Profile struct {
	// Console profile (3DS UpdateProfile).
	Region   uint8  `json:"region,omitempty"`
	Country  uint8  `json:"country,omitempty"`
	Area     uint8  `json:"area,omitempty"`
	Language uint8  `json:"language,omitempty"`
	Platform uint8  `json:"platform,omitempty"`
	LFCS     uint64 `json:"lfcs,omitempty"` // local friend code seed
	MAC      string `json:"mac,omitempty"`
	Serial   string `json:"serial,omitempty"`
	// NNID is the Wii U's Nintendo Network ID (its NNAInfo).
	NNID     string         `json:"nnid,omitempty"`
	Birthday types.DateTime `json:"birthday,omitempty"`

	Mii     Mii     `json:"mii"`
	MiiList MiiList `json:"mii_list"`

	Comment        string    `json:"comment,omitempty"`
	CommentUnk     uint8     `json:"comment_unk,omitempty"`
	CommentChanged time.Time `json:"comment_changed"`

	Favorite        GameKey   `json:"favorite"`
	FavoriteChanged time.Time `json:"favorite_changed"`

	// Preferences: HideOnline and HideTitle are stored negated so the zero
	// profile shows both, as a console does before its first UpdatePreference.
	HideOnline    bool `json:"hide_online,omitempty"`
	HideTitle     bool `json:"hide_title,omitempty"`
	BlockRequests bool `json:"block_requests,omitempty"`

	Played []PlayedGame `json:"played,omitempty"`

	PictureUnk     uint32    `json:"picture_unk,omitempty"`
	Picture        []byte    `json:"picture,omitempty"`
	PictureChanged time.Time `json:"picture_changed"`

	LastOnline time.Time `json:"last_online"`
}

// Presence is what a player is doing now (3DS NintendoPresence or Wii U
// NintendoPresenceV2, kept in one shape so a 3DS player's friends on a Wii U see
// it, and the other way round). A player without a presence is offline.
type Presence struct {
	// Platform is 3 for a 3DS (Friends_V1), 4 for a Wii U (Friends_V2).
	Platform      uint8     `json:"platform"`
	ChangedFlags  uint32    `json:"changed"`
	Game          GameKey   `json:"game"`
	Message       string    `json:"message,omitempty"` // game mode description
	JoinFlags     uint32    `json:"join_flags,omitempty"`
	MatchmakeType uint8     `json:"mm_type,omitempty"`
	JoinGameID    uint32    `json:"join_game_id,omitempty"`
	JoinGameMode  uint32    `json:"join_game_mode,omitempty"`
	OwnerPID      uint64    `json:"owner,omitempty"`
	GatheringID   uint32    `json:"gathering,omitempty"`
	AppData       []byte    `json:"app_data,omitempty"`
	GameServerID  uint32    `json:"game_server_id,omitempty"`
	V2Unk         [7]uint32 `json:"v2_unk"` // Wii U fields without a published meaning, sent back as received
	Updated       time.Time `json:"updated"`
}

// Platforms of Presence.Platform and Profile.Platform (the 3DS's UpdateProfile
// sends 2; gamewire only tells the two services apart).
const (
	Platform3DS  uint8 = 3
	PlatformWiiU uint8 = 4
)

// Request is a friend request: sent by Sender to Recipient, pending until
// accepted, denied, cancelled or expired. A 3DS friend added by friend code
// before the other has added back is a request without a message.
type Request struct {
	ID        uint64
	Sender    types.PID
	Recipient types.PID
	Message   string
	Game      GameKey
	Sent      time.Time
	Expires   time.Time
	Received  bool // the recipient's console has seen it (MarkFriendRequestsAsReceived)
}

// Link is one of a player's friendships.
type Link struct {
	PID   types.PID
	Since time.Time
}

// Block is one entry of a player's block list.
type Block struct {
	PID   types.PID
	Game  GameKey
	Since time.Time
}

// Limits bound what one player keeps; the zero value takes the defaults.
type Limits struct {
	// MaxFriends bounds a friend list (the consoles hold 100).
	MaxFriends int
	// MaxSent and MaxReceived bound a player's pending requests each way.
	MaxSent, MaxReceived int
	// MaxBlocks bounds a block list.
	MaxBlocks int
}

// Defaults of Limits.
const (
	DefaultMaxFriends  = 100
	DefaultMaxRequests = 100
	DefaultMaxBlocks   = 100
)

func (l Limits) friends() int  { return orDefault(l.MaxFriends, DefaultMaxFriends) }
func (l Limits) sent() int     { return orDefault(l.MaxSent, DefaultMaxRequests) }
func (l Limits) received() int { return orDefault(l.MaxReceived, DefaultMaxRequests) }
func (l Limits) blocks() int   { return orDefault(l.MaxBlocks, DefaultMaxBlocks) }

// Resolved returns l with its defaults filled in.
func (l Limits) Resolved() Limits {
	return Limits{MaxFriends: l.friends(), MaxSent: l.sent(), MaxReceived: l.received(), MaxBlocks: l.blocks()}
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// Errors of the store, carrying the protocol's own codes (FPD, NintendoClients'
// nintendo/nex/errors.py) so the services send them as they are.
var (
	ErrNotFound = errors.New("friends: not found")
)

// Store keeps the friends server's state: profiles, friendships, requests,
// block lists and presence. nex/accounts (SQLite) and nex/pgstore
// (PostgreSQL) implement it through internal/sqlstore. Errors a client should
// see are types.Result values (wrapped).
type Store interface {
	Friends

	// Profile returns pid's profile (the zero Profile when pid never sent one).
	Profile(ctx context.Context, pid types.PID) (Profile, error)
	// Profiles returns the profiles of pids that have one.
	Profiles(ctx context.Context, pids []types.PID) (map[types.PID]Profile, error)
	// UpdateProfile changes pid's profile with f in one transaction and
	// returns what it stored.
	UpdateProfile(ctx context.Context, pid types.PID, f func(p *Profile) error) (Profile, error)

	// Links returns pid's friendships, oldest first.
	Links(ctx context.Context, pid types.PID) ([]Link, error)
	// SendRequest records a request from r.Sender to r.Recipient (r.ID is
	// chosen by the store). When Recipient has a pending request to Sender
	// already, the two become friends instead: the result's Link is set (and
	// the request returned is Recipient's, now gone). A request to a friend
	// is FPD::FriendAlreadyAdded, to a player who blocked the sender
	// FPD::FriendRequestBlocked, beyond the limits FPD::MyFriendListLimitExceed
	// or FPD::RequestLimitExceed. A second request to the same player
	// replaces the first (new message, new expiry).
	SendRequest(ctx context.Context, r Request, now time.Time, l Limits) (Request, *Link, error)
	// Requests returns pid's pending, unexpired requests: sent and received.
	Requests(ctx context.Context, pid types.PID, now time.Time) (sent, received []Request, err error)
	// AcceptRequest makes the recipient of request id (who must be pid) and
	// its sender friends and deletes the request. FPD::InvalidMessageID when
	// there is no such request, FPD::MessageIsNotForMe when it is someone
	// else's, FPD::MyFriendListLimitExceed when either list is full.
	AcceptRequest(ctx context.Context, pid types.PID, id uint64, now time.Time, l Limits) (Request, Link, error)
	// DeleteRequest deletes request id, which pid must have sent (sender) or
	// received (!sender): FPD::MessageIsNotMine / MessageIsNotForMe otherwise.
	DeleteRequest(ctx context.Context, pid types.PID, id uint64, sender bool) (Request, error)
	// MarkReceived marks pid's received requests ids as seen.
	MarkReceived(ctx context.Context, pid types.PID, ids []uint64) error
	// ExpireRequests deletes the requests that expired by now.
	ExpireRequests(ctx context.Context, now time.Time) (int64, error)
	// RemoveFriend ends the friendship of pid and other and deletes their
	// requests to each other; false when there was nothing.
	RemoveFriend(ctx context.Context, pid, other types.PID) (bool, error)

	// AddBlock adds b to pid's block list (ending a friendship and requests
	// between them); FPD::RequestLimitExceed beyond l.MaxBlocks.
	AddBlock(ctx context.Context, pid types.PID, b Block, l Limits) (Block, error)
	// RemoveBlock removes other from pid's block list; false when absent.
	RemoveBlock(ctx context.Context, pid, other types.PID) (bool, error)
	// SetBlocks replaces pid's block list (3DS UpdateBlackList).
	SetBlocks(ctx context.Context, pid types.PID, blocked []types.PID, now time.Time, l Limits) error
	// Blocks returns pid's block list.
	Blocks(ctx context.Context, pid types.PID) ([]Block, error)
	// Blocked reports whether by has blocked pid.
	Blocked(ctx context.Context, by, pid types.PID) (bool, error)

	// SetPresence records pid online on node with p.
	SetPresence(ctx context.Context, pid types.PID, node string, p Presence) error
	// ClearPresence records pid offline (its connection on node ended); false
	// when pid was not online there (another node's connection replaced it).
	ClearPresence(ctx context.Context, pid types.PID, node string) (bool, error)
	// Presences returns the presence of those of pids who are online, with
	// the node each is on.
	Presences(ctx context.Context, pids []types.PID) (map[types.PID]NodePresence, error)
	// ClearNode records offline every player of node (it restarted or stopped)
	// and returns who they were.
	ClearNode(ctx context.Context, node string) ([]types.PID, error)

	// AddNotification keeps n for n.PID (n.ID is chosen by the store),
	// dropping that player's oldest beyond max.
	AddNotification(ctx context.Context, n Notification, max int) (Notification, error)
	// Notifications returns pid's kept notifications, oldest first.
	Notifications(ctx context.Context, pid types.PID) ([]Notification, error)
	// DeleteNotifications deletes those of ids that are pid's and returns
	// how many there were.
	DeleteNotifications(ctx context.Context, pid types.PID, ids []uint64) (int, error)
	// ExpireNotifications deletes the notifications kept since before t.
	ExpireNotifications(ctx context.Context, before time.Time) (int64, error)
}

// Notification is a persistent notification: an event a player was offline
// for (a friend request received, a friendship, a removal or a withdrawn
// request), kept until the player's console deletes it.
type Notification struct {
	ID   uint64
	PID  types.PID // whose it is
	Type uint32    // the NintendoNotification event type it stands for
	From types.PID // who caused it
	Text string    // a request's message
	At   time.Time
}

// NodePresence is a presence with the secure node its player is connected to.
type NodePresence struct {
	Presence
	Node string
}
