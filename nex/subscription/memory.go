package subscription

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Memory is a Store in memory (tests, and a server without a database).
type Memory struct {
	mu      sync.Mutex
	data    map[types.PID]Record
	targets map[types.PID][]types.PID
	privacy map[types.PID]uint32
}

var _ Store = (*Memory)(nil)

func (m *Memory) init() {
	if m.data == nil {
		m.data = map[types.PID]Record{}
		m.targets = map[types.PID][]types.PID{}
		m.privacy = map[types.PID]uint32{}
	}
}

// PutData implements Store.
func (m *Memory) PutData(_ context.Context, r Record, create bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	if old, ok := m.data[r.PID]; ok && !create {
		r.Unknown1, r.Unknown2, r.Created = old.Unknown1, old.Unknown2, old.Created
	}
	r.Content = slices.Clone(r.Content)
	m.data[r.PID] = r
	return nil
}

// ClearData implements Store.
func (m *Memory) ClearData(_ context.Context, pid types.PID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, pid)
	delete(m.targets, pid)
	return nil
}

func (m *Memory) copyOf(r Record) Record {
	r.Content = slices.Clone(r.Content)
	return r
}

// Data implements Store.
func (m *Memory) Data(_ context.Context, pids []types.PID) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, p := range pids {
		if r, ok := m.data[p]; ok {
			out = append(out, m.copyOf(r))
		}
	}
	return out, nil
}

// Active implements Store.
func (m *Memory) Active(_ context.Context, exclude types.PID, since time.Time, limit int) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for p, r := range m.data {
		if p != exclude && !r.Updated.Before(since) {
			out = append(out, m.copyOf(r))
		}
	}
	slices.SortFunc(out, func(a, b Record) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// TooManyTargets is the error of a target list over its limit.
func TooManyTargets(n, max int) error {
	return fmt.Errorf("%w: %d targets (at most %d)", types.CoreInvalidArgument, n, max)
}

// AddTargets implements Store.
func (m *Memory) AddTargets(_ context.Context, pid types.PID, targets []types.PID, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.setTargets(pid, slices.Clone(m.targets[pid]), targets, max)
}

// setTargets makes pid's targets base followed by the targets of add it does
// not have, each once, unless they are more than max.
func (m *Memory) setTargets(pid types.PID, base, add []types.PID, max int) error {
	m.init()
	for _, t := range add {
		if !slices.Contains(base, t) {
			base = append(base, t)
		}
	}
	if len(base) > max {
		return TooManyTargets(len(base), max)
	}
	m.targets[pid] = base
	return nil
}

// DeleteTargets implements Store.
func (m *Memory) DeleteTargets(_ context.Context, pid types.PID, targets []types.PID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	m.targets[pid] = slices.DeleteFunc(m.targets[pid], func(t types.PID) bool { return slices.Contains(targets, t) })
	return nil
}

// ReplaceTargets implements Store.
func (m *Memory) ReplaceTargets(_ context.Context, pid types.PID, targets []types.PID, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.setTargets(pid, nil, targets, max)
}

// Targets implements Store.
func (m *Memory) Targets(_ context.Context, pid types.PID) ([]types.PID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.targets[pid]), nil
}

// Watchers implements Store.
func (m *Memory) Watchers(_ context.Context, pid types.PID, limit int) ([]types.PID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []types.PID
	for w, ts := range m.targets {
		if slices.Contains(ts, pid) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// SetPrivacyLevel implements Store.
func (m *Memory) SetPrivacyLevel(_ context.Context, pid types.PID, level uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	m.privacy[pid] = level
	return nil
}

// PrivacyLevel implements Store.
func (m *Memory) PrivacyLevel(_ context.Context, pid types.PID) (uint32, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.privacy[pid]
	return l, ok, nil
}
