package kerberos

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
)

// TestDeriveKeyVector checks the NEX key derivation vector of
// testdata/prudp/vectors.json ("kerberos").
func TestDeriveKeyVector(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/prudp/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Kerberos []struct {
			Name     string `json:"name"`
			PID      uint64 `json:"pid"`
			Password string `json:"password"`
			KeyHex   string `json:"key_hex"`
		} `json:"kerberos"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Kerberos) == 0 {
		t.Fatal("no kerberos vectors")
	}
	for _, k := range v.Kerberos {
		t.Run(k.Name, func(t *testing.T) {
			got := DeriveKey(k.Password, k.PID)
			if hex.EncodeToString(got[:]) != k.KeyHex {
				t.Fatalf("DeriveKey(%q, %d) = %x, want %s", k.Password, k.PID, got, k.KeyHex)
			}
		})
	}
}

// The exercise of nintendo-wiki "Kerberos Authentication": a ticket a Switch server gave
// the guest account, whose internal ticket opens with the password of Quazal
// Rendez-Vous.
const (
	exerciseTicketHex = "86e5b91add71b984c713dab188cdcabc1b4298f922021fe4be049be91b279489" +
		"0de22074734bfd9e75ac3f4ecbb31155933845c601dc8b45d5c7f8e055d80a3c" +
		"cef3ee876cbc64c4a7802f20c126be6c73398d367c934902b7cfe7a187d1d38e" +
		"6bfe18c564217c53a01f11002b19cf7c5361ffb65ba10fe87e0cc8005a1a674a" +
		"fd7461c5154b193a62ccaad8e1a9a28d92645e69"
	guestPassword       = "MMQea3n!fsik"
	guestPIDSwitch      = 564330319085596911
	rendezVousPassword  = "5MYiXWwtBuI6JzhU"
	rendezVousPIDSwitch = 257049437023956657
)

func exerciseKeys() (source, target [16]byte) {
	return DeriveKeySwitch(guestPassword, guestPIDSwitch), DeriveKeySwitch(rendezVousPassword, rendezVousPIDSwitch)
}

func TestSpecExerciseTicket(t *testing.T) {
	sealed := testutil.Unhex(t, exerciseTicketHex)
	src, dst := exerciseKeys()
	tk, err := OpenTicket(sealed, src[:], Switch)
	if err != nil {
		t.Fatal(err)
	}
	if tk.TargetPID != rendezVousPIDSwitch {
		t.Fatalf("target PID %d, want %d (Quazal Rendez-Vous)", tk.TargetPID, uint64(rendezVousPIDSwitch))
	}
	if len(tk.SessionKey) != 32 || tk.Attributes != nil {
		t.Fatalf("session key %d bytes, attributes %v", len(tk.SessionKey), tk.Attributes)
	}
	if !isNewInternalShape(tk.Internal) {
		t.Fatal("internal ticket is not in the new format")
	}
	for _, format := range []InternalFormat{InternalAuto, InternalNew} {
		s := Switch
		s.Internal = format
		info, err := OpenInternal(tk.Internal, dst[:], s)
		if err != nil {
			t.Fatalf("format %d: %v", format, err)
		}
		if info.SourcePID != guestPIDSwitch {
			t.Fatalf("source PID %d, want guest", info.SourcePID)
		}
		if !bytes.Equal(info.SessionKey, tk.SessionKey) {
			t.Fatal("session keys of ticket and internal ticket differ")
		}
		issued, err := info.Issued.Time()
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2022, 5, 21, 16, 12, 43, 0, time.UTC); !issued.Equal(want) {
			t.Fatalf("issued %v, want %v", issued, want)
		}
		if err := info.Validate(issued.Add(time.Minute), 0); err != nil {
			t.Fatalf("Validate one minute later: %v", err)
		}
		if err := info.Validate(issued.Add(3*time.Minute), 0); !errors.Is(err, ErrExpired) {
			t.Fatalf("Validate three minutes later: %v, want ErrExpired", err)
		}
	}
	s := Switch
	s.Internal = InternalOld
	if _, err := OpenInternal(tk.Internal, dst[:], s); !errors.Is(err, ErrBadHMAC) {
		t.Fatalf("new-format ticket read as old: err = %v, want ErrBadHMAC", err)
	}

	// Re-encoding reproduces the published bytes exactly.
	again, err := tk.Seal(nil, src[:], Switch)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, sealed) {
		t.Fatalf("re-sealed ticket differs:\n got %x\nwant %x", again, sealed)
	}
	info, _ := OpenInternal(tk.Internal, dst[:], Switch)
	randomKey := tk.Internal[4:20]
	internal, err := SealInternal(nil, &info, dst[:], Switch, bytes.NewReader(randomKey))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(internal, tk.Internal) {
		t.Fatalf("re-sealed internal ticket differs:\n got %x\nwant %x", internal, tk.Internal)
	}
}

func TestTamperedTicketRejected(t *testing.T) {
	sealed := testutil.Unhex(t, exerciseTicketHex)
	src, dst := exerciseKeys()
	for i := range sealed {
		bad := append([]byte(nil), sealed...)
		bad[i] ^= 0x01
		if _, err := OpenTicket(bad, src[:], Switch); !errors.Is(err, ErrBadHMAC) {
			t.Fatalf("byte %d flipped: err = %v, want ErrBadHMAC", i, err)
		}
	}
	tk, _ := OpenTicket(sealed, src[:], Switch)
	for i := range tk.Internal {
		bad := append([]byte(nil), tk.Internal...)
		bad[i] ^= 0x80
		if _, err := OpenInternal(bad, dst[:], Switch); err == nil {
			t.Fatalf("internal ticket byte %d flipped: accepted", i)
		}
	}
	wrong := DeriveKeySwitch("not the password", guestPIDSwitch)
	if _, err := OpenTicket(sealed, wrong[:], Switch); !errors.Is(err, ErrBadHMAC) {
		t.Fatalf("wrong password: err = %v, want ErrBadHMAC", err)
	}
}

func TestTicketPrefixesRejected(t *testing.T) {
	sealed := testutil.Unhex(t, exerciseTicketHex)
	src, dst := exerciseKeys()
	for i := range len(sealed) {
		if _, err := OpenTicket(sealed[:i], src[:], Switch); err == nil {
			t.Fatalf("sealed prefix of %d bytes accepted", i)
		}
	}
	plain, err := Decrypt(nil, src[:], sealed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(plain) {
		if _, _, err := ParseTicket(plain[:i], Switch); !errors.Is(err, ErrTruncated) {
			t.Fatalf("plaintext prefix of %d bytes: err = %v, want ErrTruncated", i, err)
		}
	}
	tk, _, _ := ParseTicket(plain, Switch)
	for i := range len(tk.Internal) {
		if _, err := OpenInternal(tk.Internal[:i], dst[:], Switch); err == nil {
			t.Fatalf("internal prefix of %d bytes accepted", i)
		}
	}
}

func TestTicketRoundTripSettings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rnd := rngReader{rng}
	issued := time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC)
	tests := []struct {
		name string
		s    Settings
		pid  uint64
	}{
		{"zero value", Settings{}, 1000},
		{"3DS new", NEX3DS, 1750087940},
		{"3DS old", Settings{PIDSize: 4, SessionKeySize: 32, Internal: InternalOld}, 1750087940},
		{"Switch", Switch, 0x0123456789abcdef},
		{"friends", Friends, 100},
		{"Quazal old", Settings{PIDSize: 4, SessionKeySize: 16, Internal: InternalOld}, 0x1234},
		{"Quazal", Quazal, 0x1234},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcKey := DeriveKeySwitch("source", tt.pid)
			dstKey := DeriveKeySwitch("target", 2)
			for _, attrs := range [][]byte{nil, {}, []byte(`{"v": 1}` + "\x00")} {
				sealed, sk, err := IssueTicket(nil, Issue{
					SourcePID: tt.pid, TargetPID: 2, SourceKey: srcKey[:], TargetKey: dstKey[:],
					Issued: issued, Attributes: attrs,
				}, tt.s, rnd)
				if err != nil {
					t.Fatal(err)
				}
				tk, err := OpenTicket(sealed, srcKey[:], tt.s)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(tk.SessionKey, sk) || tk.TargetPID != 2 {
					t.Fatalf("ticket %+v", tk)
				}
				if (attrs == nil) != (tk.Attributes == nil) || !bytes.Equal(attrs, tk.Attributes) {
					t.Fatalf("attributes %q, want %q", tk.Attributes, attrs)
				}
				// Reading with auto detection works for either format.
				auto := tt.s
				auto.Internal = InternalAuto
				info, err := OpenInternal(tk.Internal, dstKey[:], auto)
				if err != nil {
					t.Fatal(err)
				}
				if info.SourcePID != tt.pid || !bytes.Equal(info.SessionKey, sk) || info.Issued != NewDateTime(issued) {
					t.Fatalf("info %+v", info)
				}
			}
		})
	}
}

func TestSettingsErrors(t *testing.T) {
	tk := Ticket{SessionKey: make([]byte, 16), TargetPID: 2}
	if _, err := tk.Append(nil, Switch); !errors.Is(err, ErrBadLength) {
		t.Errorf("16-byte key with 32-byte settings: %v", err)
	}
	if _, err := tk.Append(nil, Settings{PIDSize: 5}); !errors.Is(err, ErrBadSettings) {
		t.Errorf("PID size 5: %v", err)
	}
	if _, err := tk.Append(nil, Settings{SessionKeySize: 20}); !errors.Is(err, ErrBadSettings) {
		t.Errorf("key size 20: %v", err)
	}
	big := Ticket{SessionKey: make([]byte, 32), TargetPID: 1 << 40}
	if _, err := big.Append(nil, NEX3DS); !errors.Is(err, ErrBadSettings) {
		t.Errorf("PID 2^40 in 4 bytes: %v", err)
	}
	if _, err := Encrypt(nil, nil, []byte("x")); !errors.Is(err, ErrBadKey) {
		t.Errorf("empty key: %v", err)
	}
}

func TestEncryptDecrypt(t *testing.T) {
	key := []byte("0123456789abcdef")
	msg := []byte("ticket body")
	sealed, err := Encrypt([]byte("prefix"), key, msg)
	if err != nil {
		t.Fatal(err)
	}
	if string(sealed[:6]) != "prefix" || len(sealed) != 6+len(msg)+HMACSize {
		t.Fatalf("bad layout: %x", sealed)
	}
	plain, err := Decrypt(nil, key, sealed[6:])
	if err != nil || !bytes.Equal(plain, msg) {
		t.Fatalf("Decrypt = %q, %v", plain, err)
	}
	if _, err := Decrypt(nil, key, sealed[6:6+HMACSize-1]); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short input: %v", err)
	}
	empty, _ := Encrypt(nil, key, nil)
	if p, err := Decrypt(nil, key, empty); err != nil || len(p) != 0 {
		t.Fatalf("empty round trip: %x, %v", p, err)
	}
}

func TestDateTime(t *testing.T) {
	ts := time.Date(2022, 5, 21, 16, 12, 43, 999, time.FixedZone("x", 3600))
	d := NewDateTime(ts)
	if d.Year() != 2022 || d.Month() != 5 || d.Day() != 21 || d.Hour() != 15 || d.Minute() != 12 || d.Second() != 43 {
		t.Fatalf("fields of %v: %s", d, d)
	}
	back, err := d.Time()
	if err != nil || !back.Equal(ts.Truncate(time.Second)) {
		t.Fatalf("Time() = %v, %v", back, err)
	}
	if d.String() != "2022-05-21 15:12:43" {
		t.Fatalf("String() = %q", d.String())
	}
	// Bit layout of types.md.
	if want := DateTime(2022<<26 | 5<<22 | 21<<17 | 15<<12 | 12<<6 | 43); d != want {
		t.Fatalf("packed %#x, want %#x", uint64(d), uint64(want))
	}
	bad := map[string]DateTime{
		"month 0":      DateTime(2022<<26 | 0<<22 | 1<<17),
		"month 13":     DateTime(2022<<26 | 13<<22 | 1<<17),
		"day 0":        DateTime(2022<<26 | 1<<22 | 0<<17),
		"february 30":  DateTime(2023<<26 | 2<<22 | 30<<17),
		"hour 24":      DateTime(2022<<26 | 1<<22 | 1<<17 | 24<<12),
		"minute 60":    DateTime(2022<<26 | 1<<22 | 1<<17 | 60<<6),
		"second 60":    DateTime(2022<<26 | 1<<22 | 1<<17 | 60),
		"year too big": DateTime(^uint64(0)),
	}
	for name, d := range bad {
		if _, err := d.Time(); !errors.Is(err, ErrBadDateTime) {
			t.Errorf("%s: err = %v, want ErrBadDateTime", name, err)
		}
	}
}

func TestValidate(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		issued time.Time
		maxAge time.Duration
		want   error
	}{
		{"just issued", now, 0, nil},
		{"two minutes old", now.Add(-2 * time.Minute), 0, nil},
		{"two minutes one second old", now.Add(-2*time.Minute - time.Second), 0, ErrExpired},
		{"custom max age", now.Add(-9 * time.Minute), 10 * time.Minute, nil},
		{"expiry-style time one minute ahead", now.Add(time.Minute), 0, nil},
		{"far future", now.Add(time.Hour), 0, ErrNotYetValid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := TicketInfo{Issued: NewDateTime(tt.issued)}
			if err := info.Validate(now, tt.maxAge); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	info := TicketInfo{Issued: DateTime(2025<<26 | 14<<22)}
	if err := info.Validate(now, 0); !errors.Is(err, ErrBadDateTime) {
		t.Fatalf("bad DateTime: err = %v", err)
	}
}

func TestTicketInfoExtra(t *testing.T) {
	info := TicketInfo{Issued: 5, SourcePID: 9, SessionKey: make([]byte, 16), Extra: []byte{1, 2, 3}}
	b, err := info.Append(nil, Friends)
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := ParseTicketInfo(b, Friends)
	if err != nil || n != len(b) || !bytes.Equal(got.Extra, info.Extra) || got.SourcePID != 9 || got.Issued != 5 {
		t.Fatalf("ParseTicketInfo = %+v, %d, %v", got, n, err)
	}
	for i := range 8 + 4 + 16 {
		if _, _, err := ParseTicketInfo(b[:i], Friends); !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix %d: %v", i, err)
		}
	}
}

type rngReader struct{ r *rand.Rand }

func (r rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.r.Uint32())
	}
	return len(p), nil
}

func FuzzParseTicket(f *testing.F) {
	src, _ := exerciseKeys()
	plain, err := Decrypt(nil, src[:], testutil.Unhex(f, exerciseTicketHex))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(plain, true)
	withAttrs := appendBuffer(append([]byte(nil), plain...), []byte("{}\x00"))
	f.Add(withAttrs, true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, b []byte, sw bool) {
		s := NEX3DS
		if sw {
			s = Switch
		}
		tk, n, err := ParseTicket(b, s)
		if err != nil {
			return
		}
		if n != len(b) {
			t.Fatalf("n = %d, len = %d", n, len(b))
		}
		again, err := tk.Append(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("parse -> append differs:\n got %x\nwant %x", again, b)
		}
	})
}

func FuzzOpenInternal(f *testing.F) {
	src, dst := exerciseKeys()
	tk, err := OpenTicket(testutil.Unhex(f, exerciseTicketHex), src[:], Switch)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tk.Internal)
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := OpenInternal(b, dst[:], Switch)
		if err != nil {
			return
		}
		if len(info.SessionKey) != 32 {
			t.Fatalf("session key of %d bytes", len(info.SessionKey))
		}
		if _, err := info.Append(nil, Switch); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkDeriveKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		DeriveKey(guestPassword, 100)
	}
}

func BenchmarkOpenTicket(b *testing.B) {
	sealed := testutil.Unhex(b, exerciseTicketHex)
	src, _ := exerciseKeys()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OpenTicket(sealed, src[:], Switch); err != nil {
			b.Fatal(err)
		}
	}
}
