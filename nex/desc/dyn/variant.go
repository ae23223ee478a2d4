package dyn

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gamewire/gamewire/nex/desc"
)

// gameVariants maps games of the nex/games table to the suffix their variant
// descriptions carry, as NintendoClients names its variant definition files
// (matchmaking_mk8.proto, datastore_smm.proto, ranking2_eagle.proto, ...).
// The eagle variants (MatchmakeReferee_Eagle, Ranking2_Eagle) belong to a Switch
// library several games use, not to one game: name them (Config.Variant, decode
// --variant eagle).
var gameVariants = map[string]string{
	"mario kart 8":                       "mk8",
	"mario kart 8 deluxe":                "mk8d",
	"super mario maker":                  "smm",
	"super mario maker 2":                "smm2",
	"monster hunter xx":                  "mhxx",
	"miitopia":                           "miitopia3ds",
	"super smash bros.":                  "ssb4",
	"super smash bros. for nintendo 3ds": "ssb4",
	"team kirby clash deluxe":            "tkcd",
	"badge arcade":                       "badgearcade",
}

// GameVariant returns the variant suffix of a game named as the nex/games table
// names it ("MARIO KART 8" -> "mk8"), or "".
func GameVariant(game string) string {
	return gameVariants[strings.ToLower(game)]
}

// SelectProtocol returns the protocol with id that a game variant uses: the one
// of the id whose name or description file ends in "_"+variant (case ignored:
// MatchmakeExtension_MK8, matchmaking_mk8.nexd; "nx" picks Authentication_NX),
// else the root protocol of id. variant may list several, comma-separated, the
// first that has a protocol of id winning ("mk8d,nx").
// It returns nil when set is nil or has no protocol of id.
func SelectProtocol(set *desc.Set, id uint16, variant string) *desc.Protocol {
	if set == nil {
		return nil
	}
	ps := set.ProtocolsByID(id)
	for _, v := range strings.Split(variant, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		for _, p := range ps {
			if isVariant(p, v) {
				return p
			}
		}
	}
	for _, p := range ps {
		if p.ParentProtocol == nil {
			return p
		}
	}
	if len(ps) > 0 {
		return ps[0]
	}
	return nil
}

// isVariant reports whether p is a variant protocol (one with a parent) that the
// variant name v selects: p's name or description file ends in "_"+v, case ignored.
func isVariant(p *desc.Protocol, v string) bool {
	if p.ParentProtocol == nil {
		return false
	}
	suffix := "_" + strings.ToLower(v)
	return strings.HasSuffix(strings.ToLower(p.Name), suffix) ||
		p.File != nil && strings.HasSuffix(strings.ToLower(p.File.Name), suffix)
}

// ErrUnknownVariant is the error of a variant name that selects no protocol.
var ErrUnknownVariant = errors.New("dyn: unknown protocol variant")

// Variants returns the variant names the protocols of set answer to, sorted: the
// last "_"-separated part of each variant protocol's name, lower-cased
// (MatchmakeExtension_Pokemon6: "pokemon6"; Authentication_NX: "nx"). SelectProtocol
// also takes longer suffixes of a name or description file ("miitopia_3ds").
func Variants(set *desc.Set) []string {
	if set == nil {
		return nil
	}
	var out []string
	for _, p := range set.Protocols() {
		if p.ParentProtocol == nil {
			continue
		}
		if i := strings.LastIndexByte(p.Name, '_'); i >= 0 && i < len(p.Name)-1 {
			out = append(out, strings.ToLower(p.Name[i+1:]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckVariant returns an error wrapping ErrUnknownVariant, naming the name and the
// known ones (Variants), when a name of the comma-separated list variant selects
// no protocol of set (SelectProtocol would quietly use the root protocols).
func CheckVariant(set *desc.Set, variant string) error {
	if set == nil {
		return nil
	}
	protocols := set.Protocols()
	for _, v := range strings.Split(variant, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !slices.ContainsFunc(protocols, func(p *desc.Protocol) bool { return isVariant(p, v) }) {
			return fmt.Errorf("%w %q (known: %s)", ErrUnknownVariant, v, strings.Join(Variants(set), ", "))
		}
	}
	return nil
}
