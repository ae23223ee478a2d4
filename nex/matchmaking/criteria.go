package matchmaking

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/nex/types"
)

// valueSet is one criterion string of MatchmakeSessionSearchCriteria parsed:
// empty matches anything, "n" matches n, "a,b" matches a to b inclusive and
// "a|b|c" any of the values, as NintendoClients' server classes read them (the
// types page gives only the field names).
type valueSet struct {
	any        bool
	lo, hi     uint64
	values     []uint64
	isInterval bool
}

func parseValueSet(field, s string) (valueSet, error) {
	if s == "" {
		return valueSet{any: true}, nil
	}
	num := func(p string) (uint64, error) {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%w: search criterion %s %q: %q is not a number", types.CoreInvalidArgument, field, s, p)
		}
		return n, nil
	}
	if lo, hi, ok := strings.Cut(s, ","); ok {
		a, err := num(lo)
		if err != nil {
			return valueSet{}, err
		}
		b, err := num(hi)
		if err != nil {
			return valueSet{}, err
		}
		if a > b {
			return valueSet{}, fmt.Errorf("%w: search criterion %s %q: empty range", types.CoreInvalidArgument, field, s)
		}
		return valueSet{lo: a, hi: b, isInterval: true}, nil
	}
	parts := strings.Split(s, "|")
	if len(parts) > 32 {
		return valueSet{}, fmt.Errorf("%w: search criterion %s: %d values, at most 32", types.CoreInvalidArgument, field, len(parts))
	}
	vs := valueSet{values: make([]uint64, 0, len(parts))}
	for _, p := range parts {
		n, err := num(p)
		if err != nil {
			return valueSet{}, err
		}
		vs.values = append(vs.values, n)
	}
	return vs, nil
}

func (v valueSet) match(x uint64) bool {
	switch {
	case v.any:
		return true
	case v.isInterval:
		return v.lo <= x && x <= v.hi
	}
	for _, y := range v.values {
		if x == y {
			return true
		}
	}
	return false
}

// single returns the one value v matches, if it matches exactly one.
func (v valueSet) single() (uint64, bool) {
	if v.isInterval && v.lo == v.hi {
		return v.lo, true
	}
	if !v.any && !v.isInterval && len(v.values) == 1 {
		return v.values[0], true
	}
	return 0, false
}

// Criteria is a SearchCriteria parsed and checked, ready to match sessions.
type Criteria struct {
	SearchCriteria
	attrs                  []valueSet
	gameMode, system       valueSet
	minParticipants, maxPs valueSet
}

// Compile parses c's criterion strings. A malformed one (not a number, a range
// the wrong way round, too many attributes) is Core::InvalidArgument.
func Compile(c SearchCriteria) (Criteria, error) {
	out := Criteria{SearchCriteria: c}
	if len(c.Attributes) > MaxAttributes {
		return out, fmt.Errorf("%w: %d attribute criteria, at most %d", types.CoreInvalidArgument, len(c.Attributes), MaxAttributes)
	}
	var err error
	for i, a := range c.Attributes {
		vs, err := parseValueSet(fmt.Sprintf("m_Attribs[%d]", i), a)
		if err != nil {
			return out, err
		}
		out.attrs = append(out.attrs, vs)
	}
	if out.gameMode, err = parseValueSet("m_GameMode", c.GameMode); err != nil {
		return out, err
	}
	if out.system, err = parseValueSet("m_MatchmakeSystemType", c.MatchmakeSystemType); err != nil {
		return out, err
	}
	if out.minParticipants, err = parseValueSet("m_MinParticipants", c.MinParticipants); err != nil {
		return out, err
	}
	if out.maxPs, err = parseValueSet("m_MaxParticipants", c.MaxParticipants); err != nil {
		return out, err
	}
	return out, nil
}

// GameMode and SystemType return the single game mode or system type the
// criteria accept, for an index lookup.
func (c *Criteria) GameMode() (uint32, bool) {
	v, ok := c.gameMode.single()
	return uint32(v), ok
}

// SystemType returns the single matchmake system type the criteria accept.
func (c *Criteria) SystemType() (uint32, bool) {
	v, ok := c.system.single()
	return uint32(v), ok
}

// Field names a numeric field of a session that a criterion constrains
// (Term).
type Field int

// The fields of Term: game mode, matchmake system type, minimum and maximum
// participants, and FieldAttribute+i for attribute i (0 to MaxAttributes-1).
const (
	FieldGameMode Field = iota
	FieldSystemType
	FieldMinParticipants
	FieldMaxParticipants
	FieldAttribute
)

// Term is one constraint of a criterion on a numeric field, for a store to
// search by: the value is one of Values, or (Values nil) in Lo to Hi
// inclusive. A session lacking attribute i satisfies no term on it.
type Term struct {
	Field  Field
	Lo, Hi uint32
	Values []uint32
}

// Terms lists c's constraints on the numeric fields, leaving out the fields
// it accepts any value of. A session Match accepts satisfies every term;
// Match also checks what they leave out (room, flags, passwords, codeword).
func (c *Criteria) Terms() []Term {
	var out []Term
	add := func(f Field, v valueSet) {
		switch {
		case v.any:
		case v.isInterval:
			out = append(out, Term{Field: f, Lo: uint32(v.lo), Hi: uint32(v.hi)})
		default:
			vs := make([]uint32, len(v.values))
			for i, x := range v.values {
				vs[i] = uint32(x)
			}
			out = append(out, Term{Field: f, Values: vs})
		}
	}
	add(FieldGameMode, c.gameMode)
	add(FieldSystemType, c.system)
	for i, a := range c.attrs {
		add(FieldAttribute+Field(i), a)
	}
	add(FieldMinParticipants, c.minParticipants)
	add(FieldMaxParticipants, c.maxPs)
	return out
}

// Match reports whether s (with participation count n and whether a system
// password is set) fits c, and has room for joining more players (0 for a plain
// search).
func (c *Criteria) Match(s *MatchmakeSession, systemPassword bool, joining int) bool {
	for i, vs := range c.attrs {
		var a uint32
		if i < len(s.Attributes) {
			a = s.Attributes[i]
		} else if !vs.any {
			return false
		}
		if !vs.match(uint64(a)) {
			return false
		}
	}
	if !c.gameMode.match(uint64(s.GameMode)) || !c.system.match(uint64(s.MatchmakeSystemType)) ||
		!c.minParticipants.match(uint64(s.MinParticipants)) || !c.maxPs.match(uint64(s.MaxParticipants)) {
		return false
	}
	vacant := int(s.MaxParticipants) - int(s.ParticipationCount)
	if c.VacantOnly && vacant < max(int(c.VacantParticipants), 1) {
		return false
	}
	if vacant < joining {
		return false
	}
	if c.ExcludeLocked && !s.OpenParticipation {
		return false
	}
	if c.ExcludeNonHostPID && s.Host == 0 {
		return false
	}
	if c.ExcludeUserPasswordSet && (s.UserPasswordEnabled || s.UserPassword != "") {
		return false
	}
	if c.ExcludeSystemPasswordSet && systemPassword {
		return false
	}
	if c.Codeword != "" && s.Codeword != c.Codeword {
		return false
	}
	if c.ReferGID != 0 && s.ReferGID != c.ReferGID {
		return false
	}
	return true
}

// AutoCriteria is what AutoMatchmake_Postpone (which carries no criteria) looks
// for: an open session like s, with the same game mode, matchmake system type,
// participant range and attributes, without passwords, with room for joining.
func AutoCriteria(s *MatchmakeSession) Criteria {
	c := SearchCriteria{
		GameMode:            strconv.FormatUint(uint64(s.GameMode), 10),
		MatchmakeSystemType: strconv.FormatUint(uint64(s.MatchmakeSystemType), 10),
		MinParticipants:     strconv.FormatUint(uint64(s.MinParticipants), 10),
		MaxParticipants:     strconv.FormatUint(uint64(s.MaxParticipants), 10),
		VacantOnly:          true, ExcludeLocked: true,
		ExcludeUserPasswordSet: true, ExcludeSystemPasswordSet: true,
		Codeword: s.Codeword,
	}
	for i, a := range s.Attributes {
		if i == MaxAttributes {
			break
		}
		c.Attributes = append(c.Attributes, strconv.FormatUint(uint64(a), 10))
	}
	out, _ := Compile(c) // numbers written above always parse
	return out
}

// Validate checks a session a client wants to create or store against the
// limits (Core::InvalidArgument names the field).
func Validate(s *MatchmakeSession) error {
	switch {
	case len(s.Attributes) > MaxAttributes:
		return fmt.Errorf("%w: %d attributes, at most %d", types.CoreInvalidArgument, len(s.Attributes), MaxAttributes)
	case len(s.ApplicationBuffer) > MaxApplicationBuffer:
		return fmt.Errorf("%w: application buffer of %d bytes, at most %d", types.CoreInvalidArgument, len(s.ApplicationBuffer), MaxApplicationBuffer)
	case len(s.Description) > MaxDescription:
		return fmt.Errorf("%w: description of %d bytes, at most %d", types.CoreInvalidArgument, len(s.Description), MaxDescription)
	case len(s.UserPassword) > MaxPassword:
		return fmt.Errorf("%w: user password of %d bytes, at most %d", types.CoreInvalidArgument, len(s.UserPassword), MaxPassword)
	case len(s.MatchmakeParam) > MaxMatchmakeParams:
		return fmt.Errorf("%w: %d matchmake params, at most %d", types.CoreInvalidArgument, len(s.MatchmakeParam), MaxMatchmakeParams)
	case s.MaxParticipants == 0:
		return fmt.Errorf("%w: maximum participants 0", types.CoreInvalidArgument)
	case s.MinParticipants > s.MaxParticipants:
		return fmt.Errorf("%w: minimum participants %d above the maximum %d", types.CoreInvalidArgument, s.MinParticipants, s.MaxParticipants)
	}
	return nil
}
