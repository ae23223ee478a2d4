package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// CredentialStore is an NNID store whose NEX accounts the ticket-granting
// service reads.
type CredentialStore interface {
	credentials.Store
	auth.Accounts
}

// Credentials runs the NNID store suite: the token secret is made once and
// kept; an NNID is created with its NEX account (keys derived from the
// server-issued NEX password), found by NNID (any case) and PID, its password
// checked by verifier only; NNIDs and PIDs are unique; access levels and
// passwords change.
func Credentials(t *testing.T, open func(t *testing.T) CredentialStore) {
	t.Run("credentials", func(t *testing.T) {
		ctx := context.Background()
		s := open(t)
		s1, err := s.TokenSecret(ctx)
		if err != nil || len(s1) != 32 {
			t.Fatalf("TokenSecret: %x %v", s1, err)
		}
		if s2, err := s.TokenSecret(ctx); err != nil || !bytes.Equal(s1, s2) {
			t.Fatalf("second TokenSecret differs: %x %v", s2, err)
		}
		v, err := credentials.NewVerifier(credentials.PasswordHash(0, "pw"))
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.CreateNNID(ctx, credentials.NNID{UserID: "Player_One", Email: "p1@example.com", Country: "NL", Region: 4}, v)
		if err != nil {
			t.Fatal(err)
		}
		if n.PID < 1000 || len(n.NEXPassword) != 16 {
			t.Fatalf("created %+v", n)
		}
		a, err := s.AccountByPID(ctx, n.PID)
		if err != nil {
			t.Fatalf("NEX account of the NNID: %v", err)
		}
		if a.KeyNEX != kerberos.DeriveKey(n.NEXPassword, uint64(n.PID)) {
			t.Error("the NEX account's key is not the NEX password's")
		}
		got, gv, err := s.NNIDByUserID(ctx, "player_one")
		if err != nil || got.PID != n.PID || got.NEXPassword != n.NEXPassword || got.Email != "p1@example.com" || got.Region != 4 {
			t.Fatalf("NNIDByUserID: %+v %v", got, err)
		}
		if !gv.Check(credentials.PasswordHash(0, "pw")) || gv.Check(credentials.PasswordHash(0, "wrong")) {
			t.Error("verifier does not tell the password")
		}
		if got, _, err := s.NNIDByPID(ctx, n.PID); err != nil || got.UserID != "Player_One" {
			t.Fatalf("NNIDByPID: %+v %v", got, err)
		}
		if _, _, err := s.NNIDByUserID(ctx, "nobody1"); !errors.Is(err, credentials.ErrNoNNID) {
			t.Errorf("unknown NNID: %v", err)
		}
		if _, err := s.CreateNNID(ctx, credentials.NNID{UserID: "PLAYER_ONE"}, v); !errors.Is(err, credentials.ErrNNIDExists) {
			t.Errorf("duplicate NNID: %v", err)
		}
		if _, err := s.CreateNNID(ctx, credentials.NNID{UserID: "another", PID: n.PID}, v); !errors.Is(err, credentials.ErrNNIDExists) {
			t.Errorf("duplicate PID: %v", err)
		}
		if _, err := s.CreateNNID(ctx, credentials.NNID{UserID: "no"}, v); !errors.Is(err, credentials.ErrBadNNID) {
			t.Errorf("short NNID: %v", err)
		}
		m, err := s.CreateNNID(ctx, credentials.NNID{UserID: "second", PID: 1799999999}, v)
		if err != nil || m.PID != 1799999999 {
			t.Fatalf("chosen PID: %+v %v", m, err)
		}
		v2, _ := credentials.NewVerifier(credentials.PasswordHash(m.PID, "new"))
		if err := s.SetNNIDPassword(ctx, m.PID, v2); err != nil {
			t.Fatal(err)
		}
		if err := s.SetAccessLevel(ctx, m.PID, -1); err != nil {
			t.Fatal(err)
		}
		got, gv, _ = s.NNIDByPID(ctx, m.PID)
		if got.AccessLevel != -1 || !gv.Check(credentials.PasswordHash(m.PID, "new")) {
			t.Errorf("after changes: %+v", got)
		}
		if err := s.SetAccessLevel(ctx, types.PID(4242), 0); !errors.Is(err, credentials.ErrNoNNID) {
			t.Errorf("unknown PID: %v", err)
		}
		list, err := s.NNIDs(ctx)
		if err != nil || len(list) != 2 || list[0].PID != n.PID {
			t.Errorf("NNIDs: %+v %v", list, err)
		}
	})
}
