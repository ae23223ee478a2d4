package dyn

import (
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
		suffix := "_" + strings.ToLower(v)
		for _, p := range ps {
			if p.ParentProtocol == nil {
				continue
			}
			if strings.HasSuffix(strings.ToLower(p.Name), suffix) ||
				p.File != nil && strings.HasSuffix(strings.ToLower(p.File.Name), suffix) {
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
