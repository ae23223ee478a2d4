package types

import (
	"fmt"
	"strconv"
	"strings"
)

// StationURL is a station url ("StationURL" in types.md): a scheme (udp, prudp,
// prudps, ...) and key=value parameters, e.g.
//
//	prudps:/stream=10;sid=1;CID=1;type=2;address=34.210.222.104;port=60101;PID=2
//
// Parameter order is arbitrary on the wire; StationURL keeps the order it was given
// so that printing reproduces the input. Keys are case-sensitive, as NEX writes them.
type StationURL struct {
	Scheme string
	params []URLParam
}

// URLParam is one key=value parameter of a StationURL.
type URLParam struct {
	Key, Value string
}

// NewStationURL returns a StationURL with the given scheme and parameters in order.
func NewStationURL(scheme string, params ...URLParam) StationURL {
	return StationURL{Scheme: scheme, params: append([]URLParam(nil), params...)}
}

// ParseStationURLString parses the string form. The empty string is the empty
// StationURL (NEX sends it for "no url"). Errors name what is wrong and where.
func ParseStationURLString(s string) (StationURL, error) {
	if s == "" {
		return StationURL{}, nil
	}
	i := strings.Index(s, ":/")
	if i < 0 {
		return StationURL{}, fmt.Errorf("%w %q: no \":/\" after the scheme", ErrBadStationURL, s)
	}
	u := StationURL{Scheme: s[:i]}
	if u.Scheme == "" || strings.ContainsAny(u.Scheme, ";=") {
		return StationURL{}, fmt.Errorf("%w %q: bad scheme %q", ErrBadStationURL, s, u.Scheme)
	}
	rest := s[i+2:]
	pos := i + 2
	for rest != "" {
		field := rest
		if j := strings.IndexByte(rest, ';'); j >= 0 {
			field, rest = rest[:j], rest[j+1:]
		} else {
			rest = ""
		}
		if field != "" {
			k, v, ok := strings.Cut(field, "=")
			if !ok || k == "" {
				return StationURL{}, fmt.Errorf("%w %q: parameter %q at offset %d is not key=value", ErrBadStationURL, s, field, pos)
			}
			if _, dup := u.Get(k); dup {
				return StationURL{}, fmt.Errorf("%w %q: parameter %q repeated at offset %d", ErrBadStationURL, s, k, pos)
			}
			u.params = append(u.params, URLParam{k, v})
		}
		pos += len(field) + 1
	}
	return u, nil
}

// String prints u in its string form; the empty StationURL prints as "".
func (u StationURL) String() string {
	if u.Scheme == "" && len(u.params) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(u.Scheme)
	sb.WriteString(":/")
	for i, p := range u.params {
		if i > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(p.Key)
		sb.WriteByte('=')
		sb.WriteString(p.Value)
	}
	return sb.String()
}

// IsZero reports whether u is the empty StationURL.
func (u StationURL) IsZero() bool { return u.Scheme == "" && len(u.params) == 0 }

// Params returns the parameters in order. The slice is a copy.
func (u StationURL) Params() []URLParam { return append([]URLParam(nil), u.params...) }

// Get returns the value of key.
func (u StationURL) Get(key string) (string, bool) {
	for _, p := range u.params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Uint returns the value of key as an unsigned number; ok is false when it is
// missing or not a number.
func (u StationURL) Uint(key string) (uint64, bool) {
	v, ok := u.Get(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// Set sets key to value, replacing an existing value in place or appending it.
// The parameters are copied first, so StationURL values never share storage.
func (u *StationURL) Set(key, value string) {
	ps := make([]URLParam, len(u.params), len(u.params)+1)
	copy(ps, u.params)
	u.params = ps
	for i := range u.params {
		if u.params[i].Key == key {
			u.params[i].Value = value
			return
		}
	}
	u.params = append(u.params, URLParam{key, value})
}

// SetUint sets key to a decimal number.
func (u *StationURL) SetUint(key string, v uint64) { u.Set(key, strconv.FormatUint(v, 10)) }

// Delete removes key.
func (u *StationURL) Delete(key string) {
	ps := make([]URLParam, 0, len(u.params))
	for _, p := range u.params {
		if p.Key != key {
			ps = append(ps, p)
		}
	}
	u.params = ps
}

// Address returns the address parameter.
func (u StationURL) Address() string { v, _ := u.Get("address"); return v }

// Port returns the port parameter (0 when missing or invalid).
func (u StationURL) Port() uint16 {
	n, ok := u.Uint("port")
	if !ok || n > 65535 {
		return 0
	}
	return uint16(n)
}

// PID returns the PID parameter (0 when missing).
func (u StationURL) PID() PID { n, _ := u.Uint("PID"); return PID(n) }

// CID returns the CID parameter (0 when missing).
func (u StationURL) CID() uint32 { n, _ := u.Uint("CID"); return uint32(n) }

// AppendStationURL appends u as a String ("StationURL" in types.md).
func AppendStationURL(b []byte, u StationURL) ([]byte, error) {
	return AppendString(b, u.String())
}

// ParseStationURL decodes a StationURL (a String, "StationURL" in types.md) and
// parses its string form.
func ParseStationURL(b []byte) (StationURL, int, error) {
	s, n, err := ParseString(b)
	if err != nil {
		return StationURL{}, 0, err
	}
	u, err := ParseStationURLString(s)
	if err != nil {
		return StationURL{}, 0, err
	}
	return u, n, nil
}
