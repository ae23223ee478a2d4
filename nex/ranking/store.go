package ranking

import (
	"context"
	"errors"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Store keeps rankings: categories, scores and common data. accounts.Store's
// Ranking implements it on SQLite; another backend (PostgreSQL, ...) implements
// the same methods. Every method runs in one transaction, so a failed call
// changes nothing.
type Store interface {
	// Category returns a category, or ErrNoCategory.
	Category(ctx context.Context, category uint32) (Category, error)
	// AddCategory creates a category unless it exists (an existing one keeps
	// its order).
	AddCategory(ctx context.Context, c Category) error

	// UploadScore stores s as pid's score under uniqueID in s.Category (which
	// must exist, ordered as c says) when there is none yet, or when
	// s.UpdateMode is UpdateDeleteOld, or when s.Score is better than the
	// stored score; otherwise it changes nothing and reports false.
	UploadScore(ctx context.Context, c Category, pid types.PID, uniqueID uint64, s ScoreData, now time.Time) (bool, error)
	// DeleteScore deletes one score; false when there was none.
	DeleteScore(ctx context.Context, pid types.PID, uniqueID uint64, category uint32) (bool, error)
	// DeleteAllScores deletes pid's scores under uniqueID in every category.
	DeleteAllScores(ctx context.Context, pid types.PID, uniqueID uint64) (int64, error)
	// ChangeAttributes changes the groups and/or param (p.Flag) of pid's score
	// in category, or in every category when all is set; it returns how many
	// scores changed.
	ChangeAttributes(ctx context.Context, pid types.PID, uniqueID uint64, category uint32, all bool, p ChangeAttributesParam) (int64, error)

	// PutCommonData replaces pid's common data under uniqueID.
	PutCommonData(ctx context.Context, pid types.PID, uniqueID uint64, data []byte, now time.Time) error
	// CommonData returns pid's common data, or ErrNotFound.
	CommonData(ctx context.Context, pid types.PID, uniqueID uint64) ([]byte, error)
	// DeleteCommonData deletes it; false when there was none.
	DeleteCommonData(ctx context.Context, pid types.PID, uniqueID uint64) (bool, error)

	// List returns up to limit entries of q in rank order from position
	// offset (0 is the first place), each with its common data.
	List(ctx context.Context, q Query, offset, limit uint32) ([]Entry, error)
	// Find returns the entry of pid under uniqueID in q with its position (the
	// number of entries ordered before it), or ErrNotFound.
	Find(ctx context.Context, q Query, pid types.PID, uniqueID uint64) (Entry, uint32, error)
	// FindUnique returns the first entry (in rank order) under uniqueID in q,
	// whoever's it is, with its position, or ErrNotFound.
	FindUnique(ctx context.Context, q Query, uniqueID uint64) (Entry, uint32, error)
	// CountBetter counts the entries of q with a score strictly better than
	// score.
	CountBetter(ctx context.Context, q Query, score uint32) (uint32, error)
	// Count counts the entries of q.
	Count(ctx context.Context, q Query) (uint32, error)
	// Stats returns the count, sum, lowest, highest and average score of q.
	Stats(ctx context.Context, q Query) (Stats, error)

	// Usage says what pid keeps (the Ranking part of quota.Quota), and
	// whether it already has a score in category and common data under
	// uniqueID.
	Usage(ctx context.Context, pid types.PID, category uint32, uniqueID uint64) (Usage, error)
}

// Usage is what one player keeps in a Store.
type Usage struct {
	Categories    int  // categories with a score of the player's
	InCategory    bool // a score in the category asked about
	CommonData    int  // common data entries
	HasCommonData bool // common data under the unique id asked about
}

// Errors of a Store.
var (
	ErrNoCategory = errors.New("ranking: no such category")
	ErrNotFound   = errors.New("ranking: not found")
)

// Category is one ranking: its id and whether higher scores rank first.
type Category struct {
	ID         uint32
	Descending bool // higher scores rank first (orderBy OrderDescending)
}

// Query selects the entries of one category, optionally only those whose
// group byte GroupIndex equals GroupNum (GroupIndex NoGroup: all of them).
type Query struct {
	Category   Category
	GroupIndex uint8
	GroupNum   uint8
}

// Entry is one stored score.
type Entry struct {
	PID        types.PID
	UniqueID   uint64
	Category   uint32
	Score      uint32
	Groups     []byte
	Param      uint64
	CommonData []byte
	Updated    time.Time
}

// Better reports whether score a ranks before score b in category c.
func (c Category) Better(a, b uint32) bool {
	if c.Descending {
		return a > b
	}
	return a < b
}
