package prudp

// Sequence ids are 16-bit counters that wrap ("Sequence id" in NintendoClients wiki "PRUDP Protocol").
// Comparisons use serial-number arithmetic (RFC 1982): a is before b when the
// signed 16-bit difference b-a is positive, which stays correct across the wrap
// as long as fewer than 32768 ids are outstanding, far more than any window here.

// seqBefore reports whether a comes strictly before b.
func seqBefore(a, b uint16) bool { return int16(b-a) > 0 }

// seqDiff returns b-a as a signed distance.
func seqDiff(a, b uint16) int { return int(int16(b - a)) }
