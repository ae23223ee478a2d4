package auth

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// ErrNoAccount is returned by an Accounts lookup that finds nothing.
var ErrNoAccount = errors.New("nex/auth: no such account")

// KeyDerivation selects how a password becomes a Kerberos key ("Key Derivation" in
// nintendo-wiki "Kerberos Authentication").
type KeyDerivation uint8

const (
	// DeriveNEX is MD5 iterated 65000 + pid%1024 times: 3DS, Wii U and Quazal.
	DeriveNEX KeyDerivation = iota
	// DeriveSwitch is MD5(MD5(password) || LE64(pid)).
	DeriveSwitch
)

// Account is what the ticket-granting service knows of a user: never the
// password, only the keys derived from it (which is all Kerberos needs).
type Account struct {
	PID  types.PID
	Name string
	// KeyNEX and KeySwitch are the password keys under both derivations.
	KeyNEX, KeySwitch [16]byte
}

// NewAccount derives the keys of an account from its password.
func NewAccount(pid types.PID, name, password string) Account {
	return Account{
		PID: pid, Name: name,
		KeyNEX:    kerberos.DeriveKey(password, uint64(pid)),
		KeySwitch: kerberos.DeriveKeySwitch(password, uint64(pid)),
	}
}

// Key returns the account's key under derivation d.
func (a *Account) Key(d KeyDerivation) []byte {
	if d == DeriveSwitch {
		return a.KeySwitch[:]
	}
	return a.KeyNEX[:]
}

// Accounts looks up accounts. Names compare case-insensitively ("Usernames are not
// case sensitive", authentication.md). Implementations return ErrNoAccount (possibly
// wrapped) when nothing matches. nex/accounts provides the SQLite store; Memory is
// an in-memory one.
type Accounts interface {
	AccountByName(ctx context.Context, name string) (Account, error)
	AccountByPID(ctx context.Context, pid types.PID) (Account, error)
}

// Memory is an in-memory Accounts for tests and throwaway servers. The zero value
// is empty and ready; it is safe for concurrent use.
type Memory struct {
	mu     sync.RWMutex
	byPID  map[types.PID]Account
	byName map[string]types.PID
}

// Add adds or replaces an account, deriving its keys from password.
func (m *Memory) Add(pid types.PID, name, password string) {
	m.Put(NewAccount(pid, name, password))
}

// Put adds or replaces an account.
func (m *Memory) Put(a Account) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byPID == nil {
		m.byPID = make(map[types.PID]Account)
		m.byName = make(map[string]types.PID)
	}
	if old, ok := m.byPID[a.PID]; ok {
		delete(m.byName, strings.ToLower(old.Name))
	}
	m.byPID[a.PID] = a
	m.byName[strings.ToLower(a.Name)] = a.PID
}

// AccountByName implements Accounts.
func (m *Memory) AccountByName(_ context.Context, name string) (Account, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	pid, ok := m.byName[strings.ToLower(name)]
	if !ok {
		return Account{}, ErrNoAccount
	}
	return m.byPID[pid], nil
}

// AccountByPID implements Accounts.
func (m *Memory) AccountByPID(_ context.Context, pid types.PID) (Account, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	a, ok := m.byPID[pid]
	if !ok {
		return Account{}, ErrNoAccount
	}
	return a, nil
}

// Special accounts present on every NEX server ("Special Accounts" in
// nintendo-wiki "Kerberos Authentication", 3DS / Wii U table).
const (
	PIDQuazalAuthentication types.PID = 1
	PIDQuazalRendezVous     types.PID = 2
	PIDGuest                types.PID = 100
)

// GuestPassword is the published password of the guest account.
const GuestPassword = "MMQea3n!fsik"

// SpecialAccount is one of the accounts every NEX server has.
type SpecialAccount struct {
	PID  types.PID
	Name string
}

// SpecialAccounts lists the 3DS / Wii U special accounts of kerberos.md. Only
// guest has a published password; servers give the others random ones.
var SpecialAccounts = []SpecialAccount{
	{1, "Quazal Authentication"},
	{2, "Quazal Rendez-Vous"},
	{100, "guest"},
	{101, "Administrator"},
	{102, "eval"},
	{103, "SandboxProbe"},
	{104, "LobbyAdministrator"},
	{110, "BackgroundPlayer0"},
}
