// Package accounts is gamewire's embedded account store: PIDs, names and the
// Kerberos keys derived from passwords, in an SQLite database (modernc.org/sqlite,
// pure Go) inside a data directory created on first start. It implements
// auth.Accounts, so the ticket-granting server reads it directly.
//
// Passwords are never stored or logged: only the two keys Kerberos needs (the
// 3DS / Wii U MD5-iteration key and the Switch key) are kept, which is all a NEX
// server ever needs to know. On first start the store seeds the special accounts of
// nintendo-wiki "Kerberos Authentication": guest with its published password, and the others
// (Quazal Authentication, Quazal Rendez-Vous, ...) with random passwords nobody
// knows, since only their keys are used.
//
// The SQLite driver is a large package; it lives here alone so that packages that
// only need auth.Accounts do not pay for compiling it.
package accounts

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/types"
)

// FileName is the database file inside the data directory.
const FileName = "accounts.db"

// FirstUserPID is the PID Add gives the first account created without one; later
// accounts get the highest PID in use plus one.
const FirstUserPID types.PID = 1000

// MaxPID is the largest PID the store holds (SQLite integers are signed 64-bit).
const MaxPID = types.PID(math.MaxInt64)

// Errors of the store; wrapped with the name or PID involved.
var (
	ErrExists      = errors.New("accounts: already exists")
	ErrBadName     = errors.New("accounts: bad name")
	ErrBadPID      = errors.New("accounts: bad PID")
	ErrEmptyPass   = errors.New("accounts: empty password")
	ErrBadPassword = errors.New("accounts: bad password")
)

// MaxNameLen bounds an account name, in bytes. A NEX String (the type of the user
// name in Login; nintendo-wiki, docs/nex/protocols/authentication,
// https://github.com/PretendoNetwork/nintendo-wiki) could carry 65,534 bytes, but
// every name a NEX server hands out is a PID in decimal (at most 20 digits) or a
// special account ("Quazal Authentication", 21 bytes); a longer one only serves
// to flood listings and logs. Names are also valid UTF-8 without control
// characters.
const MaxNameLen = 64

// MaxPasswordLen bounds a password, in bytes. The password never crosses the wire:
// only the keys derived from it are used (nintendo-wiki, docs/nex/kerberos,
// "Password Authentication"). 256 leaves room for pass phrases.
const MaxPasswordLen = 256

// CheckName returns an error wrapping ErrBadName when name cannot be an account
// name: longer than MaxNameLen bytes, not UTF-8, or with a control character.
func CheckName(name string) error {
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %d bytes, at most %d (NEX names are PIDs in decimal or the special accounts' names)", ErrBadName, len(name), MaxNameLen)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: %+q is not UTF-8", ErrBadName, name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: %+q has the control character %U", ErrBadName, name, r)
		}
	}
	return nil
}

// CheckPassword returns an error wrapping ErrEmptyPass or ErrBadPassword when
// password is empty or longer than MaxPasswordLen bytes.
func CheckPassword(password string) error {
	if password == "" {
		return ErrEmptyPass
	}
	if len(password) > MaxPasswordLen {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadPassword, len(password), MaxPasswordLen)
	}
	return nil
}

// Store is the SQLite account store. It is safe for concurrent use, and several
// processes (a server and `gamewire accounts`) may open the same directory.
type Store struct {
	db   *sql.DB
	path string
}

var _ auth.Accounts = (*Store)(nil)

// The accounts component's schema (migrate.go). Version 1 is the table every
// earlier gamewire created, so it is written to be a no-op on their databases.
func init() { registerSchema("accounts", accountsV1) }

const accountsV1 = `
CREATE TABLE IF NOT EXISTS accounts (
	pid        INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE COLLATE NOCASE,
	key_nex    BLOB NOT NULL,
	key_switch BLOB NOT NULL,
	special    INTEGER NOT NULL DEFAULT 0,
	created    TEXT NOT NULL
);
`

// Options tune OpenWith. The zero value (or nil) is what Open does.
type Options struct {
	// ReadOnly opens an existing store without creating, migrating or changing
	// anything: a missing directory or database is an error wrapping ErrNoStore,
	// and every write fails. For commands that only read (accounts list).
	ReadOnly bool
	// NoCreate opens an existing store read-write (migrating it) but creates
	// nothing: a missing directory or database is an error wrapping ErrNoStore.
	// For commands that change an existing account (accounts passwd).
	NoCreate bool
	// Logger receives warnings (a data directory other users can read);
	// default none.
	Logger *slog.Logger
}

// Open opens the store in dir, creating the directory (mode 0700), the database and
// the special accounts if they do not exist yet. created reports whether this call
// created the database. It is OpenWith with the zero Options.
func Open(ctx context.Context, dir string) (s *Store, created bool, err error) {
	return OpenWith(ctx, dir, nil)
}

// OpenWith opens the store in dir as Open does, or read-only (Options.ReadOnly).
//
// The store's files hold password-equivalent keys, so they are kept to their owner:
// the database is created 0600 before SQLite opens it, and SQLite gives the files it
// creates beside it (accounts.db-wal, accounts.db-shm) the database file's mode.
// Nothing changes the process-wide umask, so this is correct with other goroutines
// creating files meanwhile. A store left readable by others by an earlier gamewire
// (files 0644) is narrowed to 0600 on a read-write open. A data directory that
// already exists keeps its mode; when group or others may read it, a warning is
// logged (the files inside are 0600 anyway, but their names and sizes show).
func OpenWith(ctx context.Context, dir string, o *Options) (s *Store, created bool, err error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dir == "" {
		return nil, false, errors.New("accounts: no data directory given")
	}
	path := filepath.Join(dir, FileName)
	if strings.ContainsAny(path, "?#") {
		// The path goes into an SQLite file: URI, where these start the query
		// and the fragment.
		return nil, false, fmt.Errorf("accounts: data directory %q: '?' and '#' are not supported in its path", dir)
	}
	if opts.ReadOnly || opts.NoCreate {
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, false, fmt.Errorf("%w: no %s in %s", ErrNoStore, FileName, dir)
			}
			return nil, false, fmt.Errorf("accounts: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("accounts: create data directory: %w", err)
	}
	warnDirMode(log, dir)
	if !opts.ReadOnly {
		if created, err = createPrivate(path); err != nil {
			return nil, false, err
		}
		narrowModes(log, path)
	}
	// _txlock=immediate: every transaction takes the write lock when it begins, so
	// one that reads and then writes (Add picking the next PID, the services'
	// check-then-join) waits for another writer instead of failing with
	// SQLITE_BUSY_SNAPSHOT; busy_timeout bounds the wait.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	if opts.ReadOnly {
		dsn = "file:" + path + "?mode=ro&_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, false, fmt.Errorf("accounts: open %s: %w", path, err)
	}
	s = &Store{db: db, path: path}
	if opts.ReadOnly {
		if err := s.checkSchema(ctx); err != nil {
			db.Close()
			return nil, false, err
		}
		return s, false, nil
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, false, err
	}
	if err := s.seed(ctx); err != nil {
		db.Close()
		return nil, false, err
	}
	return s, created, nil
}

// ErrNoStore: a read-only open found no store in the data directory.
var ErrNoStore = errors.New("accounts: no account store")

// createPrivate creates an empty database file (which SQLite takes for an empty
// database) with mode 0600 if there is none; true if it did.
func createPrivate(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("accounts: create %s: %w", path, err)
	}
	// The umask may have narrowed 0600 further, never widened it; Chmod makes it
	// exactly 0600 so the side files SQLite copies the mode to are usable.
	if err := f.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return false, fmt.Errorf("accounts: %s: %w", path, err)
	}
	return true, f.Close()
}

// sideFiles are the files SQLite keeps beside the database in WAL mode.
var sideFiles = []string{"", "-wal", "-shm", "-journal"}

// narrowModes makes the database and its side files 0600 where an earlier gamewire
// left them readable by others.
func narrowModes(log *slog.Logger, path string) {
	if runtime.GOOS == "windows" {
		return // modes do not describe Windows ACLs
	}
	for _, suffix := range sideFiles {
		fi, err := os.Stat(path + suffix)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(path+suffix, 0o600); err != nil {
			log.Warn("accounts: store file readable by others and cannot be narrowed", "file", path+suffix, "mode", fi.Mode().Perm(), "err", err)
			continue
		}
		log.Warn("accounts: store file was readable by others; now 0600", "file", path+suffix, "was", fi.Mode().Perm())
	}
}

// warnDirMode warns when group or others may list the data directory.
func warnDirMode(log *slog.Logger, dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("accounts: the data directory is open to other users; chmod 700 it", "dir", dir, "mode", fi.Mode().Perm())
	}
}

// checkSchema refuses, on a read-only open, a database this build cannot read: one
// without the accounts table, or one a newer gamewire wrote.
func (s *Store) checkSchema(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'accounts'`).Scan(&n); err != nil {
		return fmt.Errorf("accounts: open %s: %w", s.path, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s has no accounts table", ErrNoStore, s.path)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil || n == 0 {
		return err // written before schema_migrations: version 1 of accounts
	}
	have, err := s.SchemaVersions(ctx)
	if err != nil {
		return err
	}
	for _, c := range components.Components() {
		if v := have[c.Name]; v > len(c.Steps) {
			return fmt.Errorf("%w: %s is at version %d, this build knows %d (%s)", ErrSchemaTooNew, c.Name, v, len(c.Steps), s.path)
		}
	}
	return nil
}

// seed adds the special accounts that are missing. Deriving a key costs ~65,000
// MD5 rounds, so accounts already present are skipped before deriving.
func (s *Store) seed(ctx context.Context) error {
	for _, sp := range auth.SpecialAccounts {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE pid = ?`, int64(sp.PID)).Scan(&n); err != nil {
			return fmt.Errorf("accounts: check special account %d: %w", sp.PID, err)
		}
		if n > 0 {
			continue
		}
		password := auth.GuestPassword
		if sp.PID != auth.PIDGuest {
			password = randomPassword()
		}
		a := auth.NewAccount(sp.PID, sp.Name, password)
		_, err := s.db.ExecContext(ctx,
			`INSERT INTO accounts (pid, name, key_nex, key_switch, special, created) VALUES (?, ?, ?, ?, 1, ?)
			 ON CONFLICT DO NOTHING`,
			int64(a.PID), a.Name, a.KeyNEX[:], a.KeySwitch[:], now())
		if err != nil {
			return fmt.Errorf("accounts: seed special account %d %q: %w", sp.PID, sp.Name, err)
		}
	}
	return nil
}

func randomPassword() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers (for the Health protocol's PingDatabase).
func (s *Store) Ping(ctx context.Context) error {
	var n int
	return s.db.QueryRowContext(ctx, `SELECT count(*) FROM accounts`).Scan(&n)
}

// NewAccount describes an account for Add.
type NewAccount struct {
	// PID is the principal id; 0 picks the next free one (at least FirstUserPID).
	PID types.PID
	// Name is the user name; "" means the PID in decimal, as NEX names normal accounts.
	Name string
	// Password is derived into keys and then forgotten.
	Password string
}

// Add creates an account and returns it.
func (s *Store) Add(ctx context.Context, n NewAccount) (auth.Account, error) {
	if err := CheckPassword(n.Password); err != nil {
		return auth.Account{}, err
	}
	if n.PID > MaxPID {
		return auth.Account{}, fmt.Errorf("%w: %d is larger than %d", ErrBadPID, n.PID, MaxPID)
	}
	if err := CheckName(n.Name); err != nil {
		return auth.Account{}, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return auth.Account{}, fmt.Errorf("accounts: %w", err)
	}
	defer tx.Rollback()
	pid := n.PID
	if pid == 0 {
		var max sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(pid) FROM accounts WHERE special = 0`).Scan(&max); err != nil {
			return auth.Account{}, fmt.Errorf("accounts: pick a PID: %w", err)
		}
		pid = FirstUserPID
		if max.Valid && types.PID(max.Int64) >= pid {
			pid = types.PID(max.Int64) + 1
		}
	}
	name := n.Name
	if name == "" {
		name = strconv.FormatUint(uint64(pid), 10)
	}
	var byPID, byName int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM accounts WHERE pid = ?), (SELECT count(*) FROM accounts WHERE name = ?)`,
		int64(pid), name).Scan(&byPID, &byName); err != nil {
		return auth.Account{}, fmt.Errorf("accounts: %w", err)
	}
	if err := Taken(byPID > 0, byName > 0, pid, name); err != nil {
		return auth.Account{}, err
	}
	a := auth.NewAccount(pid, name, n.Password)
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO accounts (pid, name, key_nex, key_switch, special, created) VALUES (?, ?, ?, ?, 0, ?)`,
		int64(a.PID), a.Name, a.KeyNEX[:], a.KeySwitch[:], now()); err != nil {
		return auth.Account{}, fmt.Errorf("accounts: add %d %q: %w", pid, name, err)
	}
	if err := tx.Commit(); err != nil {
		return auth.Account{}, fmt.Errorf("accounts: %w", err)
	}
	return a, nil
}

// SetPassword replaces the keys of the account named by nameOrPID (a name, or a
// PID in decimal when no account has that name).
func (s *Store) SetPassword(ctx context.Context, nameOrPID, password string) (auth.Account, error) {
	if err := CheckPassword(password); err != nil {
		return auth.Account{}, err
	}
	a, err := s.Find(ctx, nameOrPID)
	if err != nil {
		return auth.Account{}, err
	}
	a = auth.NewAccount(a.PID, a.Name, password)
	if _, err := s.db.ExecContext(ctx, `UPDATE accounts SET key_nex = ?, key_switch = ? WHERE pid = ?`,
		a.KeyNEX[:], a.KeySwitch[:], int64(a.PID)); err != nil {
		return auth.Account{}, fmt.Errorf("accounts: set password of %d: %w", a.PID, err)
	}
	return a, nil
}

// Find returns the account with the given name, or with the given PID written in
// decimal.
func (s *Store) Find(ctx context.Context, nameOrPID string) (auth.Account, error) {
	return FindIn(ctx, s, nameOrPID)
}

// FindIn finds an account of a by name, or by its PID written in decimal when
// no account has that name: how every gamewire command names a user.
func FindIn(ctx context.Context, a auth.Accounts, nameOrPID string) (auth.Account, error) {
	acc, err := a.AccountByName(ctx, nameOrPID)
	if !errors.Is(err, auth.ErrNoAccount) {
		return acc, err
	}
	if pid, perr := strconv.ParseUint(nameOrPID, 10, 64); perr == nil {
		return a.AccountByPID(ctx, types.PID(pid))
	}
	return acc, err
}

// Info is an account as List shows it.
type Info struct {
	PID     types.PID
	Name    string
	Special bool
	Created string // RFC 3339, UTC
}

// List returns every account in PID order.
func (s *Store) List(ctx context.Context) ([]Info, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT pid, name, special, created FROM accounts ORDER BY pid`)
	if err != nil {
		return nil, fmt.Errorf("accounts: list: %w", err)
	}
	defer rows.Close()
	var out []Info
	for rows.Next() {
		var i Info
		var pid int64
		if err := rows.Scan(&pid, &i.Name, &i.Special, &i.Created); err != nil {
			return nil, fmt.Errorf("accounts: list: %w", err)
		}
		i.PID = types.PID(pid)
		out = append(out, i)
	}
	return out, rows.Err()
}

func (s *Store) one(ctx context.Context, where string, arg any, what string) (auth.Account, error) {
	var a auth.Account
	var pid int64
	var kn, ks []byte
	err := s.db.QueryRowContext(ctx, `SELECT pid, name, key_nex, key_switch FROM accounts WHERE `+where, arg).Scan(&pid, &a.Name, &kn, &ks)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Account{}, fmt.Errorf("%w: %s", auth.ErrNoAccount, what)
	}
	if err != nil {
		return auth.Account{}, fmt.Errorf("accounts: look up %s: %w", what, err)
	}
	return AccountFromRow(pid, a.Name, kn, ks, what)
}

// AccountFromRow builds an account from a stored row (PID, name, the two
// 16-byte keys), refusing corrupt keys; what names the row in errors.
func AccountFromRow(pid int64, name string, keyNEX, keySwitch []byte, what string) (auth.Account, error) {
	if len(keyNEX) != 16 || len(keySwitch) != 16 {
		return auth.Account{}, fmt.Errorf("accounts: %s has corrupt keys (%d and %d bytes)", what, len(keyNEX), len(keySwitch))
	}
	a := auth.Account{PID: types.PID(pid), Name: name}
	copy(a.KeyNEX[:], keyNEX)
	copy(a.KeySwitch[:], keySwitch)
	return a, nil
}

// AccountByName implements auth.Accounts (case-insensitive).
func (s *Store) AccountByName(ctx context.Context, name string) (auth.Account, error) {
	return s.one(ctx, `name = ?`, name, fmt.Sprintf("name %q", name))
}

// AccountByPID implements auth.Accounts.
func (s *Store) AccountByPID(ctx context.Context, pid types.PID) (auth.Account, error) {
	if pid > MaxPID {
		return auth.Account{}, fmt.Errorf("%w: PID %d", auth.ErrNoAccount, pid)
	}
	return s.one(ctx, `pid = ?`, int64(pid), fmt.Sprintf("PID %d", pid))
}

// SecureKey returns the Kerberos key of the secure server's account (Quazal
// Rendez-Vous, PID 2) under derivation d: the key a secure PRUDP server opens
// tickets with (prudp.Server.ServerKey).
func (s *Store) SecureKey(ctx context.Context, d auth.KeyDerivation) ([]byte, error) {
	a, err := s.AccountByPID(ctx, auth.PIDQuazalRendezVous)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), a.Key(d)...), nil
}

// DefaultDir is the data directory used when none is given:
// $XDG_DATA_HOME/gamewire, or ~/.local/share/gamewire (the user config directory
// on systems without a home directory layout, e.g. Windows).
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "gamewire"), nil
	}
	if home, err := os.UserHomeDir(); err == nil && os.PathSeparator == '/' {
		return filepath.Join(home, ".local", "share", "gamewire"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("accounts: no data directory given and no default: %w", err)
	}
	return filepath.Join(d, "gamewire"), nil
}

// Taken returns the ErrExists error for an account that cannot be added
// because its name or its PID is in use, naming the one that is (the name
// first: an automatic PID is always free); nil when neither is.
func Taken(pidTaken, nameTaken bool, pid types.PID, name string) error {
	switch {
	case nameTaken:
		return fmt.Errorf("%w: the name %q is taken (gamewire accounts passwd changes its password)", ErrExists, name)
	case pidTaken:
		return fmt.Errorf("%w: PID %d is taken", ErrExists, pid)
	}
	return nil
}
