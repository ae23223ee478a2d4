package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// TestCondExpr: the Go condition condExpr writes for a gate holds exactly when
// the gate does (desc.Cond.Reading(nc).Holds) at every version around its bounds,
// in both readings of a disputed gate, for a reader at any revision and for a
// writer at the revision its maxRevisionFunc gives (where Append leaves implied
// revision bounds out).
func TestCondExpr(t *testing.T) {
	conds := []desc.Cond{
		{},
		{NexMin: 30000},
		{NexMin: 30600, NexMax: 40000, Revision: 1},
		{NexMin: 40000},
		{Revision: 2},
		{NexMin: 30400, NCMin: 30500, NexMax: 40000},
		{NexMin: 30400, NCMin: 30500},
		{NexMin: 30500, NCMin: 30400},
		{NexMin: 30600, NCMin: 30700, NexMax: 40000, Revision: 1},
		{NexMin: 30700, NCMin: 30600, NexMax: 40000, Revision: 2},
		{NexMin: 30600, NCMin: 30600, Revision: 1},
	}
	versions := []types.Version{0, 20000, 30000, 30399, 30400, 30499, 30500, 30599, 30600, 30699, 30700, 30800, 39999, 40000, 40600}
	for _, c := range conds {
		for _, writer := range []bool{false, true} {
			src := condExpr(c, "x", writer)
			var e ast.Expr
			if src != "" {
				var err error
				if e, err = parser.ParseExpr(src); err != nil {
					t.Fatalf("%+v: %q: %v", c, src, err)
				}
			}
			for _, v := range versions {
				for _, nc := range []bool{false, true} {
					revs := []int{0, 1, 2, 3}
					if writer {
						// The writer's revision: maxRevisionFunc's for a level of
						// this one field (its gate counted from the console bound).
						rev := 0
						if c.Revision != 0 && (desc.Cond{NexMin: c.NexMin, NexMax: c.NexMax}).NexHolds(v) {
							rev = c.Revision
						}
						revs = []int{rev}
					}
					for _, rev := range revs {
						want := c.Reading(nc).Holds(v, rev)
						got := src == "" || evalCond(t, e, int64(v), int64(rev), nc) != 0
						if got != want {
							t.Errorf("%+v writer=%v at v=%d rev=%d nc=%v: %q is %v, want %v", c, writer, v, rev, nc, src, got, want)
						}
					}
				}
			}
		}
	}
}

// evalCond evaluates a condition condExpr writes: integer literals, v, rev,
// x.GateMin(console, nc), comparisons, && and || (booleans are 0 and 1).
func evalCond(t *testing.T, e ast.Expr, v, rev int64, nc bool) int64 {
	b := func(x bool) int64 {
		if x {
			return 1
		}
		return 0
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return evalCond(t, e.X, v, rev, nc)
	case *ast.BasicLit:
		n, err := strconv.ParseInt(e.Value, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case *ast.Ident:
		switch e.Name {
		case "v":
			return v
		case "rev":
			return rev
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "GateMin" && len(e.Args) == 2 {
			if nc {
				return evalCond(t, e.Args[1], v, rev, nc)
			}
			return evalCond(t, e.Args[0], v, rev, nc)
		}
	case *ast.BinaryExpr:
		x := evalCond(t, e.X, v, rev, nc)
		switch e.Op {
		case token.LAND:
			return b(x != 0 && evalCond(t, e.Y, v, rev, nc) != 0)
		case token.LOR:
			return b(x != 0 || evalCond(t, e.Y, v, rev, nc) != 0)
		case token.GEQ:
			return b(x >= evalCond(t, e.Y, v, rev, nc))
		case token.LSS:
			return b(x < evalCond(t, e.Y, v, rev, nc))
		}
	}
	t.Fatalf("evalCond: unexpected %T", e)
	return 0
}
