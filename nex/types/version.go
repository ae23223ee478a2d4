package types

import "fmt"

// Version is a NEX library version as major*10000 + minor*100 + patch (30400 is
// 3.4.0), the form NintendoClients' nex.version setting uses. Structures of the
// game-service protocols grow fields by library version (MatchmakeSession in
// the match-making types page of the nintendo-wiki, NotificationEvent in
// notifications.md), and only some of those steps show in the structure header's
// revision number, so encoders and decoders of such structures take one.
type Version uint32

// Library versions where structures of the game-service protocols change.
const (
	Version2   Version = 20000
	Version3   Version = 30000
	Version3_4 Version = 30400
	Version3_5 Version = 30500
	Version3_6 Version = 30600
	Version3_7 Version = 30700
	Version3_8 Version = 30800
	Version4   Version = 40000
)

// Major returns the major version (3 for 3.4.0).
func (v Version) Major() int { return int(v / 10000) }

// String prints v as major.minor.patch.
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
}
