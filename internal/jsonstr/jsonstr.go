// Package jsonstr appends JSON strings without allocating: the one escaper of the
// hand-written JSON writers (the dissector's records, the Pip-Boy database export).
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s to b as a JSON string, escaped as encoding/json escapes it: the
// short forms \" \\ \n \r \t \b \f, \u00XX for the other control characters and for < > &
// (safe inside HTML), \u2028 and \u2029 (safe inside JavaScript), and U+FFFD for each
// byte that is not valid UTF-8.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	// The common case, a name or a number: copy the plain prefix at once.
	i := 0
	for i < len(s) && plain(s[i]) {
		i++
	}
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// plain reports whether c is a byte Append copies as it is.
func plain(c byte) bool {
	return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}
