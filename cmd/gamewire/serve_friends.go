package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/nex/friends/remote"
	"github.com/gamewire/gamewire/nex/games"
)

// friendsKeyEnv names the environment variable holding the friends source's
// key (kept off the command line, where ps shows it).
const friendsKeyEnv = "GAMEWIRE_FRIENDS_KEY"

// serveFriendsOptions name where a game server's friend lists come from when
// they are not in its own store (docs/deploy.md "Friends from another
// server").
type serveFriendsOptions struct {
	source  string
	ttl     time.Duration
	timeout time.Duration
}

func (f *serveFriendsOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.source, "friends-source", "", "take friend lists (friend-only matchmaking, ranking's friends filter, DataStore's friends permission) from another friends server: grpc://HOST:PORT (a Pretendo friends server's gRPC API; grpcs:// over TLS) or an http(s):// JSON endpoint (docs/nex.md \"Friends\"); its key (the gRPC X-API-Key, or the HTTP bearer token) from "+friendsKeyEnv+"; default the store's own friend lists")
	fs.DurationVar(&f.ttl, "friends-cache", remote.DefaultTTL, fmt.Sprintf("how long a --friends-source answer is used before it is asked again (at most %v; 0 for the default; negative: never cached)", remote.MaxTTL))
	fs.DurationVar(&f.timeout, "friends-timeout", remote.DefaultTimeout, "how long one --friends-source request may take")
}

// open returns the configured source, nil when friend lists stay in the
// store. game is --game: the friends server itself keeps its own lists.
func (f *serveFriendsOptions) open(game string) (*remote.Source, error) {
	if f.source == "" {
		return nil, nil
	}
	if g, err := games.Find(game); game != "" && err == nil && g.ServerID == games.FriendsServerID {
		return nil, fmt.Errorf("--friends-source: the friends server (--game %s) keeps the friend lists itself", game)
	}
	if f.timeout <= 0 {
		return nil, fmt.Errorf("--friends-timeout %v: must be positive", f.timeout)
	}
	s, err := remote.Open(f.source, remote.Options{Key: os.Getenv(friendsKeyEnv), TTL: f.ttl, Timeout: f.timeout})
	if err != nil {
		return nil, fmt.Errorf("--friends-source: %w", err)
	}
	return s, nil
}
