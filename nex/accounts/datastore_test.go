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
