package matchmaking

import (
	"errors"

	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// Type names of the gathering classes as AnyDataHolder names them.
const (
	TypeGathering           = "Gathering"
	TypeMatchmakeSession    = "MatchmakeSession"
	TypePersistentGathering = "PersistentGathering"
)

// ErrUnknownGatheringType: an AnyDataHolder holds a class that is not a gathering.
var ErrUnknownGatheringType = errors.New("matchmaking: not a gathering class")

// Gathering is the Gathering structure of the match-making types page
// (https://nintendo-wiki.pretendo.network/docs/nex/protocols/match-making/types):
// the base of every matchmaking object. It is the generated structure
// (nex/protocols/matchmaking, from nex/desc/defs/matchmaking.nexd).
type Gathering = mm.Gathering

// FlagMigrateOwner in Gathering.Flags: when the owner leaves, the server picks a
// new owner; without it the gathering is deleted ("Flags" in the types page).
const FlagMigrateOwner = 0x10

// MatchmakeSession is the MatchmakeSession structure of the types page: a
// Gathering with a game mode, attributes and the rest. Which fields are on the
// wire depends on the NEX version (the zero values of absent ones are kept).
type MatchmakeSession struct {
	Gathering
	GameMode              uint32                              // m_GameMode
	Attributes            []uint32                            // m_Attribs
	OpenParticipation     bool                                // m_OpenParticipation
	MatchmakeSystemType   uint32                              // m_MatchmakeSystemType
	ApplicationBuffer     []byte                              // m_ApplicationBuffer
	ParticipationCount    uint32                              // m_ParticipationCount
	ProgressScore         uint8                               // m_ProgressScore, 3.4
	SessionKey            []byte                              // m_SessionKey, 3.0
	Option0               uint32                              // m_Option0, 3.5
	MatchmakeParam        []types.Pair[string, types.Variant] // m_MatchmakeParam, 3.6
	StartedTime           types.DateTime                      // m_StartedTime, 3.6
	UserPassword          string                              // m_UserPassword, 3.7
	ReferGID              uint32                              // m_ReferGid, 3.8
	UserPasswordEnabled   bool                                // m_UserPasswordEnabled, 3.8
	SystemPasswordEnabled bool                                // m_SystemPasswordEnabled, 3.8
	Codeword              string                              // m_Codeword, 4.0

	// SessionURL is the station url the host last gave for the session
	// (Match Making UpdateSessionURL); not part of the structure on the wire:
	// the store keeps it beside the session, and GetSessionURLs answers it.
	SessionURL string
}

// SearchCriteria is the MatchmakeSessionSearchCriteria structure of the types
// page. The attribute, game mode, participant and system type fields are strings:
// empty matches anything, "n" matches n, "a,b" matches a to b inclusive.
type SearchCriteria struct {
	Attributes               []string // m_Attribs
	GameMode                 string   // m_GameMode
	MinParticipants          string   // m_MinParticipants, 2.0
	MaxParticipants          string   // m_MaxParticipants, 2.0
	MatchmakeSystemType      string   // m_MatchmakeSystemType
	VacantOnly               bool     // m_VacantOnly
	ExcludeLocked            bool     // m_ExcludeLocked
	ExcludeNonHostPID        bool     // m_ExcludeNonHostPid
	SelectionMethod          uint32   // m_SelectionMethod, 3.0
	VacantParticipants       uint16   // m_VacantParticipants, 3.4
	MatchmakeParam           []types.Pair[string, types.Variant]
	ExcludeUserPasswordSet   bool              // 3.7
	ExcludeSystemPasswordSet bool              // 3.7
	ReferGID                 uint32            // 3.8
	Codeword                 string            // 4.0
	ResultRange              types.ResultRange // 4.0
}

// AutoMatchmakeParam is the AutoMatchmakeParam structure (AutoMatchmakeWithParam_Postpone).
type AutoMatchmakeParam struct {
	Session                  MatchmakeSession
	AdditionalParticipants   []types.PID
	GIDForParticipationCheck uint32
	Option                   uint32
	JoinMessage              string
	ParticipationCount       uint16
	SearchCriteria           []SearchCriteria
	TargetGIDs               []uint32
	BlockListOption          uint32 // MatchmakeBlockListParam.optionFlag
}

// CreateParam is the CreateMatchmakeSessionParam structure.
type CreateParam struct {
	Session                  MatchmakeSession
	AdditionalParticipants   []types.PID
	GIDForParticipationCheck uint32
	Option                   uint32
	JoinMessage              string
	ParticipationCount       uint16
}

// JoinParam is the JoinMatchmakeSessionParam structure.
type JoinParam struct {
	GID                      uint32
	AdditionalParticipants   []types.PID
	GIDForParticipationCheck uint32
	Option                   uint32
	Behavior                 uint8
	UserPassword             string
	SystemPassword           string
	JoinMessage              string
	ParticipationCount       uint16
	ExtraParticipants        uint16
	BlockListOption          uint32 // MatchmakeBlockListParam.optionFlag
}

// GatheringURLs is the GatheringURLs structure (generated).
type GatheringURLs = mm.GatheringURLs

// SimplePlayingSession is the SimplePlayingSession structure (generated); its
// Attribute is the session's first attribute.
type SimplePlayingSession = mm.SimplePlayingSession

// ParticipantDetails is the ParticipantDetails structure (generated).
type ParticipantDetails = mm.ParticipantDetails

// UpdateParam is the UpdateMatchmakeSessionParam structure
// (UpdateMatchmakeSessionPart). ModificationFlag says which fields apply: the
// page gives no values, so gamewire reads bit i as the i-th field after the
// flag, in structure order (Modify* constants; a judgement call, docs/nex.md).
type UpdateParam struct {
	GID                 uint32
	ModificationFlag    uint32
	Attributes          []uint32
	OpenParticipation   bool
	ApplicationBuffer   []byte
	ProgressScore       uint8
	MatchmakeParam      []types.Pair[string, types.Variant]
	StartedTime         types.DateTime
	UserPassword        string
	GameMode            uint32
	Description         string
	MinParticipants     uint16
	MaxParticipants     uint16
	MatchmakeSystemType uint32
	ParticipationPolicy uint32
	PolicyArgument      uint32
	Codeword            string // 4.0
}

// Bits of UpdateParam.ModificationFlag.
const (
	ModifyAttributes uint32 = 1 << iota
	ModifyOpenParticipation
	ModifyApplicationBuffer
	ModifyProgressScore
	ModifyMatchmakeParam
	ModifyStartedTime
	ModifyUserPassword
	ModifyGameMode
	ModifyDescription
	ModifyMinParticipants
	ModifyMaxParticipants
	ModifyMatchmakeSystemType
	ModifyParticipationPolicy
	ModifyPolicyArgument
	ModifyCodeword
)

// apply copies the fields p selects into s.
func (p *UpdateParam) apply(s *MatchmakeSession) {
	f := p.ModificationFlag
	if f&ModifyAttributes != 0 {
		s.Attributes = p.Attributes
	}
	if f&ModifyOpenParticipation != 0 {
		s.OpenParticipation = p.OpenParticipation
	}
	if f&ModifyApplicationBuffer != 0 {
		s.ApplicationBuffer = append([]byte(nil), p.ApplicationBuffer...)
	}
	if f&ModifyProgressScore != 0 {
		s.ProgressScore = p.ProgressScore
	}
	if f&ModifyMatchmakeParam != 0 {
		s.MatchmakeParam = p.MatchmakeParam
	}
	if f&ModifyStartedTime != 0 {
		s.StartedTime = p.StartedTime
	}
	if f&ModifyUserPassword != 0 {
		s.UserPassword = p.UserPassword
		s.UserPasswordEnabled = p.UserPassword != ""
	}
	if f&ModifyGameMode != 0 {
		s.GameMode = p.GameMode
	}
	if f&ModifyDescription != 0 {
		s.Description = p.Description
	}
	if f&ModifyMinParticipants != 0 {
		s.MinParticipants = p.MinParticipants
	}
	if f&ModifyMaxParticipants != 0 {
		s.MaxParticipants = p.MaxParticipants
	}
	if f&ModifyMatchmakeSystemType != 0 {
		s.MatchmakeSystemType = p.MatchmakeSystemType
	}
	if f&ModifyParticipationPolicy != 0 {
		s.ParticipationPolicy = p.ParticipationPolicy
	}
	if f&ModifyPolicyArgument != 0 {
		s.PolicyArgument = p.PolicyArgument
	}
	if f&ModifyCodeword != 0 {
		s.Codeword = p.Codeword
	}
}
