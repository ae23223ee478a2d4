package kerberos

import (
	"fmt"
	"time"
)

// DateTime is the NEX packed date and time ("DateTime" in
// nintendo-wiki "NEX common types"): year in bits 63-26, month 25-22, day 21-17,
// hour 16-12, minute 11-6, second 5-0. It carries no time zone; this package
// reads and writes it as UTC, which is what the public servers' tickets
// decode to.
type DateTime uint64

// NewDateTime packs t (converted to UTC, truncated to the second).
func NewDateTime(t time.Time) DateTime {
	t = t.UTC()
	return DateTime(uint64(t.Year())<<26 | uint64(t.Month())<<22 | uint64(t.Day())<<17 |
		uint64(t.Hour())<<12 | uint64(t.Minute())<<6 | uint64(t.Second()))
}

// Year returns bits 63-26.
func (d DateTime) Year() int { return int(d >> 26) }

// Month returns bits 25-22.
func (d DateTime) Month() time.Month { return time.Month(d >> 22 & 0xf) }

// Day returns bits 21-17.
func (d DateTime) Day() int { return int(d >> 17 & 0x1f) }

// Hour returns bits 16-12.
func (d DateTime) Hour() int { return int(d >> 12 & 0x1f) }

// Minute returns bits 11-6.
func (d DateTime) Minute() int { return int(d >> 6 & 0x3f) }

// Second returns bits 5-0.
func (d DateTime) Second() int { return int(d & 0x3f) }

// Time unpacks d as a UTC time. It returns ErrBadDateTime, naming the field,
// when the fields are not a calendar date and time (month 13, February 30,
// minute 61, ...), rather than letting time.Date normalise them.
func (d DateTime) Time() (time.Time, error) {
	y, mo, dd, h, mi, s := d.Year(), d.Month(), d.Day(), d.Hour(), d.Minute(), d.Second()
	switch {
	case d>>26 > 9999:
		return time.Time{}, fmt.Errorf("%w: year %d", ErrBadDateTime, uint64(d>>26))
	case mo < 1 || mo > 12:
		return time.Time{}, fmt.Errorf("%w: month %d", ErrBadDateTime, mo)
	case h > 23:
		return time.Time{}, fmt.Errorf("%w: hour %d", ErrBadDateTime, h)
	case mi > 59:
		return time.Time{}, fmt.Errorf("%w: minute %d", ErrBadDateTime, mi)
	case s > 59:
		return time.Time{}, fmt.Errorf("%w: second %d", ErrBadDateTime, s)
	}
	t := time.Date(y, mo, dd, h, mi, s, 0, time.UTC)
	if dd < 1 || t.Day() != dd {
		return time.Time{}, fmt.Errorf("%w: day %d of %d-%02d", ErrBadDateTime, dd, y, int(mo))
	}
	return t, nil
}

// String formats d as "2006-01-02 15:04:05" from its raw fields, valid or not.
func (d DateTime) String() string {
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", d.Year(), int(d.Month()), d.Day(), d.Hour(), d.Minute(), d.Second())
}
