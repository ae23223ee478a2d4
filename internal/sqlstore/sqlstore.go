// Package sqlstore is the matchmaking (communities included), Ranking and DataStore logic the SQLite store
// (nex/accounts) and the PostgreSQL store (nex/pgstore) share: the statements,
// written once with ? placeholders, and the Go around them. Each store hands in
// its database through the small interfaces below, with its own driver calls,
// transactions and locking (SQLite's one writer at a time, PostgreSQL's row
// locks), and a Dialect for the few statements that differ; the PostgreSQL
// store numbers the placeholders ($1, $2, ...) as it runs them.
//
// The package imports no driver, so neither store compiles the other's.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// Rows is what the stores read of a query's rows (*sql.Rows has it; pgx's
// rows through an adapter).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Row is a one-row result. Its Scan returns an error matching sql.ErrNoRows
// when there is no row (pgx.ErrNoRows does).
type Row interface {
	Scan(dest ...any) error
}

// Stmt is a statement with its arguments.
type Stmt struct {
	SQL  string
	Args []any
}

// Querier runs statements, on a pool or in a transaction.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Exec returns the number of rows the statement changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Batch runs execs and then query, in one round trip where the driver
	// pipelines statements (pgx); closing the rows reports the batch's errors.
	Batch(ctx context.Context, execs []Stmt, query string, args ...any) (Rows, error)
}

// Pool runs statements each on its own (no transaction), within the store's
// time limit.
type Pool interface {
	Do(ctx context.Context, f func(ctx context.Context, q Querier) error) error
}

// DB is a store's database: a Pool that also runs transactions. Their errors
// come back as f returned them, or the database's own (begin, commit).
type DB interface {
	Pool
	// Snapshot runs f in a read-only transaction that sees one snapshot.
	Snapshot(ctx context.Context, f func(ctx context.Context, q Querier) error) error
	// Write runs f in a write transaction in which a gathering, once read with
	// Dialect.ForUpdate, cannot change under it until it commits.
	Write(ctx context.Context, f func(ctx context.Context, tx Querier) error) error
}

// StdConn is what *sql.DB, *sql.Tx and *sql.Conn have in common.
type StdConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Std adapts a database/sql connection, pool or transaction to Querier.
func Std(c StdConn) Querier { return std{c} }

type std struct{ c StdConn }

func (s std) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := s.c.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (s std) QueryRow(ctx context.Context, query string, args ...any) Row {
	return s.c.QueryRowContext(ctx, query, args...)
}

func (s std) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.c.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Batch runs the statements one after the other.
func (s std) Batch(ctx context.Context, execs []Stmt, query string, args ...any) (Rows, error) {
	for _, e := range execs {
		if _, err := s.c.ExecContext(ctx, e.SQL, e.Args...); err != nil {
			return nil, err
		}
	}
	return s.Query(ctx, query, args...)
}

// closeRows closes rows after a read, returning the first of err, the rows'
// error and the close's.
func closeRows(rows Rows, err error) error {
	if err == nil {
		err = rows.Err()
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// Failure wraps a database error with the store's name and the operation;
// answers for the client (a types.Result, a ranking sentinel) pass through as
// they are.
func Failure(store, what string, err error) error {
	var res types.Result
	if err == nil || errors.As(err, &res) || errors.Is(err, ranking.ErrNotFound) || errors.Is(err, ranking.ErrNoCategory) {
		return err
	}
	return fmt.Errorf("%s: %s: %w", store, what, err)
}
