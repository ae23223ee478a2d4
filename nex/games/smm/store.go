package smm

import (
	"context"
	"errors"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// ErrNotFound is returned by a Store for a course record it does not have.
var ErrNotFound = errors.New("smm: not found")

// Store keeps what Super Mario Maker's DataStore methods add to DataStore's
// objects: custom rankings (a course's stars), the raters' counters, buffer
// queues, course records and deletion reasons. Each method is one
// transaction. internal/sqlstore's SMM implements it on SQLite (nex/accounts)
// and PostgreSQL (nex/pgstore); nex/storetest.SMM is its suite.
type Store interface {
	// RateCustomRanking adds score to each object's score in ranking
	// application (creating it at 0) and counts rater's ratings in that
	// application, all in one transaction.
	RateCustomRanking(ctx context.Context, rater types.PID, application uint32, rates []Rate) error
	// CustomRanking returns each object's place and score in ranking
	// application: Order is 1 + how many objects score more; an object never
	// rated has Score 0 and Order 0.
	CustomRanking(ctx context.Context, application uint32, dataIDs []uint64) ([]Ranked, error)
	// TopCustomRanking returns the best scored objects of ranking application
	// (score descending, data id ascending among equals), from offset, at
	// most limit.
	TopCustomRanking(ctx context.Context, application uint32, offset, limit uint32) ([]Ranked, error)
	// RateCount returns how many ratings rater gave in application since the
	// last reset.
	RateCount(ctx context.Context, rater types.PID, application uint32) (uint32, error)
	// ResetRateCount sets rater's count in application to 0.
	ResetRateCount(ctx context.Context, rater types.PID, application uint32) error

	// AddToBufferQueue appends buf to queue q, dropping the oldest entries
	// beyond keep.
	AddToBufferQueue(ctx context.Context, q QueueID, buf []byte, keep int) error
	// BufferQueue returns queue q's buffers, oldest first (none: empty).
	BufferQueue(ctx context.Context, q QueueID) ([][]byte, error)

	// UploadCourseRecord records pid's clear of course slot with score at
	// now: the first clear's PID stays, the best (lowest) score and its PID
	// replace a worse one. It returns the record as it now is.
	UploadCourseRecord(ctx context.Context, dataID uint64, slot uint8, pid types.PID, score int32, now time.Time) (CourseRecord, error)
	// CourseRecord returns a course's record, or ErrNotFound.
	CourseRecord(ctx context.Context, dataID uint64, slot uint8) (CourseRecord, error)

	// SetDeletionReason records why objects were deleted.
	SetDeletionReason(ctx context.Context, dataIDs []uint64, reason uint32) error
	// DeletionReasons returns the recorded reason of each object, 0 where
	// none is.
	DeletionReasons(ctx context.Context, dataIDs []uint64) ([]uint32, error)
}

// Rate is one RateCustomRanking item.
type Rate struct {
	DataID uint64
	Score  uint32
}

// Ranked is an object's place and score in a custom ranking.
type Ranked struct {
	DataID uint64
	Score  uint32
	Order  uint32
}

// QueueID names a buffer queue: an object's slot.
type QueueID struct {
	DataID uint64
	Slot   uint32
}

// CourseRecord is a course's record (DataStoreGetCourseRecordResult).
type CourseRecord struct {
	DataID    uint64
	Slot      uint8
	FirstPID  types.PID // the first to clear it
	BestPID   types.PID // who holds BestScore
	BestScore int32     // the clear time: lower is better
	Created   time.Time // the first clear
	Updated   time.Time // the last improvement
}
