package report_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/report"
)

// sample is a 60-second load that began at 11:59:55 UTC (after a 5 s
// prepare), grew, held and shrank.
func sample() *engine.Result {
	res := &engine.Result{Problem: "example", Target: "http://127.0.0.1:1/", Passed: true, Score: 1234,
		StartedAt: time.Date(2026, 11, 27, 11, 59, 50, 0, time.UTC),
		Phases:    []engine.PhaseResult{{Name: "prepare", Passed: true, Seconds: 5}, {Name: engine.PhaseLoad, Passed: true, Seconds: 60}},
		Load: []engine.LoadChange{
			{AtSeconds: 10, From: 10, To: 20, Kind: engine.Grow, Cause: "fast <b>enough</b>"},
			{AtSeconds: 30, From: 20, To: 20, Kind: engine.Hold, Cause: "near", Times: 3, LastAtSeconds: 40},
			{AtSeconds: 50, From: 20, To: 15, Kind: engine.Shrink, Cause: "slow"},
		},
	}
	for i := range 60 {
		p50 := float64(i%7) + 1.5
		if i == 3 {
			p50 = 0 // no action answered
		}
		res.Timeline = append(res.Timeline, engine.TimelineSecond{Second: i, Requests: int64(100 + i), Errors: int64(i % 5),
			Users: int64(10 + i/10), Points: float64(2 * i), P50ms: p50, P99ms: 3 * p50})
	}
	return res
}

// values reads the data-values of the series named name in the chart id.
func values(t *testing.T, html, id, name string) []string {
	t.Helper()
	chart := regexp.MustCompile(`(?s)<svg class="run-chart" data-chart="` + id + `".*?</svg>`).FindString(html)
	m := regexp.MustCompile(`data-series="` + regexp.QuoteMeta(name) + `" data-values="([^"]*)"`).FindStringSubmatch(chart)
	if m == nil {
		t.Fatalf("no series %s in chart %s", name, id)
	}
	return strings.Fields(m[1])
}

func TestChartsDrawTheTimeline(t *testing.T) {
	res := sample()
	html, err := report.HTML(res, report.Options{Freeze: time.Date(2026, 11, 27, 12, 0, 30, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	reqs := values(t, s, "requests", "requests/s")
	p50 := values(t, s, "latency", "p50")
	score := values(t, s, "score", "points")
	if len(reqs) != 60 || reqs[0] != "100" || reqs[59] != "159" {
		t.Errorf("requests/s: %v", reqs)
	}
	if p50[3] != "NaN" || p50[4] != "5.5" {
		t.Errorf("p50: a second with no answer is a gap, others their value: %v", p50[:5])
	}
	if sum := 59 * 60; score[59] != strconv.Itoa(sum) {
		t.Errorf("score at the end %s, want the points' sum %d", score[59], sum)
	}
	if n := strings.Count(s, `<g class="decision"`); n != 3*5 {
		t.Errorf("%d decisions marked, want 3 on each of 5 charts", n)
	}
	if strings.Contains(s, "<b>") || !strings.Contains(s, "fast &lt;b&gt;enough&lt;/b&gt;") {
		t.Error("a decision's cause was not escaped")
	}
	if n := strings.Count(s, `<g class="freeze"`); n != 5 {
		t.Errorf("%d freeze marks, want one per chart", n)
	}
	if strings.Contains(s, "style=") || strings.Contains(s, "<script") {
		t.Error("the charts need a style attribute or a script: a strict content policy would break them")
	}
}

// TestTimeLabels: the time axis is labelled in 24-hour UTC at round
// times, never closer together than a label's width, for short and long
// loads alike.
func TestTimeLabels(t *testing.T) {
	for _, seconds := range []int{1, 7, 60, 61, 300, 3600, 5 * 3600} {
		res := sample()
		res.StartedAt = time.Date(2026, 11, 27, 13, 59, 50, 0, time.FixedZone("JST", 9*3600))
		res.Timeline = make([]engine.TimelineSecond, seconds)
		html, _ := report.HTML(res, report.Options{})
		ticks := regexp.MustCompile(`<text class="tick" x="([0-9.]+)"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(string(html), -1)
		if len(ticks) == 0 {
			t.Fatalf("%d s: no time labels", seconds)
		}
		last := -1e9
		for _, m := range ticks[:len(ticks)/5] { // the first chart's
			x, _ := strconv.ParseFloat(m[1], 64)
			if x-last < 84 {
				t.Errorf("%d s: labels %.0f units apart", seconds, x-last)
			}
			last = x
			if !regexp.MustCompile(`^(0[0-9]|1[0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$`).MatchString(m[2]) || strings.HasPrefix(m[2], "13:") {
				t.Errorf("%d s: label %q is not 24-hour UTC (the load began at 04:59:55 UTC)", seconds, m[2])
			}
		}
	}
}

func TestPageIsSelfContained(t *testing.T) {
	var b strings.Builder
	if err := report.Write(&b, sample(), report.Options{}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, bad := range []string{"src=", "href=", "@import", "url("} {
		if strings.Contains(s, bad) {
			t.Errorf("the page refers to something outside it: %q", bad)
		}
	}
	for _, want := range []string{"SUCCESS", `data-chart="users"`, "Result:   SUCCESS", "began at 11:59:55 UTC"} {
		if !strings.Contains(s, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	empty := &engine.Result{Problem: "example", FailReasons: []string{"prepare failed: no"}}
	b.Reset()
	if err := report.Write(&b, empty, report.Options{}); err != nil || strings.Contains(b.String(), "<svg class") ||
		!strings.Contains(b.String(), "prepare failed: no") {
		t.Errorf("a run with no load: %v\n%s", err, b.String())
	}
}

// BenchmarkHTML is what a job page pays for its charts: a 60-second
// load's five charts.
func BenchmarkHTML(b *testing.B) {
	res := sample()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := report.HTML(res, report.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
