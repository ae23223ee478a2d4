package accounts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// TestDataStoreQueryPlans checks that every DataStore lookup and every
// filtered search is an index search, and that a write's changes (tags,
// recipients) reach the rows searches use.
func TestDataStoreQueryPlans(t *testing.T) {
	ctx := context.Background()
	s, _, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.DataStore()
	now := time.Now()
	for i := 0; i < 50; i++ {
		o := &datastore.Object{Owner: types.PID(1000 + i%5), Name: "o", DataType: uint16(i % 3), Tags: []string{"t" + string(rune('a'+i%4))},
			Permission: datastore.Permission{Permission: datastore.PermissionRecipients, RecipientIDs: []types.PID{2000}},
			Created:    now, Updated: now, PersistenceSlot: datastore.NoPersistenceSlot}
		if _, err := d.CreateObject(ctx, o, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Update(ctx, 1, func(o *datastore.Object) error { o.Tags = []string{"new"}; return nil }); err != nil {
		t.Fatal(err)
	}
	res, _, err := d.Search(ctx, datastore.SearchQuery{Viewer: 2000, Tags: []string{"new"}, Limit: 10, Now: now})
	if err != nil || len(res) != 1 || res[0].DataID != 1 {
		t.Fatalf("search by the changed tag: %v %v", res, err)
	}
	if res, _, _ := d.Search(ctx, datastore.SearchQuery{Viewer: 3000, Limit: 10, Now: now}); len(res) != 0 {
		t.Fatalf("a PID no object names sees %d", len(res))
	}

	search := func(q datastore.SearchQuery) string {
		where, args := sqlstore.SearchWhere(q)
		return explain(t, s, `SELECT `+sqlstore.ObjectColumns+` FROM datastore_objects o WHERE `+where+` ORDER BY o.data_id LIMIT 10`, args...)
	}
	for name, plan := range map[string]string{
		"object":                   explain(t, s, `SELECT `+sqlstore.ObjectColumns+` FROM datastore_objects o WHERE o.data_id = 1`),
		"slot":                     explain(t, s, `SELECT `+sqlstore.ObjectColumns+` FROM datastore_objects o WHERE o.owner = 1000 AND o.persistence_slot = 3 AND o.persistence_slot != 65535`),
		"upload":                   explain(t, s, `SELECT token FROM datastore_uploads WHERE token = 'x'`),
		"finished upload":          explain(t, s, `SELECT token FROM datastore_uploads WHERE data_id = 1 AND version = 1 AND used = 1 ORDER BY rowid DESC LIMIT 1`),
		"search by owner":          search(datastore.SearchQuery{Viewer: 2000, Owners: []types.PID{1001}, Now: now}),
		"search by type":           search(datastore.SearchQuery{Viewer: 2000, DataTypes: []uint16{2}, Now: now}),
		"search by tag":            search(datastore.SearchQuery{Viewer: 2000, Tags: []string{"tb"}, Now: now}),
		"friend's search by owner": search(datastore.SearchQuery{Viewer: 2000, Friends: []types.PID{1001}, Owners: []types.PID{1001}, Now: now}),
		"friend's search by type":  search(datastore.SearchQuery{Viewer: 2000, Friends: friendList(100), DataTypes: []uint16{2}, Now: now}),
		"friend's search by tag":   search(datastore.SearchQuery{Viewer: 2000, Friends: friendList(100), Tags: []string{"tb"}, Now: now}),
		"rating log":               explain(t, s, `SELECT value FROM datastore_rating_logs WHERE data_id = 1 AND slot = 0 AND pid = 5`),
		"notifications":            explain(t, s, `SELECT id FROM datastore_notifications WHERE recipient = 5 AND id > 0 ORDER BY id LIMIT 10`),
		"latest notification":      explain(t, s, `SELECT id FROM datastore_notifications WHERE recipient = 5 ORDER BY id DESC LIMIT 1`),
		"notification prune": explain(t, s, `DELETE FROM datastore_notifications WHERE recipient = 5 AND id <=
			(SELECT id FROM datastore_notifications WHERE recipient = 5 ORDER BY id DESC LIMIT 1 OFFSET 1000)`),
		"notifications of an object": explain(t, s, `DELETE FROM datastore_notifications WHERE data_id = 1`),
		"sweep pending": explain(t, s, `SELECT o.data_id FROM datastore_objects o WHERE o.pending = true AND o.created < 5 AND NOT EXISTS (
			SELECT 1 FROM datastore_uploads u WHERE u.data_id = o.data_id AND u.expires >= 5) ORDER BY o.created LIMIT 500`),
		"sweep uploads": explain(t, s, `SELECT token FROM datastore_uploads WHERE used = false AND expires < 5 ORDER BY expires LIMIT 500`),
		"usage":         explain(t, s, `SELECT count(*), coalesce(sum(size + length(meta_binary)), 0) FROM datastore_objects WHERE owner = 5`),
	} {
		if strings.Contains(plan, "SCAN o") || strings.Contains(plan, "SCAN datastore") || !strings.Contains(plan, "INDEX") && !strings.Contains(plan, "PRIMARY KEY") && !strings.Contains(plan, "INTEGER PRIMARY KEY") {
			t.Errorf("%s: not an index search:\n%s", name, plan)
		} else {
			t.Logf("%s:\n%s", name, plan)
		}
	}
}

// friendList is n friends' PIDs (a console's full list is 100), for plans.
func friendList(n int) []types.PID {
	out := make([]types.PID, n)
	for i := range out {
		out[i] = types.PID(1000 + i)
	}
	return out
}

// TestDataStoreSchemaV1Upgrade opens a database whose datastore component is
// at version 1 (before rating logs and notifications): the step adds the new
// tables, the objects stay, and the new methods work on them.
func TestDataStoreSchemaV1Upgrade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	o := &datastore.Object{Owner: 1000, Name: "old", Ratings: []datastore.Rating{{Slot: 0}}, PersistenceSlot: datastore.NoPersistenceSlot}
	if _, err := s.DataStore().CreateObject(ctx, o, false); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE datastore_rating_logs`, `DROP TABLE datastore_notifications`,
		`DROP INDEX datastore_objects_pending`, `DROP INDEX datastore_uploads_expires`,
		`UPDATE schema_migrations SET version = 1 WHERE component = 'datastore'`} {
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
	if v, _ := s.SchemaVersions(ctx); v["datastore"] != 3 {
		t.Fatalf("datastore schema version %d after reopening, want 3", v["datastore"])
	}
	d := s.DataStore()
	if got, err := d.Object(ctx, o.DataID); err != nil || got.Name != "old" {
		t.Fatalf("object after the upgrade: %+v %v", got, err)
	}
	if err := d.Rate(ctx, 5, []datastore.RatingTarget{{DataID: o.DataID}}, func(_ int, o *datastore.Object, l *datastore.RatingLog) error {
		l.Rated, l.Value = true, 3
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if l, err := d.RatingLog(ctx, o.DataID, 0, 5); err != nil || l.Value != 3 {
		t.Fatalf("rating log after the upgrade: %+v %v", l, err)
	}
	if err := d.AddNotifications(ctx, o.DataID, []types.PID{5}, time.Now(), 10); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDataStoreFriendSearch measures a friend's search on SQLite with the
// store's own friend lists (serve without --friends-source): "join" is the
// statement searches ran before SearchQuery.Friends (friends-permission
// objects found through a subquery on friends_links, the peer), "list" what
// the service does now (FriendsOf, then the friends as a parameter set).
// 5,000 objects of 200 owners, a third with the friends permission; the
// viewer has 100 friends; a page of 100 by data type.
func BenchmarkDataStoreFriendSearch(b *testing.B) {
	ctx := context.Background()
	s, _, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	d, fs := s.DataStore(), s.Friends()

	now := time.Now()
	const viewer = 5000
	for i := range 5000 {
		o := &datastore.Object{Owner: types.PID(1000 + i%200), Name: "o", DataType: uint16(i % 3),
			Permission: datastore.Permission{Permission: uint8(i % 3)}, Created: now, Updated: now, PersistenceSlot: datastore.NoPersistenceSlot}
		if _, err := d.CreateObject(ctx, o, false); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		for _, l := range [][2]int64{{viewer, int64(1000 + 2*i)}, {int64(1000 + 2*i), viewer}} {
			if _, err := s.db.ExecContext(ctx, `INSERT INTO friends_links (pid, friend, since) VALUES (?, ?, 1)`, l[0], l[1]); err != nil {
				b.Fatal(err)
			}
		}
	}
	join := `SELECT ` + sqlstore.ObjectColumns + ` FROM datastore_objects o WHERE o.pending = ? AND (o.expire = 0 OR o.expire > ?)
		AND (o.owner = ? OR o.permission = 0 OR (o.permission = 2 AND EXISTS
			(SELECT 1 FROM datastore_recipients r WHERE r.data_id = o.data_id AND r.pid = ?))
			OR (o.permission = 1 AND EXISTS (SELECT 1 FROM friends_links f WHERE f.pid = o.owner AND f.friend = ?)))
		AND o.data_type IN (?) ORDER BY o.data_id LIMIT ? OFFSET ?`
	// Both run their statement on the database directly (Search's snapshot
	// transaction around it is the same for both).
	read := func(b *testing.B, query string, args ...any) int {
		rows, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			if _, err := sqlstore.ScanObject(rows); err != nil {
				b.Fatal(err)
			}
			n++
		}
		return n
	}
	var nJoin, nList int
	b.Run("join", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			nJoin = read(b, join, false, now.UnixNano(), viewer, viewer, viewer, 1, 100, 0)
		}
	})
	b.Run("list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			friends, err := fs.FriendsOf(ctx, viewer)
			if err != nil {
				b.Fatal(err)
			}
			query, args := sqlstore.SearchQuery(datastore.SearchQuery{Viewer: viewer, Friends: friends, DataTypes: []uint16{1}, Limit: 100, Now: now})
			nList = read(b, query, args...)
		}
	})
	if nJoin != nList {
		b.Fatalf("join found %d objects, list %d", nJoin, nList)
	}
}
