package rating

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Memory is a Store in memory.
type Memory struct {
	mu     sync.Mutex
	tokens map[uint64]Token
	users  map[uint64][]types.PID
}

var _ Store = (*Memory)(nil)

// IssueToken implements Store.
func (m *Memory) IssueToken(_ context.Context, t Token, keep int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tokens == nil {
		m.tokens, m.users = map[uint64]Token{}, map[uint64][]types.PID{}
	}
	if _, ok := m.tokens[t.ID]; ok {
		return ErrTokenExists
	}
	t.Key = slices.Clone(t.Key)
	m.tokens[t.ID] = t
	var own []Token
	for _, o := range m.tokens {
		if o.Owner == t.Owner {
			own = append(own, o)
		}
	}
	slices.SortFunc(own, newestFirst)
	for _, o := range own[min(keep, len(own)):] {
		delete(m.tokens, o.ID)
		delete(m.users, o.ID)
	}
	return nil
}

// newestFirst orders tokens newest first (then by id, descending), as the
// stores keep them.
func newestFirst(a, b Token) int {
	if c := b.Issued.Compare(a.Issued); c != 0 {
		return c
	}
	switch {
	case a.ID > b.ID:
		return -1
	case a.ID < b.ID:
		return 1
	}
	return 0
}

// UseToken implements Store.
func (m *Memory) UseToken(_ context.Context, pid types.PID, id uint64, key []byte, notBefore, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[id]
	if !ok || !bytes.Equal(t.Key, key) || t.Issued.Before(notBefore) {
		return UnknownToken(id)
	}
	if !slices.Contains(m.users[id], pid) {
		m.users[id] = append(m.users[id], pid)
	}
	return nil
}

// TokenUsers implements Store.
func (m *Memory) TokenUsers(_ context.Context, id uint64) ([]types.PID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.users[id]), nil
}
