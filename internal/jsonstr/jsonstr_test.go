package jsonstr

import (
	"encoding/json"
	"testing"
)

func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\", "\n\r\t\b\f\x00\x1f\x7f", "<a&b>", "é世\u2028\u2029", "\xff\xfe bad", "\xe4\xb8"} {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\n<&>", "\u2028\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
