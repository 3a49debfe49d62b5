package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// MaxStaffLog caps a job's staff log, in bytes: the rest is cut with a note.
const MaxStaffLog = 1 << 20

// jobColumns are the columns scanJob reads, in its order.
const jobColumns = `id, team_id, kind, problem, target, state, verdict, score, result, staff_log, messages, error_code, error,
	created_at, started_at, finished_at, worker, attempts, max_attempts, river_job_id, rerun_of, deadline_ms,
	progress_phase, progress_score, progress_requests, progress_errors, progress_users, progress_at`

type scanner interface{ Scan(dest ...any) error }

func scanJob(r scanner) (portal.Job, error) {
	var (
		j                      portal.Job
		state, verdict         string
		score                  sql.NullFloat64
		result                 sql.NullString
		messages               string
		started, finished, pat sql.NullTime
		riverID, rerunOf       sql.NullInt64
		deadlineMS             int64
		kind                   string
	)
	err := r.Scan(&j.ID, &j.TeamID, &kind, &j.Problem, &j.Target, &state, &verdict, &score, &result, &j.StaffLog, &messages,
		&j.ErrorCode, &j.Error, &j.CreatedAt, &started, &finished, &j.Worker, &j.Attempts, &j.MaxAttempts, &riverID,
		&rerunOf, &deadlineMS, &j.Progress.Phase, &j.Progress.Score, &j.Progress.Requests, &j.Progress.Errors,
		&j.Progress.Users, &pat)
	if err != nil {
		return j, err
	}
	j.Kind, j.State, j.Verdict, j.Score = portal.JobKind(kind), portal.JobState(state), portal.Verdict(verdict), score.Float64
	if result.Valid {
		j.Result = json.RawMessage(result.String)
	}
	if err := json.Unmarshal([]byte(messages), &j.Messages); err != nil {
		return j, fmt.Errorf("job %d's messages: %w", j.ID, err)
	}
	j.StartedAt, j.FinishedAt, j.Progress.UpdatedAt = started.Time, finished.Time, pat.Time
	j.RiverJobID, j.RerunOf, j.Deadline = riverID.Int64, rerunOf.Int64, fromMS(deadlineMS)
	return j, nil
}

func (q *queries) jobWhere(ctx context.Context, what string, where string, args ...any) (portal.Job, error) {
	j, err := scanJob(q.queryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+where, args...))
	if err != nil {
		return j, notFound(err, "%s", what)
	}
	return j, nil
}

// Job reads one job.
func (q *queries) Job(ctx context.Context, id int64) (portal.Job, error) {
	return q.jobWhere(ctx, fmt.Sprintf("job %d", id), `id = ?`, id)
}

// JobByRiverID reads the job of a River job.
func (q *queries) JobByRiverID(ctx context.Context, riverJobID int64) (portal.Job, error) {
	return q.jobWhere(ctx, fmt.Sprintf("the job of River job %d", riverJobID), `river_job_id = ?`, riverJobID)
}

// ActiveJob reads a team's own queued or running job (CodeNotFound if
// none); its validation job is not one.
func (q *queries) ActiveJob(ctx context.Context, teamID int64) (portal.Job, error) {
	return q.ActiveJobOf(ctx, teamID, portal.KindNormal)
}

// ActiveJobOf reads a team's queued or running job of a kind (CodeNotFound
// if none).
func (q *queries) ActiveJobOf(ctx context.Context, teamID int64, kind portal.JobKind) (portal.Job, error) {
	return q.jobWhere(ctx, fmt.Sprintf("an active %s job of team %d", kind, teamID),
		`team_id = ? AND kind = ? AND state IN ('queued', 'running')`, teamID, string(kind))
}

func (q *queries) listJobs(ctx context.Context, query string, args ...any) ([]portal.Job, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing jobs: %w", err)
	}
	defer rows.Close()
	var out []portal.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing jobs: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// LastPassedJob reads a team's newest own job that passed: the app its
// last score came from (CodeNotFound if none).
func (q *queries) LastPassedJob(ctx context.Context, teamID int64) (portal.Job, error) {
	return q.jobWhere(ctx, fmt.Sprintf("a passed job of team %d", teamID),
		`id = (SELECT MAX(id) FROM jobs WHERE team_id = ? AND kind = 'normal' AND state = 'finished' AND verdict = 'passed')`, teamID)
}

// TeamJobs lists a team's own jobs, the newest first: its validation jobs
// are not among them (teams never see those).
func (q *queries) TeamJobs(ctx context.Context, teamID int64) ([]portal.Job, error) {
	return q.listJobs(ctx, `SELECT `+jobColumns+` FROM jobs WHERE team_id = ? AND kind = 'normal' ORDER BY id DESC`, teamID)
}

// Jobs lists every job, the newest first; with states, only jobs in them.
func (q *queries) Jobs(ctx context.Context, states ...portal.JobState) ([]portal.Job, error) {
	query := `SELECT ` + jobColumns + ` FROM jobs`
	if len(states) > 0 {
		query += ` WHERE state IN (` + placeholders(len(states)) + `)`
	}
	return q.listJobs(ctx, query+` ORDER BY id DESC`, stateArgs(states)...)
}

// JobFilter picks jobs for the admin's list: each field set narrows it.
type JobFilter struct {
	State  portal.JobState
	TeamID int64
	Worker string
	// Before keeps jobs with lower ids: the page after one that ended at
	// the job Before.
	Before int64
	// Limit is the most jobs read (all when zero).
	Limit int
}

// JobsPage lists the jobs f picks, the newest first.
func (q *queries) JobsPage(ctx context.Context, f JobFilter) ([]portal.Job, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) { where, args = append(where, cond), append(args, arg) }
	if f.State != "" {
		add(`state = ?`, string(f.State))
	}
	if f.TeamID != 0 {
		add(`team_id = ?`, f.TeamID)
	}
	if f.Worker != "" {
		add(`worker = ?`, f.Worker)
	}
	if f.Before != 0 {
		add(`id < ?`, f.Before)
	}
	query := `SELECT ` + jobColumns + ` FROM jobs`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY id DESC`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	return q.listJobs(ctx, query, args...)
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func stateArgs(states []portal.JobState) []any {
	args := make([]any, len(states))
	for i, s := range states {
		args[i] = string(s)
	}
	return args
}

// NewJob is what a queued job starts with.
type NewJob struct {
	TeamID      int64
	Problem     string
	Target      string
	MaxAttempts int
	Deadline    time.Duration
	RiverJobID  int64
	RerunOf     int64
	// Kind is KindNormal when empty.
	Kind portal.JobKind
}

// InsertJob adds a queued job. A team that has a queued or running job
// already gets a *portal.TeamHasJobError with JobID 0 (in PostgreSQL the
// failed statement ends the transaction: look the job up after it).
func (q *queries) InsertJob(ctx context.Context, n NewJob) (portal.Job, error) {
	rerun := sql.NullInt64{Int64: n.RerunOf, Valid: n.RerunOf != 0}
	if n.Kind == "" {
		n.Kind = portal.KindNormal
	}
	if !n.Kind.Valid() {
		return portal.Job{}, portal.Errorf(portal.CodeInvalid, "no job kind %q", n.Kind)
	}
	row := q.queryRow(ctx, `INSERT INTO jobs (team_id, kind, problem, target, state, created_at, max_attempts, river_job_id, rerun_of, deadline_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+jobColumns,
		n.TeamID, string(n.Kind), n.Problem, n.Target, string(portal.JobQueued), q.stamp(), n.MaxAttempts, n.RiverJobID, rerun, ms(n.Deadline))
	j, err := scanJob(row)
	if q.dialect.uniqueViolation(err) {
		return j, &portal.TeamHasJobError{TeamID: n.TeamID}
	}
	if err != nil {
		return j, fmt.Errorf("store: adding a job for team %d: %w", n.TeamID, err)
	}
	return j, nil
}

// refused explains why a compare-and-set of job id to state to changed
// nothing: the job is missing, or in a state it cannot leave for to, or
// (attempt > 0) on another attempt.
func (q *queries) refused(ctx context.Context, id int64, to portal.JobState, attempt int) error {
	j, err := q.Job(ctx, id)
	if err != nil {
		return err
	}
	if err := portal.CheckTransition(id, j.State, to); err != nil {
		return err
	}
	if attempt > 0 && j.Attempts != attempt {
		return portal.Errorf(portal.CodeConflict, "job %d is on attempt %d, not %d", id, j.Attempts, attempt)
	}
	return fmt.Errorf("store: job %d did not change to %s", id, to)
}

// setState is the compare-and-set at the heart of every state change: it
// runs update (an UPDATE jobs ... statement ending in a WHERE clause on id
// and attempt) only if the job is in a state that may move to to.
func (q *queries) setState(ctx context.Context, id int64, to portal.JobState, attempt int, set string, args ...any) error {
	from := portal.FromStates(to)
	query := `UPDATE jobs SET state = ?, ` + set + ` WHERE id = ? AND state IN (` + placeholders(len(from)) + `) AND (? = 0 OR attempts = ?)`
	all := append([]any{string(to)}, args...)
	all = append(all, id)
	all = append(all, stateArgs(from)...)
	all = append(all, attempt, attempt)
	res, err := q.exec(ctx, query, all...)
	if err != nil {
		return fmt.Errorf("store: job %d to %s: %w", id, to, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return q.refused(ctx, id, to, attempt)
	}
	return nil
}

// BeginAttempt moves a job to running for a new attempt by worker: its
// attempt count goes up by one, the attempt is recorded (a previous attempt
// never ended is marked lost), and its progress starts afresh.
func (t *Tx) BeginAttempt(ctx context.Context, id int64, worker string) (portal.Job, error) {
	now := t.stamp()
	err := t.setState(ctx, id, portal.JobRunning, 0,
		`attempts = attempts + 1, worker = ?, started_at = coalesce(started_at, ?), progress_phase = '', progress_score = 0,
		progress_requests = 0, progress_errors = 0, progress_users = 0, progress_at = NULL`, worker, now)
	if err != nil {
		return portal.Job{}, err
	}
	j, err := t.Job(ctx, id)
	if err != nil {
		return j, err
	}
	if _, err := t.exec(ctx, `UPDATE job_attempts SET ended_at = ?, outcome = ? WHERE job_id = ? AND ended_at IS NULL`,
		now, portal.ReasonLost, id); err != nil {
		return j, fmt.Errorf("store: job %d's attempts: %w", id, err)
	}
	if _, err := t.exec(ctx, `INSERT INTO job_attempts (job_id, n, worker, started_at) VALUES (?, ?, ?, ?)`,
		id, j.Attempts, worker, now); err != nil {
		return j, fmt.Errorf("store: job %d's attempt %d: %w", id, j.Attempts, err)
	}
	return j, nil
}

// endAttempt records how a job's open attempt ended.
func (q *queries) endAttempt(ctx context.Context, id int64, outcome, detail string) error {
	_, err := q.exec(ctx, `UPDATE job_attempts SET ended_at = ?, outcome = ?, error = ? WHERE job_id = ? AND ended_at IS NULL`,
		q.stamp(), outcome, detail, id)
	if err != nil {
		return fmt.Errorf("store: job %d's attempt: %w", id, err)
	}
	return nil
}

// EndJob moves a job to its final state with what goes with it. With
// attempt > 0 it changes the job only while it is on that attempt: a worker
// that lost its job to a rescue cannot end it.
func (t *Tx) EndJob(ctx context.Context, id int64, attempt int, e portal.Ending) (portal.Job, error) {
	if err := e.Check(); err != nil {
		return portal.Job{}, err
	}
	if e.Messages == nil {
		e.Messages = []string{}
	}
	messages, err := json.Marshal(e.Messages)
	if err != nil {
		return portal.Job{}, err
	}
	var score sql.NullFloat64
	if e.State == portal.JobFinished {
		score = sql.NullFloat64{Float64: e.Score, Valid: true}
	}
	var result sql.NullString
	if len(e.Result) > 0 {
		result = sql.NullString{String: string(e.Result), Valid: true}
	}
	err = t.setState(ctx, id, e.State, attempt,
		`verdict = ?, score = ?, result = ?, staff_log = staff_log || ?, messages = ?, error_code = ?, error = ?, finished_at = ?`,
		string(e.Verdict), score, result, capLog(e.StaffLog), string(messages), e.ErrorCode, e.Error, t.stamp())
	if err != nil {
		return portal.Job{}, err
	}
	if err := t.endAttempt(ctx, id, string(e.State), e.Error); err != nil {
		return portal.Job{}, err
	}
	return t.Job(ctx, id)
}

// RequeueJob moves a running job back to queued: its attempt (attempt, or
// any with 0) was lost or interrupted, reason says which, and River will run
// it again. The attempt's staff log is kept.
func (t *Tx) RequeueJob(ctx context.Context, id int64, attempt int, reason, detail, staffLog string) error {
	err := t.setState(ctx, id, portal.JobQueued, attempt, `staff_log = staff_log || ?, progress_phase = ''`, capLog(staffLog))
	if err != nil {
		return err
	}
	return t.endAttempt(ctx, id, reason, detail)
}

// capLog cuts a staff log at MaxStaffLog bytes.
func capLog(s string) string {
	if len(s) <= MaxStaffLog {
		return s
	}
	return s[:MaxStaffLog] + "\n[staff log cut at 1 MiB]\n"
}

// UpdateProgress writes a running job's progress, unless the job has moved
// on from attempt (it reports whether it wrote).
func (q *queries) UpdateProgress(ctx context.Context, id int64, attempt int, p portal.Progress) (bool, error) {
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = q.stamp()
	}
	res, err := q.exec(ctx, `UPDATE jobs SET progress_phase = ?, progress_score = ?, progress_requests = ?,
		progress_errors = ?, progress_users = ?, progress_at = ? WHERE id = ? AND state = ? AND attempts = ?`,
		p.Phase, p.Score, p.Requests, p.Errors, p.Users, p.UpdatedAt.UTC(), id, string(portal.JobRunning), attempt)
	if err != nil {
		return false, fmt.Errorf("store: job %d's progress: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// JobAttempts lists a job's attempts in order.
func (q *queries) JobAttempts(ctx context.Context, id int64) ([]portal.Attempt, error) {
	rows, err := q.query(ctx, `SELECT job_id, n, worker, started_at, ended_at, outcome, error FROM job_attempts
		WHERE job_id = ? ORDER BY n`, id)
	if err != nil {
		return nil, fmt.Errorf("store: job %d's attempts: %w", id, err)
	}
	defer rows.Close()
	var out []portal.Attempt
	for rows.Next() {
		var a portal.Attempt
		var ended sql.NullTime
		if err := rows.Scan(&a.JobID, &a.N, &a.Worker, &a.StartedAt, &ended, &a.Outcome, &a.Error); err != nil {
			return nil, fmt.Errorf("store: job %d's attempts: %w", id, err)
		}
		a.EndedAt = ended.Time
		out = append(out, a)
	}
	return out, rows.Err()
}
