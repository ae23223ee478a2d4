package matchmaking

import (
	"fmt"

	"github.com/gamewire/gamewire/nex/protocols/common"
	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// The package's structures (its API and the Store's) and the generated ones
// (nex/protocols/matchmaking) that carry them on the wire. Which fields are on
// the wire is the generated codecs' business: they read the version, the
// structure headers and the reading of disputed gates from the connection's
// types.Settings (docs/nex.md "Generated protocol code").

// Wire returns s as the generated structure.
func (s *MatchmakeSession) Wire() mm.MatchmakeSession {
	return mm.MatchmakeSession{
		Gathering: s.Gathering, GameMode: s.GameMode, Attribs: s.Attributes, OpenParticipation: s.OpenParticipation,
		MatchmakeSystem: s.MatchmakeSystemType, ApplicationData: s.ApplicationBuffer, NumParticipants: s.ParticipationCount,
		ProgressScore: s.ProgressScore, SessionKey: s.SessionKey, Option: s.Option0,
		Param: mm.MatchmakeParam{Param: s.MatchmakeParam}, StartedTime: s.StartedTime, UserPassword: s.UserPassword,
		ReferGID: s.ReferGID, UserPasswordEnabled: s.UserPasswordEnabled, SystemPasswordEnabled: s.SystemPasswordEnabled,
		Codeword: s.Codeword,
	}
}

// SessionFromWire returns the package's MatchmakeSession of a generated one.
func SessionFromWire(g *mm.MatchmakeSession) MatchmakeSession {
	return MatchmakeSession{
		Gathering: g.Gathering, GameMode: g.GameMode, Attributes: g.Attribs, OpenParticipation: g.OpenParticipation,
		MatchmakeSystemType: g.MatchmakeSystem, ApplicationBuffer: g.ApplicationData, ParticipationCount: g.NumParticipants,
		ProgressScore: g.ProgressScore, SessionKey: g.SessionKey, Option0: g.Option, MatchmakeParam: g.Param.Param,
		StartedTime: g.StartedTime, UserPassword: g.UserPassword, ReferGID: g.ReferGID,
		UserPasswordEnabled: g.UserPasswordEnabled, SystemPasswordEnabled: g.SystemPasswordEnabled, Codeword: g.Codeword,
	}
}

// Append writes s (the Gathering level, then its own) in the writer's settings.
func (s *MatchmakeSession) Append(w *types.Writer) {
	g := s.Wire()
	g.Append(w)
}

// ReadMatchmakeSession reads a MatchmakeSession (both levels) in the reader's
// settings; errors stick in r.
func ReadMatchmakeSession(r *types.Reader, field string) MatchmakeSession {
	var g mm.MatchmakeSession
	g.Read(r, field)
	return SessionFromWire(&g)
}

// AnyData returns s in an AnyDataHolder (Data<Gathering> on the wire).
func (s *MatchmakeSession) AnyData() types.AnyData {
	g := s.Wire()
	return types.AnyData{Object: &g}
}

// Holder wraps s in an AnyDataHolder encoded in the settings st.
func (s *MatchmakeSession) Holder(st types.Settings) (types.AnyDataHolder, error) {
	w := types.NewWriter(nil, st)
	s.Append(&w)
	b, err := w.Bytes()
	return types.AnyDataHolder{TypeName: TypeMatchmakeSession, Data: b}, err
}

// GatheringHolder wraps a plain Gathering in an AnyDataHolder.
func GatheringHolder(g Gathering, st types.Settings) (types.AnyDataHolder, error) {
	w := types.NewWriter(nil, st)
	g.Append(&w)
	b, err := w.Bytes()
	return types.AnyDataHolder{TypeName: TypeGathering, Data: b}, err
}

// FromAnyData returns the gathering an AnyData holds: a MatchmakeSession, or a
// plain Gathering (returned as a MatchmakeSession with only the Gathering level
// set; isSession false).
func FromAnyData(a types.AnyData) (s MatchmakeSession, isSession bool, err error) {
	switch o := a.Object.(type) {
	case *mm.MatchmakeSession:
		return SessionFromWire(o), true, nil
	case *mm.Gathering:
		return MatchmakeSession{Gathering: *o}, false, nil
	}
	return s, false, fmt.Errorf("%w: %q", ErrUnknownGatheringType, a.ClassName())
}

// ParseHolder decodes a Data<Gathering> in the settings st: a MatchmakeSession,
// or a plain Gathering (isSession false). The data must be used up.
func ParseHolder(h types.AnyDataHolder, st types.Settings) (s MatchmakeSession, isSession bool, err error) {
	r := types.NewReader(h.Data, st)
	switch h.TypeName {
	case TypeMatchmakeSession:
		s = ReadMatchmakeSession(&r, TypeMatchmakeSession)
		isSession = true
	case TypeGathering:
		s.Gathering.Read(&r, TypeGathering)
	default:
		return s, false, fmt.Errorf("%w: %q", ErrUnknownGatheringType, h.TypeName)
	}
	if err := r.Done(); err != nil {
		return MatchmakeSession{}, false, fmt.Errorf("%s: %w", h.TypeName, err)
	}
	return s, isSession, nil
}

// Wire returns c as the generated structure.
func (c *SearchCriteria) Wire() mm.MatchmakeSessionSearchCriteria {
	return mm.MatchmakeSessionSearchCriteria{
		Attribs: c.Attributes, GameMode: c.GameMode, MinParticipants: c.MinParticipants, MaxParticipants: c.MaxParticipants,
		MatchmakeSystem: c.MatchmakeSystemType, VacantOnly: c.VacantOnly, ExcludeLocked: c.ExcludeLocked,
		ExcludeNonHostPID: c.ExcludeNonHostPID, SelectionMethod: c.SelectionMethod, VacantParticipants: c.VacantParticipants,
		Param: mm.MatchmakeParam{Param: c.MatchmakeParam}, ExcludeUserPassword: c.ExcludeUserPasswordSet,
		ExcludeSystemPassword: c.ExcludeSystemPasswordSet, ReferGID: c.ReferGID, Codeword: c.Codeword,
		Range: common.ResultRange(c.ResultRange),
	}
}

// CriteriaFromWire returns the package's SearchCriteria of a generated one.
func CriteriaFromWire(g *mm.MatchmakeSessionSearchCriteria) SearchCriteria {
	return SearchCriteria{
		Attributes: g.Attribs, GameMode: g.GameMode, MinParticipants: g.MinParticipants, MaxParticipants: g.MaxParticipants,
		MatchmakeSystemType: g.MatchmakeSystem, VacantOnly: g.VacantOnly, ExcludeLocked: g.ExcludeLocked,
		ExcludeNonHostPID: g.ExcludeNonHostPID, SelectionMethod: g.SelectionMethod, VacantParticipants: g.VacantParticipants,
		MatchmakeParam: g.Param.Param, ExcludeUserPasswordSet: g.ExcludeUserPassword,
		ExcludeSystemPasswordSet: g.ExcludeSystemPassword, ReferGID: g.ReferGID, Codeword: g.Codeword,
		ResultRange: types.ResultRange(g.Range),
	}
}

func criteriaFromWire(gs []mm.MatchmakeSessionSearchCriteria) []SearchCriteria {
	out := make([]SearchCriteria, len(gs))
	for i := range gs {
		out[i] = CriteriaFromWire(&gs[i])
	}
	return out
}

// Append writes c in the writer's settings.
func (c *SearchCriteria) Append(w *types.Writer) {
	g := c.Wire()
	g.Append(w)
}

// ReadSearchCriteria reads a MatchmakeSessionSearchCriteria in the reader's
// settings; errors stick in r.
func ReadSearchCriteria(r *types.Reader, field string) SearchCriteria {
	var g mm.MatchmakeSessionSearchCriteria
	g.Read(r, field)
	return CriteriaFromWire(&g)
}

// Wire returns p as the generated structure.
func (p *JoinParam) Wire() mm.JoinMatchmakeSessionParam {
	return mm.JoinMatchmakeSessionParam{
		GID: p.GID, Participants: p.AdditionalParticipants, GIDForParticipationCheck: p.GIDForParticipationCheck,
		Options: p.Option, Behavior: p.Behavior, UserPassword: p.UserPassword, SystemPassword: p.SystemPassword,
		JoinMessage: p.JoinMessage, NumParticipants: p.ParticipationCount, ExtraParticipants: p.ExtraParticipants,
		BlockList: mm.MatchmakeBlockListParam{Options: p.BlockListOption},
	}
}

// Append writes p in the writer's settings.
func (p *JoinParam) Append(w *types.Writer) {
	g := p.Wire()
	g.Append(w)
}

// Wire returns p as the generated structure.
func (p *CreateParam) Wire() mm.CreateMatchmakeSessionParam {
	return mm.CreateMatchmakeSessionParam{
		Session: p.Session.Wire(), AdditionalParticipants: p.AdditionalParticipants,
		GIDForParticipationCheck: p.GIDForParticipationCheck, Options: p.Option, JoinMessage: p.JoinMessage,
		NumParticipants: p.ParticipationCount,
	}
}

// Append writes p in the writer's settings.
func (p *CreateParam) Append(w *types.Writer) {
	g := p.Wire()
	g.Append(w)
}

// Wire returns p as the generated structure.
func (p *AutoMatchmakeParam) Wire() mm.AutoMatchmakeParam {
	crit := make([]mm.MatchmakeSessionSearchCriteria, len(p.SearchCriteria))
	for i := range p.SearchCriteria {
		crit[i] = p.SearchCriteria[i].Wire()
	}
	return mm.AutoMatchmakeParam{
		Session: p.Session.Wire(), Participants: p.AdditionalParticipants,
		GIDForParticipationCheck: p.GIDForParticipationCheck, Options: p.Option, JoinMessage: p.JoinMessage,
		NumParticipants: p.ParticipationCount, SearchCriteria: crit, TargetGIDs: p.TargetGIDs,
		BlockList: mm.MatchmakeBlockListParam{Options: p.BlockListOption},
	}
}

// Append writes p in the writer's settings.
func (p *AutoMatchmakeParam) Append(w *types.Writer) {
	g := p.Wire()
	g.Append(w)
}

// Wire returns p as the generated structure.
func (p *UpdateParam) Wire() mm.UpdateMatchmakeSessionParam {
	return mm.UpdateMatchmakeSessionParam{
		GID: p.GID, ModificationFlags: p.ModificationFlag, Attributes: p.Attributes, OpenParticipation: p.OpenParticipation,
		ApplicationBuffer: p.ApplicationBuffer, ProgressScore: p.ProgressScore, Param: mm.MatchmakeParam{Param: p.MatchmakeParam},
		StartedTime: p.StartedTime, UserPassword: p.UserPassword, GameMode: p.GameMode, Description: p.Description,
		MinParticipants: p.MinParticipants, MaxParticipants: p.MaxParticipants, MatchmakeSystem: p.MatchmakeSystemType,
		ParticipationPolicy: p.ParticipationPolicy, PolicyArgument: p.PolicyArgument, Codeword: p.Codeword,
	}
}

// Append writes p in the writer's settings.
func (p *UpdateParam) Append(w *types.Writer) {
	g := p.Wire()
	g.Append(w)
}

// ReadSimpleCommunity reads a SimpleCommunity; errors stick in r.
func ReadSimpleCommunity(r *types.Reader, field string) (c SimpleCommunity) {
	c.Read(r, field)
	return
}

// updateFromWire returns the package's UpdateParam of a generated one.
func updateFromWire(g *mm.UpdateMatchmakeSessionParam) UpdateParam {
	return UpdateParam{
		GID: g.GID, ModificationFlag: g.ModificationFlags, Attributes: g.Attributes, OpenParticipation: g.OpenParticipation,
		ApplicationBuffer: g.ApplicationBuffer, ProgressScore: g.ProgressScore, MatchmakeParam: g.Param.Param,
		StartedTime: g.StartedTime, UserPassword: g.UserPassword, GameMode: g.GameMode, Description: g.Description,
		MinParticipants: g.MinParticipants, MaxParticipants: g.MaxParticipants, MatchmakeSystemType: g.MatchmakeSystem,
		ParticipationPolicy: g.ParticipationPolicy, PolicyArgument: g.PolicyArgument, Codeword: g.Codeword,
	}
}

// Wire returns g as the generated structure.
func (g *PersistentGathering) Wire() mm.PersistentGathering {
	return mm.PersistentGathering{
		Gathering: g.Gathering, Type: g.CommunityType, Password: g.Password, Attribs: g.Attributes,
		ApplicationBuffer: g.ApplicationBuffer, ParticipationStart: g.ParticipationStartDate,
		ParticipationEnd: g.ParticipationEndDate, MatchmakeSessionCount: g.MatchmakeSessionCount,
		NumParticipants: g.ParticipationCount,
	}
}

// CommunityFromWire returns the package's PersistentGathering of a generated one.
func CommunityFromWire(w *mm.PersistentGathering) PersistentGathering {
	return PersistentGathering{
		Gathering: w.Gathering, CommunityType: w.Type, Password: w.Password, Attributes: w.Attribs,
		ApplicationBuffer: w.ApplicationBuffer, ParticipationStartDate: w.ParticipationStart,
		ParticipationEndDate: w.ParticipationEnd, MatchmakeSessionCount: w.MatchmakeSessionCount,
		ParticipationCount: w.NumParticipants,
	}
}

// Append writes g (the Gathering level, then its own).
func (g *PersistentGathering) Append(w *types.Writer) {
	x := g.Wire()
	x.Append(w)
}

// ReadPersistentGathering reads a PersistentGathering (both levels); errors
// stick in r. The application buffer is a copy.
func ReadPersistentGathering(r *types.Reader, field string) PersistentGathering {
	var x mm.PersistentGathering
	x.Read(r, field)
	return CommunityFromWire(&x)
}
