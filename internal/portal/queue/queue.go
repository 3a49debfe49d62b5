// Package queue is the portal's job pipeline on River: it enqueues a team's
// benchmark (its row and its River job in one transaction), cancels and
// re-runs jobs for staff, and, in a process that runs benchmarks, works them:
// each job is a River job of kind "bench" that a worker runs in process with
// the engine (kit.Bench, exactly as `tunecon try` does), pushing its progress
// into the job's row and writing the outcome and the River job's completion
// in one transaction.
//
// One Queue type serves both roles. With Config.Problems empty it only
// enqueues, cancels and reads (a portal whose benchmarks run elsewhere);
// with problems it also works the jobs of those problems (`tunecon worker`,
// or the portal with in-process workers). Each problem has a River queue of
// its own ("bench-NAME"), so a worker only ever claims jobs of problems it can
// run; a job that reaches a worker that cannot run it anyway ends errored
// (portal.ReasonCannotRun).
//
// What River does and the portal relies on: one active job per team (a unique
// job by team, so two enqueues at once give one job), first come first
// served, a hard deadline per job (Worker.Timeout), the rescue of a job
// whose worker died (the rescuer, on the elected leader, puts it back for
// another attempt or discards it after the last), and remote cancellation.
// What the queue adds: the jobs rows, the mapping of River's outcomes to the
// portal's job states, and a settler that brings rows in line with what River
// decided while no worker was there to say (a rescued or discarded job).
// Also: validation runs after the end (Validate), which count nowhere and
// which teams never see; "re-run all errored" (RerunErrored); and the
// quarantine of a worker whose benchmarker keeps failing (see
// checkQuarantine): it stops taking jobs until staff clear it.
//
// # What survives what
//
//   - A worker stopped mid-job (Stop's context ends, or a restart): the job
//     goes back to the queue at once (River's JobSnooze(0)), the attempt
//     marked interrupted and not counted, and another worker runs it.
//   - A worker killed mid-job: its attempt stays running in River until the
//     job's timeout (its deadline plus the contest's wrap-up,
//     portal.Settings.WrapUp, WrapUp by default) has passed; then the rescuer
//     on the leader (elected among the started clients; a dead leader's
//     lease lasts 15 s, the rescuer runs every 30 s) makes it retryable, and
//     the settler marks the row queued and the attempt lost; after
//     MaxAttempts lost attempts River discards it and the row ends errored
//     (portal.ReasonWorkerLost). Never lost, never left running.
//   - The portal restarted: the rows and River's jobs are in the database;
//     nothing lives only in memory.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems"
)

// Kind is the River job kind of a benchmark.
const Kind = "bench"

// Defaults of Config.
const (
	DefaultConcurrency    = 1
	DefaultHeartbeatEvery = 3 * time.Second
	// DefaultProgressEvery is how often a running job's progress is written:
	// twice as often as the once a second the pages promise.
	DefaultProgressEvery = 500 * time.Millisecond
	DefaultSettleEvery   = 5 * time.Second
	// DefaultAbandonAfter is how long past its deadline a worker waits for a
	// hung benchmark to return before it gives up on it.
	DefaultAbandonAfter = 5 * time.Second
	// DefaultRescueAfter is River's RescueStuckJobsAfter: a running job whose
	// attempt is older than this and older than its own timeout is rescued
	// by the leader's next rescuer pass (every 30 s).
	DefaultRescueAfter = 15 * time.Second
	// DefaultTeamWait is how long a job waits, back in the queue, when
	// another job of its team runs (a validation job behind the team's own,
	// or the other way round) before a worker looks again.
	DefaultTeamWait = 5 * time.Second
)

// WrapUp is the default wrap-up (portal.DefaultWrapUp): how much longer
// than a job's deadline River gives an attempt (Worker.Timeout) before it may
// be rescued, the worker's time to wait for a hung run (AbandonAfter, at most
// half of it) and to write the outcome. A contest may set another
// (portal.Settings.WrapUp, at least portal.MinWrapUp); it travels in the
// job's arguments, so every process computes the same timeout for a job, the
// rescuer on the leader included, whatever its own configuration. Stop gives
// interrupted jobs this long to write how they ended.
const WrapUp = portal.DefaultWrapUp

// MaxWorkerName is the longest worker name: the name is also the worker's
// River client ID, which River limits to 100 characters.
const MaxWorkerName = 100

// QueueName is the River queue of a problem's jobs.
func QueueName(problem string) string { return "bench-" + problem }

// Runner runs one benchmark; kit.Bench is the real one.
type Runner interface {
	Bench(ctx context.Context, p kit.Problem, target *url.URL, opts ...engine.Option) (*engine.Result, error)
}

// RunnerFunc adapts a function to a Runner.
type RunnerFunc func(ctx context.Context, p kit.Problem, target *url.URL, opts ...engine.Option) (*engine.Result, error)

// Bench calls f.
func (f RunnerFunc) Bench(ctx context.Context, p kit.Problem, target *url.URL, opts ...engine.Option) (*engine.Result, error) {
	return f(ctx, p, target, opts...)
}

var _ Runner = RunnerFunc(nil)

// Config configures a Queue. Zero values take the defaults.
type Config struct {
	// Worker is this process's worker name, shown to staff; it is required
	// when Problems is not empty and must be unique among the workers. It
	// is also the River client's ID (MaxWorkerName characters at most).
	Worker string
	// Problems are the problems whose jobs this process runs; none makes a
	// queue that only enqueues, cancels and reads.
	Problems []string
	// Concurrency is how many jobs run at once (DefaultConcurrency).
	Concurrency int
	// Lookup finds a problem by name (problems.Lookup).
	Lookup func(name string) (kit.Problem, bool)
	// Runner runs a benchmark (kit.Bench).
	Runner Runner
	// OwnAddresses are this machine's addresses, which no benchmark may
	// connect to unless the contest allows local targets (InterfaceAddrs
	// when nil).
	OwnAddresses func() ([]netip.Addr, error)
	// Logger receives the queue's logs: one line per attempt started and
	// ended, and the settler's and heartbeat's warnings (discarded when nil).
	Logger *slog.Logger
	// RiverLogger receives River's own logs (Logger when nil): a worker
	// command gives it a higher level, River being chatty at Info.
	RiverLogger *slog.Logger

	HeartbeatEvery time.Duration
	ProgressEvery  time.Duration
	SettleEvery    time.Duration
	AbandonAfter   time.Duration
	RescueAfter    time.Duration
	TeamWait       time.Duration

	// onWrite, set by the package's tests only (export_test.go), is called
	// after each write of a worker's that a test may wait for: an attempt's
	// start (or its refusal), each write of its progress, its end (or its
	// return to the queue), and each heartbeat. A test reads again what it
	// waits for then, instead of polling on a timer.
	onWrite func()
}

func (c Config) withDefaults() Config {
	or := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	or(&c.HeartbeatEvery, DefaultHeartbeatEvery)
	or(&c.ProgressEvery, DefaultProgressEvery)
	or(&c.SettleEvery, DefaultSettleEvery)
	or(&c.AbandonAfter, DefaultAbandonAfter)
	or(&c.RescueAfter, DefaultRescueAfter)
	or(&c.TeamWait, DefaultTeamWait)
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Lookup == nil {
		c.Lookup = problems.Lookup
	}
	if c.OwnAddresses == nil {
		c.OwnAddresses = InterfaceAddrs
	}
	if c.Runner == nil {
		c.Runner = RunnerFunc(kit.Bench)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RiverLogger == nil {
		c.RiverLogger = c.Logger
	}
	return c
}

// Queue is the job pipeline of one process.
type Queue struct {
	cfg      Config
	store    *store.Store
	client   *river.Client[*sql.Tx]
	problems map[string]kit.Problem

	mu      sync.Mutex
	running map[int64]*pump // the jobs this process runs now, by job id
	stop    context.CancelFunc
	// stopQuarantine ends the quarantine loop first when the queue stops:
	// a removal of River's queues that waits for a running job must not
	// hold River's client up while it stops.
	stopQuarantine context.CancelFunc
	loops          sync.WaitGroup
	started        bool
	// paused: the worker is quarantined and its River queues removed, so
	// it fetches no job. kick asks the quarantine loop to look now.
	paused atomic.Bool
	kick   chan struct{}
}

// New makes a queue over a migrated store.
func New(s *store.Store, cfg Config) (*Queue, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Problems) > 0 && cfg.Worker == "" {
		return nil, portal.Errorf(portal.CodeInvalid, "queue: a worker needs a name")
	}
	if len(cfg.Worker) > MaxWorkerName || strings.ContainsFunc(cfg.Worker, unicode.IsControl) {
		return nil, portal.Errorf(portal.CodeInvalid, "queue: a worker name has at most %d characters and no control characters", MaxWorkerName)
	}
	if cfg.AbandonAfter > WrapUp/2 {
		return nil, portal.Errorf(portal.CodeInvalid, "queue: AbandonAfter %s is more than half of WrapUp %s", cfg.AbandonAfter, WrapUp)
	}
	q := &Queue{cfg: cfg, store: s, problems: map[string]kit.Problem{}, running: map[int64]*pump{}, kick: make(chan struct{}, 1)}
	queues := map[string]river.QueueConfig{}
	for _, name := range cfg.Problems {
		p, ok := cfg.Lookup(name)
		if !ok {
			return nil, portal.Errorf(portal.CodeInvalid, "queue: no problem %q", name)
		}
		q.problems[name] = p
		queues[QueueName(name)] = river.QueueConfig{MaxWorkers: cfg.Concurrency}
	}
	workers := river.NewWorkers()
	// Every client knows the worker, also one that runs no jobs (River
	// checks that a kind has a worker before it inserts a job): whichever
	// started client is the leader, its rescuer asks the worker for a job's
	// timeout, and it would discard the jobs of a kind it did not know.
	if err := river.AddWorkerSafely(workers, &benchWorker{q: q}); err != nil {
		return nil, err
	}
	rc := &river.Config{
		// River's client ID is the worker's name (River makes one up for a
		// queue that only enqueues), so staff and tests see which worker
		// leads in river_leader. Leadership is held by term, not by ID: a
		// worker restarted under its old name waits for the old term to
		// expire like any other.
		ID:                   cfg.Worker,
		Workers:              workers,
		Logger:               cfg.RiverLogger,
		JobTimeout:           cfg.RescueAfter,
		RescueStuckJobsAfter: cfg.RescueAfter,
	}
	if len(queues) > 0 {
		rc.Queues = queues
	}
	client, err := river.NewClient(s.RiverDriver(), rc)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	q.client = client
	return q, nil
}

// Works reports whether this queue runs jobs.
func (q *Queue) Works() bool { return len(q.problems) > 0 }

// Start starts the background work: River's client (fetching jobs, and the
// leader's maintenance) and the heartbeat in a worker, the settler in every
// queue. ctx is for starting only; Stop ends it all.
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return nil
	}
	if err := q.store.CheckSchema(ctx); err != nil {
		return err
	}
	if q.Works() {
		if err := q.store.StartWorker(ctx, q.cfg.Worker, slices.Sorted(maps.Keys(q.problems))); err != nil {
			return err
		}
		// A worker quarantined before it (re)started stays so: its queues
		// go before River's client starts, so it never fetches a job.
		if err := q.checkQuarantine(ctx); err != nil {
			return err
		}
		if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("queue: starting River: %w", err)
		}
	}
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	q.stop, q.started = stop, true
	q.every(lctx, q.cfg.SettleEvery, func(ctx context.Context) {
		if err := q.Settle(ctx); err != nil && ctx.Err() == nil {
			q.cfg.Logger.Warn("settling jobs", "error", err)
		}
	})
	if q.Works() {
		q.every(lctx, q.cfg.HeartbeatEvery, func(ctx context.Context) {
			if err := q.store.Heartbeat(ctx, q.cfg.Worker, q.doing()); err != nil && ctx.Err() == nil {
				q.cfg.Logger.Warn("heartbeat", "error", err)
			}
			q.wrote()
		})
		qctx, stopQuarantine := context.WithCancel(lctx)
		q.stopQuarantine = stopQuarantine
		q.loops.Go(func() { q.quarantineLoop(qctx) })
	}
	return nil
}

// every runs f every d until ctx ends.
func (q *Queue) every(ctx context.Context, d time.Duration, f func(context.Context)) {
	q.loops.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f(ctx)
			}
		}
	})
}

// Stop stops the queue. A worker lets its running jobs finish until ctx
// ends, then cancels them: an interrupted job goes back to the queue without
// using up an attempt.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	if !q.started {
		q.mu.Unlock()
		return nil
	}
	q.started = false
	q.mu.Unlock()
	var err error
	if q.Works() {
		q.stopQuarantine()
		if err = q.client.Stop(ctx); err != nil {
			hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), WrapUp)
			err = q.client.StopAndCancel(hard)
			cancel()
		}
	}
	q.stop()
	q.loops.Wait()
	if q.Works() {
		if herr := q.store.Heartbeat(context.WithoutCancel(ctx), q.cfg.Worker, "stopped"); err == nil {
			err = herr
		}
	}
	return err
}

// errDuplicate rolls back an enqueue that River found a duplicate of.
var errDuplicate = errors.New("duplicate")

// Enqueue queues a benchmark of a team's current target for the contest's
// problem, while the contest runs for the team (portal.Contest's
// CheckEnqueue, on the store's clock). A team with a queued or running job
// gets that job and a *portal.TeamHasJobError; River's unique job decides,
// inside the transaction that adds the row, so two enqueues at once give one
// job and leave no row behind for the other.
//
// The contest's times and the team's extra time are read and checked in
// that transaction too, under a share lock (PostgreSQL; SQLite's immediate
// transaction holds its write lock): an admin moving the end, or pressing
// "end now", commits before the check (which then refuses) or after the
// job is in (which was enqueued in time), never between. A disqualified
// team is refused (CodeConflict). The team's validation job, if any, is no
// active job of its own here: each kind has its own (see Validate).
func (q *Queue) Enqueue(ctx context.Context, teamID int64) (portal.Job, error) {
	return q.enqueue(ctx, teamID, 0, portal.KindNormal, portal.Actor{})
}

// Rerun queues a new job for the team of an errored job, for staff (by),
// and records it in the audit log. It follows Enqueue's rules but the
// timeline's: the team's current target, one active job; it may run after
// the end, replacing a run the infrastructure failed. Only an errored job
// can be run again: a finished one has its verdict.
func (q *Queue) Rerun(ctx context.Context, jobID int64, by portal.Actor) (portal.Job, error) {
	j, err := q.store.Job(ctx, jobID)
	if err != nil {
		return portal.Job{}, err
	}
	if j.State != portal.JobErrored {
		return portal.Job{}, portal.Errorf(portal.CodeConflict, "job %d is %s: only an errored job can be run again", jobID, j.State)
	}
	return q.enqueue(ctx, j.TeamID, j.ID, j.Kind, by)
}

func (q *Queue) enqueue(ctx context.Context, teamID, rerunOf int64, kind portal.JobKind, by portal.Actor) (portal.Job, error) {
	var job portal.Job
	var dup *rivertype.JobRow
	err := q.store.InTx(ctx, func(tx *store.Tx) error {
		c, err := q.contestForEnqueue(ctx, tx)
		if err != nil {
			return err
		}
		team, err := tx.TeamForShare(ctx, teamID)
		if err != nil {
			return err
		}
		if rerunOf == 0 && kind == portal.KindNormal {
			if team.Disqualified {
				return portal.Errorf(portal.CodeConflict, "your team is disqualified (%s): no benchmarks", team.DQReason)
			}
			if err := c.CheckEnqueue(team, tx.Now()); err != nil {
				return err
			}
		}
		if job, dup, err = q.insertTx(ctx, tx, c, team, kind, rerunOf); err != nil || rerunOf == 0 {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditRerun, fmt.Sprintf("job %d", rerunOf),
			map[string]any{"job": rerunOf, "new_job": job.ID, "team": teamID})
	})
	var busy *portal.TeamHasJobError
	switch {
	case errors.Is(err, errDuplicate):
		existing, lerr := q.store.JobByRiverID(ctx, dup.ID)
		if lerr != nil {
			return portal.Job{}, fmt.Errorf("queue: team %d's active River job %d: %w", teamID, dup.ID, lerr)
		}
		return existing, &portal.TeamHasJobError{TeamID: teamID, JobID: existing.ID}
	case errors.As(err, &busy):
		// River let it through but the team's row is still active: River
		// ended its job a moment ago and the settler will end the row.
		existing, lerr := q.store.ActiveJobOf(ctx, teamID, kind)
		if lerr == nil {
			busy.JobID = existing.ID
		}
		return existing, busy
	case err != nil:
		return portal.Job{}, err
	}
	q.cfg.Logger.Info("enqueued", "job", job.ID, "team", teamID, "kind", kind, "river_job", job.RiverJobID)
	return job, nil
}

// contestForEnqueue reads the contest under a share lock (see Enqueue),
// refusing one not set up or whose problem tunecon lacks.
func (q *Queue) contestForEnqueue(ctx context.Context, tx *store.Tx) (portal.Contest, error) {
	c, err := tx.ContestForShare(ctx)
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return c, portal.Errorf(portal.CodeConflict, "the contest is not set up: no benchmarks now")
	} else if err != nil {
		return c, err
	}
	if _, ok := q.cfg.Lookup(c.Problem); !ok {
		return c, portal.Errorf(portal.CodeInvalid, "the contest's problem %q is not one of tunecon's", c.Problem)
	}
	return c, nil
}

// insertTx adds a job of a kind for a team's current target, its row and
// its River job, in tx. With assigned servers the target must be one of
// the team's servers (a *portal.NotTeamServerError otherwise), and in any
// contest one its rules take. River's unique job by team and kind decides:
// a duplicate returns the active River job and errDuplicate.
func (q *Queue) insertTx(ctx context.Context, tx *store.Tx, c portal.Contest, team portal.Team, kind portal.JobKind,
	rerunOf int64) (portal.Job, *rivertype.JobRow, error) {
	if c.Settings.AssignedServers {
		// The target was one of the team's servers when it was picked (or
		// when the job it comes from ran); the organiser may have taken the
		// server from the team since.
		servers, err := tx.TeamServersForShare(ctx, team.ID)
		if err != nil {
			return portal.Job{}, nil, err
		}
		if err := portal.CheckServerTarget(team.Target, servers); err != nil {
			return portal.Job{}, nil, err
		}
	}
	if _, err := portal.CheckTarget(team.Target, c.Settings.Targets()); err != nil {
		return portal.Job{}, nil, err
	}
	timing := c.Timing()
	args := BenchArgs{TeamID: team.ID, Problem: c.Problem, Timing: timingArgsOf(timing), Seed: c.Settings.Seed,
		LocalTargets: c.Settings.LocalTargets, Networks: c.Settings.TargetNetworks}
	if kind == portal.KindValidation {
		args.JobKind = kind
	}
	res, err := q.client.InsertTx(ctx, tx.SQL(), args, &river.InsertOpts{Queue: QueueName(c.Problem), MaxAttempts: c.Settings.Attempts()})
	if err != nil {
		return portal.Job{}, nil, fmt.Errorf("queue: inserting the River job: %w", err)
	}
	if res.UniqueSkippedAsDuplicate {
		return portal.Job{}, res.Job, errDuplicate
	}
	job, err := tx.InsertJob(ctx, store.NewJob{
		TeamID: team.ID, Kind: kind, Problem: c.Problem, Target: team.Target, MaxAttempts: c.Settings.Attempts(),
		Deadline: timing.Deadline(), RiverJobID: res.Job.ID, RerunOf: rerunOf,
	})
	return job, nil, err
}

// Cancel cancels a job for staff. A queued job is cancelled at once; a
// running one is cancelled through River, whose worker stops the benchmark
// and ends the job cancelled (within a second or so), or, if that worker is
// dead, River's rescuer and the settler do. It returns the job as it is now.
//
// by is the staff member, recorded in the audit log with the job's state
// before.
func (q *Queue) Cancel(ctx context.Context, jobID int64, by portal.Actor) (portal.Job, error) {
	var job portal.Job
	err := q.store.InTx(ctx, func(tx *store.Tx) error {
		j, err := tx.Job(ctx, jobID)
		if err != nil {
			return err
		}
		if err := portal.CheckTransition(jobID, j.State, portal.JobCancelled); err != nil {
			return err
		}
		if err := tx.Audit(ctx, by, portal.AuditCancel, fmt.Sprintf("job %d", jobID),
			map[string]any{"job": jobID, "team": j.TeamID, "state": j.State}); err != nil {
			return err
		}
		row, err := q.client.JobCancelTx(ctx, tx.SQL(), j.RiverJobID)
		if err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("queue: cancelling River job %d: %w", j.RiverJobID, err)
		}
		if row != nil && row.State == rivertype.JobStateRunning {
			// The worker ends it when it sees the cancellation.
			job = j
			return nil
		}
		job, err = tx.EndJob(ctx, jobID, 0, portal.Ending{
			State: portal.JobCancelled, ErrorCode: portal.ReasonCancelled, Error: "cancelled by staff",
			Messages: []string{msgCancelled}, StaffLog: "cancelled by staff while queued\n",
		})
		return err
	})
	if err != nil {
		return portal.Job{}, err
	}
	q.cfg.Logger.Info("cancel", "job", jobID, "state", job.State)
	return job, nil
}

// Job reads a job.
func (q *Queue) Job(ctx context.Context, jobID int64) (portal.Job, error) {
	return q.store.Job(ctx, jobID)
}

// TeamJobs lists a team's jobs, the newest first.
func (q *Queue) TeamJobs(ctx context.Context, teamID int64) ([]portal.Job, error) {
	return q.store.TeamJobs(ctx, teamID)
}

// Attempts lists a job's attempts.
func (q *Queue) Attempts(ctx context.Context, jobID int64) ([]portal.Attempt, error) {
	return q.store.JobAttempts(ctx, jobID)
}

// Position is a queued job's place in the queue (1: next to run); 0 for a
// job not waiting.
func (q *Queue) Position(ctx context.Context, jobID int64) (int, error) {
	j, err := q.store.Job(ctx, jobID)
	if err != nil || j.State != portal.JobQueued {
		return 0, err
	}
	return q.store.Position(ctx, j.RiverJobID)
}

// Workers lists the workers with their heartbeats.
func (q *Queue) Workers(ctx context.Context) ([]portal.Worker, error) { return q.store.Workers(ctx) }

// doing says what this worker does now, for its heartbeat.
func (q *Queue) doing() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var s string
	if q.paused.Load() {
		s = "quarantined: takes no job"
	}
	if len(q.running) == 0 {
		if s == "" {
			return "idle"
		}
		return s
	}
	for _, id := range slices.Sorted(maps.Keys(q.running)) {
		if s != "" {
			s += "; "
		}
		s += q.running[id].describe()
	}
	return s
}
