package kerberos

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// secureSetup issues a ticket the way an authentication server would and
// returns what the client decrypted plus the server's key.
func secureSetup(t testing.TB, s Settings, issued time.Time) (tk Ticket, serverKey []byte) {
	t.Helper()
	rnd := rngReader{rand.New(rand.NewPCG(11, 12))}
	clientKey := DeriveKey("client password", 1234)
	srvKey := DeriveKey("server password", 2)
	sealed, _, err := IssueTicket(nil, Issue{
		SourcePID: 1234, TargetPID: 2, SourceKey: clientKey[:], TargetKey: srvKey[:], Issued: issued,
	}, s, rnd)
	if err != nil {
		t.Fatal(err)
	}
	tk, err = OpenTicket(sealed, clientKey[:], s)
	if err != nil {
		t.Fatal(err)
	}
	return tk, srvKey[:]
}

func TestSecureConnect(t *testing.T) {
	issued := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	now := issued.Add(30 * time.Second)
	for _, s := range []Settings{NEX3DS, Switch, Friends, Quazal} {
		tk, srvKey := secureSetup(t, s, issued)
		req := RequestData{PID: 1234, ConnectionID: 0xdeadbeef, Check: 0xffffffff}
		payload, err := AppendConnect(nil, &tk, req, s)
		if err != nil {
			t.Fatal(err)
		}
		acc, err := AcceptConnect(payload, srvKey, s, now, 0)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if acc.Request != req || !bytes.Equal(acc.Info.SessionKey, tk.SessionKey) || acc.Info.SourcePID != 1234 {
			t.Fatalf("accepted %+v", acc)
		}
		resp := AppendConnectResponse(nil, acc.Request.Check)
		if !bytes.Equal(resp, []byte{4, 0, 0, 0, 0, 0, 0, 0}) { // check 0xffffffff + 1 wraps to 0
			t.Fatalf("response % x", resp)
		}
		if err := CheckConnectResponse(resp, req.Check); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSecureConnectRefusals(t *testing.T) {
	issued := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	s := NEX3DS
	tk, srvKey := secureSetup(t, s, issued)
	good, err := AppendConnect(nil, &tk, RequestData{PID: 1234, ConnectionID: 7, Check: 99}, s)
	if err != nil {
		t.Fatal(err)
	}
	wrongPID, _ := AppendConnect(nil, &tk, RequestData{PID: 1235, ConnectionID: 7, Check: 99}, s)
	otherKey := DeriveKey("other", 2)
	tests := []struct {
		name    string
		payload []byte
		key     []byte
		now     time.Time
		want    error
	}{
		{"expired", good, srvKey, issued.Add(3 * time.Minute), ErrExpired},
		{"wrong server key", good, otherKey[:], issued, ErrBadHMAC},
		{"PID mismatch", wrongPID, srvKey, issued, ErrPIDMismatch},
		{"trailing byte", append(append([]byte(nil), good...), 0), srvKey, issued, ErrTrailingData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := AcceptConnect(tt.payload, tt.key, s, tt.now, 0); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	for i := range good {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x10
		if _, err := AcceptConnect(bad, srvKey, s, issued, 0); err == nil {
			t.Fatalf("byte %d flipped: accepted", i)
		}
	}
	for i := range len(good) {
		if _, err := AcceptConnect(good[:i], srvKey, s, issued, 0); err == nil {
			t.Fatalf("prefix of %d bytes accepted", i)
		}
	}
	// Request data of the wrong size, correctly encrypted.
	enc, _ := Encrypt(nil, tk.SessionKey, make([]byte, 13))
	r := ConnectRequest{Ticket: tk.Internal, Request: enc}
	odd, _ := r.Append(nil)
	if _, err := AcceptConnect(odd, srvKey, s, issued, 0); !errors.Is(err, ErrBadLength) {
		t.Fatalf("13-byte request data: %v", err)
	}
}

func TestCheckConnectResponse(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"ok", AppendConnectResponse(nil, 41), nil},
		{"off by one", AppendConnectResponse(nil, 40), ErrBadCheck},
		{"short", AppendConnectResponse(nil, 41)[:7], ErrBadLength},
		{"bad buffer length", binary.LittleEndian.AppendUint32([]byte{5, 0, 0, 0}, 42), ErrBadLength},
	}
	for _, tt := range tests {
		if err := CheckConnectResponse(tt.b, 41); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func FuzzParseConnectRequest(f *testing.F) {
	tk, _ := secureSetup(f, NEX3DS, time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC))
	good, err := AppendConnect(nil, &tk, RequestData{PID: 1234, ConnectionID: 7, Check: 99}, NEX3DS)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := ParseConnectRequest(b)
		if err != nil {
			return
		}
		again, _ := r.Append(nil)
		if !bytes.Equal(again, b[:n]) {
			t.Fatalf("parse -> append differs")
		}
		// The full server path must not panic either.
		_, _ = AcceptConnect(b, []byte("0123456789abcdef"), NEX3DS, time.Unix(0, 0), 0)
	})
}
