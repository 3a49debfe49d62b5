package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit"
)

// Messages for the contestant when a job does not end with a verdict.
const (
	msgCancelled = "Staff cancelled this job."
	msgInfra     = "The benchmarker had a fault of its own, not your app's: this run does not count. Staff can run it again."
	msgLost      = "The benchmark worker running this job stopped, on every attempt: this run does not count. Staff can run it again."
)

// BenchArgs are a bench job's arguments in River. The team is the unique
// key, so a team has at most one job in River's active states; the job's
// row is found by its River job id. The timing travels with the job so that
// every process computes the same deadline for it (the rescuer on the leader
// too), whatever the contest's settings become later.
type BenchArgs struct {
	TeamID  int64      `json:"team_id" river:"unique"`
	Problem string     `json:"problem"`
	Timing  TimingArgs `json:"timing"`
	Seed    uint64     `json:"seed,omitempty"`
	// LocalTargets lets the run connect to the worker's own machine or
	// link (portal.Settings.LocalTargets); otherwise a portal.DialGuard
	// refuses.
	LocalTargets bool `json:"local_targets,omitempty"`
	// Networks are the contest's target networks (Settings.TargetNetworks)
	// when the job was queued: outside them a portal.DialGuard refuses.
	Networks []netip.Prefix `json:"networks,omitempty"`
	// Kind is portal.KindValidation for a validation job, empty for a
	// team's own: part of the unique key, so a team has one active job of
	// each kind (a team's own jobs keep the key they always had).
	JobKind portal.JobKind `json:"kind,omitempty" river:"unique"`
}

// Kind is "bench".
func (BenchArgs) Kind() string { return Kind }

// InsertOpts make a bench job unique by team while it is active: River's
// partial unique index refuses a second one whatever the process and
// however close in time, and an insert of a duplicate returns the existing
// job instead.
func (BenchArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// TimingArgs is a portal.Timing in milliseconds.
type TimingArgs struct {
	InitializeMS int64 `json:"initialize_ms"`
	PreCheckMS   int64 `json:"pre_check_ms"`
	LoadMS       int64 `json:"load_ms"`
	FinalCheckMS int64 `json:"final_check_ms"`
	GraceMS      int64 `json:"grace_ms"`
	SlackMS      int64 `json:"slack_ms"`
	// WrapUpMS is 0 (the default wrap-up) in jobs queued before it existed.
	WrapUpMS int64 `json:"wrap_up_ms,omitempty"`
}

func timingArgsOf(t portal.Timing) TimingArgs {
	return TimingArgs{
		InitializeMS: t.Initialize.Milliseconds(), PreCheckMS: t.PreCheck.Milliseconds(), LoadMS: t.Load.Milliseconds(),
		FinalCheckMS: t.FinalCheck.Milliseconds(), GraceMS: t.Grace.Milliseconds(), SlackMS: t.Slack.Milliseconds(),
		WrapUpMS: t.WrapUp.Milliseconds(),
	}
}

// Timing is the portal.Timing, defaults filled in.
func (a TimingArgs) Timing() portal.Timing {
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	return portal.Timing{
		Initialize: ms(a.InitializeMS), PreCheck: ms(a.PreCheckMS), Load: ms(a.LoadMS),
		FinalCheck: ms(a.FinalCheckMS), Grace: ms(a.GraceMS), Slack: ms(a.SlackMS), WrapUp: ms(a.WrapUpMS),
	}.WithDefaults()
}

// benchWorker is River's worker of kind "bench".
type benchWorker struct {
	river.WorkerDefaults[BenchArgs]
	q *Queue
}

var _ river.Worker[BenchArgs] = (*benchWorker)(nil)

// Timeout is the job's hard deadline plus its wrap-up (portal.Timing's
// Timeout, from the job's own arguments): River cancels the attempt's context
// then, and its rescuer leaves a running attempt alone until then.
func (w *benchWorker) Timeout(j *river.Job[BenchArgs]) time.Duration {
	return j.Args.Timing.Timing().Timeout()
}

// Work runs one attempt at a job.
func (w *benchWorker) Work(ctx context.Context, j *river.Job[BenchArgs]) error {
	return w.q.work(ctx, j)
}

// errDeadline is the cause of a benchmark's context ending at the job's
// deadline.
var errDeadline = errors.New("the job's deadline passed")

// outcome is how an attempt ended.
type outcome struct {
	ending portal.Ending
	// internal: the benchmarker's fault (counted against the worker).
	internal bool
	// requeue: the worker is stopping; the job goes back to the queue.
	requeue bool
	detail  string
}

func errored(reason, detail, message string) outcome {
	return outcome{ending: portal.Ending{State: portal.JobErrored, ErrorCode: reason, Error: detail, Messages: []string{message}},
		internal: reason != portal.ReasonCannotRun}
}

// work is an attempt: take the row, run the benchmark, write the outcome.
// Every database write uses a context River's cancellation does not end, so
// that a cancelled or timed-out attempt still records how it ended.
func (q *Queue) work(ctx context.Context, rj *river.Job[BenchArgs]) error {
	defer q.wrote()
	log := q.cfg.Logger.With("river_job", rj.ID, "worker", q.cfg.Worker)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rj.Args.Timing.Timing().Timeout())
	defer cancel()
	job, err := q.begin(wctx, rj)
	q.wrote()
	if err != nil {
		return q.notBegun(log, err)
	}
	attempt := job.Attempts
	log = log.With("job", job.ID, "team", job.TeamID, "attempt", attempt)
	log.Info("attempt started", "problem", job.Problem, "target", job.Target)
	staff := &capped{max: store.MaxStaffLog}
	fmt.Fprintf(staff, "=== attempt %d on worker %s (River job %d, River attempt %d of %d)\n",
		attempt, q.cfg.Worker, rj.ID, rj.Attempt, rj.MaxAttempts)

	out := q.runPumped(ctx, wctx, rj, job, attempt, staff)
	if out.detail != "" {
		fmt.Fprintf(staff, "=== %s\n", out.detail)
	}
	if out.requeue {
		return q.requeue(wctx, log, job.ID, attempt, staff, out)
	}
	out.ending.StaffLog = staff.String()
	return q.end(wctx, log, rj, job.ID, attempt, out)
}

// begin takes a job's row for an attempt, in one transaction: it refuses
// (errQuarantined) while the worker is quarantined, and (errTeamBusy) while
// another job of the team runs.
func (q *Queue) begin(wctx context.Context, rj *river.Job[BenchArgs]) (portal.Job, error) {
	var job portal.Job
	err := q.store.InTx(wctx, func(tx *store.Tx) error {
		// A quarantined worker runs nothing: a job it claimed in the
		// moment before its queues were removed goes back untouched.
		if quarantined, err := tx.WorkerQuarantined(wctx, q.cfg.Worker); err != nil {
			return err
		} else if quarantined {
			return errQuarantined
		}
		j, err := tx.JobByRiverID(wctx, rj.ID)
		if err != nil {
			return err
		}
		// One benchmark at a time against a team's target: its validation
		// job waits while its own job runs, and the other way round.
		if err := tx.LockTeam(wctx, j.TeamID); err != nil {
			return err
		}
		if busy, err := tx.TeamRunning(wctx, j.TeamID, j.ID); err != nil {
			return err
		} else if busy && j.State == portal.JobQueued {
			return errTeamBusy
		}
		job, err = tx.BeginAttempt(wctx, j.ID, q.cfg.Worker)
		return err
	})
	return job, err
}

// notBegun is what work returns to River when begin refused or failed
// (err is not nil): the job goes back to the queue, or ends as it is.
func (q *Queue) notBegun(log *slog.Logger, err error) error {
	switch {
	case errors.Is(err, errQuarantined):
		log.Warn("quarantined: the job goes back to the queue")
		q.kickQuarantine()
		return river.JobSnooze(0)
	case errors.Is(err, errTeamBusy):
		log.Info("the team has another job running: this one waits", "wait", q.cfg.TeamWait)
		return river.JobSnooze(q.cfg.TeamWait)
	}
	if code := portal.ErrorCode(err); code == portal.CodeConflict || code == portal.CodeNotFound {
		// The job ended while River still had it: nothing to run.
		log.Warn("no job to run", "error", err)
		return nil
	}
	return err // a database fault: River tries again
}

// runPumped runs the benchmark with a pump that carries its progress to
// the job's row, listed in q.running for the worker's heartbeat meanwhile.
func (q *Queue) runPumped(ctx, wctx context.Context, rj *river.Job[BenchArgs], job portal.Job, attempt int,
	staff *capped) outcome {
	p := newPump(q, job, attempt)
	q.mu.Lock()
	q.running[job.ID] = p
	q.mu.Unlock()
	go p.loop(wctx)
	out := q.run(ctx, rj, job, staff, p)
	p.close()
	q.mu.Lock()
	delete(q.running, job.ID)
	q.mu.Unlock()
	return out
}

// requeue puts the job of an interrupted attempt back in the queue: at
// once, without using up an attempt.
func (q *Queue) requeue(wctx context.Context, log *slog.Logger, jobID int64, attempt int, staff *capped,
	out outcome) error {
	err := q.store.InTx(wctx, func(tx *store.Tx) error {
		return tx.RequeueJob(wctx, jobID, attempt, portal.ReasonInterrupted, out.detail, staff.String())
	})
	if err != nil {
		log.Error("requeueing an interrupted job", "error", err)
	} else {
		log.Info("attempt interrupted: the job is queued again", "state", portal.JobQueued, "reason", portal.ReasonInterrupted)
	}
	// Back to the queue at once, without using up an attempt.
	return river.JobSnooze(0)
}

// end writes an attempt's outcome (see endTx) and says what River is to do
// with its job.
func (q *Queue) end(wctx context.Context, log *slog.Logger, rj *river.Job[BenchArgs], jobID int64, attempt int,
	out outcome) error {
	quarantined, err := q.endTx(wctx, rj, jobID, attempt, out)
	switch {
	case err == nil:
		log.Info("attempt ended", "state", out.ending.State, "verdict", out.ending.Verdict, "score", out.ending.Score,
			"reason", out.ending.ErrorCode)
		if quarantined {
			log.Warn("quarantined: too many of this worker's jobs errored through the benchmarker's fault; it takes no job until staff clear it")
			q.kickQuarantine()
		}
		return nil
	case errors.Is(err, rivertype.ErrNotFound), portal.ErrorCode(err) == portal.CodeConflict:
		// River rescued the attempt meanwhile: the next attempt decides.
		log.Warn("outcome dropped: the attempt was rescued", "error", err)
		return nil
	}
	return err
}

// endTx ends the job's row with the outcome, counts the job for the worker
// (quarantining it when the outcome was the benchmarker's fault once too
// often: quarantined) and completes River's job, in one transaction.
func (q *Queue) endTx(wctx context.Context, rj *river.Job[BenchArgs], jobID int64, attempt int,
	out outcome) (quarantined bool, err error) {
	err = q.store.InTx(wctx, func(tx *store.Tx) error {
		quarantined = false
		if _, err := tx.EndJob(wctx, jobID, attempt, out.ending); err != nil {
			return err
		}
		if err := tx.CountJob(wctx, q.cfg.Worker, out.internal); err != nil {
			return err
		}
		if out.internal {
			var err error
			if quarantined, err = tx.QuarantineIfFaulty(wctx, q.cfg.Worker); err != nil {
				return err
			}
		}
		// River's job completes with the row: no moment when the row has
		// ended but River still holds the team's unique slot.
		_, err := river.JobCompleteTx[riverdriver.Driver[*sql.Tx]](wctx, tx.SQL(), rj)
		return err
	})
	return quarantined, err
}

// wrote calls the test hook Config.onWrite, if any.
func (q *Queue) wrote() {
	if q.cfg.onWrite != nil {
		q.cfg.onWrite()
	}
}

// benchReturn is what the runner returned.
type benchReturn struct {
	res *engine.Result
	err error
}

// run runs the benchmark under the job's deadline and classifies how it
// ended.
func (q *Queue) run(ctx context.Context, rj *river.Job[BenchArgs], job portal.Job, staff *capped, p *pump) outcome {
	prob, ok := q.problems[job.Problem]
	if !ok {
		return errored(portal.ReasonCannotRun, fmt.Sprintf("worker %s cannot run problem %q", q.cfg.Worker, job.Problem), msgInfra)
	}
	target, err := portal.CheckTarget(job.Target, portal.TargetRules{Local: rj.Args.LocalTargets, Networks: rj.Args.Networks})
	if err != nil {
		return errored(portal.ReasonBenchError, err.Error(), msgInfra)
	}
	timing := rj.Args.Timing.Timing()
	deadline := timing.Deadline()
	bctx, cancel := context.WithTimeoutCause(ctx, deadline, errDeadline)
	defer cancel()
	opts := append(timing.Options(), engine.WithStaffLog(staff), engine.WithProgress(q.cfg.ProgressEvery, p.report))
	if rj.Args.Seed != 0 {
		opts = append(opts, engine.WithSeed(rj.Args.Seed))
	}
	if !rj.Args.LocalTargets {
		// The worker's addresses are read for each job: a machine's may
		// change during a contest.
		own, err := q.cfg.OwnAddresses()
		if err != nil {
			return errored(portal.ReasonBenchError, fmt.Sprintf("worker %s cannot read its own addresses: %v", q.cfg.Worker, err), msgInfra)
		}
		opts = append(opts, engine.WithDialControl(portal.NewDialGuard(own, rj.Args.Networks).Control))
	}
	// A hung run is waited for at most half the job's wrap-up: the rest is
	// for writing the outcome before the job may be rescued.
	abandon := min(q.cfg.AbandonAfter, timing.WrapUp/2)
	br, abandoned := q.bench(bctx, abandon, prob, target, opts)
	return classify(ctx, bctx, br, abandoned, deadline, abandon)
}

// bench runs the benchmark on a goroutine of its own and waits for it to
// return, once bctx has ended at most abandon longer: abandoned says it did
// not return by then.
func (q *Queue) bench(bctx context.Context, abandon time.Duration, prob kit.Problem, target *url.URL,
	opts []engine.Option) (br benchReturn, abandoned bool) {
	done := make(chan benchReturn, 1)
	go func() {
		res, err := q.cfg.Runner.Bench(bctx, prob, target, opts...)
		done <- benchReturn{res, err}
	}()
	select {
	case br = <-done:
	case <-bctx.Done():
		t := time.NewTimer(abandon)
		select {
		case br = <-done:
		case <-t.C:
			abandoned = true
		}
		t.Stop()
	}
	return br, abandoned
}

// classify says how a run ended: ctx is the attempt's (River's
// cancellation, the worker's stop), bctx the run's (the job's deadline).
func classify(ctx, bctx context.Context, br benchReturn, abandoned bool, deadline, abandon time.Duration) outcome {
	var result json.RawMessage
	if br.res != nil {
		result, _ = json.Marshal(br.res)
	}
	switch {
	case errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely):
		return outcome{ending: portal.Ending{State: portal.JobCancelled, ErrorCode: portal.ReasonCancelled,
			Error: "cancelled by staff while running", Messages: []string{msgCancelled}, Result: result}}
	case ctx.Err() != nil && !errors.Is(context.Cause(bctx), errDeadline):
		return outcome{requeue: true, detail: fmt.Sprintf("interrupted: the worker is stopping (%v)", context.Cause(ctx))}
	case bctx.Err() != nil || abandoned:
		detail := fmt.Sprintf("the benchmark was still running at the job's %s deadline", deadline)
		if abandoned {
			detail += fmt.Sprintf(" and did not return %s later: abandoned", abandon)
		}
		o := errored(portal.ReasonDeadline, detail, msgInfra)
		o.ending.Result, o.detail = result, detail
		return o
	case br.err != nil:
		o := errored(portal.ReasonBenchError, "the benchmark could not run: "+br.err.Error(), msgInfra)
		o.detail = o.ending.Error
		return o
	case br.res.Outcome() == engine.Internal:
		o := errored(portal.ReasonInternal, internalDetail(br.res), msgInfra)
		o.ending.Result, o.detail = result, o.ending.Error
		return o
	}
	return finished(br.res, result)
}

// finished is the outcome of a run that gave a verdict: the contestant's.
func finished(res *engine.Result, result json.RawMessage) outcome {
	verdict := portal.VerdictPassed
	if res.Outcome() == engine.Failed {
		verdict = portal.VerdictFailed
	}
	var messages []string
	for _, why := range res.FailReasons {
		messages = append(messages, "Failed: "+why)
	}
	messages = append(messages, res.Messages...)
	return outcome{ending: portal.Ending{State: portal.JobFinished, Verdict: verdict, Score: res.Score,
		Result: result, Messages: messages}, detail: fmt.Sprintf("finished: %s, score %.1f", verdict, res.Score)}
}

// internalDetail says where a result's internal errors were.
func internalDetail(res *engine.Result) string {
	var phases []string
	for _, ph := range res.Phases {
		if ph.Error != "" {
			phases = append(phases, ph.Name+": "+ph.Error)
		}
	}
	s := fmt.Sprintf("the engine reported a fault of its own (%d internal errors)", res.Errors.Internal)
	if len(phases) > 0 {
		s += "; " + strings.Join(phases, "; ")
	}
	return s
}

// pump carries a running job's progress from the engine to the job's row:
// the engine's callback only keeps the latest, a goroutine of the pump's
// writes it, so a slow database never holds the engine up.
type pump struct {
	q       *Queue
	job     portal.Job
	attempt int
	kick    chan struct{}
	done    chan struct{}
	ended   chan struct{}

	mu     sync.Mutex
	latest engine.Progress
	seen   bool
}

func newPump(q *Queue, job portal.Job, attempt int) *pump {
	return &pump{q: q, job: job, attempt: attempt, kick: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{})}
}

// report is the engine's progress callback.
func (p *pump) report(pr engine.Progress) {
	p.mu.Lock()
	p.latest, p.seen = pr, true
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *pump) loop(ctx context.Context) {
	defer close(p.ended)
	for {
		select {
		case <-p.kick:
			p.write(ctx)
		case <-p.done:
			p.write(ctx)
			return
		}
	}
}

// close writes the last progress and stops the pump.
func (p *pump) close() {
	close(p.done)
	<-p.ended
}

func (p *pump) write(ctx context.Context) {
	p.mu.Lock()
	pr, seen := p.latest, p.seen
	p.mu.Unlock()
	if !seen {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, store.BusyTimeout)
	defer cancel()
	_, err := p.q.store.UpdateProgress(ctx, p.job.ID, p.attempt, portal.Progress{
		Phase: pr.Phase, Score: pr.Score, Requests: pr.Requests, Errors: pr.Errors, Users: pr.Users,
	})
	if err != nil {
		p.q.cfg.Logger.Warn("progress", "job", p.job.ID, "error", err)
	}
	p.q.wrote()
}

// describe says what the job is doing, for the worker's heartbeat.
func (p *pump) describe() string {
	p.mu.Lock()
	pr, seen := p.latest, p.seen
	p.mu.Unlock()
	s := fmt.Sprintf("job %d (team %d, attempt %d)", p.job.ID, p.job.TeamID, p.attempt)
	if seen {
		s += fmt.Sprintf(": %s %.0fs, score %.1f, %d users", pr.Phase, pr.Elapsed.Seconds(), pr.Score, pr.Users)
	}
	return s
}

// capped is a staff log buffer that keeps the first max bytes; the engine
// writes it from several goroutines.
type capped struct {
	mu  sync.Mutex
	max int
	b   strings.Builder
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); len(p) > room {
		c.b.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	c.b.Write(p)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return c.b.String() + "\n[staff log cut]\n"
	}
	return c.b.String()
}

// InterfaceAddrs are the addresses of this machine's network interfaces.
func InterfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	own := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			own = append(own, p.Addr())
		}
	}
	return own, nil
}
