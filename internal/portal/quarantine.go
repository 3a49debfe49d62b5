package portal

import "time"

// Audited actions of the quarantine.
const (
	// AuditQuarantine: a worker quarantined by the portal itself
	// (SystemActor) after repeated faults of its own.
	AuditQuarantine = "worker.quarantine"
	// AuditClear: a worker's quarantine cleared by staff.
	AuditClear = "worker.clear"
)

// SystemActor is the portal acting on its own (a worker's quarantine).
var SystemActor = Actor{Login: "system"}

// Quarantine rule: a worker whose last QuarantineRecent ended jobs hold
// QuarantineErrors that errored through the benchmarker's fault (since its
// last clearance), the jobs of QuarantineTeams teams at least, is
// quarantined. It is the admin page's "unhealthy" rule, acted on. One
// team's faults alone never quarantine a worker: a team whose target makes
// the benchmarker fail (or hang) must not take workers away from the
// others.
const (
	QuarantineRecent = 10
	QuarantineErrors = 3
	QuarantineTeams  = 2
)

// Faults counts a worker's recent jobs that errored through the
// benchmarker's fault, and the teams they were of, and reports whether
// they break the quarantine rule.
func Faults(recent []Job) (faults, teams int, faulty bool) {
	seen := map[int64]bool{}
	for _, j := range recent {
		if BenchmarkerFault(j.State, j.ErrorCode) {
			faults++
			seen[j.TeamID] = true
		}
	}
	return faults, len(seen), faults >= QuarantineErrors && len(seen) >= QuarantineTeams
}

// BenchmarkerFault reports whether a job that ended in state with reason
// code errored through the fault of the worker's benchmarker: its internal
// error, a benchmark that could not start, or a hung one. A lost worker,
// a cancellation and a worker that cannot run a problem are not.
func BenchmarkerFault(state JobState, code string) bool {
	return state == JobErrored && (code == ReasonInternal || code == ReasonBenchError || code == ReasonDeadline)
}

// Quarantine is a worker's quarantine: since when (zero: not quarantined)
// and why.
type Quarantine struct {
	At     time.Time
	Reason string
}

// Quarantined reports whether the worker is quarantined.
func (w Worker) Quarantined() bool { return !w.Quarantine.At.IsZero() }
