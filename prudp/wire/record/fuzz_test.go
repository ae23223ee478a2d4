package record

import (
	"encoding/json"
	"testing"
)

// FuzzDecode runs the decode --hex pipeline (auto detection, records, plain_hex, JSON)
// on arbitrary bytes: no panic, and every record marshals.
func FuzzDecode(f *testing.F) {
	for _, b := range vectorsFor(f) {
		f.Add(b, "8dtRv2oj", true)
	}
	f.Fuzz(func(t *testing.T, data []byte, key string, decrypt bool) {
		d, err := Resolve("auto", data, key, 0)
		if err != nil {
			return
		}
		recs, _ := DecodeAll(d, data, Options{Decrypt: decrypt, MaxPlain: 1 << 16})
		for i := range recs {
			if _, err := json.Marshal(&recs[i]); err != nil {
				t.Fatal(err)
			}
			_ = recs[i].Text()
		}
	})
}
