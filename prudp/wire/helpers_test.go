package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
)

type vectorFile struct {
	Packets []struct {
		Name      string `json:"name"`
		Dialect   string `json:"dialect"`
		AccessKey string `json:"access_key"`
		Hex       string `json:"hex"`
		Facts     string `json:"facts"`
	} `json:"packets"`
}

// loadVectors reads testdata/prudp/vectors.json and returns the packets by name.
func loadVectors(t testing.TB) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/prudp/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vf vectorFile
	if err := json.Unmarshal(raw, &vf); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range vf.Packets {
		b, err := hex.DecodeString(p.Hex)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		out[p.Name] = b
	}
	return out
}

// samePacket compares every field except Checksum (which Append recomputes).
func samePacket(a, b Packet) bool {
	pa, pb := a.Payload, b.Payload
	a.Payload, b.Payload = nil, nil
	a.Checksum, b.Checksum = 0, 0
	return reflect.DeepEqual(a, b) && bytes.Equal(pa, pb)
}

// wireError asserts err is a *Error of the dialect wrapping want.
func wireError(t *testing.T, err error, dialect string, want ...error) *Error {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var we *Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v is %T, not *wire.Error", err, err)
	}
	if we.Dialect != dialect {
		t.Errorf("error %q names dialect %q, want %q", err, we.Dialect, dialect)
	}
	if we.Field == "" {
		t.Errorf("error %q names no field", err)
	}
	for _, w := range want {
		if errors.Is(err, w) {
			return we
		}
	}
	t.Errorf("error %q wraps none of %v", err, want)
	return we
}
