package badgearcade

import (
	"context"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// PlayLog is one PostPlayLog entry as received. The fields' meaning is not
// public; their names are Pretendo Network's (ShopPostPlayLogParam).
type PlayLog struct {
	PID       types.PID
	Unknown1  []uint32
	Timestamp types.DateTime // the client's
	Unknown2  string
	Received  time.Time // the server's, to the second
}

// Store keeps Badge Arcade's play logs. internal/sqlstore's BadgeArcade
// implements it on SQLite (nex/accounts) and PostgreSQL (nex/pgstore);
// nex/storetest.BadgeArcade is its suite.
type Store interface {
	// AddPlayLog stores l and keeps only l.PID's newest keep entries.
	AddPlayLog(ctx context.Context, l PlayLog, keep int) error
	// PlayLogs returns pid's newest entries, newest first, at most limit.
	PlayLogs(ctx context.Context, pid types.PID, limit int) ([]PlayLog, error)
}
