package engine

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is everything a run found. Its JSON form is documented in docs/runs.md.
type Result struct {
	Problem       string           `json:"problem"`
	Target        string           `json:"target"`
	Passed        bool             `json:"passed"`
	Score         float64          `json:"score"`
	RawScore      float64          `json:"raw_score"`
	Deduction     float64          `json:"deduction"`
	FailReasons   []string         `json:"fail_reasons"`
	Errors        ErrorCounts      `json:"errors"`
	ErrorsByCode  map[string]int64 `json:"errors_by_code"`
	Internal      bool             `json:"internal_error"`
	Requests      int64            `json:"requests"`
	AssetRequests int64            `json:"asset_requests"`
	// CachedAnswers counts the scored actions whose answer the user's own
	// cache gave without asking the app: they earned nothing.
	CachedAnswers   int64            `json:"cached_answers"`
	Breakdown       map[string]int64 `json:"breakdown"`
	Points          []TagPoints      `json:"points"`
	Lost            []Loss           `json:"lost"`
	LimitedBy       map[string]int   `json:"limited_by"`
	Messages        []string         `json:"messages"`
	Endpoints       []EndpointResult `json:"endpoints"`
	Timeline        []TimelineSecond `json:"timeline"`
	Phases          []PhaseResult    `json:"phases"`
	Workload        Workload         `json:"workload"`
	Load            []LoadChange     `json:"load_changes"`
	Benchmarker     BenchmarkerStats `json:"benchmarker"`
	TargetClock     TargetClock      `json:"target_clock"`
	Seed            uint64           `json:"seed"`
	EngineVersion   string           `json:"engine_version"`
	ScenarioVersion string           `json:"scenario_version"`
	StartedAt       time.Time        `json:"started_at"`
	DurationSeconds float64          `json:"duration_s"`
}

// Outcome is a run's verdict as a whole: passed, failed (the contestant's
// app did not meet the rules) or internal (the benchmarker had a fault of its
// own, so the result cannot be trusted either way).
type Outcome int

const (
	Passed Outcome = iota
	Failed
	Internal
)

// Exit statuses of a command that reports an outcome; ExitUsage is for a bad
// command line, which never reaches a run.
const (
	ExitPassed   = 0
	ExitFailed   = 1
	ExitUsage    = 2
	ExitInternal = 3
)

// Outcome judges the result: an internal error outranks the verdict, since
// the benchmarker's own fault makes the verdict unreliable.
func (r *Result) Outcome() Outcome {
	switch {
	case r.Internal:
		return Internal
	case !r.Passed:
		return Failed
	}
	return Passed
}

// ExitStatus is the process exit status of the outcome: 0, 1 or 3.
func (o Outcome) ExitStatus() int {
	switch o {
	case Failed:
		return ExitFailed
	case Internal:
		return ExitInternal
	}
	return ExitPassed
}

func (o Outcome) String() string {
	switch o {
	case Failed:
		return "failed"
	case Internal:
		return "internal"
	}
	return "passed"
}

// Worst is the outcome of several runs: internal over failed over passed.
func Worst(outcomes ...Outcome) Outcome {
	w := Passed
	for _, o := range outcomes {
		w = max(w, o)
	}
	return w
}

// Repeat sums up repeated runs of one benchmark.
type Repeat struct {
	Runs  []*Result `json:"runs"`
	Mean  float64   `json:"score_mean"`
	Stdev float64   `json:"score_stdev"`
	// CV is the coefficient of variation, Stdev / Mean (0 when Mean is 0).
	CV float64 `json:"score_cv"`
}

// Summarize computes the scores' mean, sample standard deviation and
// coefficient of variation.
func Summarize(results []*Result) Repeat {
	scores := make([]float64, len(results))
	for i, res := range results {
		scores[i] = res.Score
	}
	r := Repeat{Runs: results}
	r.Mean, r.Stdev, r.CV = Spread(scores)
	return r
}

// Spread is the mean of xs, their sample standard deviation (0 for fewer
// than two) and its share of the mean, the coefficient of variation (0
// when the mean is not positive).
func Spread(xs []float64) (mean, stdev, cv float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			stdev += (x - mean) * (x - mean)
		}
		stdev = math.Sqrt(stdev / float64(len(xs)-1))
	}
	if mean > 0 {
		cv = stdev / mean
	}
	return mean, stdev, cv
}

// Outcome is the worst outcome of the runs.
func (r Repeat) Outcome() Outcome {
	var os []Outcome
	for _, res := range r.Runs {
		os = append(os, res.Outcome())
	}
	return Worst(os...)
}

// PhaseResult is how one phase went.
type PhaseResult struct {
	Name    string  `json:"name"`
	Passed  bool    `json:"passed"`
	Seconds float64 `json:"seconds"`
	Overran bool    `json:"overran,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// Workload is the number of users at the start, at the end and at most
// during the load, and whether the controller reached the scenario's maximum
// (then the cap, not the app, may have set the score).
type Workload struct {
	Start      int  `json:"start"`
	Final      int  `json:"final"`
	Peak       int  `json:"peak"`
	MaxReached bool `json:"max_reached"`
}

// Verdict is the classic word for the verdict: SUCCESS or FAIL.
func (r *Result) Verdict() string {
	if r.Passed {
		return "SUCCESS"
	}
	return "FAIL"
}

// WriteSummary writes the classic summary lines, then the per-endpoint
// table, the load changes and the deduplicated messages.
func (r *Result) WriteSummary(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Result:   %s\n", r.Verdict())
	fmt.Fprintf(&b, "RawScore: %.1f\n", r.RawScore)
	fmt.Fprintf(&b, "Fails:    %d\n", r.Errors.Charged())
	fmt.Fprintf(&b, "Score:    %.1f\n", r.Score)
	for _, why := range r.FailReasons {
		fmt.Fprintf(&b, "Failed:   %s\n", why)
	}
	fmt.Fprintf(&b, "\nErrors: %d critical, %d application, %d timeout; %d cut off by the end of the run (not charged)",
		r.Errors.Critical, r.Errors.Application, r.Errors.Timeout, r.Errors.CutOff)
	if r.Errors.Internal > 0 {
		fmt.Fprintf(&b, "; %d internal to the benchmarker (not charged)", r.Errors.Internal)
	}
	b.WriteString("\n")
	if r.CachedAnswers > 0 {
		fmt.Fprintf(&b, "Cached:  %d actions answered from the users' own caches, without asking the app, scored nothing\n",
			r.CachedAnswers)
	}
	if len(r.ErrorsByCode) > 0 {
		b.WriteString("Errors by code:")
		for _, code := range slices.Sorted(maps.Keys(r.ErrorsByCode)) {
			fmt.Fprintf(&b, " %s=%d", code, r.ErrorsByCode[code])
		}
		b.WriteString("\n")
	}
	if r.Deduction > 0 {
		fmt.Fprintf(&b, "Deduction: %.1f\n", r.Deduction)
	}
	r.writeEndpoints(&b)
	r.writePoints(&b)
	r.writeLoad(&b)
	r.writeBenchmarker(&b)
	switch tc := r.TargetClock; {
	case tc.Known:
		fmt.Fprintf(&b, "Target clock: %+.3f s ± %.3f s against the benchmarker's (from %d Date headers)\n", tc.OffsetMs/1000, tc.UncertaintyMs/1000, tc.Responses)
	case tc.Why != "":
		fmt.Fprintf(&b, "Target clock: unknown (%s); times were compared with the benchmarker's clock\n", tc.Why)
	}
	fmt.Fprintf(&b, "Seed %d, engine %s, scenario %s %s\n", r.Seed, r.EngineVersion, r.Problem, r.ScenarioVersion)
	if len(r.Messages) > 0 {
		b.WriteString("\nMessages:\n")
		for _, m := range r.Messages {
			fmt.Fprintf(&b, "  %s\n", m)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeEndpoints writes the per-endpoint table, the most time first.
func (r *Result) writeEndpoints(b *strings.Builder) {
	if len(r.Endpoints) == 0 {
		return
	}
	b.WriteString("\nEndpoints, the most time first (time: count × mean latency, as a share of all):\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\tcount\terrors\ttime %\tmean ms\tp50 ms\tp90 ms\tp99 ms\tmax ms\t")
	for _, e := range r.Endpoints {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", e.Name, e.Count, e.Errors, 100*e.TimeShare, e.MeanMs, e.P50ms, e.P90ms, e.P99ms, e.MaxMs)
	}
	tw.Flush()
}

// writeLoad writes the users at the start, at the end and at most, the load
// controller's decisions and what held the users back.
func (r *Result) writeLoad(b *strings.Builder) {
	if len(r.Load) == 0 && r.Workload.Final == 0 {
		return
	}
	fmt.Fprintf(b, "\nUsers: %d at the start, %d at the end, %d at most\n", r.Workload.Start, r.Workload.Final, r.Workload.Peak)
	for _, c := range r.Load {
		fmt.Fprintf(b, "  %5.0fs  %4d -> %-4d %s", c.AtSeconds, c.From, c.To, c.Cause)
		if c.Times > 1 {
			fmt.Fprintf(b, " (%d times, until %.0fs)", c.Times, c.LastAtSeconds)
		}
		b.WriteString("\n")
	}
	if len(r.LimitedBy) > 0 {
		b.WriteString("What held the users back:")
		for i, reason := range slices.Sorted(maps.Keys(r.LimitedBy)) {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(b, "%s %s (%d)", sep, LimitReason(reason), r.LimitedBy[reason])
		}
		b.WriteString("\n")
	}
	if r.Workload.MaxReached {
		b.WriteString("WARNING: the users reached the scenario's maximum; the cap, not the app, may have set this score\n")
	}
	if r.LimitedBy["benchmarker"] > 0 {
		b.WriteString("WARNING: the benchmarker reached its own limits (its CPU or its open files); the machine, not the app, may have set this score\n")
	}
	if r.LimitedBy["starved"] > 0 {
		b.WriteString("NOTE: other work on this machine (the app, if it shares the machine, the kernel, or a virtual machine's host) took the benchmarker's CPUs now and then; the users were held meanwhile, and the latencies measured include the benchmarker's wait for a CPU\n")
	}
}

// writeBenchmarker writes how the benchmarker itself fared, when it was
// measured.
func (r *Result) writeBenchmarker(b *strings.Builder) {
	bm := r.Benchmarker
	if bm.Cores <= 0 {
		return
	}
	fmt.Fprintf(b, "\nBenchmarker: %.1f CPU s (%.0f%% of %d cores), timer lag p99 %.1f ms, %d GC cycles", bm.CPUSeconds, 100*bm.CPUShare, bm.Cores, bm.SchedLagP99, bm.GCCycles)
	for _, p := range bm.Parts {
		fmt.Fprintf(b, "\n  of which %s: %.0f%% (about %.1f CPU s, sampled)", p.Name, 100*p.Share, p.Share*bm.CPUSeconds)
	}
	if bm.PartsNote != "" {
		fmt.Fprintf(b, "\nNote: %s", bm.PartsNote)
	}
	if bm.ClockStepS != 0 {
		fmt.Fprintf(b, "\nNote: the machine's wall clock jumped %+.1f s during the load (a time sync, or the machine paused and resumed); the run counted the time that passed, but an app that times with the wall clock saw the jump", bm.ClockStepS)
	}
	switch {
	case bm.Saturated:
		fmt.Fprintf(b, "\nWARNING: the benchmarker was saturated (%s); this score measures the benchmarker, not the app", bm.Reason)
	case bm.Reason != "":
		fmt.Fprintf(b, "\nNote: %s", bm.Reason)
	}
	b.WriteString("\n")
}

// writePoints writes where the points came from, by tag, and where they
// were lost, by class of error.
func (r *Result) writePoints(b *strings.Builder) {
	if len(r.Points) == 0 {
		return
	}
	b.WriteString("\nPoints by tag:\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, p := range r.Points {
		share := 0.0
		if r.RawScore > 0 {
			share = 100 * p.Points / r.RawScore
		}
		fmt.Fprintf(tw, "  %s\t%d\t× %g\t= %.1f\t%.1f%%\t\n", p.Tag, p.Count, p.Weight, p.Points, share)
	}
	tw.Flush()
	for _, l := range r.Lost {
		fmt.Fprintf(b, "  lost %.1f to %d %s error(s)\n", l.Points, l.Count, l.Class)
	}
}
