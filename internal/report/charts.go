// Package report draws a run's result: its charts over the load (score,
// requests, latency, users and errors per second, with the load
// controller's decisions marked) as inline SVG, and a whole run as one
// self-contained HTML page that opens offline. Nothing in it asks for a
// script, a style sheet or a font from elsewhere: the portal embeds the
// charts under its strict content policy, and `tunecon bench --report`
// writes the page for a contestant's practice at home.
//
// The charts use SVG's presentation attributes only (no style attribute,
// no script): a policy that forbids inline styles and scripts shows them
// whole. Each second's figures are in a <title> a pointer shows, and each
// series carries its numbers in data-values, for tests and for anyone
// reading the page's source.
package report

import (
	"math"
	"slices"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// Options says what the charts mark besides the run itself.
type Options struct {
	// Freeze is the contest's freeze (zero: none); the charts mark it when
	// it falls within the load.
	Freeze time.Time
}

// Chart is one chart of a run: its series over the load's seconds, the
// load controller's decisions and the times the axis is labelled with.
type Chart struct {
	ID     string // "score", "requests", "latency", "users", "errors"
	Title  string
	Series []Series
	// Start is when the load began; the timeline's second i is
	// [Start+i s, Start+i+1 s).
	Start    time.Time
	Seconds  int
	Changes  []engine.LoadChange
	FreezeAt float64 // seconds after Start; NaN when not within the load
}

// Series is one line of a chart: a value per second of the load (NaN for
// a second it has none, which leaves a gap).
type Series struct {
	Name   string
	Color  string
	Values []float64
	// Step draws the value as held for the whole second (users, errors)
	// rather than as a point in its middle.
	Step bool
}

// The series' colours: dark enough on white for text (WCAG AA).
const (
	colorScore    = "#1f5fbf"
	colorRequests = "#0e7490"
	colorP50      = "#1f5fbf"
	colorP99      = "#c2410c"
	colorUsers    = "#7e22ce"
	colorErrors   = "#b3261e"
	colorGrow     = "#15803d"
	colorShrink   = "#b3261e"
	colorHold     = "#64748b"
	colorFreeze   = "#1d4ed8"
)

// Charts returns a run's charts, none when its load has no timeline.
func Charts(res *engine.Result, opts Options) []Chart {
	tl := res.Timeline
	loaded := slices.ContainsFunc(res.Phases, func(p engine.PhaseResult) bool { return p.Name == engine.PhaseLoad })
	if len(tl) == 0 || !loaded {
		return nil // a run that never reached its load
	}
	start := LoadStart(res)
	freeze := math.NaN()
	if !opts.Freeze.IsZero() {
		if at := opts.Freeze.Sub(start).Seconds(); at >= 0 && at <= float64(len(tl)) {
			freeze = at
		}
	}
	var score, requests, p50, p99, users, errs []float64
	var sum float64
	for _, s := range tl {
		sum += s.Points
		score = append(score, sum)
		requests = append(requests, float64(s.Requests))
		p50 = append(p50, gap(s.P50ms))
		p99 = append(p99, gap(s.P99ms))
		users = append(users, float64(s.Users))
		errs = append(errs, float64(s.Errors))
	}
	chart := func(id, title string, series ...Series) Chart {
		return Chart{ID: id, Title: title, Series: series, Start: start, Seconds: len(tl),
			Changes: res.Load, FreezeAt: freeze}
	}
	return []Chart{
		chart("score", "Score: raw points so far", Series{Name: "points", Color: colorScore, Values: score}),
		chart("requests", "Requests per second", Series{Name: "requests/s", Color: colorRequests, Values: requests}),
		chart("latency", "Latency of scored actions (ms)",
			Series{Name: "p50", Color: colorP50, Values: p50}, Series{Name: "p99", Color: colorP99, Values: p99}),
		chart("users", "Users", Series{Name: "users", Color: colorUsers, Values: users, Step: true}),
		chart("errors", "Errors per second (charged)", Series{Name: "errors/s", Color: colorErrors, Values: errs, Step: true}),
	}
}

// gap is a latency of 0 (no action answered that second) as a gap.
func gap(ms float64) float64 {
	if ms <= 0 {
		return math.NaN()
	}
	return ms
}

// LoadStart is when the run's load phase began: its start plus the phases
// before the load.
func LoadStart(res *engine.Result) time.Time {
	at := res.StartedAt
	for _, p := range res.Phases {
		if p.Name == engine.PhaseLoad {
			break
		}
		at = at.Add(time.Duration(p.Seconds * float64(time.Second)))
	}
	return at.UTC()
}
