//go:build race

package wire

// raceEnabled: sync.Pool drops items at random under the race detector, so allocation
// counts are only asserted without it.
const raceEnabled = true
