package wire

import (
	"errors"
	"testing"
)

func TestDetectVectors(t *testing.T) {
	vec := loadVectors(t)
	tests := []struct {
		name, key, want string
		cs              int
	}{
		{"quazal-gro-connect", "8dtRv2oj", NameQuazal, 1},
		{"quazal-gro-do-join-request", "", NameQuazal, 1},
		{"quazal-gro-do-join-request", "8dtRv2oj", NameQuazal, 1},
		{"quazal-scbl-syn", "yl4NG7qZ", NameQuazal, 1},
		{"v1-terraria-syn", "3d37fbdb", NameV1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Detect(vec[tt.name], DetectOptions{AccessKey: tt.key})
			if err != nil {
				t.Fatal(err)
			}
			if d.Name() != tt.want {
				t.Fatalf("detected %s, want %s", d.Name(), tt.want)
			}
			if q, ok := d.(*Quazal); ok && q.Options().ChecksumSize != tt.cs {
				t.Errorf("checksum size %d, want %d", q.Options().ChecksumSize, tt.cs)
			}
		})
	}
	// With a wrong key the GRO CONNECT verifies nowhere.
	_, err := Detect(vec["quazal-gro-connect"], DetectOptions{AccessKey: "wrong"})
	if !errors.Is(err, ErrUnknownDialect) {
		t.Errorf("wrong key: %v", err)
	}
}

// TestDetectRoundTrip: packets encoded by each dialect (with a key, so checksum bases
// differ) are detected as that dialect.
func TestDetectRoundTrip(t *testing.T) {
	const key = "8dtRv2oj"
	ds := []Dialect{
		NewV0(key, ModeGames), NewQuazal(key, QuazalOptions{}), NewQuazal(key, QuazalOptions{ChecksumSize: 4}),
		NewV1(key), NewLite(key), NewHyperscape(),
	}
	for _, d := range ds {
		t.Run(detectName(d), func(t *testing.T) {
			misses := 0
			total := 0
			for _, typ := range []PacketType{TypeSyn, TypeConnect, TypeData, TypePing} {
				for _, p := range samplePackets(d, typ) {
					if d.Name() == NameV0 {
						p.Src, p.Dst = VPort{StreamRVSecure, 15}, VPort{StreamRVSecure, 1}
					}
					enc, err := d.Append(nil, &p)
					if err != nil {
						t.Fatal(err)
					}
					total++
					got, err := Detect(enc, DetectOptions{AccessKey: key})
					if err != nil {
						t.Fatalf("%v: %v", typ, err)
					}
					if detectName(got) != detectName(d) {
						misses++
						t.Logf("%v %x detected as %s", typ, enc, detectName(got))
					}
				}
			}
			if misses > 0 {
				t.Errorf("%d of %d packets misdetected", misses, total)
			}
		})
	}
}
