package accounts

import (
	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The friends component's schema: the friends server's profiles, friendships
// (one row each way), pending requests (one per pair and direction), block
// lists and who is online on which node. Its statements and the Go around
// them are internal/sqlstore's (Friends), shared with nex/pgstore.
func init() { registerSchema("friends", friendsV1, friendsV2) }

const friendsV1 = `
CREATE TABLE friends_profiles (
	pid     INTEGER PRIMARY KEY,
	data    TEXT NOT NULL,
	updated INTEGER NOT NULL
);
CREATE TABLE friends_links (
	pid    INTEGER NOT NULL,
	friend INTEGER NOT NULL,
	since  INTEGER NOT NULL,
	PRIMARY KEY (pid, friend)
);
CREATE INDEX friends_links_friend ON friends_links (friend, pid);
CREATE TABLE friends_requests (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	sender    INTEGER NOT NULL,
	recipient INTEGER NOT NULL,
	message   TEXT NOT NULL,
	title     INTEGER NOT NULL,
	version   INTEGER NOT NULL,
	sent      INTEGER NOT NULL,
	expires   INTEGER NOT NULL,
	received  INTEGER NOT NULL,
	UNIQUE (sender, recipient)
);
CREATE INDEX friends_requests_recipient ON friends_requests (recipient, expires);
CREATE INDEX friends_requests_expires ON friends_requests (expires);
CREATE TABLE friends_blocks (
	pid     INTEGER NOT NULL,
	blocked INTEGER NOT NULL,
	title   INTEGER NOT NULL,
	version INTEGER NOT NULL,
	since   INTEGER NOT NULL,
	PRIMARY KEY (pid, blocked)
);
CREATE TABLE friends_presence (
	pid     INTEGER PRIMARY KEY,
	node    TEXT NOT NULL,
	data    TEXT NOT NULL,
	updated INTEGER NOT NULL
);
CREATE INDEX friends_presence_node ON friends_presence (node);
`

// friendsV2 keeps persistent notifications: what a player missed while
// offline (a friend request, a friendship, a removal), shown at the next
// login (Friends_V2 UpdateAndGetAllInformation) until the console deletes
// them (DeletePersistentNotification).
const friendsV2 = `
CREATE TABLE friends_notifications (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	pid    INTEGER NOT NULL,
	type   INTEGER NOT NULL,
	sender INTEGER NOT NULL,
	text   TEXT NOT NULL,
	at     INTEGER NOT NULL
);
CREATE INDEX friends_notifications_pid ON friends_notifications (pid, id);
CREATE INDEX friends_notifications_at ON friends_notifications (at);
`

// Friends returns the friends server's store in s's database (friends.Store).
func (s *Store) Friends() *sqlstore.Friends {
	d := &DataStoreStore{db: s.db}
	return sqlstore.NewFriends("accounts", dsDB{d})
}
