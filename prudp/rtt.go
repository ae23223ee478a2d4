package prudp

import "time"

// rttEstimator keeps the smoothed round-trip time and its variation as RFC 6298
// describes (SRTT, RTTVAR, RTO = SRTT + 4*RTTVAR). Samples come only from packets
// acknowledged on their first transmission (Karn's rule); the caller enforces that.
type rttEstimator struct {
	srtt, rttvar time.Duration
	min, max     time.Duration // bounds on the RTO
	initial      time.Duration // RTO before the first sample
	samples      uint64
	latest       time.Duration
}

func newRTTEstimator(initial, min, max time.Duration) rttEstimator {
	return rttEstimator{initial: initial, min: min, max: max}
}

// sample feeds one round-trip measurement.
func (r *rttEstimator) sample(d time.Duration) {
	if d <= 0 {
		d = time.Microsecond
	}
	r.latest = d
	if r.samples == 0 {
		r.srtt = d
		r.rttvar = d / 2
	} else {
		delta := r.srtt - d
		if delta < 0 {
			delta = -delta
		}
		r.rttvar = (3*r.rttvar + delta) / 4
		r.srtt = (7*r.srtt + d) / 8
	}
	r.samples++
}

// rto returns the retransmission timeout for a first transmission.
func (r *rttEstimator) rto() time.Duration {
	if r.samples == 0 {
		return r.clamp(r.initial)
	}
	// The 4*RTTVAR term collapses on a quiet loopback; the floor keeps the
	// timeout sane (nex-go's RTO fell to zero there and resent 19 times at once).
	return r.clamp(r.srtt + 4*r.rttvar)
}

// backoff returns the timeout for the n-th retransmission (n >= 1): the RTO
// doubled n times, capped at the maximum.
func (r *rttEstimator) backoff(n int) time.Duration {
	d := r.rto()
	for i := 0; i < n && d < r.max; i++ {
		d *= 2
	}
	return r.clamp(d)
}

// recheck returns how long a fast retransmission (a packet found lost while
// acknowledgements flow) may go unacknowledged before it is taken as lost
// again: a round trip and its variation, twice, without the RTO's floor,
// which is there for timeouts on a quiet or stalled connection; at least
// 1 ms, and never beyond the RTO. A lost retransmission in a bulk transfer
// would otherwise stall the window for the floor (50 ms; a loopback round
// trip is ~1 ms).
func (r *rttEstimator) recheck() time.Duration {
	if r.samples == 0 {
		return r.rto()
	}
	return min(max(2*(r.srtt+4*r.rttvar), time.Millisecond), r.rto())
}

func (r *rttEstimator) clamp(d time.Duration) time.Duration {
	if d < r.min {
		d = r.min
	}
	if r.max > 0 && d > r.max {
		d = r.max
	}
	return d
}
