package engine

import (
	"math"
	"testing"
	"time"
)

// BenchmarkStatsRequest is what every answered request costs the
// benchmarker's bookkeeping during the load: its count among the requests
// in flight, its latency in the endpoint's histogram and the second's
// timeline slot.
func BenchmarkStatsRequest(b *testing.B) {
	s := newStats(time.Now, 3600)
	s.start.Store(time.Now().UnixNano())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			fl := s.begin("GET /", false, time.Now())
			s.request("GET /", 3*time.Millisecond, false, fl)
		}
	})
}

// BenchmarkRunScore is what a scored action costs: its tag in the ledger
// (and its points in the second's slot).
func BenchmarkRunScore(b *testing.B) {
	r := &Run{led: newLedger(map[string]float64{"page": 1}), st: newStats(time.Now, 3600)}
	r.led.open.Store(true)
	r.st.start.Store(time.Now().UnixNano())
	res := &Response{}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Score(1, "page", res)
		}
	})
}

// TestTimelinePerSecondLatencyAndPoints: each second of the timeline has
// the median and 99th percentile of its scored actions' latencies, within
// the small histogram's 1/16, and the points they earned; assets count as
// requests but not in the latencies.
func TestTimelinePerSecondLatencyAndPoints(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	s := newStats(func() time.Time { return now }, 10)
	s.start.Store(now.UnixNano())
	for i := 1; i <= 100; i++ {
		s.request("GET /", time.Duration(i)*time.Millisecond, false, noFlight)
	}
	s.request("GET /a.png", time.Hour, true, noFlight)
	s.scored(1.5)
	s.scored(2)
	now = now.Add(2 * time.Second)
	s.request("GET /", 3*time.Microsecond, false, noFlight)
	tl := s.timelineResults(3)
	near := func(got, want float64) bool { return math.Abs(got-want) <= want/16 }
	if got := tl[0]; got.Requests != 101 || !near(got.P50ms, 50) || !near(got.P99ms, 99) || got.Points != 3.5 {
		t.Errorf("second 0: %+v, want 101 requests, p50 50 ms, p99 99 ms, 3.5 points", got)
	}
	if got := tl[1]; got.P50ms != 0 || got.P99ms != 0 || got.Points != 0 {
		t.Errorf("an empty second: %+v", got)
	}
	if got := tl[2]; got.P50ms != 0.003 || got.P99ms != 0.003 {
		t.Errorf("a 3 µs second: %+v", got)
	}
	for us := int64(1); us < 1<<28; us = us*3/2 + 1 {
		b := secondBucket(us)
		if v := secondValue(b); b < secondBuckets-1 && math.Abs(v-float64(us)) > float64(us)/16+0.5 {
			t.Fatalf("%d µs in bucket %d, read back as %v", us, b, v)
		}
	}
}
