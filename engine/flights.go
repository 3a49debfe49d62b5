package engine

import (
	"maps"
	"slices"
	"sync/atomic"
	"time"
)

// flightSpan is the span of start times over which the load controller's
// count of requests in flight groups them.
const flightSpan = 100 * time.Millisecond

// flight is a scored action's request in flight, as begin counted it: its
// slow threshold's row and the span its start fell in. A negative span is a
// request not counted (an asset, or one outside the load phase).
type flight struct{ row, span int32 }

// noFlight is a request that begin did not count.
var noFlight = flight{span: -1}

// flights counts the scored actions' requests in flight by the span of
// their start, one row per slow threshold, so that the load controller
// sees a request stuck past its threshold before it ends. Without it, a
// request held 30 s behind a lock counts only when it ends (or times out),
// and not at all if the users changed meanwhile, since its start is then
// older than the evidence: a controller growing every few seconds would
// never see the requests its growth left stuck.
//
// counted is the requests that stuck() counted as slow while in flight and
// whose end has not yet been matched to them: an end takes one, if any, and
// is then not counted again. Every request counted is still in flight when
// counted and ends past its threshold, so each is counted exactly once.
type flights struct {
	slow                    []time.Duration  // the rows' thresholds; [0] is SlowRequest
	row                     map[string]int32 // endpoints with a threshold of their own; read-only
	started, ended, counted [][]atomic.Int64 // [row][span]
}

// newFlights makes the rows for a load of spans flightSpans, with slow the
// default threshold and slowFor the endpoints' own.
func newFlights(slow time.Duration, slowFor map[string]time.Duration, spans int) *flights {
	f := &flights{slow: []time.Duration{slow}, row: map[string]int32{}}
	for _, name := range slices.Sorted(maps.Keys(slowFor)) {
		i := slices.Index(f.slow, slowFor[name])
		if i < 0 {
			i = len(f.slow)
			f.slow = append(f.slow, slowFor[name])
		}
		f.row[name] = int32(i)
	}
	for range f.slow {
		f.started = append(f.started, make([]atomic.Int64, spans))
		f.ended = append(f.ended, make([]atomic.Int64, spans))
		f.counted = append(f.counted, make([]atomic.Int64, spans))
	}
	return f
}

// threshold returns an endpoint's row and slow threshold.
func (f *flights) threshold(endpoint string) (int32, time.Duration) {
	i := f.row[endpoint]
	return i, f.slow[i]
}

// begin counts a request that started at, sinceLoad after the load began.
func (f *flights) begin(endpoint string, sinceLoad time.Duration) flight {
	s := int(sinceLoad / flightSpan)
	if sinceLoad < 0 || s >= len(f.started[0]) {
		return noFlight
	}
	i, _ := f.threshold(endpoint)
	f.started[i][s].Add(1)
	return flight{row: i, span: int32(s)}
}

// end counts the end of fl's request and reports whether stuck() counted
// it while in flight. It counts the end before it takes a count, so that
// stuck, which reads them in the other order, never counts a request that
// has ended.
func (f *flights) end(fl flight) bool {
	if fl.span < 0 {
		return false
	}
	f.ended[fl.row][fl.span].Add(1)
	c := &f.counted[fl.row][fl.span]
	for {
		n := c.Load()
		if n == 0 {
			return false
		}
		if c.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// stuck counts, and returns, the requests still in flight at now (sinceLoad
// after the load began) whose whole span of start times lies at or after
// from (also since the load began) and ended at least their threshold ago,
// and which it did not count before.
func (f *flights) stuck(sinceLoad, from time.Duration) int64 {
	var total int64
	first := max(0, int((from+flightSpan-1)/flightSpan))
	for i, slow := range f.slow {
		last := min(int((sinceLoad-slow)/flightSpan)-1, len(f.started[i])-1)
		if sinceLoad < slow {
			continue
		}
		for s := first; s <= last; s++ {
			// counted, then ended, then started: the other order of
			// end's, so that a request ending meanwhile is never
			// counted as still in flight.
			c := f.counted[i][s].Load()
			e := f.ended[i][s].Load()
			if n := f.started[i][s].Load() - e - c; n > 0 {
				f.counted[i][s].Add(n)
				total += n
			}
		}
	}
	return total
}
