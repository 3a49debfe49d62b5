package portal

import "fmt"

// JobKind says what a job is for. The values are stored as they are.
type JobKind string

const (
	// KindNormal is a team's own benchmark: it counts on the boards.
	KindNormal JobKind = "normal"
	// KindValidation is a validation run staff queue after the end, of a
	// team's current target: it ignores the timeline's end, never counts on
	// a board or a chart, and teams never see it. A team has at most one
	// active job of each kind; a worker runs a team's validation job only
	// while no other job of the team runs, and the other way round, so two
	// benchmarks never load one target at once.
	KindValidation JobKind = "validation"
)

// Valid reports whether k is KindNormal or KindValidation.
func (k JobKind) Valid() bool { return k == KindNormal || k == KindValidation }

// Audited actions of the validation runs.
const (
	// AuditValidate: validation jobs queued for every team with a target.
	AuditValidate = "validation.start"
	// AuditRerunErrored: every errored job not run again yet, run again.
	AuditRerunErrored = "job.rerun-errored"
)

// DefaultValidationThreshold is the share of a team's final score, in
// percent, under which its validation score is flagged.
const DefaultValidationThreshold = 75

// Threshold is the validation threshold in percent (the default when zero).
func (s Settings) Threshold() int {
	if s.ValidationThreshold > 0 {
		return s.ValidationThreshold
	}
	return DefaultValidationThreshold
}

// ValidationState is how a team's validation stands.
type ValidationState string

const (
	ValidationNone    ValidationState = "none"    // no validation job
	ValidationWaiting ValidationState = "waiting" // queued or running
	ValidationOK      ValidationState = "ok"      // passed at or above the threshold
	ValidationLow     ValidationState = "low"     // passed under the threshold
	ValidationFailed  ValidationState = "failed"  // finished, failed
	ValidationErrored ValidationState = "errored" // errored or cancelled
)

// ValidationLine is a team's final score beside its latest validation run.
type ValidationLine struct {
	Standing
	// Job is the team's latest validation job (ID 0: none).
	Job Job
	// Ratio is the validation score over the final score (0 without both).
	Ratio float64
	State ValidationState
}

// Flagged reports whether the line needs staff's eyes: a validation under
// the threshold, failed or errored.
func (l ValidationLine) Flagged() bool {
	return l.State == ValidationLow || l.State == ValidationFailed || l.State == ValidationErrored
}

// Percent is Ratio in percent, for people.
func (l ValidationLine) Percent() string { return fmt.Sprintf("%.1f%%", l.Ratio*100) }

// Validate judges a team's latest validation job against its final
// standing and a threshold in percent. A passed validation of a team with
// no passed final score has nothing to fall under: it is ok.
func Validate(s Standing, j Job, threshold int) ValidationLine {
	l := ValidationLine{Standing: s, Job: j, State: ValidationNone}
	switch {
	case j.ID == 0:
	case j.State.Active():
		l.State = ValidationWaiting
	case j.State == JobFinished && j.Verdict == VerdictFailed:
		l.State = ValidationFailed
	case j.State == JobFinished:
		l.State = ValidationOK
		if s.Passed && s.Score > 0 {
			l.Ratio = j.Score / s.Score
			if l.Ratio*100 < float64(threshold) {
				l.State = ValidationLow
			}
		}
	default:
		l.State = ValidationErrored
	}
	return l
}
