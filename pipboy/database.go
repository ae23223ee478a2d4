package pipboy

import (
	"fmt"
	"iter"
	"math"
	"strings"
)

// Database is the value store the game streams to the app ("Type 3: Data Update" in
// the Pip-Boy PROTOCOL.md). Values are keyed by id; the tree hangs from id 0 (RootID).
//
// Apply is transactional: an update is checked completely (syntax, value types, and that
// every id it refers to was sent before or is sent in the same update) before anything
// changes, so a refused update leaves the previous database intact.
//
// Values an object's remove list names, and values an array stops naming, are deleted
// with their subtrees once nothing refers to them any more (values are reference counted,
// since inventory items are named by both a category array and $.Inventory.sortedIDS).
//
// A Database is not safe for concurrent use; Client and Server guard theirs with a lock.
type Database struct {
	index   idTable // id -> slot in nodes
	nodes   []node
	free    []int32
	intern  map[string]string
	gen     uint32
	pending idTable // ids defined by the update being applied
	garbage []uint32
	// Slabs hand out the lists of new arrays and objects, so a dump does not
	// allocate once per container; each list is cut with its own capacity.
	fieldSlab []field
	elemSlab  []uint32
	deferred  []deferredRef
	ready     bool
	strBytes  int // total length of the STRING values held
}

// RootID is the id of the root object.
const RootID = 0

// maxDepth bounds recursion over the tree: the real tree is about 8 levels deep, and a
// hostile update can build cycles.
const maxDepth = 128

type field struct {
	key string
	id  uint32
}

type node struct {
	typ    ValueType
	bits   uint64 // bool, integers (sign-extended), float32 bits
	str    string
	elems  []uint32
	fields []field
	refs   int32  // number of containers naming this value
	gen    uint32 // update generation that last wrote this value
	id     uint32
	live   bool
}

// NewDatabase returns an empty database.
func NewDatabase() *Database {
	db := &Database{intern: make(map[string]string), ready: true}
	db.index.reset(0)
	db.pending.reset(0)
	return db
}

// Len returns the number of values held.
func (db *Database) Len() int { return db.index.len() }

// Apply applies one data update payload (the content of a type 3 message).
func (db *Database) Apply(payload []byte) error {
	if !db.ready {
		*db = *NewDatabase()
	}
	// Pass 1: syntax, the ids this update defines, and references to ids neither
	// known nor defined so far (forward references, checked once all ids are seen).
	// The set of new ids is sized from the payload (about 29 bytes per value in the
	// real dump), so it is large for a dump and small, thus quick to clear, for live
	// updates. The size follows bytes that arrived, not a claimed length.
	db.pending.reset(len(payload) / 32)
	db.deferred = db.deferred[:0]
	it := NewEntries(payload)
	count := 0
	for {
		off := it.Offset()
		e, ok := it.Next()
		if !ok {
			break
		}
		db.pending.put(e.ID, 0)
		count++
		db.deferRefs(&e, off)
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, d := range db.deferred {
		if !db.known(d.id) {
			e, _, _ := ParseEntry(payload[d.off:])
			return db.checkRefs(&e, d.off)
		}
	}
	// Size the store for a dump at once. count is what the payload actually holds
	// (each value takes at least 5 bytes), not a claimed size.
	if db.index.len() == 0 && count > 64 {
		db.index.reset(count)
	}
	if need := len(db.nodes) + count; cap(db.nodes) < need && count > 64 {
		nodes := make([]node, len(db.nodes), need)
		copy(nodes, db.nodes)
		db.nodes = nodes
	}
	// Pass 3: apply.
	db.gen++
	it = NewEntries(payload)
	for {
		e, ok := it.Next()
		if !ok {
			break
		}
		db.apply(&e)
	}
	db.collect()
	return nil
}

func (db *Database) known(id uint32) bool {
	if _, ok := db.pending.get(id); ok {
		return true
	}
	_, ok := db.index.get(id)
	return ok
}

// deferRefs notes the references of e to ids not known yet.
func (db *Database) deferRefs(e *Entry, off int) {
	switch e.Type {
	case TypeArray:
		for i := range e.Elems.Len() {
			if id := e.Elems.At(i); !db.known(id) {
				db.deferred = append(db.deferred, deferredRef{off, id})
			}
		}
	case TypeObject:
		for _, id := range e.Add.All {
			if !db.known(id) {
				db.deferred = append(db.deferred, deferredRef{off, id})
			}
		}
		for i := range e.Remove.Len() {
			if id := e.Remove.At(i); !db.known(id) {
				db.deferred = append(db.deferred, deferredRef{off, id})
			}
		}
	}
}

type deferredRef struct {
	off int
	id  uint32
}

// checkRefs reports the first reference of e to an unknown id.
func (db *Database) checkRefs(e *Entry, off int) error {
	switch e.Type {
	case TypeArray:
		for i := range e.Elems.Len() {
			if id := e.Elems.At(i); !db.known(id) {
				return fmt.Errorf("pipboy: data update value at offset %d: ARRAY id %d element %d: %w %d", off, e.ID, i, ErrUnknownID, id)
			}
		}
	case TypeObject:
		var err error
		i := 0
		for key, id := range e.Add.All {
			if !db.known(id) {
				err = fmt.Errorf("pipboy: data update value at offset %d: OBJECT id %d key %q: %w %d", off, e.ID, key, ErrUnknownID, id)
				break
			}
			i++
		}
		if err != nil {
			return err
		}
		for i := range e.Remove.Len() {
			if id := e.Remove.At(i); !db.known(id) {
				return fmt.Errorf("pipboy: data update value at offset %d: OBJECT id %d remove[%d]: %w %d", off, e.ID, i, ErrUnknownID, id)
			}
		}
	}
	return nil
}

// slot returns the slot of id, creating an empty value if needed. Creating one may
// move db.nodes: pointers into it taken before are stale afterwards.
func (db *Database) slot(id uint32) int32 {
	if s, ok := db.index.get(id); ok {
		return s
	}
	var s int32
	if n := len(db.free); n > 0 {
		s = db.free[n-1]
		db.free = db.free[:n-1]
	} else {
		db.nodes = append(db.nodes, node{})
		s = int32(len(db.nodes) - 1)
	}
	db.index.put(id, s)
	db.nodes[s] = node{id: id, live: true}
	return s
}

func (db *Database) incref(id uint32) { db.nodes[db.slot(id)].refs++ }

func (db *Database) decref(id uint32) {
	s, ok := db.index.get(id)
	if !ok {
		return
	}
	n := &db.nodes[s]
	n.refs--
	if n.refs <= 0 {
		db.garbage = append(db.garbage, id)
	}
}

func (db *Database) internKey(k []byte) string { return db.internString(k) }

// slabSize is the number of list entries allocated at once for new containers.
const slabSize = 4096

func (db *Database) fieldList(n int) []field { return fromSlab(&db.fieldSlab, n) }

func (db *Database) elemList(n int) []uint32 { return fromSlab(&db.elemSlab, n) }

// fromSlab returns an empty list with capacity n carved from *slab (refilled with
// slabSize entries when short), so that thousands of small containers share a few
// allocations; a list longer than a quarter slab gets an allocation of its own.
func fromSlab[T any](slab *[]T, n int) []T {
	if n > slabSize/4 {
		return make([]T, 0, n)
	}
	if len(*slab) < n {
		*slab = make([]T, slabSize)
	}
	l := (*slab)[:0:n]
	*slab = (*slab)[n:]
	return l
}

// maxInterned bounds the table of shared short strings (keys and values such as
// "$dr" that repeat thousands of times), so a long session cannot grow it forever.
const maxInterned = 1 << 16

func (db *Database) internString(b []byte) string {
	if len(b) > 32 {
		return string(b)
	}
	if s, ok := db.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(db.intern) < maxInterned {
		db.intern[s] = s
	}
	return s
}

// releaseChildren drops the references n holds.
func (db *Database) releaseChildren(n *node) {
	elems, fields := n.elems, n.fields
	n.elems, n.fields = n.elems[:0], n.fields[:0]
	for _, id := range elems {
		db.decref(id)
	}
	for _, f := range fields {
		db.decref(f.id)
	}
}

func (db *Database) apply(e *Entry) {
	si := db.slot(e.ID)
	n := &db.nodes[si]
	n.gen = db.gen
	if (n.typ == TypeArray || n.typ == TypeObject) && (n.typ != e.Type || e.Type == TypeArray) {
		db.releaseChildren(n) // decref creates no slots: n stays valid
	}
	n.typ = e.Type
	db.strBytes -= len(n.str)
	n.str = ""
	n.bits = 0
	switch e.Type {
	case TypeBool:
		if e.Bool {
			n.bits = 1
		}
	case TypeInt8, TypeInt32:
		n.bits = uint64(int64(e.Int))
	case TypeUint8, TypeUint32:
		n.bits = uint64(e.Uint)
	case TypeFloat:
		n.bits = uint64(math.Float32bits(e.Float))
	case TypeString:
		n.str = db.internString(e.Str)
		db.strBytes += len(n.str)
	case TypeArray:
		m := e.Elems.Len()
		elems := n.elems[:0]
		if cap(elems) < m {
			elems = db.elemList(m)
		}
		for i := range m {
			elems = append(elems, e.Elems.At(i))
		}
		n.elems = elems
		for _, id := range elems {
			db.incref(id) // may move db.nodes; elems is ours and stays valid
		}
	case TypeObject:
		// Removals first, then additions: a key both removed and added in one update
		// ends with the added value.
		if e.Remove.Len() > 0 {
			db.removeFields(si, e.Remove)
		}
		if n := &db.nodes[si]; n.fields == nil && e.Add.Len() > 0 {
			n.fields = db.fieldList(e.Add.Len())
		}
		// Small objects (all of the real game's) look keys up by scanning; a large
		// one gets a key index for this update, so a hostile 65,535-key object costs
		// linear, not quadratic, time.
		var keyIndex map[string]int
		if len(db.nodes[si].fields)+e.Add.Len() > largeObject {
			n := &db.nodes[si]
			keyIndex = make(map[string]int, len(n.fields)+e.Add.Len())
			for j, f := range n.fields {
				keyIndex[f.key] = j
			}
		}
		for key, id := range e.Add.All {
			db.incref(id)
			n := &db.nodes[si] // after incref, which may move db.nodes
			j := -1
			if keyIndex != nil {
				if k, ok := keyIndex[string(key)]; ok {
					j = k
				}
			} else {
				for k := range n.fields {
					if n.fields[k].key == string(key) {
						j = k
						break
					}
				}
			}
			if j >= 0 {
				old := n.fields[j].id
				n.fields[j].id = id
				db.decref(old)
				continue
			}
			n.fields = append(n.fields, field{key: db.internKey(key), id: id})
			if keyIndex != nil {
				keyIndex[n.fields[len(n.fields)-1].key] = len(n.fields) - 1
			}
		}
	}
}

// largeObject is the size above which object updates use temporary indexes.
const largeObject = 64

// removeFields drops the members of object si whose value id is in remove, keeping
// the order of the others, in one pass.
func (db *Database) removeFields(si int32, remove IDList) {
	n := &db.nodes[si]
	var set map[uint32]struct{}
	if remove.Len() > 8 && len(n.fields) > largeObject {
		set = make(map[uint32]struct{}, remove.Len())
		for i := range remove.Len() {
			set[remove.At(i)] = struct{}{}
		}
	}
	removed := func(id uint32) bool {
		if set != nil {
			_, ok := set[id]
			return ok
		}
		for i := range remove.Len() {
			if remove.At(i) == id {
				return true
			}
		}
		return false
	}
	kept := n.fields[:0]
	for _, f := range n.fields {
		if removed(f.id) {
			db.decref(f.id) // creates no slots: n stays valid
			continue
		}
		kept = append(kept, f)
	}
	clear(n.fields[len(kept):]) // drop key strings held past the new length
	n.fields = kept
}

// collect deletes values nothing refers to any more, with their subtrees.
func (db *Database) collect() {
	for len(db.garbage) > 0 {
		id := db.garbage[len(db.garbage)-1]
		db.garbage = db.garbage[:len(db.garbage)-1]
		s, ok := db.index.get(id)
		if !ok || id == RootID {
			continue
		}
		n := &db.nodes[s]
		// A value (re)sent in this update is kept even if an old parent dropped it:
		// its new parent may arrive in a later update.
		if n.refs > 0 || n.gen == db.gen {
			continue
		}
		db.releaseChildren(n)
		db.strBytes -= len(n.str)
		*n = node{}
		db.index.del(id)
		db.free = append(db.free, s)
	}
}

// Root returns the root value (id 0).
func (db *Database) Root() (Value, bool) { return db.Get(RootID) }

// Get returns the value with the given id.
func (db *Database) Get(id uint32) (Value, bool) {
	s, ok := db.index.get(id)
	if !ok {
		return Value{}, false
	}
	return Value{db: db, slot: s}, true
}

// All iterates over every value in the database, in no particular order.
func (db *Database) All() iter.Seq[Value] {
	return func(yield func(Value) bool) {
		db.index.each(func(_ uint32, s int32) bool { return yield(Value{db: db, slot: s}) })
	}
}

// Value is a read-only view of one database value. It is valid until the next Apply.
// The zero Value is invalid: accessors return zero results.
type Value struct {
	db   *Database
	slot int32
}

func (v Value) n() *node {
	if v.db == nil {
		return &node{}
	}
	return &v.db.nodes[v.slot]
}

// IsValid reports whether v refers to a value.
func (v Value) IsValid() bool { return v.db != nil }

// ID returns the value's id.
func (v Value) ID() uint32 { return v.n().id }

// Type returns the value's type.
func (v Value) Type() ValueType { return v.n().typ }

// Bool returns a BOOLEAN's value (or whether a number is non-zero).
func (v Value) Bool() bool { return v.n().bits != 0 }

// Int returns an integer value (INT8, UINT8, INT32, UINT32 or BOOLEAN) as int64;
// a FLOAT is truncated.
func (v Value) Int() int64 {
	n := v.n()
	if n.typ == TypeFloat {
		return int64(math.Float32frombits(uint32(n.bits)))
	}
	return int64(n.bits)
}

// Float returns a numeric value as float64.
func (v Value) Float() float64 {
	n := v.n()
	if n.typ == TypeFloat {
		return float64(math.Float32frombits(uint32(n.bits)))
	}
	return float64(int64(n.bits))
}

// Str returns a STRING's value.
func (v Value) Str() string { return v.n().str }

// IsNumber reports whether v holds one of the numeric types.
func (v Value) IsNumber() bool {
	t := v.n().typ
	return v.IsValid() && t >= TypeInt8 && t <= TypeFloat
}

// Len returns the number of elements of an ARRAY or keys of an OBJECT.
func (v Value) Len() int {
	n := v.n()
	switch n.typ {
	case TypeArray:
		return len(n.elems)
	case TypeObject:
		return len(n.fields)
	}
	return 0
}

// ElemID returns the id of an ARRAY's i-th element.
func (v Value) ElemID(i int) uint32 { return v.n().elems[i] }

// Index returns an ARRAY's i-th element, or an invalid Value if out of range.
func (v Value) Index(i int) Value {
	n := v.n()
	if n.typ != TypeArray || i < 0 || i >= len(n.elems) {
		return Value{}
	}
	e, _ := v.db.Get(n.elems[i])
	return e
}

// Key returns an OBJECT's member named key. An exact match wins; otherwise keys are
// compared case-insensitively (PS4 and PC spell some keys differently).
func (v Value) Key(key string) Value {
	n := v.n()
	if n.typ != TypeObject {
		return Value{}
	}
	for _, f := range n.fields {
		if f.key == key {
			e, _ := v.db.Get(f.id)
			return e
		}
	}
	for _, f := range n.fields {
		if strings.EqualFold(f.key, key) {
			e, _ := v.db.Get(f.id)
			return e
		}
	}
	return Value{}
}

// Elems iterates over an ARRAY's elements.
func (v Value) Elems() iter.Seq2[int, Value] {
	return func(yield func(int, Value) bool) {
		n := v.n()
		if n.typ != TypeArray {
			return
		}
		for i, id := range n.elems {
			e, _ := v.db.Get(id)
			if !yield(i, e) {
				return
			}
		}
	}
}

// Fields iterates over an OBJECT's members in the order they were added.
func (v Value) Fields() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		n := v.n()
		if n.typ != TypeObject {
			return
		}
		for _, f := range n.fields {
			e, _ := v.db.Get(f.id)
			if !yield(f.key, e) {
				return
			}
		}
	}
}

// Keys returns an OBJECT's keys in the order they were added.
func (v Value) Keys() []string {
	n := v.n()
	keys := make([]string, 0, len(n.fields))
	for _, f := range n.fields {
		keys = append(keys, f.key)
	}
	return keys
}

// Interface returns the value (and its subtree) as plain Go values: bool, int64,
// float64, string, []any and map[string]any.
// Beyond 128 levels, or past the visit budget of AppendJSON (shared subtrees), it
// gives nil.
func (v Value) Interface() any {
	if !v.IsValid() {
		return nil
	}
	budget := exportBudget(v.db)
	return v.iface(0, &budget)
}

func (v Value) iface(depth int, budget *int) any {
	if !v.IsValid() || depth > maxDepth {
		return nil
	}
	if *budget--; *budget < 0 {
		return nil
	}
	n := v.n()
	switch n.typ {
	case TypeBool:
		return n.bits != 0
	case TypeInt8, TypeUint8, TypeInt32, TypeUint32:
		return int64(n.bits)
	case TypeFloat:
		return float64(math.Float32frombits(uint32(n.bits)))
	case TypeString:
		return n.str
	case TypeArray:
		out := make([]any, 0, len(n.elems))
		for _, e := range v.Elems() {
			out = append(out, e.iface(depth+1, budget))
		}
		return out
	default:
		out := make(map[string]any, len(n.fields))
		for k, e := range v.Fields() {
			out[k] = e.iface(depth+1, budget)
		}
		return out
	}
}

// Entry returns v in the form of an update value, for re-encoding. Lists are freshly
// allocated.
func (v Value) Entry() Entry {
	n := v.n()
	e := Entry{Type: n.typ, ID: n.id}
	switch n.typ {
	case TypeBool:
		e.Bool = n.bits != 0
	case TypeInt8, TypeInt32:
		e.Int = int32(n.bits)
	case TypeUint8, TypeUint32:
		e.Uint = uint32(n.bits)
	case TypeFloat:
		e.Float = math.Float32frombits(uint32(n.bits))
	case TypeString:
		e.Str = []byte(n.str)
	case TypeArray:
		e.Elems = AppendIDs(make(IDList, 0, 4*len(n.elems)), n.elems...)
	case TypeObject:
		for _, f := range n.fields {
			e.Add = e.Add.AppendKey(f.key, f.id)
		}
	}
	return e
}

// AppendDump appends a full dump of the tree under root, children first and root last,
// as the game sends it on connect: the payload of one type 3 message. Values not
// reachable from RootID are not included.
func (db *Database) AppendDump(b []byte) ([]byte, error) {
	if _, ok := db.index.get(RootID); !ok {
		return b, fmt.Errorf("pipboy: dump: %w: root id 0", ErrNotFound)
	}
	seen := make(map[uint32]struct{}, db.index.len())
	return db.appendPostOrder(b, RootID, seen, 0)
}

func (db *Database) appendPostOrder(b []byte, id uint32, seen map[uint32]struct{}, depth int) ([]byte, error) {
	if _, ok := seen[id]; ok {
		return b, nil
	}
	if depth > maxDepth {
		return b, fmt.Errorf("pipboy: dump: value id %d deeper than %d levels (cycle?)", id, maxDepth)
	}
	seen[id] = struct{}{}
	v, ok := db.Get(id)
	if !ok {
		return b, fmt.Errorf("pipboy: dump: %w: id %d", ErrNotFound, id)
	}
	var err error
	n := v.n()
	for _, c := range n.elems {
		if b, err = db.appendPostOrder(b, c, seen, depth+1); err != nil {
			return b, err
		}
	}
	for _, f := range n.fields {
		if b, err = db.appendPostOrder(b, f.id, seen, depth+1); err != nil {
			return b, err
		}
	}
	e := v.Entry()
	return e.Append(b)
}
