//go:build !race

package accounts

const raceEnabled = false
