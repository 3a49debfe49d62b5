package engine

import (
	"math"
	"math/bits"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histogram bounds: 1 µs to 2 minutes at 3 significant figures, a
// fixed few hundred KB per endpoint however long the run.
const (
	histMinMicros = 1
	histMaxMicros = 120_000_000
	histSigFigs   = 3
)

type endpointStat struct {
	mu     sync.Mutex
	hist   *hdrhistogram.Histogram
	errors atomic.Int64
	asset  bool // a page's asset, not a scored action
}

// stats keeps per-endpoint latency histograms and a per-second timeline of
// the load phase.
type stats struct {
	mu        sync.RWMutex
	endpoints map[string]*endpointStat

	// Load-phase requests answered or failed: those of the scored actions
	// (pages, posts, API calls), and those of the pages' assets apart, so
	// that an app cannot dilute its error rate or the controller's shares
	// with cheap asset requests.
	requests atomic.Int64
	assets   atomic.Int64
	// flights holds the slow thresholds (LoadPolicy's SlowRequest and
	// SlowFor) and the scored actions' requests in flight; set before the
	// load.
	flights *flights
	// The load controller's evidence: the scored actions' requests that
	// started at or after ctlSince (unix nanoseconds, the controller's last
	// change) and ended, and how many of them were slow or timed out (an
	// asset's timeout counts too). Requests that started before a change say
	// nothing about the users after it.
	ctlSince    atomic.Int64
	ctlRequests atomic.Int64
	ctlSlow     atomic.Int64
	ctlTimeouts atomic.Int64
	ctlAnswered atomic.Int64
	ctlLatency  atomic.Int64 // nanoseconds
	// ctlStuck is how many of ctlSlow were counted while still in flight.
	ctlStuck atomic.Int64
	timeline []timelineSlot
	start    atomic.Int64 // load start, unix nanoseconds; 0 before load
	now      func() time.Time
}

type timelineSlot struct {
	requests atomic.Int64
	errors   atomic.Int64
	users    atomic.Int64
	// milliPoints is the raw points the second's scored actions earned, in
	// thousandths; latency is the second's scored actions' latencies.
	milliPoints atomic.Int64
	latency     secondHist
}

// secondHist is a second's latency histogram: small (800 bytes) and taken
// without a lock, at the price of precision. Its buckets are log-linear:
// below 8 µs one per microsecond, then eight per power of two, so a
// quantile read from it is within 1/16 (about 6%) of the truth, enough to
// draw the latency over the load. The endpoints' histograms stay the exact
// figures.
type secondHist [secondBuckets]atomic.Uint32

// secondBuckets covers 1 µs to 2^27 µs (134 s), past histMaxMicros.
const secondBuckets = 8 + (27-3)*8

// secondBucket is the bucket of a latency of us microseconds (us >= 1).
func secondBucket(us int64) int {
	if us < 8 {
		return int(us)
	}
	e := bits.Len64(uint64(us)) - 1 // us is in [2^e, 2^(e+1))
	sub := int(us>>(e-3)) & 7
	return min(8+(e-3)*8+sub, secondBuckets-1)
}

// secondValue is the middle of bucket i, in microseconds.
func secondValue(i int) float64 {
	if i < 8 {
		return float64(i)
	}
	e, sub := (i-8)/8+3, (i-8)%8
	width := int64(1) << (e - 3)
	return float64(int64(8+sub)*width) + float64(width)/2
}

// quantiles returns the latencies under which the shares qs of the
// second's requests fell, in milliseconds (0 for a second with none).
func (h *secondHist) quantiles(qs ...float64) []float64 {
	var counts [secondBuckets]uint32
	var total uint64
	for i := range h {
		counts[i] = h[i].Load()
		total += uint64(counts[i])
	}
	out := make([]float64, len(qs))
	if total == 0 {
		return out
	}
	for k, q := range qs {
		rank := uint64(math.Ceil(q * float64(total)))
		var seen uint64
		for i, c := range counts {
			seen += uint64(c)
			if seen >= max(rank, 1) {
				out[k] = secondValue(i) / 1000
				break
			}
		}
	}
	return out
}

func newStats(now func() time.Time, loadSeconds int) *stats {
	s := &stats{endpoints: map[string]*endpointStat{}, now: now, timeline: make([]timelineSlot, loadSeconds+1)}
	s.setSlow(DefaultSlowRequest, nil)
	return s
}

// setSlow sets the slow thresholds: slow, and slowFor's for its endpoints.
func (s *stats) setSlow(slow time.Duration, slowFor map[string]time.Duration) {
	s.flights = newFlights(slow, slowFor, len(s.timeline)*int(time.Second/flightSpan))
}

// begin counts a scored action's request that was sent at, if in the load
// phase, among the requests in flight.
func (s *stats) begin(endpoint string, asset bool, at time.Time) flight {
	start := s.start.Load()
	if asset || start == 0 {
		return noFlight
	}
	return s.flights.begin(endpoint, time.Duration(at.UnixNano()-start))
}

// countStuck counts, as slow requests of the load controller's evidence,
// the scored actions' requests that started since its last change and are
// still in flight at now past their slow threshold, each once.
func (s *stats) countStuck(now time.Time) {
	start := s.start.Load()
	if start == 0 {
		return
	}
	n := s.flights.stuck(time.Duration(now.UnixNano()-start), time.Duration(s.ctlSince.Load()-start))
	s.ctlRequests.Add(n)
	s.ctlSlow.Add(n)
	s.ctlStuck.Add(n)
}

func (s *stats) endpoint(name string, asset bool) *endpointStat {
	s.mu.RLock()
	e := s.endpoints[name]
	s.mu.RUnlock()
	if e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e = s.endpoints[name]; e == nil {
		e = &endpointStat{hist: hdrhistogram.New(histMinMicros, histMaxMicros, histSigFigs), asset: asset}
		s.endpoints[name] = e
	}
	return e
}

// slot returns the timeline slot of now, or nil outside the load phase.
func (s *stats) slot(now time.Time) *timelineSlot {
	start := s.start.Load()
	if start == 0 {
		return nil
	}
	i := int(now.UnixNano()-start) / int(time.Second)
	if i < 0 || i >= len(s.timeline) {
		return nil
	}
	return &s.timeline[i]
}

// request records one answered request's latency; fl is what begin
// returned for it.
func (s *stats) request(endpoint string, d time.Duration, asset bool, fl flight) {
	e := s.endpoint(endpoint, asset)
	us := max(d.Microseconds(), histMinMicros)
	e.mu.Lock()
	_ = e.hist.RecordValue(min(us, histMaxMicros))
	e.mu.Unlock()
	now := s.now()
	if sl := s.slot(now); sl != nil {
		sl.requests.Add(1)
		if asset {
			s.assets.Add(1)
			return
		}
		sl.latency[secondBucket(us)].Add(1)
		s.requests.Add(1)
		_, slow := s.flights.threshold(endpoint)
		if s.evidence(now, d, d > slow, false, fl) {
			s.ctlAnswered.Add(1)
			s.ctlLatency.Add(int64(d))
		}
	}
}

// failed records a request that got no usable answer after took, a timeout
// or not (it has no latency); fl is what begin returned for it.
func (s *stats) failed(endpoint string, took time.Duration, timeout, asset bool, fl flight) {
	now := s.now()
	if sl := s.slot(now); sl != nil {
		sl.requests.Add(1)
		if !asset {
			s.requests.Add(1)
			s.evidence(now, took, false, timeout, fl)
		} else {
			s.assets.Add(1)
			if timeout && now.Add(-took).UnixNano() >= s.ctlSince.Load() {
				s.ctlTimeouts.Add(1) // a timeout is a timeout, whatever it was for
			}
		}
	}
	s.endpoint(endpoint, asset)
}

// evidence counts a request that took d for the load controller, if it
// started after the controller's last change, and reports whether it did.
// A request countStuck counted while in flight is not counted again, but
// its timeout still is.
func (s *stats) evidence(now time.Time, d time.Duration, slow, timeout bool, fl flight) bool {
	counted := s.flights.end(fl)
	if now.Add(-d).UnixNano() < s.ctlSince.Load() {
		return false
	}
	if !counted {
		s.ctlRequests.Add(1)
		if slow {
			s.ctlSlow.Add(1)
		}
	}
	if timeout {
		s.ctlTimeouts.Add(1)
	}
	return true
}

// controlWindow returns the controller's evidence counts so far (errors are
// the collector's).
func (s *stats) controlWindow() window {
	return window{Requests: s.ctlRequests.Load(), Slow: s.ctlSlow.Load(), Timeouts: s.ctlTimeouts.Load(),
		Stuck: s.ctlStuck.Load(), Answered: s.ctlAnswered.Load(), Latency: time.Duration(s.ctlLatency.Load())}
}

// charged records an error charged to an endpoint.
func (s *stats) charged(endpoint string) {
	if endpoint != "" {
		s.endpoint(endpoint, false).errors.Add(1)
	}
	if sl := s.slot(s.now()); sl != nil {
		sl.errors.Add(1)
	}
}

// scored records the raw points of a scored action in its second.
func (s *stats) scored(points float64) {
	if sl := s.slot(s.now()); sl != nil {
		sl.milliPoints.Add(int64(math.Round(points * 1000)))
	}
}

func (s *stats) setUsers(n int) {
	if sl := s.slot(s.now()); sl != nil {
		sl.users.Store(int64(n))
	}
}

// EndpointResult is one row of the per-endpoint table.
type EndpointResult struct {
	Name   string  `json:"name"`
	Count  int64   `json:"count"`
	Errors int64   `json:"errors"`
	P50ms  float64 `json:"p50_ms"`
	P90ms  float64 `json:"p90_ms"`
	P99ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	MeanMs float64 `json:"mean_ms"`
	// Asset marks a page's asset, whose requests are not scored actions.
	Asset bool `json:"asset,omitempty"`
	// TimeShare is count × mean latency as a share of all endpoints' total:
	// where the users' waiting went, the way access-log profilers rank
	// endpoints.
	TimeShare float64 `json:"time_share"`
}

// TimelineSecond is one second of the load phase: its requests (assets
// included), charged errors and users, the raw points its scored actions
// earned, and the median and 99th percentile of their latencies (within
// about 6%; 0 in a second none was answered).
type TimelineSecond struct {
	Second   int     `json:"second"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Users    int64   `json:"users"`
	Points   float64 `json:"points"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
}

func (s *stats) endpointResults() []EndpointResult {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]EndpointResult, 0, len(s.endpoints))
	ms := func(us int64) float64 { return float64(us) / 1000 }
	for name, e := range s.endpoints {
		e.mu.Lock()
		r := EndpointResult{Name: name, Count: e.hist.TotalCount(), Errors: e.errors.Load(), Asset: e.asset}
		if r.Count > 0 {
			r.P50ms = ms(e.hist.ValueAtQuantile(50))
			r.P90ms = ms(e.hist.ValueAtQuantile(90))
			r.P99ms = ms(e.hist.ValueAtQuantile(99))
			r.MaxMs = ms(e.hist.Max())
			r.MeanMs = e.hist.Mean() / 1000
		}
		e.mu.Unlock()
		out = append(out, r)
	}
	var total float64
	for _, r := range out {
		total += float64(r.Count) * r.MeanMs
	}
	for i := range out {
		if total > 0 {
			out[i].TimeShare = float64(out[i].Count) * out[i].MeanMs / total
		}
	}
	// The endpoints that took the most time first.
	sort.Slice(out, func(i, j int) bool {
		if out[i].TimeShare != out[j].TimeShare {
			return out[i].TimeShare > out[j].TimeShare
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func (s *stats) timelineResults(seconds int) []TimelineSecond {
	seconds = min(seconds, len(s.timeline))
	out := make([]TimelineSecond, seconds)
	var users int64
	for i := range seconds {
		sl := &s.timeline[i]
		if u := sl.users.Load(); u > 0 {
			users = u
		}
		q := sl.latency.quantiles(0.50, 0.99)
		out[i] = TimelineSecond{Second: i, Requests: sl.requests.Load(), Errors: sl.errors.Load(), Users: users,
			Points: float64(sl.milliPoints.Load()) / 1000, P50ms: q[0], P99ms: q[1]}
	}
	return out
}
