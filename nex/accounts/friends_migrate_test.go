package accounts

import (
	"context"
	"testing"

	"github.com/gamewire/gamewire/nex/friends"
)

// TestFriendsStep2Migration: a database at the friends component's step 1
// (before persistent notifications) gains friends_notifications when opened,
// and keeps what it had.
func TestFriendsStep2Migration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Friends().UpdateProfile(ctx, 5, func(p *friends.Profile) error { p.Comment = "kept"; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE friends_notifications`, `UPDATE schema_migrations SET version = 1 WHERE component = 'friends'`} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, _, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.SchemaVersions(ctx); err != nil || v["friends"] != 2 {
		t.Fatalf("friends schema version %v %v, want 2", v, err)
	}
	f := s.Friends()
	if p, err := f.Profile(ctx, 5); err != nil || p.Comment != "kept" {
		t.Fatalf("profile after the migration: %+v %v", p, err)
	}
	if _, err := f.AddNotification(ctx, friends.Notification{PID: 5, Type: 27, From: 6}, 10); err != nil {
		t.Fatal(err)
	}
	if ns, err := f.Notifications(ctx, 5); err != nil || len(ns) != 1 {
		t.Fatalf("notifications after the migration: %+v %v", ns, err)
	}
}
