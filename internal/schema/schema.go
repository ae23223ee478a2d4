// Package schema keeps a store's versioned schema components: each component
// (accounts, matchmaking, ranking, ...) registers its ordered migration steps, and
// the store applies, per component, the steps after the version it recorded. The
// SQLite store (nex/accounts) and the PostgreSQL store (nex/pgstore) each keep one
// Registry and apply it with their own transactions.
package schema

import (
	"sort"
	"sync"
)

// Registry holds the components of one store. The zero value is ready.
type Registry struct {
	mu         sync.Mutex
	components map[string][]string
}

// Component is one component's migration steps: step i (0-based) takes it from
// version i to version i+1.
type Component struct {
	Name  string
	Steps []string
}

// Register adds a component's steps. Steps are never edited once released: a
// change is a new step appended. Registering a name twice panics (a
// programming error, found at init).
func (r *Registry) Register(name string, steps ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.components == nil {
		r.components = map[string][]string{}
	}
	if _, dup := r.components[name]; dup {
		panic("schema: component registered twice: " + name)
	}
	r.components[name] = steps
}

// Components returns every component in the order to migrate them: "accounts"
// first (others may refer to its tables), then by name.
func (r *Registry) Components() []Component {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Component, 0, len(r.components))
	for name, steps := range r.components {
		out = append(out, Component{name, steps})
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Name == "accounts") != (out[j].Name == "accounts") {
			return out[i].Name == "accounts"
		}
		return out[i].Name < out[j].Name
	})
	return out
}
