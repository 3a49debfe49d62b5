package engine

import (
	"net/http"
	"sync"
	"time"
)

// TargetClock is what the run learned of the target's clock from the Date
// headers of the answers before the load (the pre-check's): how far it is ahead
// of the benchmarker's (negative: behind), give or take Uncertainty.
type TargetClock struct {
	Known         bool    `json:"known"`
	OffsetMs      float64 `json:"offset_ms"`
	UncertaintyMs float64 `json:"uncertainty_ms"`
	Responses     int     `json:"responses"`
	// Why says why the offset is unknown: no response carried a Date, or
	// the Dates contradict each other (a clock that jumped, or a Date that
	// is not the time of the answer).
	Why string `json:"why,omitempty"`
}

// skew estimates the target's clock. A response dated d (whole seconds) was
// dated while its request was out, between sent and received, so the
// target's clock was ahead of ours by at least d - received and at most
// d + 1s - sent. Each response narrows the bounds; a few dozen narrow them
// to about a round trip.
type skew struct {
	mu       sync.Mutex
	lo, hi   time.Duration
	n        int
	conflict bool
}

func (s *skew) observe(date string, sent, received time.Time) {
	d, err := http.ParseTime(date)
	if err != nil {
		return
	}
	lo, hi := d.Sub(received), d.Add(time.Second).Sub(sent)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		s.lo, s.hi = lo, hi
	} else {
		s.lo, s.hi = max(s.lo, lo), min(s.hi, hi)
	}
	s.n++
	if s.lo > s.hi {
		s.conflict = true
	}
}

// clock returns the estimate: the middle of the bounds.
func (s *skew) clock() TargetClock {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := TargetClock{Responses: s.n}
	switch {
	case s.n == 0:
		c.Why = "no response carried a Date header"
	case s.conflict:
		c.Why = "the Date headers contradict each other"
	default:
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		c.Known, c.OffsetMs, c.UncertaintyMs = true, ms((s.lo+s.hi)/2), ms((s.hi-s.lo)/2)
	}
	return c
}

// bounds are the least and the most the target's clock may be ahead by,
// both 0 when unknown.
func (c TargetClock) bounds() (lo, hi time.Duration) {
	if !c.Known {
		return 0, 0
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return ms(c.OffsetMs - c.UncertaintyMs), ms(c.OffsetMs + c.UncertaintyMs)
}
