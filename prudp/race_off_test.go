//go:build !race

package prudp

const raceEnabled = false
