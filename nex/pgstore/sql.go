package pgstore

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The shared store logic (internal/sqlstore) runs on pgx through pgq, which
// numbers its ? placeholders, and pgDB, which gives its transactions.

// rebind numbers a statement's ? placeholders $1, $2, ... (the shared
// statements have no ? in a literal or comment).
func rebind(query string) string {
	n := strings.Count(query, "?")
	if n == 0 {
		return query
	}
	b := make([]byte, 0, len(query)+2*n)
	i := 0
	for _, c := range []byte(query) {
		if c != '?' {
			b = append(b, c)
			continue
		}
		i++
		b = strconv.AppendInt(append(b, '$'), int64(i), 10)
	}
	return string(b)
}

// querier is what a pool and a transaction have in common.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// pgq is a sqlstore.Querier on a pool or a transaction.
type pgq struct{ c querier }

// pgRows gives pgx's rows the Close that reports an error.
type pgRows struct {
	pgx.Rows
	batch pgx.BatchResults // closed with the rows, if not nil
}

func (r pgRows) Close() error {
	r.Rows.Close()
	err := r.Rows.Err()
	if r.batch != nil {
		if berr := r.batch.Close(); err == nil {
			err = berr
		}
	}
	return err
}

func (q pgq) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.c.Query(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return pgRows{Rows: rows}, nil
}

func (q pgq) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.c.QueryRow(ctx, rebind(query), args...)
}

func (q pgq) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.c.Exec(ctx, rebind(query), args...)
	return tag.RowsAffected(), err
}

// Batch sends the statements in one round trip (a pipeline).
func (q pgq) Batch(ctx context.Context, execs []sqlstore.Stmt, query string, args ...any) (sqlstore.Rows, error) {
	var b pgx.Batch
	for _, e := range execs {
		b.Queue(rebind(e.SQL), e.Args...)
	}
	b.Queue(rebind(query), args...)
	br := q.c.SendBatch(ctx, &b)
	for range execs {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return pgRows{Rows: rows, batch: br}, nil
}

// pgDB is a pool as a sqlstore.DB. Statements are bounded by the connections'
// statement_timeout (Open).
type pgDB struct{ pool *pgxpool.Pool }

// Do runs f on the pool.
func (d pgDB) Do(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	return f(ctx, pgq{d.pool})
}

// Snapshot runs f in a REPEATABLE READ, read-only transaction.
func (d pgDB) Snapshot(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	return d.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error { return f(ctx, pgq{tx}) })
}

// Write runs f in a write transaction (write).
func (d pgDB) Write(ctx context.Context, f func(ctx context.Context, tx sqlstore.Querier) error) error {
	return d.write(ctx, func(tx pgx.Tx) error { return f(ctx, pgq{tx}) })
}

// run runs f in a transaction and commits it.
func (d pgDB) run(ctx context.Context, opts pgx.TxOptions, f func(tx pgx.Tx) error) error {
	tx, err := d.pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// maxAttempts bounds the runs of a write transaction that PostgreSQL aborted
// to break a deadlock (40P01) or a serialization failure (40001).
const maxAttempts = 5

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// write runs f in a READ COMMITTED transaction, again when PostgreSQL aborts
// it as a deadlock victim.
func (d pgDB) write(ctx context.Context, f func(tx pgx.Tx) error) error {
	var err error
	for range maxAttempts {
		if err = d.run(ctx, pgx.TxOptions{}, f); !retryable(err) {
			break
		}
	}
	return err
}
