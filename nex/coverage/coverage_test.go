package coverage

import "testing"

// TestSameName: the nintendo-wiki's and Pretendo's spellings of a method
// match; different methods do not.
func TestSameName(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"GetMetaByOwnerId", "GetMetaByOwnerID", true},
		{"AutoMatchmake_Postpone", "AutoMatchmakePostpone", true},
		{"UnknownMethod0x1", "Unk1", true},
		{"UnknownMethod0x2", "Unk1", false},
		{"Unk1", "Unk2", false},
		{"GetRanking", "GetRankingByPID", false},
	} {
		if got := sameName(c.a, c.b); got != c.want {
			t.Errorf("sameName(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
