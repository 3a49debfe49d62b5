package engine

import "fmt"

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
// error counts and request count.
type Tally struct {
	Counts   map[string]int64
	Raw      float64
	Errors   ErrorCounts
	Requests int64
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

// MaxErrorRate fails a run whose charged errors exceed frac of its requests.
func MaxErrorRate(frac float64) PassRule {
	return func(t Tally, _ float64) string {
		charged := t.Errors.Charged()
		if charged == 0 {
			return ""
		}
		if t.Requests == 0 || float64(charged) > frac*float64(t.Requests) {
			return fmt.Sprintf("error rate %.2f%% (%d errors in %d requests) is above %.2f%%",
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
