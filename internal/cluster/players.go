package cluster

import (
	"context"
	"crypto/md5"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// Player is one client account of a cluster: its Kerberos key, its current
// session, and the notifications its sessions received.
type Player struct {
	PID types.PID
	Key []byte

	mu     sync.Mutex
	sess   *nex.Session
	events []Event
}

// Event is a notification a player received, with when.
type Event struct {
	notifications.Event
	At time.Time
}

// AddPlayers creates n accounts with PIDs first, first+1, ... and password,
// and returns them. On PostgreSQL the rows are inserted in one batch with keys
// derived incrementally (playerKeys); on SQLite each goes through Add, two at a
// time (each costs a full key derivation).
func AddPlayers(ctx context.Context, st Store, first types.PID, n int, password string) ([]*Player, error) {
	if err := accounts.CheckPassword(password); err != nil {
		return nil, err
	}
	if pg, ok := st.(*pgstore.Store); ok {
		return addPlayersPG(ctx, pg, first, n, password)
	}
	out := make([]*Player, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			a, err := st.Add(ctx, accounts.NewAccount{PID: first + types.PID(i), Password: password})
			if err != nil {
				errs <- fmt.Errorf("cluster: add account %d: %w", first+types.PID(i), err)
				return
			}
			out[i] = &Player{PID: a.PID, Key: a.KeyNEX[:]}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return out, nil
}

// playerKeys returns the NEX password keys of PIDs first..first+n-1. NEX's
// derivation (prudp/kerberos.DeriveKey) iterates MD5 over the password
// 65000 + PID%1024 times and mixes nothing else in, so the key of the next PID
// is one more round on the previous one's: n accounts cost one derivation and
// n rounds instead of n derivations.
func playerKeys(first types.PID, n int, password string) [][16]byte {
	keys := make([][16]byte, n)
	for i := range n {
		pid := uint64(first) + uint64(i)
		if i == 0 || pid%kerberos.DerivePIDModulus == 0 {
			keys[i] = kerberos.DeriveKey(password, pid)
			continue
		}
		keys[i] = md5.Sum(keys[i-1][:])
	}
	return keys
}

func addPlayersPG(ctx context.Context, st *pgstore.Store, first types.PID, n int, password string) ([]*Player, error) {
	keys := playerKeys(first, n, password)
	var b pgx.Batch
	out := make([]*Player, n)
	for i := range n {
		pid := first + types.PID(i)
		sw := kerberos.DeriveKeySwitch(password, uint64(pid))
		// The columns pgstore.Store.Add writes.
		b.Queue(`INSERT INTO accounts (pid, name, key_nex, key_switch, special) VALUES ($1, $2, $3, $4, false)`,
			int64(pid), strconv.FormatUint(uint64(pid), 10), keys[i][:], sw[:])
		out[i] = &Player{PID: pid, Key: keys[i][:]}
	}
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: add accounts: %w", err)
	}
	defer tx.Rollback(context.Background())
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return nil, fmt.Errorf("cluster: add accounts %d-%d: %w", first, first+types.PID(n-1), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("cluster: add accounts: %w", err)
	}
	return out, nil
}

// ClientConfig is the PRUDP configuration players log in with: the cluster's
// access key, and retransmission bounded so a dead server is noticed (about
// 15 s: ten resends, the wait doubling from 200 ms up to 2 s) while a server
// slowed by a loaded machine is not taken for dead (five resends from 200 ms
// were not enough when the suite ran in a loop on two shared cores).
func ClientConfig() prudp.Config {
	return prudp.Config{Dialect: prudp.NEXV1, AccessKey: AccessKey, InitialRTO: 200 * time.Millisecond, MaxRTO: 2 * time.Second, MaxRetransmits: 10}
}

// Login logs the player in at addr (an authentication server) and makes the
// new session its current one; a previous session is dropped without a
// goodbye (it is on a node that is gone, or is being replaced).
func (p *Player) Login(ctx context.Context, addr string, cfg prudp.Config) (*nex.Session, error) {
	mux := rmc.NewMux()
	mux.HandleProtocol(notifications.Protocol, &notifications.Handler{F: func(_ context.Context, ev notifications.Event) {
		p.mu.Lock()
		p.events = append(p.events, Event{Event: ev, At: time.Now()})
		p.mu.Unlock()
	}})
	s, err := nex.Login(ctx, addr, nex.LoginConfig{User: strconv.FormatUint(uint64(p.PID), 10), Key: p.Key, Config: cfg, Handler: mux})
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	old := p.sess
	p.sess = s
	p.mu.Unlock()
	if old != nil {
		old.RMC.Close()
		cctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		old.Conn.Close(cctx)
		cancel()
	}
	return s, nil
}

// Session is the player's current session (nil before Login).
func (p *Player) Session() *nex.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sess
}

// Port is the UDP port of the secure node the current session is on.
func (p *Player) Port() string {
	port, _ := p.Session().SecureURL.Get("port")
	return port
}

// Matchmaking is a matchmaking client on the current session.
func (p *Player) Matchmaking() *matchmaking.Client {
	s := p.Session()
	return &matchmaking.Client{RMC: s.RMC, Version: notifications.DefaultVersion(s.RMC.Settings())}
}

// Ranking is a ranking client on the current session.
func (p *Player) Ranking() *ranking.Client { return &ranking.Client{C: p.Session().RMC} }

// Events returns the notifications received so far.
func (p *Player) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// Close ends the current session gracefully (bounded by ctx).
func (p *Player) Close(ctx context.Context) {
	if s := p.Session(); s != nil {
		s.Close(ctx)
	}
}

// Each runs f for every player, at most par at a time, and returns the first
// error (all run regardless).
func Each(ps []*Player, par int, f func(i int, p *Player) error) error {
	errs := make(chan error, len(ps))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := f(i, p); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
