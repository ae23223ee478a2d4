// Code below is the hand-written matchmaking and notification codec the generated
// one replaced (nex/matchmaking/types.go and nex/notifications before the port),
// kept as the benchmarks' peer.

package codecbench

import (
	"github.com/gamewire/gamewire/nex/types"
)

// Gathering is the Gathering structure of the match-making types page
// (https://nintendo-wiki.pretendo.network/docs/nex/protocols/match-making/types):
// the base of every matchmaking object.
type Gathering struct {
	ID                  uint32    // m_idMyself
	Owner               types.PID // m_pidOwner
	Host                types.PID // m_pidHost
	MinParticipants     uint16    // m_uiMinParticipants
	MaxParticipants     uint16    // m_uiMaxParticipants
	ParticipationPolicy uint32    // m_uiParticipationPolicy
	PolicyArgument      uint32    // m_uiPolicyArgument
	Flags               uint32    // m_uiFlags (FlagMigrateOwner, ...)
	State               uint32    // m_uiState
	Description         string    // m_strDescription
}

// FlagMigrateOwner in Gathering.Flags: when the owner leaves, the server picks a
// new owner; without it the gathering is deleted ("Flags" in the types page).
const FlagMigrateOwner = 0x10

func (g *Gathering) append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U32(g.ID)
	w.PID(g.Owner)
	w.PID(g.Host)
	w.U16(g.MinParticipants)
	w.U16(g.MaxParticipants)
	w.U32(g.ParticipationPolicy)
	w.U32(g.PolicyArgument)
	w.U32(g.Flags)
	w.U32(g.State)
	w.String(g.Description)
	w.EndStructure(m)
}

func (g *Gathering) read(r *types.Reader) {
	m := r.EnterStructure("Gathering")
	g.ID = r.U32("m_idMyself")
	g.Owner = r.PID("m_pidOwner")
	g.Host = r.PID("m_pidHost")
	g.MinParticipants = r.U16("m_uiMinParticipants")
	g.MaxParticipants = r.U16("m_uiMaxParticipants")
	g.ParticipationPolicy = r.U32("m_uiParticipationPolicy")
	g.PolicyArgument = r.U32("m_uiPolicyArgument")
	g.Flags = r.U32("m_uiFlags")
	g.State = r.U32("m_uiState")
	g.Description = r.String("m_strDescription")
	r.LeaveStructure(m)
}

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

// sessionRevision is the structure revision of MatchmakeSession and of the search
// criteria in a version: 1 to 3 for NEX 3.6 to 3.8, 0 otherwise.
func sessionRevision(v types.Version) uint8 {
	switch {
	case v >= types.Version4:
		return 0
	case v >= types.Version3_8:
		return 3
	case v >= types.Version3_7:
		return 2
	case v >= types.Version3_6:
		return 1
	}
	return 0
}

// refine corrects the configured version with the revision a structure header
// carries: revisions 1 to 3 are NEX 3.6 to 3.8 whatever was assumed. -1 (no
// header) and 0 say nothing more.
func refine(v types.Version, rev int) types.Version {
	switch rev {
	case 1:
		return types.Version3_6
	case 2:
		return types.Version3_7
	case 3:
		return types.Version3_8
	}
	return v
}

func appendParam(w *types.Writer, p []types.Pair[string, types.Variant]) {
	m := w.BeginStructure(0)
	types.WriteList(w, p, func(w *types.Writer, kv types.Pair[string, types.Variant]) {
		w.String(kv.Key)
		w.Variant(kv.Value)
	})
	w.EndStructure(m)
}

func readParam(r *types.Reader, field string) []types.Pair[string, types.Variant] {
	m := r.EnterStructure(field)
	p := types.ReadMap(r, "m_Params", (*types.Reader).String, (*types.Reader).Variant)
	r.LeaveStructure(m)
	return p
}

// Append writes s in version v (the Gathering level, then its own).
func (s *MatchmakeSession) Append(w *types.Writer, v types.Version) {
	s.Gathering.append(w)
	m := w.BeginStructure(sessionRevision(v))
	w.U32(s.GameMode)
	types.WriteList(w, s.Attributes, (*types.Writer).U32)
	w.Bool(s.OpenParticipation)
	w.U32(s.MatchmakeSystemType)
	w.Buffer(s.ApplicationBuffer)
	w.U32(s.ParticipationCount)
	if v >= types.Version3_4 {
		w.U8(s.ProgressScore)
	}
	if v >= types.Version3 {
		w.Buffer(s.SessionKey)
	}
	if v >= types.Version3_5 {
		w.U32(s.Option0)
	}
	if v >= types.Version3_6 {
		appendParam(w, s.MatchmakeParam)
		w.DateTime(s.StartedTime)
	}
	if v >= types.Version3_7 {
		w.String(s.UserPassword)
	}
	if v >= types.Version3_8 {
		w.U32(s.ReferGID)
		w.Bool(s.UserPasswordEnabled)
		w.Bool(s.SystemPasswordEnabled)
	}
	if v >= types.Version4 {
		w.String(s.Codeword)
	}
	w.EndStructure(m)
}

// ReadMatchmakeSession reads a MatchmakeSession (both levels) written in version
// v, corrected by the revision in its header. It returns the version used.
func ReadMatchmakeSession(r *types.Reader, v types.Version) (MatchmakeSession, types.Version) {
	var s MatchmakeSession
	s.Gathering.read(r)
	m := r.EnterStructure("MatchmakeSession")
	v = refine(v, m.Version)
	s.GameMode = r.U32("m_GameMode")
	s.Attributes = types.ReadList(r, "m_Attribs", (*types.Reader).U32)
	s.OpenParticipation = r.Bool("m_OpenParticipation")
	s.MatchmakeSystemType = r.U32("m_MatchmakeSystemType")
	s.ApplicationBuffer = r.Buffer("m_ApplicationBuffer")
	s.ParticipationCount = r.U32("m_ParticipationCount")
	if v >= types.Version3_4 {
		s.ProgressScore = r.U8("m_ProgressScore")
	}
	if v >= types.Version3 {
		s.SessionKey = r.Buffer("m_SessionKey")
	}
	if v >= types.Version3_5 {
		s.Option0 = r.U32("m_Option0")
	}
	if v >= types.Version3_6 {
		s.MatchmakeParam = readParam(r, "m_MatchmakeParam")
		s.StartedTime = r.DateTime("m_StartedTime")
	}
	if v >= types.Version3_7 {
		s.UserPassword = r.String("m_UserPassword")
	}
	if v >= types.Version3_8 {
		s.ReferGID = r.U32("m_ReferGid")
		s.UserPasswordEnabled = r.Bool("m_UserPasswordEnabled")
		s.SystemPasswordEnabled = r.Bool("m_SystemPasswordEnabled")
	}
	if v >= types.Version4 {
		s.Codeword = r.String("m_Codeword")
	}
	r.LeaveStructure(m)
	return s, v
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

// Append writes c in version v.
func (c *SearchCriteria) Append(w *types.Writer, v types.Version) {
	m := w.BeginStructure(sessionRevision(v))
	types.WriteList(w, c.Attributes, (*types.Writer).String)
	w.String(c.GameMode)
	if v >= types.Version2 {
		w.String(c.MinParticipants)
		w.String(c.MaxParticipants)
	}
	w.String(c.MatchmakeSystemType)
	w.Bool(c.VacantOnly)
	w.Bool(c.ExcludeLocked)
	w.Bool(c.ExcludeNonHostPID)
	if v >= types.Version3 {
		w.U32(c.SelectionMethod)
	}
	if v >= types.Version3_4 {
		w.U16(c.VacantParticipants)
	}
	if v >= types.Version3_6 {
		appendParam(w, c.MatchmakeParam)
	}
	if v >= types.Version3_7 {
		w.Bool(c.ExcludeUserPasswordSet)
		w.Bool(c.ExcludeSystemPasswordSet)
	}
	if v >= types.Version3_8 {
		w.U32(c.ReferGID)
	}
	if v >= types.Version4 {
		w.String(c.Codeword)
		if w.Err() == nil {
			b, err := c.ResultRange.Append(w.B, w.S)
			if err == nil {
				w.B = b
			}
		}
	}
	w.EndStructure(m)
}

// ReadSearchCriteria reads a MatchmakeSessionSearchCriteria in version v.
func ReadSearchCriteria(r *types.Reader, field string, v types.Version) SearchCriteria {
	var c SearchCriteria
	m := r.EnterStructure(field)
	v = refine(v, m.Version)
	c.Attributes = types.ReadList(r, "m_Attribs", (*types.Reader).String)
	c.GameMode = r.String("m_GameMode")
	if v >= types.Version2 {
		c.MinParticipants = r.String("m_MinParticipants")
		c.MaxParticipants = r.String("m_MaxParticipants")
	}
	c.MatchmakeSystemType = r.String("m_MatchmakeSystemType")
	c.VacantOnly = r.Bool("m_VacantOnly")
	c.ExcludeLocked = r.Bool("m_ExcludeLocked")
	c.ExcludeNonHostPID = r.Bool("m_ExcludeNonHostPid")
	if v >= types.Version3 {
		c.SelectionMethod = r.U32("m_SelectionMethod")
	}
	if v >= types.Version3_4 {
		c.VacantParticipants = r.U16("m_VacantParticipants")
	}
	if v >= types.Version3_6 {
		c.MatchmakeParam = readParam(r, "m_MatchmakeParam")
	}
	if v >= types.Version3_7 {
		c.ExcludeUserPasswordSet = r.Bool("m_ExcludeUserPasswordSet")
		c.ExcludeSystemPasswordSet = r.Bool("m_ExcludeSystemPasswordSet")
	}
	if v >= types.Version3_8 {
		c.ReferGID = r.U32("m_ReferGid")
	}
	if v >= types.Version4 {
		c.Codeword = r.String("m_Codeword")
		c.ResultRange = r.ResultRange("m_ResultRange")
	}
	r.LeaveStructure(m)
	return c
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
	BlockListOption          uint32 // MatchmakeBlockListParam.optionFlag, 4.0
}

// Append writes p in version v.
func (p *AutoMatchmakeParam) Append(w *types.Writer, v types.Version) {
	m := w.BeginStructure(0)
	p.Session.Append(w, v)
	types.WriteList(w, p.AdditionalParticipants, (*types.Writer).PID)
	w.U32(p.GIDForParticipationCheck)
	w.U32(p.Option)
	w.String(p.JoinMessage)
	w.U16(p.ParticipationCount)
	types.WriteList(w, p.SearchCriteria, func(w *types.Writer, c SearchCriteria) { c.Append(w, v) })
	types.WriteList(w, p.TargetGIDs, (*types.Writer).U32)
	if v >= types.Version4 {
		b := w.BeginStructure(0)
		w.U32(p.BlockListOption)
		w.EndStructure(b)
	}
	w.EndStructure(m)
}

// ReadAutoMatchmakeParam reads an AutoMatchmakeParam in version v.
func ReadAutoMatchmakeParam(r *types.Reader, field string, v types.Version) (AutoMatchmakeParam, types.Version) {
	var p AutoMatchmakeParam
	m := r.EnterStructure(field)
	p.Session, v = ReadMatchmakeSession(r, v)
	p.AdditionalParticipants = types.ReadList(r, "additionalParticipants", (*types.Reader).PID)
	p.GIDForParticipationCheck = r.U32("gidForParticipationCheck")
	p.Option = r.U32("autoMatchmakeOption")
	p.JoinMessage = r.String("joinMessage")
	p.ParticipationCount = r.U16("participationCount")
	p.SearchCriteria = types.ReadList(r, "lstSearchCriteria", func(r *types.Reader, f string) SearchCriteria {
		return ReadSearchCriteria(r, f, v)
	})
	p.TargetGIDs = types.ReadList(r, "targetGids", (*types.Reader).U32)
	if v >= types.Version4 {
		b := r.EnterStructure("blockListParam")
		p.BlockListOption = r.U32("optionFlag")
		r.LeaveStructure(b)
	}
	r.LeaveStructure(m)
	return p, v
}

// Event is the NotificationEvent structure. Params are 32 bits wide before NEX
// 4 (the upper halves are dropped then); Param3 exists from NEX 3.4; Map only in
// NEX 4 revision 1 (written as revision 1 when it has entries).
type Event struct {
	Source   types.PID // m_pidSource
	Type     uint32    // m_uiType
	Param1   uint64    // m_uiParam1
	Param2   uint64    // m_uiParam2
	StrParam string    // m_strParam
	Param3   uint64    // m_uiParam3, 3.4
	Map      []types.Pair[string, types.Variant]
}

// Append writes e in version v.
func (e *Event) Append(w *types.Writer, v types.Version) {
	rev := uint8(0)
	if v >= types.Version4 && len(e.Map) > 0 {
		rev = 1
	}
	m := w.BeginStructure(rev)
	w.PID(e.Source)
	w.U32(e.Type)
	if v >= types.Version4 {
		w.U64(e.Param1)
		w.U64(e.Param2)
		w.String(e.StrParam)
		w.U64(e.Param3)
		if rev == 1 {
			types.WriteList(w, e.Map, func(w *types.Writer, kv types.Pair[string, types.Variant]) {
				w.String(kv.Key)
				w.Variant(kv.Value)
			})
		}
	} else {
		w.U32(uint32(e.Param1))
		w.U32(uint32(e.Param2))
		w.String(e.StrParam)
		if v >= types.Version3_4 {
			w.U32(uint32(e.Param3))
		}
	}
	w.EndStructure(m)
}

// ReadEvent reads a NotificationEvent written in version v.
func ReadEvent(r *types.Reader, v types.Version) Event {
	var e Event
	m := r.EnterStructure("oEvent")
	e.Source = r.PID("m_pidSource")
	e.Type = r.U32("m_uiType")
	if v >= types.Version4 {
		e.Param1 = r.U64("m_uiParam1")
		e.Param2 = r.U64("m_uiParam2")
		e.StrParam = r.String("m_strParam")
		e.Param3 = r.U64("m_uiParam3")
		if m.Version >= 1 {
			e.Map = types.ReadMap(r, "m_mapParam", (*types.Reader).String, (*types.Reader).Variant)
		}
	} else {
		e.Param1 = uint64(r.U32("m_uiParam1"))
		e.Param2 = uint64(r.U32("m_uiParam2"))
		e.StrParam = r.String("m_strParam")
		if v >= types.Version3_4 {
			e.Param3 = uint64(r.U32("m_uiParam3"))
		}
	}
	r.LeaveStructure(m)
	return e
}
