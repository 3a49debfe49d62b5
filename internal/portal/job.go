package portal

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// JobState is where a benchmark job is in its life. The values are stored in
// the database as they are.
type JobState string

const (
	// JobQueued is a job waiting for a worker: just enqueued, or back in the
	// queue after its worker was lost (River rescued it) or stopped mid-run.
	JobQueued JobState = "queued"
	// JobRunning is a job a worker is benchmarking now; its progress columns
	// are updated while it runs.
	JobRunning JobState = "running"
	// JobFinished is a job whose benchmark ran to its end: its verdict (passed
	// or failed) is the contestant's and its score counts.
	JobFinished JobState = "finished"
	// JobErrored is a job the infrastructure failed: the benchmarker's own
	// fault, a worker lost on the last attempt, or a deadline passed because
	// the benchmarker hung. Not the team's fault; staff can run it again.
	JobErrored JobState = "errored"
	// JobCancelled is a job staff cancelled, queued or running.
	JobCancelled JobState = "cancelled"
)

// JobStates lists every state, the active ones first.
func JobStates() []JobState {
	return []JobState{JobQueued, JobRunning, JobFinished, JobErrored, JobCancelled}
}

// Transitions are the legal state changes, the one place they are written:
//
//	queued  -> running    a worker starts an attempt
//	queued  -> cancelled  staff cancel a waiting job
//	queued  -> errored    no attempt can run it (a worker that cannot run its
//	                      problem, or River gave up before the row saw a run)
//	running -> finished   the benchmark ended with a verdict
//	running -> errored    the benchmarker's fault, or the last attempt lost
//	running -> cancelled  staff cancelled it and the worker stopped
//	running -> queued     the attempt was lost or interrupted and River will
//	                      run it again
//	running -> running    a new attempt replaces a lost one before the lost
//	                      one was noticed
//
// Final states have no way out; Rerun makes a new job instead.
func Transitions() map[JobState][]JobState {
	return map[JobState][]JobState{
		JobQueued:  {JobRunning, JobCancelled, JobErrored},
		JobRunning: {JobFinished, JobErrored, JobCancelled, JobQueued, JobRunning},
	}
}

// CanTransition reports whether a job may move from one state to another.
func CanTransition(from, to JobState) bool {
	return slices.Contains(Transitions()[from], to)
}

// FromStates lists the states a job may move to state to from; the store
// puts them in its compare-and-set updates.
func FromStates(to JobState) []JobState {
	var out []JobState
	for _, from := range JobStates() {
		if CanTransition(from, to) {
			out = append(out, from)
		}
	}
	return out
}

// Valid reports whether s is one of JobStates.
func (s JobState) Valid() bool { return slices.Contains(JobStates(), s) }

// Final reports whether a job in state s has ended.
func (s JobState) Final() bool { return s == JobFinished || s == JobErrored || s == JobCancelled }

// Active reports whether a job in state s is queued or running; a team has at
// most one active job.
func (s JobState) Active() bool { return s == JobQueued || s == JobRunning }

// Verdict is a finished job's verdict for the contestant ("" before then and
// for errored and cancelled jobs).
type Verdict string

const (
	VerdictPassed Verdict = "passed"
	VerdictFailed Verdict = "failed"
)

// Reasons: the classified causes recorded in Job.ErrorCode (and an attempt's
// outcome) when a job or an attempt does not end with a verdict.
const (
	// ReasonInternal: the engine reported a fault of its own
	// (engine.Result.Internal).
	ReasonInternal = "internal"
	// ReasonBenchError: the benchmark could not start (kit.Bench returned an
	// error: the scenario could not be prepared).
	ReasonBenchError = "bench-error"
	// ReasonDeadline: the job's hard deadline passed before the benchmark
	// ended, so the benchmarker hung (the engine's own phase deadlines would
	// have ended a run against a slow target well before it).
	ReasonDeadline = "deadline"
	// ReasonCannotRun: the worker that took the job cannot run its problem.
	ReasonCannotRun = "cannot-run"
	// ReasonWorkerLost: the worker running the job died or stopped answering
	// on the job's last attempt (River's rescuer gave up on it).
	ReasonWorkerLost = "worker-lost"
	// ReasonCancelled: staff cancelled the job.
	ReasonCancelled = "cancelled"
	// ReasonInterrupted: the worker was stopped mid-job; the attempt does not
	// count and the job is queued again (an attempt's outcome only).
	ReasonInterrupted = "interrupted"
	// ReasonLost: River rescued the attempt from a dead worker and will run
	// the job again (an attempt's outcome only).
	ReasonLost = "lost"
)

// Job is one benchmark of one team's target. The staff log is for staff only:
// the layers above must never show it to a contestant.
type Job struct {
	ID     int64
	TeamID int64
	// Kind is KindNormal or KindValidation.
	Kind    JobKind
	Problem string
	Target  string
	State   JobState
	// Verdict and Score are set when the job finished.
	Verdict Verdict
	Score   float64
	// Result is the engine.Result as JSON, when the benchmark returned one.
	Result json.RawMessage
	// StaffLog is the engine's staff log and the worker's own notes.
	StaffLog string
	// Messages are the plain-language messages for the contestant.
	Messages []string
	// ErrorCode is one of the Reason constants when the job errored or was
	// cancelled; Error says more, for staff.
	ErrorCode string
	Error     string

	CreatedAt  time.Time
	StartedAt  time.Time // the first attempt's start; zero before
	FinishedAt time.Time // zero until the job is final
	// Worker is the name of the worker of the latest attempt.
	Worker string
	// Attempts counts the attempts started; MaxAttempts bounds those River
	// counts (a lost worker's attempt counts, an interrupted one does not).
	Attempts    int
	MaxAttempts int
	RiverJobID  int64
	// RerunOf is the errored job this one re-runs (0 for none).
	RerunOf int64
	// Deadline is the job's hard deadline, counted from an attempt's start.
	Deadline time.Duration
	Progress Progress
}

// ForContestant is the job as its team may see it: without the staff log,
// the staff's account of an error and the worker's name (the error's class,
// ErrorCode, and the Messages stay).
func (j Job) ForContestant() Job {
	j.StaffLog, j.Error, j.Worker = "", "", ""
	return j
}

// Progress is a running job's live state, pushed by its worker.
type Progress struct {
	Phase     string
	Score     float64
	Requests  int64
	Errors    int64
	Users     int
	UpdatedAt time.Time // zero before the first report
}

// Attempt is one attempt at a job: each start by a worker is recorded.
type Attempt struct {
	JobID     int64
	N         int
	Worker    string
	StartedAt time.Time
	EndedAt   time.Time // zero while it runs or when its worker was lost unnoticed
	// Outcome is the job state the attempt led to, or ReasonLost or
	// ReasonInterrupted for one that did not end the job.
	Outcome string
	Error   string
}

// Ending is what a job ends with: a final state and what goes with it.
type Ending struct {
	State    JobState
	Verdict  Verdict
	Score    float64
	Result   json.RawMessage
	StaffLog string
	Messages []string
	// ErrorCode is a Reason for errored and cancelled jobs.
	ErrorCode string
	Error     string
}

// Check reports whether e is a coherent ending: a final state, a verdict
// only when finished, a reason when not.
func (e Ending) Check() error {
	switch {
	case !e.State.Final():
		return Errorf(CodeInvalid, "a job cannot end in state %q", e.State)
	case e.State == JobFinished && e.Verdict != VerdictPassed && e.Verdict != VerdictFailed:
		return Errorf(CodeInvalid, "a finished job needs a verdict, not %q", e.Verdict)
	case e.State != JobFinished && e.Verdict != "":
		return Errorf(CodeInvalid, "a %s job has no verdict", e.State)
	case e.State != JobFinished && e.ErrorCode == "":
		return Errorf(CodeInvalid, "a %s job needs a reason", e.State)
	}
	return nil
}

func (s JobState) String() string { return string(s) }

// String describes a job in one line, for logs.
func (j Job) String() string {
	return fmt.Sprintf("job %d (team %d, %s, %s)", j.ID, j.TeamID, j.Problem, j.State)
}
