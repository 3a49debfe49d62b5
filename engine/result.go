package engine

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is everything a run found. Its JSON form is documented in the README.
type Result struct {
	Problem         string           `json:"problem"`
	Target          string           `json:"target"`
	Passed          bool             `json:"passed"`
	Score           float64          `json:"score"`
	RawScore        float64          `json:"raw_score"`
	Deduction       float64          `json:"deduction"`
	FailReasons     []string         `json:"fail_reasons"`
	Errors          ErrorCounts      `json:"errors"`
	Internal        bool             `json:"internal_error"`
	Requests        int64            `json:"requests"`
	Breakdown       map[string]int64 `json:"breakdown"`
	Messages        []string         `json:"messages"`
	Endpoints       []EndpointResult `json:"endpoints"`
	Timeline        []TimelineSecond `json:"timeline"`
	Phases          []PhaseResult    `json:"phases"`
	Workload        Workload         `json:"workload"`
	Load            []LoadChange     `json:"load_changes"`
	Benchmarker     BenchmarkerStats `json:"benchmarker"`
	Seed            uint64           `json:"seed"`
	EngineVersion   string           `json:"engine_version"`
	ScenarioVersion string           `json:"scenario_version"`
	StartedAt       time.Time        `json:"started_at"`
	DurationSeconds float64          `json:"duration_s"`
}

// PhaseResult is how one phase went.
type PhaseResult struct {
	Name    string  `json:"name"`
	Passed  bool    `json:"passed"`
	Seconds float64 `json:"seconds"`
	Overran bool    `json:"overran,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// Workload is the number of users at the start and at the end of the load.
type Workload struct {
	Start int `json:"start"`
	Final int `json:"final"`
}

// WriteSummary writes the classic summary lines, then the per-endpoint
// table, the load changes and the deduplicated messages.
func (r *Result) WriteSummary(w io.Writer) error {
	var b strings.Builder
	verdict := "SUCCESS"
	if !r.Passed {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "Result:   %s\n", verdict)
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
	if r.Deduction > 0 {
		fmt.Fprintf(&b, "Deduction: %.1f\n", r.Deduction)
	}
	if len(r.Endpoints) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "endpoint\tcount\terrors\tp50 ms\tp90 ms\tp99 ms\tmax ms\t")
		for _, e := range r.Endpoints {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", e.Name, e.Count, e.Errors, e.P50ms, e.P90ms, e.P99ms, e.MaxMs)
		}
		tw.Flush()
	}
	if len(r.Breakdown) > 0 {
		b.WriteString("\nScore by tag:")
		for _, tag := range slices.Sorted(maps.Keys(r.Breakdown)) {
			fmt.Fprintf(&b, " %s=%d", tag, r.Breakdown[tag])
		}
		b.WriteString("\n")
	}
	if len(r.Load) > 0 || r.Workload.Final > 0 {
		fmt.Fprintf(&b, "\nUsers: %d at the start, %d at the end\n", r.Workload.Start, r.Workload.Final)
		for _, c := range r.Load {
			fmt.Fprintf(&b, "  %5.0fs  %4d -> %-4d %s\n", c.AtSeconds, c.From, c.To, c.Cause)
		}
	}
	if bm := r.Benchmarker; bm.Cores > 0 {
		fmt.Fprintf(&b, "\nBenchmarker: %.1f CPU s (%.0f%% of %d cores), timer lag p99 %.1f ms, %d GC cycles", bm.CPUSeconds, 100*bm.CPUShare, bm.Cores, bm.SchedLagP99, bm.GCCycles)
		switch {
		case bm.Saturated:
			fmt.Fprintf(&b, "\nWARNING: the benchmarker was saturated (%s); this score measures the benchmarker, not the app", bm.Reason)
		case bm.Reason != "":
			fmt.Fprintf(&b, "\nNote: %s", bm.Reason)
		}
		b.WriteString("\n")
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
