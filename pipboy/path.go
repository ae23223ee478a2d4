package pipboy

import (
	"fmt"
	"strconv"
	"strings"
)

// Lookup returns the value a path names. Paths start at the root with "$" and use
// ".Key" for object members and "[N]" for array elements, as in
// "$.PlayerInfo.PlayerName" or "$.Inventory.sortedIDS[3]"; a key holding dots or
// brackets can be written ['key'] or ["key"]. Keys match case-insensitively (an exact
// match wins). The leading "$" may be omitted.
func (db *Database) Lookup(path string) (Value, error) {
	v, ok := db.Root()
	if !ok {
		return Value{}, fmt.Errorf("pipboy: path %q: %w: root id 0", path, ErrNotFound)
	}
	return v.Lookup(path)
}

// Lookup resolves path relative to v (see Database.Lookup).
func (v Value) Lookup(path string) (Value, error) {
	p := strings.TrimPrefix(path, "$")
	pos := len(path) - len(p)
	if pos == 0 && p != "" && p[0] != '.' && p[0] != '[' {
		p = "." + p // "PlayerInfo.PlayerName" means "$.PlayerInfo.PlayerName"
		pos = -1
	}
	for len(p) > 0 {
		switch p[0] {
		case '.':
			end := strings.IndexAny(p[1:], ".[")
			if end < 0 {
				end = len(p) - 1
			}
			key := p[1 : 1+end]
			if key == "" {
				return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: empty key", path, pos, ErrBadPath)
			}
			next := v.Key(key)
			if !next.IsValid() {
				return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: %s has no key %q", path, pos, ErrNotFound, describe(v), key)
			}
			v = next
			p = p[1+end:]
			pos += 1 + end
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: missing ]", path, pos, ErrBadPath)
			}
			inner := p[1:end]
			if len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0] {
				key := inner[1 : len(inner)-1]
				next := v.Key(key)
				if !next.IsValid() {
					return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: %s has no key %q", path, pos, ErrNotFound, describe(v), key)
				}
				v = next
			} else {
				i, err := strconv.Atoi(inner)
				if err != nil || i < 0 {
					return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: index %q is not a non-negative integer", path, pos, ErrBadPath, inner)
				}
				if v.Type() != TypeArray || !v.IsValid() {
					return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: %s is not an array", path, pos, ErrNotFound, describe(v))
				}
				next := v.Index(i)
				if !next.IsValid() {
					return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: index %d of %s with %d elements", path, pos, ErrNotFound, i, describe(v), v.Len())
				}
				v = next
			}
			p = p[end+1:]
			pos += end + 1
		default:
			return Value{}, fmt.Errorf("pipboy: path %q at offset %d: %w: expected . or [", path, pos, ErrBadPath)
		}
	}
	return v, nil
}

func describe(v Value) string {
	return fmt.Sprintf("%s id %d", v.Type(), v.ID())
}
