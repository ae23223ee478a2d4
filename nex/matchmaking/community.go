package matchmaking

import (
	"context"
	"fmt"

	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// Matchmake Extension (109) methods of the communities (persistent gatherings).
const (
	MethodCreateCommunity            uint32 = 17
	MethodUpdateCommunity            uint32 = 18
	MethodJoinCommunity              uint32 = 19
	MethodFindCommunityByGatheringID uint32 = 20
	MethodFindOfficialCommunity      uint32 = 21
	MethodFindCommunityByParticipant uint32 = 22
	MethodGetSimpleCommunity         uint32 = 32
	MethodFindCommunityByOwner       uint32 = 54
)

// CommunitySystemType is the MatchmakeSystemType of a matchmake session held in
// a community; such a session names its community in Attributes[1]. The
// match-making types page says nothing about it: this is how Pretendo's
// nex-protocols-common-go counts a community's sessions (judgement call,
// docs/nex.md "Communities").
const CommunitySystemType = 5

// PersistentGathering is the PersistentGathering structure of the match-making
// types page (https://nintendo-wiki.pretendo.network/docs/nex/protocols/match-making/types):
// a community, a Gathering that outlives its participants' connections. The
// page lists one field set for every NEX version (no revision).
type PersistentGathering struct {
	Gathering
	CommunityType          uint32         // m_CommunityType
	Password               string         // m_Password
	Attributes             []uint32       // m_Attribs
	ApplicationBuffer      []byte         // m_ApplicationBuffer
	ParticipationStartDate types.DateTime // m_ParticipationStartDate (0: no start)
	ParticipationEndDate   types.DateTime // m_ParticipationEndDate (0: no end)
	MatchmakeSessionCount  uint32         // m_MatchmakeSessionCount (server-owned)
	ParticipationCount     uint32         // m_ParticipationCount (server-owned: members)
}

// SimpleCommunity is the SimpleCommunity structure of the types page
// (GetSimpleCommunity), generated.
type SimpleCommunity = mm.SimpleCommunity

// ValidateCommunity checks what a client may store in a community, with the
// limits of a matchmake session (Core::InvalidArgument otherwise).
func ValidateCommunity(g *PersistentGathering) error {
	switch {
	case len(g.Attributes) > MaxAttributes:
		return fmt.Errorf("%w: %d community attributes, at most %d", types.CoreInvalidArgument, len(g.Attributes), MaxAttributes)
	case len(g.ApplicationBuffer) > MaxApplicationBuffer:
		return fmt.Errorf("%w: community application buffer of %d bytes, at most %d", types.CoreInvalidArgument, len(g.ApplicationBuffer), MaxApplicationBuffer)
	case len(g.Description) > MaxDescription:
		return fmt.Errorf("%w: community description of %d bytes, at most %d", types.CoreInvalidArgument, len(g.Description), MaxDescription)
	case len(g.Password) > MaxPassword:
		return fmt.Errorf("%w: community password of %d bytes, at most %d", types.CoreInvalidArgument, len(g.Password), MaxPassword)
	case g.MaxParticipants == 0:
		return fmt.Errorf("%w: community of at most 0 participants", types.CoreInvalidArgument)
	case g.MinParticipants > g.MaxParticipants:
		return fmt.Errorf("%w: community minimum participants %d above the maximum %d", types.CoreInvalidArgument, g.MinParticipants, g.MaxParticipants)
	case g.ParticipationEndDate != 0 && g.ParticipationEndDate < g.ParticipationStartDate:
		return fmt.Errorf("%w: community participation ends (%v) before it starts (%v)", types.CoreInvalidArgument, g.ParticipationEndDate, g.ParticipationStartDate)
	}
	return nil
}

// Open reports whether the community takes participants at now: inside its
// participation dates (a zero date is no bound; DateTime values order as
// times do).
func (g *PersistentGathering) Open(now types.DateTime) bool {
	return (g.ParticipationStartDate == 0 || g.ParticipationStartDate <= now) &&
		(g.ParticipationEndDate == 0 || now <= g.ParticipationEndDate)
}

// CommunityQuery selects communities; the fields set are ANDed.
type CommunityQuery struct {
	GIDs        []uint32
	Owner       types.PID
	Participant types.PID
	Official    bool
	// Available: only communities open at Now (Open) and not full.
	Available bool
	Now       types.DateTime
	Offset    uint32
	Size      uint32 // 0: MaxBrowseResults
}

// CommunityStore keeps communities and their members. It is optional: a
// Server whose Store also implements it answers the community methods, and
// Core::NotImplemented otherwise. Members stay members when their connection
// ends (the gathering is persistent). Every method is one transaction; errors
// for clients are Results, possibly wrapped:
//   - RendezVous::SessionVoid: no community with that id;
//   - RendezVous::AlreadyParticipatedGathering: a member joins again;
//   - RendezVous::InvalidGatheringPassword: the password does not match;
//   - RendezVous::SessionClosed: outside the participation dates;
//   - RendezVous::SessionFull: MaxParticipants members already.
//
// Returned communities have MatchmakeSessionCount (its sessions: system type
// CommunitySystemType, Attributes[1] its id) and ParticipationCount (its
// members) filled in. Communities and matchmake sessions share one id space.
type CommunityStore interface {
	// CreateCommunity stores g with a new id, owner p (also its host and first
	// member); official marks it for FindOfficialCommunity.
	CreateCommunity(ctx context.Context, g PersistentGathering, p Participant, official bool) (PersistentGathering, error)
	// UpdateCommunity applies f to community gid in a transaction; f fails the
	// update by returning an error.
	UpdateCommunity(ctx context.Context, gid uint32, f func(g *PersistentGathering) error) (PersistentGathering, error)
	// JoinCommunity makes p a member of community gid, checking password and
	// the limits at now.
	JoinCommunity(ctx context.Context, gid uint32, p Participant, password string, now types.DateTime) (PersistentGathering, error)
	// FindCommunities returns communities by q, in id order.
	FindCommunities(ctx context.Context, q CommunityQuery) ([]PersistentGathering, error)
}
