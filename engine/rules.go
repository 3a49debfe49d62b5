package engine

import (
	"cmp"
	"fmt"
	"slices"
)

// Rules turn what a run saw into a score and a verdict. Each scenario declares
// its own; the manual of its problem states the same numbers in prose.
type Rules struct {
	// Weights gives the points of one count of each score tag. A tag that is
	// not here cannot be scored.
	Weights map[string]float64
	// Deduction is the points taken off the raw score. Nil means none.
	Deduction Deduction
	// Pass lists the rules a run must meet besides those the engine always
	// applies (a passed initialize, pre-check and final check, and no
	// critical error). Each returns a reason when it fails.
	Pass []PassRule
}

// Tally is what the rules judge: the load phase's score tags, raw score,
// error counts, and the requests of its scored actions (pages, posts, API
// calls; a page's assets are not counted, so an app cannot dilute its error
// rate with cheap asset requests).
type Tally struct {
	Counts   map[string]int64
	Raw      float64
	Errors   ErrorCounts
	Requests int64
	// ErrorsByRequest splits the charged errors (Errors.Charged) by the
	// request each is about: an endpoint's name such as "POST /items", or
	// a phase's for an error of the phase as a whole. Rules that weigh an
	// error by what it stopped (a write more than a read) read it.
	ErrorsByRequest map[string]int64
}

// Deduction computes the points taken off the raw score.
type Deduction func(t Tally) float64

// PassRule returns "" when the run meets it, or the reason it does not.
type PassRule func(t Tally, deduction float64) string

// PerError deducts fixed points for each error of a class.
func PerError(points map[Class]float64) Deduction {
	return func(t Tally) float64 {
		var d float64
		for class, p := range points {
			d += float64(t.Errors.Of(class)) * p
		}
		return d
	}
}

// MaxErrorRate fails a run whose charged errors exceed frac of its scored
// actions' requests.
func MaxErrorRate(frac float64) PassRule {
	return func(t Tally, _ float64) string {
		charged := t.Errors.Charged()
		if charged == 0 {
			return ""
		}
		if t.Requests == 0 || float64(charged) > frac*float64(t.Requests) {
			return fmt.Sprintf("error rate %.2f%% (%d errors in %d requests, assets not counted) is above %.2f%%",
				100*float64(charged)/float64(max(t.Requests, 1)), charged, t.Requests, 100*frac)
		}
		return ""
	}
}

// DeductionBelowRaw fails a run whose deduction reaches its whole raw score.
func DeductionBelowRaw() PassRule {
	return func(t Tally, d float64) string {
		if d > 0 && d >= t.Raw {
			return fmt.Sprintf("the deduction (%.1f) reached the raw score (%.1f)", d, t.Raw)
		}
		return ""
	}
}

// judge applies the rules: it returns the deduction, the final score, and the
// reasons the run fails (none means it passes).
func (r Rules) judge(t Tally) (deduction, score float64, reasons []string) {
	if r.Deduction != nil {
		deduction = r.Deduction(t)
	}
	score = max(t.Raw-deduction, 0)
	for _, p := range r.Pass {
		if why := p(t, deduction); why != "" {
			reasons = append(reasons, why)
		}
	}
	return deduction, score, reasons
}

// TagPoints is what one score tag earned.
type TagPoints struct {
	Tag    string  `json:"tag"`
	Count  int64   `json:"count"`
	Weight float64 `json:"weight"`
	Points float64 `json:"points"`
}

// Loss is the points one class of error cost.
type Loss struct {
	Class  string  `json:"class"`
	Count  int64   `json:"count"`
	Points float64 `json:"points"`
}

// explain splits the raw score by tag, the largest first, and the deduction
// by class of error. A deduction that is not a sum over classes (its parts
// do not add up to the whole) is not split.
func (r Rules) explain(t Tally) (points []TagPoints, lost []Loss) {
	for tag, w := range r.Weights {
		points = append(points, TagPoints{Tag: tag, Count: t.Counts[tag], Weight: w, Points: float64(t.Counts[tag]) * w})
	}
	slices.SortFunc(points, func(a, b TagPoints) int {
		return cmp.Or(cmp.Compare(b.Points, a.Points), cmp.Compare(a.Tag, b.Tag))
	})
	if r.Deduction == nil {
		return points, nil
	}
	var sum float64
	for class := range ClassInternal {
		n := t.Errors.Of(class)
		if n == 0 {
			continue
		}
		var only ErrorCounts
		switch class {
		case ClassCritical:
			only.Critical = n
		case ClassApplication:
			only.Application = n
		case ClassTimeout:
			only.Timeout = n
		}
		d := r.Deduction(Tally{Errors: only})
		sum += d
		lost = append(lost, Loss{Class: class.String(), Count: n, Points: d})
	}
	if whole := r.Deduction(t); len(lost) > 0 && (sum-whole > 1e-9 || whole-sum > 1e-9) {
		return points, nil
	}
	return points, lost
}

// limitedBy counts the controller's holds and removals by reason.
func limitedBy(changes []LoadChange) map[string]int {
	out := map[string]int{}
	for _, c := range changes {
		if c.Reason != "" {
			out[c.Reason] += max(c.Times, 1)
		}
	}
	return out
}
