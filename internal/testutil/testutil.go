// Package testutil holds the small helpers that tests of several packages share:
// decoding hex literals and reading the process's CPU time. It is imported only by
// _test.go files.
package testutil

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Unhex decodes a hex string written for people: spaces, newlines, tabs, colons,
// '|' (field separators in message layouts) and a 0x prefix are ignored. A
// malformed literal fails tb.
func Unhex(tb testing.TB, s string) []byte {
	tb.Helper()
	s = strings.TrimPrefix(strings.TrimSpace(s), "0x")
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\n', '\t', '\r', ':', '|':
			return -1
		}
		return r
	}, s)
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("bad hex literal %q: %v", s, err)
	}
	return b
}
