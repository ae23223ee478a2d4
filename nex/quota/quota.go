// Package quota is what one player may keep in a game server's store: open
// gatherings, communities, ranking categories and common data, DataStore
// objects, pending posts and bytes. The stores (nex/accounts, nex/pgstore,
// through internal/sqlstore) and the Ranking server check it; a refusal is
// the protocol's own result code, so a client shows its usual "too many"
// message:
//
//	gatherings          RendezVous::LimitExceeded (0x800300DF)
//	communities         RendezVous::PersistentGatheringCreationMax (0x800300CB)
//	ranking categories  Ranking::RegistrationError (0x80670003)
//	common data         Ranking::RegistrationError (0x80670003)
//	DataStore           DataStore::OverCapacity (0x8069000A)
//
// (codes as NintendoClients' nintendo/nex/errors.py names them; Ranking has
// no capacity code, RegistrationError, "the score could not be
// registered", is the judgement call: docs/security.md).
package quota

import "github.com/gamewire/gamewire/nex/types"

// Result codes of a quota refusal.
const (
	ResultLimitExceeded                  types.Result = 0x800300DF // RendezVous::LimitExceeded
	ResultPersistentGatheringCreationMax types.Result = 0x800300CB // RendezVous::PersistentGatheringCreationMax
	ResultRankingRegistrationError                    = types.RankingRegistrationErr
	ResultDataStoreOverCapacity                       = types.DataStoreOverCapacity
)

// Quota bounds what one player keeps. A field of 0 is no limit, so the zero
// Quota limits nothing (what a store does until told otherwise).
type Quota struct {
	// Gatherings bounds the matchmake sessions a player owns at once.
	Gatherings int
	// Communities bounds the persistent gatherings a player owns.
	Communities int
	// RankingCategories bounds the ranking categories a player has scores
	// in (a new category comes into existence with its first score).
	RankingCategories int
	// CommonData bounds a player's ranking common data entries (one per
	// unique id).
	CommonData int
	// Objects bounds a player's DataStore objects, pending ones included.
	Objects int
	// Pending bounds a player's DataStore posts prepared and not completed.
	Pending int
	// Bytes bounds a player's DataStore bytes: the declared body sizes and
	// the meta binaries of its objects.
	Bytes int64
}

// Default is gamewire serve's quota: generous for one player of any game
// gamewire knows, small enough that a million players fit a disk.
// Judgement calls (docs/security.md).
func Default() Quota {
	return Quota{
		Gatherings:        16,
		Communities:       16,
		RankingCategories: 1000,
		CommonData:        16,
		Objects:           1000,
		Pending:           32,
		Bytes:             256 << 20,
	}
}
