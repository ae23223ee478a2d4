package kerberos

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Settings are the two sizes that differ between NEX generations. The zero
// value means 4-byte PIDs, 32-byte session keys and InternalAuto.
type Settings struct {
	// PIDSize is 4 (3DS / Wii U, Quazal) or 8 (Switch). 0 means 4.
	PIDSize int
	// SessionKeySize is 32 (NEX 2 and later) or 16 (NEX 1, the 3DS / Wii U
	// friends server, Quazal). 0 means 32.
	SessionKeySize int
	// Internal selects the internal ticket format. The zero value,
	// InternalAuto, writes the new format and reads either.
	Internal InternalFormat
}

// Presets for the servers gamewire talks to.
var (
	NEX3DS  = Settings{PIDSize: 4, SessionKeySize: 32}
	Switch  = Settings{PIDSize: 8, SessionKeySize: 32}
	Friends = Settings{PIDSize: 4, SessionKeySize: 16}
	Quazal  = Settings{PIDSize: 4, SessionKeySize: 16}
)

// InternalFormat selects the layout of the internal ticket ("Internal Ticket
// Format" in nintendo-wiki "Kerberos Authentication").
type InternalFormat uint8

const (
	// InternalAuto writes the new format and, when reading, tries the new
	// format if the bytes have its shape and the old one otherwise (or if the
	// new one's HMAC fails). The HMAC makes a wrong guess harmless.
	InternalAuto InternalFormat = iota
	// InternalNew is Buffer(random key) + Buffer(ticket info encrypted under
	// MD5(target key || random key)).
	InternalNew
	// InternalOld is the ticket info encrypted under the target key.
	InternalOld
)

// InternalKeySize is the size of the random key of a new-format internal
// ticket written by this package (NintendoClients and the public servers use
// 16). Any size is accepted when reading.
const InternalKeySize = 16

// DefaultMaxAge is how old a ticket may be before servers refuse it: "a
// ticket is valid for exactly 2 minutes" (nintendo-wiki "Kerberos Authentication"), and
// both public servers refuse older ones (docs/peers.md).
const DefaultMaxAge = 2 * time.Minute

func (s Settings) pidSize() (int, error) {
	switch s.PIDSize {
	case 0, 4:
		return 4, nil
	case 8:
		return 8, nil
	}
	return 0, fmt.Errorf("%w: PID size %d (want 4 or 8)", ErrBadSettings, s.PIDSize)
}

func (s Settings) keySize() (int, error) {
	switch s.SessionKeySize {
	case 0:
		return 32, nil
	case 16, 32:
		return s.SessionKeySize, nil
	}
	return 0, fmt.Errorf("%w: session key size %d (want 16 or 32)", ErrBadSettings, s.SessionKeySize)
}

func appendPID(b []byte, pid uint64, size int) ([]byte, error) {
	if size == 4 {
		if pid > 0xffffffff {
			return b, fmt.Errorf("%w: PID %d does not fit in 4 bytes", ErrBadSettings, pid)
		}
		return binary.LittleEndian.AppendUint32(b, uint32(pid)), nil
	}
	return binary.LittleEndian.AppendUint64(b, pid), nil
}

func readPID(b []byte, off, size int) uint64 {
	if size == 4 {
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	}
	return binary.LittleEndian.Uint64(b[off:])
}

// appendBuffer writes a NEX Buffer: LE32 length, then the bytes.
func appendBuffer(b, data []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// readBuffer reads a NEX Buffer at off, checking its length against what is
// present. The result aliases b.
func readBuffer(b []byte, off int, what string) ([]byte, int, error) {
	if len(b)-off < 4 {
		return nil, off, fmt.Errorf("%s length at offset %d: %w (%d bytes left)", what, off, ErrTruncated, len(b)-off)
	}
	n := binary.LittleEndian.Uint32(b[off:])
	off += 4
	if uint64(n) > uint64(len(b)-off) {
		return nil, off, fmt.Errorf("%s at offset %d: %w (length %d, %d bytes left)", what, off, ErrTruncated, n, len(b)-off)
	}
	return b[off : off+int(n) : off+int(n)], off + int(n), nil
}

// Ticket is what the authentication server returns, encrypted with the
// source key ("Kerberos Tickets" and "Ticket Format" in
// nintendo-wiki "Kerberos Authentication").
type Ticket struct {
	// SessionKey keys the secure connection (RC4, signatures).
	SessionKey []byte
	// TargetPID is the user the ticket lets the client connect to, in
	// practice Quazal Rendez-Vous (the secure server).
	TargetPID uint64
	// Internal is the internal ticket, opaque to the client, forwarded in
	// the secure CONNECT.
	Internal []byte
	// Attributes is the content of the optional trailing Buffer (a
	// NUL-terminated JSON string on NEX 4.3 and later), NUL included. nil
	// means absent; a non-nil empty slice is an empty Buffer.
	Attributes []byte
}

// Append appends the plaintext encoding of t: session key, PID, Buffer(internal)
// and, if t.Attributes is not nil, Buffer(attributes).
func (t *Ticket) Append(b []byte, s Settings) ([]byte, error) {
	ps, err := s.pidSize()
	if err != nil {
		return b, fmt.Errorf("kerberos ticket: %w", err)
	}
	ks, err := s.keySize()
	if err != nil {
		return b, fmt.Errorf("kerberos ticket: %w", err)
	}
	if len(t.SessionKey) != ks {
		return b, fmt.Errorf("kerberos ticket: session key: %w: %d bytes, settings say %d", ErrBadLength, len(t.SessionKey), ks)
	}
	b = append(b, t.SessionKey...)
	if b, err = appendPID(b, t.TargetPID, ps); err != nil {
		return b, fmt.Errorf("kerberos ticket: target PID: %w", err)
	}
	b = appendBuffer(b, t.Internal)
	if t.Attributes != nil {
		b = appendBuffer(b, t.Attributes)
	}
	return b, nil
}

// ParseTicket decodes a decrypted ticket. The optional attributes Buffer is
// read when bytes remain after the internal ticket, as clients do; anything
// after it is ErrTrailingData. On success n is len(b). Fields alias b.
func ParseTicket(b []byte, s Settings) (Ticket, int, error) {
	var t Ticket
	ps, err := s.pidSize()
	if err != nil {
		return t, 0, fmt.Errorf("kerberos ticket: %w", err)
	}
	ks, err := s.keySize()
	if err != nil {
		return t, 0, fmt.Errorf("kerberos ticket: %w", err)
	}
	if len(b) < ks+ps {
		return t, 0, fmt.Errorf("kerberos ticket: session key and PID at offset 0: %w (%d of %d bytes)", ErrTruncated, len(b), ks+ps)
	}
	t.SessionKey = b[:ks:ks]
	t.TargetPID = readPID(b, ks, ps)
	off := ks + ps
	if t.Internal, off, err = readBuffer(b, off, "internal ticket"); err != nil {
		return Ticket{}, 0, fmt.Errorf("kerberos ticket: %w", err)
	}
	if off < len(b) {
		if t.Attributes, off, err = readBuffer(b, off, "attributes"); err != nil {
			return Ticket{}, 0, fmt.Errorf("kerberos ticket: %w", err)
		}
	}
	if off != len(b) {
		return Ticket{}, 0, fmt.Errorf("kerberos ticket: %w: %d bytes at offset %d", ErrTrailingData, len(b)-off, off)
	}
	return t, off, nil
}

// Seal appends t encoded and encrypted with key (the source key), as the
// authentication server sends it.
func (t *Ticket) Seal(dst, key []byte, s Settings) ([]byte, error) {
	plain, err := t.Append(nil, s)
	if err != nil {
		return dst, err
	}
	return Encrypt(dst, key, plain)
}

// OpenTicket checks the HMAC of sealed under key (the source key, from the
// password), decrypts it and decodes the ticket. Fields alias a new buffer,
// not sealed.
func OpenTicket(sealed, key []byte, s Settings) (Ticket, error) {
	plain, err := Decrypt(nil, key, sealed)
	if err != nil {
		return Ticket{}, fmt.Errorf("kerberos ticket: %w", err)
	}
	t, _, err := ParseTicket(plain, s)
	return t, err
}

// TicketInfo is the content of the internal ticket, which only the target
// (the secure server) can read ("Ticket Info" in nintendo-wiki "Kerberos Authentication").
type TicketInfo struct {
	// Issued is when the authentication server issued the ticket.
	Issued DateTime
	// SourcePID is the user the ticket was issued to.
	SourcePID uint64
	// SessionKey is the same key as in the client's Ticket.
	SessionKey []byte
	// Extra holds bytes after the session key, which some NEX 4 tickets
	// carry (nintendo-wiki "Kerberos Authentication", "Ticket Info"); nil if none.
	Extra []byte
}

// Append appends the plaintext encoding of i: DateTime, PID, session key,
// then Extra.
func (i *TicketInfo) Append(b []byte, s Settings) ([]byte, error) {
	ps, err := s.pidSize()
	if err != nil {
		return b, fmt.Errorf("kerberos ticket info: %w", err)
	}
	ks, err := s.keySize()
	if err != nil {
		return b, fmt.Errorf("kerberos ticket info: %w", err)
	}
	if len(i.SessionKey) != ks {
		return b, fmt.Errorf("kerberos ticket info: session key: %w: %d bytes, settings say %d", ErrBadLength, len(i.SessionKey), ks)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(i.Issued))
	if b, err = appendPID(b, i.SourcePID, ps); err != nil {
		return b, fmt.Errorf("kerberos ticket info: source PID: %w", err)
	}
	b = append(b, i.SessionKey...)
	return append(b, i.Extra...), nil
}

// ParseTicketInfo decodes decrypted ticket info. Bytes after the session key
// go to Extra. Fields alias b; n is len(b) on success.
func ParseTicketInfo(b []byte, s Settings) (TicketInfo, int, error) {
	var i TicketInfo
	ps, err := s.pidSize()
	if err != nil {
		return i, 0, fmt.Errorf("kerberos ticket info: %w", err)
	}
	ks, err := s.keySize()
	if err != nil {
		return i, 0, fmt.Errorf("kerberos ticket info: %w", err)
	}
	if need := 8 + ps + ks; len(b) < need {
		return i, 0, fmt.Errorf("kerberos ticket info: DateTime, PID and session key at offset 0: %w (%d of %d bytes)", ErrTruncated, len(b), need)
	}
	i.Issued = DateTime(binary.LittleEndian.Uint64(b))
	i.SourcePID = readPID(b, 8, ps)
	off := 8 + ps
	i.SessionKey = b[off : off+ks : off+ks]
	off += ks
	if off < len(b) {
		i.Extra = b[off:]
	}
	return i, len(b), nil
}

// Validate checks the ticket's age against now: it is refused with
// ErrExpired when issued more than maxAge before now, and with ErrNotYetValid
// when dated more than maxAge after now (a little clock skew is tolerated, and
// so are servers that, like NintendoClients, write an expiry time instead of
// an issue time). maxAge <= 0 means DefaultMaxAge. An impossible DateTime is
// ErrBadDateTime.
func (i *TicketInfo) Validate(now time.Time, maxAge time.Duration) error {
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	issued, err := i.Issued.Time()
	if err != nil {
		return fmt.Errorf("kerberos ticket info: issue time: %w", err)
	}
	now = now.Truncate(time.Second)
	switch {
	case now.Sub(issued) > maxAge:
		return fmt.Errorf("kerberos ticket: %w: issued %s UTC, %s before %s, limit %s", ErrExpired, i.Issued, now.Sub(issued), now.UTC().Format(time.DateTime), maxAge)
	case issued.Sub(now) > maxAge:
		return fmt.Errorf("kerberos ticket: %w: issued %s UTC, %s after %s, limit %s", ErrNotYetValid, i.Issued, issued.Sub(now), now.UTC().Format(time.DateTime), maxAge)
	}
	return nil
}

// SealInternal appends the internal ticket carrying info, encrypted for the
// target (the secure server) whose key is targetKey, in the format s.Internal
// selects (InternalAuto writes the new format). The new format's random key
// is read from rnd (crypto/rand when nil).
func SealInternal(dst []byte, info *TicketInfo, targetKey []byte, s Settings, rnd io.Reader) ([]byte, error) {
	plain, err := info.Append(nil, s)
	if err != nil {
		return dst, err
	}
	if s.Internal == InternalOld {
		return Encrypt(dst, targetKey, plain)
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	var rk [InternalKeySize]byte
	if _, err := io.ReadFull(rnd, rk[:]); err != nil {
		return dst, fmt.Errorf("kerberos internal ticket: random key: %w", err)
	}
	key := internalKey(targetKey, rk[:])
	dst = appendBuffer(dst, rk[:])
	lenAt := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst, err = Encrypt(dst, key[:], plain)
	if err != nil {
		return dst[:lenAt-4-len(rk)], err
	}
	binary.LittleEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst, nil
}

// internalKey is MD5(target key || random key), the new format's key.
func internalKey(targetKey, random []byte) [16]byte {
	buf := make([]byte, 0, len(targetKey)+len(random))
	return md5.Sum(append(append(buf, targetKey...), random...))
}

// OpenInternal decrypts and decodes an internal ticket with the target's key.
// Fields of the result alias a new buffer.
func OpenInternal(internal, targetKey []byte, s Settings) (TicketInfo, error) {
	var plain []byte
	var err error
	switch s.Internal {
	case InternalOld:
		plain, err = Decrypt(nil, targetKey, internal)
	case InternalNew:
		plain, err = openNewInternal(internal, targetKey)
	case InternalAuto:
		if isNewInternalShape(internal) {
			plain, err = openNewInternal(internal, targetKey)
			if err != nil {
				if p, errOld := Decrypt(nil, targetKey, internal); errOld == nil {
					plain, err = p, nil
				}
			}
		} else {
			plain, err = Decrypt(nil, targetKey, internal)
		}
	default:
		return TicketInfo{}, fmt.Errorf("kerberos internal ticket: %w: format %d", ErrBadSettings, s.Internal)
	}
	if err != nil {
		return TicketInfo{}, fmt.Errorf("kerberos internal ticket: %w", err)
	}
	info, _, err := ParseTicketInfo(plain, s)
	return info, err
}

// isNewInternalShape reports whether b is exactly Buffer + Buffer.
func isNewInternalShape(b []byte) bool {
	_, off, err := readBuffer(b, 0, "random key")
	if err != nil {
		return false
	}
	_, off, err = readBuffer(b, off, "encrypted ticket info")
	return err == nil && off == len(b)
}

func openNewInternal(b, targetKey []byte) ([]byte, error) {
	rk, off, err := readBuffer(b, 0, "random key")
	if err != nil {
		return nil, err
	}
	enc, off, err := readBuffer(b, off, "encrypted ticket info")
	if err != nil {
		return nil, err
	}
	if off != len(b) {
		return nil, fmt.Errorf("%w: %d bytes at offset %d", ErrTrailingData, len(b)-off, off)
	}
	key := internalKey(targetKey, rk)
	return Decrypt(nil, key[:], enc)
}

// Issue describes a ticket for IssueTicket.
type Issue struct {
	SourcePID, TargetPID uint64
	// SourceKey encrypts the ticket (the client's password key); TargetKey
	// encrypts the internal ticket (the secure server's key).
	SourceKey, TargetKey []byte
	// SessionKey is used as given; nil draws a random one of the size the
	// settings say.
	SessionKey []byte
	// Issued is the issue time written into the internal ticket.
	Issued time.Time
	// Attributes, if not nil, is written as the optional trailing Buffer.
	Attributes []byte
}

// IssueTicket does what an authentication server's ticket-granting service
// does: it builds the internal ticket for the target and the client's ticket
// around it, and returns the sealed ticket (appended to dst) and the session
// key. Randomness comes from rnd (crypto/rand when nil).
func IssueTicket(dst []byte, in Issue, s Settings, rnd io.Reader) (sealed, sessionKey []byte, err error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	ks, err := s.keySize()
	if err != nil {
		return dst, nil, fmt.Errorf("kerberos issue: %w", err)
	}
	sessionKey = in.SessionKey
	if sessionKey == nil {
		sessionKey = make([]byte, ks)
		if _, err := io.ReadFull(rnd, sessionKey); err != nil {
			return dst, nil, fmt.Errorf("kerberos issue: session key: %w", err)
		}
	}
	info := TicketInfo{Issued: NewDateTime(in.Issued), SourcePID: in.SourcePID, SessionKey: sessionKey}
	internal, err := SealInternal(nil, &info, in.TargetKey, s, rnd)
	if err != nil {
		return dst, nil, err
	}
	t := Ticket{SessionKey: sessionKey, TargetPID: in.TargetPID, Internal: internal, Attributes: in.Attributes}
	sealed, err = t.Seal(dst, in.SourceKey, s)
	if err != nil {
		return dst, nil, err
	}
	return sealed, sessionKey, nil
}
