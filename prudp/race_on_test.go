//go:build race

package prudp

// raceEnabled lets the long lossy-link test use a smaller count under the
// race detector, which slows the engine about tenfold.
const raceEnabled = true
