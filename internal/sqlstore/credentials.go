package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/types"
)

// Credentials is the NNID store (credentials.Store) both stores share: the
// nnids and credential_secrets tables their schemas create (nex/accounts,
// nex/pgstore) and the accounts table the NEX accounts go to.
type Credentials struct {
	where   string
	db      DB
	dialect CredentialsDialect
}

// CredentialsDialect is what differs: how the accounts table's created
// column is written, and whether an error is a uniqueness violation.
type CredentialsDialect struct {
	// Created is the value of accounts.created for an account made now.
	Created func(now time.Time) any
	// IsUnique reports a unique constraint violation.
	IsUnique func(err error) bool
}

// NewCredentials returns the NNID store of a database; where names the store
// in errors.
func NewCredentials(where string, db DB, d CredentialsDialect) *Credentials {
	return &Credentials{where: where, db: db, dialect: d}
}

var _ credentials.Store = (*Credentials)(nil)

const tokenSecretName = "token"

// TokenSecret implements credentials.Store.
func (c *Credentials) TokenSecret(ctx context.Context) ([]byte, error) {
	// Processes starting together on one store race to make it: the first
	// insert wins, the others keep what it wrote.
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var secret []byte
	err := c.db.Do(ctx, func(ctx context.Context, q Querier) error {
		if _, err := q.Exec(ctx, `INSERT INTO credential_secrets (name, secret) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
			tokenSecretName, fresh); err != nil {
			return err
		}
		return q.QueryRow(ctx, `SELECT secret FROM credential_secrets WHERE name = ?`, tokenSecretName).Scan(&secret)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: token secret: %w", c.where, err)
	}
	if len(secret) < 16 {
		return nil, fmt.Errorf("%s: %w: stored secret of %d bytes", c.where, credentials.ErrNoSecret, len(secret))
	}
	return secret, nil
}

const nnidColumns = `pid, user_id, pw_salt, pw_hash, pw_iter, nex_password, email, birth_date, country, region, gender,
	language, tz_name, mii_name, mii_data, access_level, created, updated`

// CreateNNID implements credentials.Store.
func (c *Credentials) CreateNNID(ctx context.Context, n credentials.NNID, v credentials.Verifier) (credentials.NNID, error) {
	if err := credentials.CheckUserID(n.UserID); err != nil {
		return n, err
	}
	if n.NEXPassword == "" {
		n.NEXPassword = credentials.NewNEXPassword()
	}
	now := time.Now().UTC().Truncate(time.Second)
	n.Created, n.Updated = now, now
	err := c.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if n.PID == 0 {
			var maxPID sql.NullInt64
			if err := tx.QueryRow(ctx, `SELECT max(pid) FROM accounts WHERE NOT special`).Scan(&maxPID); err != nil {
				return err
			}
			n.PID = 1000
			if maxPID.Valid && types.PID(maxPID.Int64) >= n.PID {
				n.PID = types.PID(maxPID.Int64) + 1
			}
		}
		if n.PID > 0xFFFFFFFF {
			return fmt.Errorf("%w: PID %d does not fit NNAS's 32 bits", credentials.ErrBadNNID, n.PID)
		}
		var taken int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM accounts WHERE pid = ? OR lower(name) = lower(?)`, int64(n.PID), strconv.FormatUint(uint64(n.PID), 10)).Scan(&taken); err != nil {
			return err
		}
		if taken == 0 {
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM nnids WHERE pid = ? OR lower(user_id) = lower(?)`, int64(n.PID), n.UserID).Scan(&taken); err != nil {
				return err
			}
		}
		if taken > 0 {
			return fmt.Errorf("%w: PID %d or NNID %q", credentials.ErrNNIDExists, n.PID, n.UserID)
		}
		a := auth.NewAccount(n.PID, strconv.FormatUint(uint64(n.PID), 10), n.NEXPassword)
		if _, err := tx.Exec(ctx, `INSERT INTO accounts (pid, name, key_nex, key_switch, special, created) VALUES (?, ?, ?, ?, ?, ?)`,
			int64(a.PID), a.Name, a.KeyNEX[:], a.KeySwitch[:], false, c.dialect.Created(now)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO nnids (`+nnidColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			int64(n.PID), n.UserID, append([]byte{}, v.Salt...), append([]byte{}, v.Hash...), v.Iterations, n.NEXPassword, n.Email, n.BirthDate, n.Country, n.Region, n.Gender,
			n.Language, n.TZName, n.MiiName, append([]byte{}, n.MiiData...), int(n.AccessLevel), now.Unix(), now.Unix())
		return err
	})
	if err != nil {
		if c.dialect.IsUnique != nil && c.dialect.IsUnique(err) {
			return n, fmt.Errorf("%w: PID %d or NNID %q", credentials.ErrNNIDExists, n.PID, n.UserID)
		}
		if errors.Is(err, credentials.ErrNNIDExists) || errors.Is(err, credentials.ErrBadNNID) {
			return n, err
		}
		return n, fmt.Errorf("%s: create NNID %q: %w", c.where, n.UserID, err)
	}
	return n, nil
}

func (c *Credentials) one(ctx context.Context, where string, arg any, what string) (credentials.NNID, credentials.Verifier, error) {
	var n credentials.NNID
	var v credentials.Verifier
	err := c.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var pid, created, updated int64
		var region, level int
		err := q.QueryRow(ctx, `SELECT `+nnidColumns+` FROM nnids WHERE `+where, arg).Scan(&pid, &n.UserID, &v.Salt, &v.Hash, &v.Iterations,
			&n.NEXPassword, &n.Email, &n.BirthDate, &n.Country, &region, &n.Gender, &n.Language, &n.TZName, &n.MiiName, &n.MiiData,
			&level, &created, &updated)
		n.PID, n.Region, n.AccessLevel = types.PID(pid), region, int8(max(min(level, 127), -128))
		n.Created, n.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return n, v, fmt.Errorf("%w: %s", credentials.ErrNoNNID, what)
	}
	if err != nil {
		return n, v, fmt.Errorf("%s: look up NNID %s: %w", c.where, what, err)
	}
	return n, v, nil
}

// NNIDByUserID implements credentials.Store.
func (c *Credentials) NNIDByUserID(ctx context.Context, userID string) (credentials.NNID, credentials.Verifier, error) {
	return c.one(ctx, `lower(user_id) = lower(?)`, userID, strconv.Quote(userID))
}

// NNIDByPID implements credentials.Store.
func (c *Credentials) NNIDByPID(ctx context.Context, pid types.PID) (credentials.NNID, credentials.Verifier, error) {
	if pid > 0xFFFFFFFF {
		return credentials.NNID{}, credentials.Verifier{}, fmt.Errorf("%w: PID %d", credentials.ErrNoNNID, pid)
	}
	return c.one(ctx, `pid = ?`, int64(pid), "PID "+strconv.FormatUint(uint64(pid), 10))
}

func (c *Credentials) update(ctx context.Context, pid types.PID, what, set string, args ...any) error {
	var n int64
	err := c.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		n, err = q.Exec(ctx, `UPDATE nnids SET `+set+`, updated = ? WHERE pid = ?`, append(args, time.Now().Unix(), int64(pid))...)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %s of NNID PID %d: %w", c.where, what, pid, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: PID %d", credentials.ErrNoNNID, pid)
	}
	return nil
}

// SetNNIDPassword implements credentials.Store.
func (c *Credentials) SetNNIDPassword(ctx context.Context, pid types.PID, v credentials.Verifier) error {
	return c.update(ctx, pid, "set password", `pw_salt = ?, pw_hash = ?, pw_iter = ?`, v.Salt, v.Hash, v.Iterations)
}

// SetAccessLevel implements credentials.Store.
func (c *Credentials) SetAccessLevel(ctx context.Context, pid types.PID, level int8) error {
	return c.update(ctx, pid, "set access level", `access_level = ?`, int(level))
}

// NNIDs implements credentials.Store.
func (c *Credentials) NNIDs(ctx context.Context) ([]credentials.NNID, error) {
	var out []credentials.NNID
	err := c.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, `SELECT pid, user_id, email, country, access_level, created FROM nnids ORDER BY pid`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n credentials.NNID
			var pid, created int64
			var level int
			if err := rows.Scan(&pid, &n.UserID, &n.Email, &n.Country, &level, &created); err != nil {
				return err
			}
			n.PID, n.AccessLevel, n.Created = types.PID(pid), int8(max(min(level, 127), -128)), time.Unix(created, 0).UTC()
			out = append(out, n)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list NNIDs: %w", c.where, err)
	}
	return out, nil
}
