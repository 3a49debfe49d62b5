package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems/example"
)

// contest is the example problem with a short run: every phase of the
// example takes well under a second against its in-process app, the load
// takes load.
func contest(load time.Duration) portal.Contest {
	return portal.Contest{Problem: example.Name, LoadDuration: load, Settings: portal.Settings{
		InitializeTimeout: 2 * time.Second, PreCheckTimeout: 3 * time.Second, FinalCheckTimeout: 2 * time.Second,
		Grace: 500 * time.Millisecond, Slack: 2 * time.Second, LocalTargets: true,
	}}
}

// env is one contest database in a temporary directory; each queue opens a
// store of its own on it, as a process of its own would.
type env struct {
	t   *testing.T
	dsn string
	// portal only enqueues, cancels and reads: its benchmarks run in the
	// workers the test starts.
	portal *queue.Queue
	store  *store.Store
	// writes wakes the test's waits at each write of a worker the test
	// started (see queue.Writes).
	writes *queue.Writes
}

func newEnv(t *testing.T, c portal.Contest) *env {
	t.Helper()
	return newEnvAt(t, systems.MigratedSQLite(t), c)
}

// newEnvAt is newEnv on the database at dsn, empty or migrated.
func newEnvAt(t *testing.T, dsn string, c portal.Contest) *env {
	t.Helper()
	e := &env{t: t, dsn: dsn, writes: queue.NewWrites()}
	e.store = e.open()
	if _, err := e.store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetContest(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	e.portal = e.start(e.store, queue.Config{SettleEvery: 200 * time.Millisecond})
	return e
}

func (e *env) open() *store.Store {
	e.t.Helper()
	s, err := store.Open(context.Background(), e.dsn, store.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

func (e *env) start(s *store.Store, cfg queue.Config) *queue.Queue {
	e.t.Helper()
	q, err := queue.New(s, queue.WithOnWrite(cfg, e.writes.Wrote))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			e.t.Errorf("stopping: %v", err)
		}
	})
	return q
}

// worker starts a worker queue for the example problem on a store of its own.
func (e *env) worker(name string, cfg queue.Config) *queue.Queue {
	e.t.Helper()
	cfg.Worker, cfg.Problems = name, []string{example.Name}
	if cfg.HeartbeatEvery == 0 {
		cfg.HeartbeatEvery = 200 * time.Millisecond
	}
	return e.start(e.open(), cfg)
}

func (e *env) team(name, target string) portal.Team {
	e.t.Helper()
	t, err := e.store.CreateTeam(context.Background(), name, target)
	if err != nil {
		e.t.Fatal(err)
	}
	return t
}

func (e *env) enqueue(teamID int64) portal.Job {
	e.t.Helper()
	j, err := e.portal.Enqueue(context.Background(), teamID)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// until waits until ok says so, asking it at once and after each write of
// the test's workers, and fails the test if the timeout passes first.
func (e *env) until(timeout time.Duration, what string, ok func() bool) {
	e.t.Helper()
	if !e.writes.Until(timeout, ok) {
		e.t.Fatalf("not %s after %s", what, timeout)
	}
}

// job reads a job.
func (e *env) job(id int64) portal.Job {
	e.t.Helper()
	j, err := e.portal.Job(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// wait reads a job at once and after each write of the test's workers until
// ok says so, and fails the test if the timeout passes first.
func (e *env) wait(id int64, timeout time.Duration, what string, ok func(portal.Job) bool) portal.Job {
	e.t.Helper()
	var j portal.Job
	if !e.writes.Until(timeout, func() bool { j = e.job(id); return ok(j) }) {
		e.t.Fatalf("job %d not %s after %s: %+v", id, what, timeout, j)
	}
	return j
}

func (e *env) waitFinal(id int64, timeout time.Duration) portal.Job {
	e.t.Helper()
	return e.wait(id, timeout, "final", func(j portal.Job) bool { return j.State.Final() })
}

// TestTeamsFinishWithTheirVerdicts runs on each database system
// (storetest): the whole pipeline, River's driver included.
func TestTeamsFinishWithTheirVerdicts(t *testing.T) { systems.Run(t, testTeamsFinishWithTheirVerdicts) }

func testTeamsFinishWithTheirVerdicts(t *testing.T, db storetest.System) {
	ctx := context.Background()
	c := contest(2 * time.Second)
	e := newEnvAt(t, db.NewDSN(t), c)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "oops", http.StatusInternalServerError)
	}))
	defer broken.Close()
	var jobs []portal.Job
	want := map[int64]portal.Verdict{}
	for i := range 5 {
		target, verdict := apptest.ServeInProcess(t, example.Problem), portal.VerdictPassed
		if i == 3 {
			target, verdict = broken.URL+"/", portal.VerdictFailed
		}
		team := e.team(fmt.Sprintf("team-%d", i), target)
		j := e.enqueue(team.ID)
		jobs = append(jobs, j)
		want[j.ID] = verdict
		if j.State != portal.JobQueued || j.Target != target || j.Deadline != c.Timing().Deadline() || j.MaxAttempts != portal.DefaultMaxAttempts {
			t.Errorf("new job %+v", j)
		}
	}
	// First come, first served: the queue is in the order of enqueueing.
	for i, j := range jobs {
		if pos, err := e.portal.Position(ctx, j.ID); err != nil || pos != i+1 {
			t.Errorf("job %d: position %d, %v; want %d", j.ID, pos, err, i+1)
		}
	}
	e.worker("w1", queue.Config{Concurrency: 3})
	e.worker("w2", queue.Config{Concurrency: 3})
	done := 0
	for _, j := range jobs {
		got := e.waitFinal(j.ID, 30*time.Second)
		if got.State != portal.JobFinished || got.Verdict != want[j.ID] || got.Attempts != 1 || got.ErrorCode != "" {
			t.Errorf("job %d: %s %s attempts %d %s %s; want finished %s", j.ID, got.State, got.Verdict, got.Attempts, got.ErrorCode, got.Error, want[j.ID])
			continue
		}
		var res engine.Result
		if err := json.Unmarshal(got.Result, &res); err != nil || res.Problem != example.Name || res.Score != got.Score {
			t.Errorf("job %d: result %v (%v), score %v", j.ID, res.Problem, err, got.Score)
		}
		if want[j.ID] == portal.VerdictPassed && len(res.Phases) != 4 {
			t.Errorf("job %d: phases %+v", j.ID, res.Phases)
		}
		if want[j.ID] == portal.VerdictPassed && (got.Score <= 0 || got.Progress.Requests == 0 || got.Progress.Phase != "done") {
			t.Errorf("job %d: score %v, last progress %+v", j.ID, got.Score, got.Progress)
		}
		t.Logf("job %d on %s: %s %s, score %.1f, messages %q", j.ID, got.Worker, got.State, got.Verdict, got.Score, got.Messages)
		if want[j.ID] == portal.VerdictFailed && len(got.Messages) == 0 {
			t.Errorf("job %d failed without a message for the contestant", j.ID)
		}
		if !strings.Contains(got.StaffLog, "=== attempt 1 on worker "+got.Worker) || !strings.Contains(got.StaffLog, "=== finished: "+string(want[j.ID])) ||
			want[j.ID] == portal.VerdictPassed && !strings.Contains(got.StaffLog, "load: ") {
			t.Errorf("job %d: staff log %q", j.ID, got.StaffLog)
		}
		if got.StartedAt.IsZero() || got.FinishedAt.Before(got.StartedAt) || got.StartedAt.Before(got.CreatedAt) {
			t.Errorf("job %d: times %v %v %v", j.ID, got.CreatedAt, got.StartedAt, got.FinishedAt)
		}
		if pos, _ := e.portal.Position(ctx, j.ID); pos != 0 {
			t.Errorf("a finished job has position %d", pos)
		}
		attempts, err := e.portal.Attempts(ctx, j.ID)
		if err != nil || len(attempts) != 1 || attempts[0].Outcome != string(portal.JobFinished) || attempts[0].Worker != got.Worker {
			t.Errorf("job %d: attempts %+v, %v", j.ID, attempts, err)
		}
		done++
	}
	workers, err := e.portal.Workers(ctx)
	if err != nil || len(workers) != 2 {
		t.Fatalf("workers %+v, %v", workers, err)
	}
	var total int64
	for _, w := range workers {
		total += w.JobsDone
		if w.InternalErrors != 0 || len(w.Problems) != 1 || w.Problems[0] != example.Name {
			t.Errorf("worker %+v", w)
		}
	}
	if total != int64(done) {
		t.Errorf("workers counted %d jobs, %d ended", total, done)
	}
	// A team's slot is free again once its job ended.
	j, err := e.portal.Enqueue(ctx, jobs[0].TeamID)
	if err != nil || j.State != portal.JobQueued {
		t.Errorf("enqueue after the end: %+v, %v", j, err)
	}
	if _, err := e.portal.Cancel(ctx, j.ID, portal.Actor{}); err != nil {
		t.Error(err)
	}
}

// TestProgressReachesTheRow reads a running job's row after each write of
// its worker's: its progress is never more than a second old, and the
// worker's heartbeat says which job it runs.
func TestProgressReachesTheRow(t *testing.T) {
	ctx := context.Background()
	c := contest(3 * time.Second)
	e := newEnv(t, c)
	team := e.team("alpha", apptest.ServeInProcess(t, example.Problem))
	j := e.enqueue(team.ID)
	e.worker("w1", queue.Config{})
	e.wait(j.ID, 10*time.Second, "reporting progress", func(j portal.Job) bool { return !j.Progress.UpdatedAt.IsZero() })
	// The worker's writes are its progress (every half second) and its
	// heartbeats (every 200 ms, whatever the progress does): a progress
	// that stopped would be seen getting old. updates counts the progress
	// writes seen; each comes within a second of the one before.
	var samples, updates, stale int
	var last portal.Job
	sawDoing := false
	sample := func() bool {
		got := e.job(j.ID)
		if got.State != portal.JobRunning {
			return true
		}
		samples++
		if at, before := got.Progress.UpdatedAt, last.Progress.UpdatedAt; !at.Equal(before) {
			updates++
			if gap := at.Sub(before); !before.IsZero() && gap > time.Second {
				stale++
				t.Logf("progress written %s after the one before, in phase %s", gap, got.Progress.Phase)
			}
		}
		if age := time.Since(got.Progress.UpdatedAt); age > time.Second {
			stale++
			t.Logf("progress %s old in phase %s", age, got.Progress.Phase)
		}
		if got.Progress.Requests < last.Progress.Requests {
			t.Errorf("requests went down: %d -> %d", last.Progress.Requests, got.Progress.Requests)
		}
		last = got
		if ws, _ := e.portal.Workers(ctx); len(ws) == 1 && strings.Contains(ws[0].Doing, fmt.Sprintf("job %d (team %d", j.ID, team.ID)) {
			sawDoing = true
		}
		return false
	}
	e.until(c.Timing().Deadline(), "done running", sample)
	t.Logf("%d samples, %d progress writes while running", samples, updates)
	if updates < 4 || stale > 0 {
		t.Errorf("%d progress writes seen while running, %d over a second apart or old", updates, stale)
	}
	if last.Progress.Requests == 0 || last.Progress.Users == 0 || last.Progress.Phase == "" {
		t.Errorf("the last progress seen while running: %+v", last.Progress)
	}
	if !sawDoing {
		t.Error("the worker's heartbeat never named the job")
	}
	got := e.waitFinal(j.ID, 10*time.Second)
	if got.State != portal.JobFinished || got.Verdict != portal.VerdictPassed {
		t.Errorf("job %+v", got)
	}
	e.until(5*time.Second, "an idle worker", func() bool {
		ws, _ := e.portal.Workers(ctx)
		return len(ws) == 1 && ws[0].Doing == "idle"
	})
	if ws, _ := e.portal.Workers(ctx); len(ws) != 1 || ws[0].Doing != "idle" || time.Since(ws[0].HeartbeatAt) > time.Second {
		t.Errorf("an idle worker: %+v", ws)
	}
}

// TestTargetThatNeverAnswers: a target that accepts connections and never
// answers is the contestant's fault. The engine's phase deadlines fail the
// run, so the job ends finished and failed, well before its own deadline.
func TestTargetThatNeverAnswers(t *testing.T) {
	c := contest(2 * time.Second)
	c.Settings.InitializeTimeout = time.Second
	e := newEnv(t, c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	team := e.team("silent", "http://"+ln.Addr().String()+"/")
	j := e.enqueue(team.ID)
	e.worker("w1", queue.Config{})
	start := time.Now()
	got := e.waitFinal(j.ID, c.Timing().Deadline()+5*time.Second)
	took := time.Since(start)
	if got.State != portal.JobFinished || got.Verdict != portal.VerdictFailed {
		t.Errorf("job %s %s %s %s, want finished and failed", got.State, got.Verdict, got.ErrorCode, got.Error)
	}
	if took > c.Timing().Deadline() {
		t.Errorf("the job took %s, past its deadline %s", took, c.Timing().Deadline())
	}
	var res engine.Result
	if err := json.Unmarshal(got.Result, &res); err != nil || res.Phases[0].Name != engine.PhaseInitialize || res.Phases[0].Passed {
		t.Errorf("result phases %+v, %v", res.Phases, err)
	}
}

// fakeRunner answers by the target's host: "pass", "internal", "broken"
// (kit.Bench's error), "hang" (ignores its context until the test ends),
// "held" (passes once the test sends on gate).
type fakeRunner struct {
	release chan struct{}
	gate    chan struct{}
	mu      sync.Mutex
	calls   map[string]int
}

func (f *fakeRunner) Bench(ctx context.Context, p kit.Problem, target *url.URL, opts ...engine.Option) (*engine.Result, error) {
	f.mu.Lock()
	f.calls[target.Hostname()]++
	f.mu.Unlock()
	switch target.Hostname() {
	case "internal":
		return &engine.Result{Problem: p.Name, Internal: true, Errors: engine.ErrorCounts{Internal: 1},
			Phases: []engine.PhaseResult{{Name: engine.PhaseLoad, Error: "benchmarker error: out of sockets"}}}, nil
	case "broken":
		return nil, errors.New("preparing the scenario: no data")
	case "hang":
		<-f.release
		return nil, ctx.Err()
	case "held":
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &engine.Result{Problem: p.Name, Passed: true, Score: 12}, nil
}

// TestInfrastructureFaultsError: the benchmarker's faults end jobs errored,
// never failed, count against the worker (the third quarantines it until
// staff clear it), and staff can run them again.
func TestInfrastructureFaultsError(t *testing.T) {
	ctx := context.Background()
	// A tiny budget: the hung run's deadline is 1.4 s.
	c := portal.Contest{Problem: example.Name, LoadDuration: 200 * time.Millisecond, Settings: portal.Settings{
		InitializeTimeout: 200 * time.Millisecond, PreCheckTimeout: 200 * time.Millisecond, FinalCheckTimeout: 200 * time.Millisecond,
		Grace: 100 * time.Millisecond, Slack: 200 * time.Millisecond, LocalTargets: true,
	}}
	if d := c.Timing().Deadline(); d != 1400*time.Millisecond {
		t.Fatalf("deadline %s", d)
	}
	e := newEnv(t, c)
	runner := &fakeRunner{release: make(chan struct{}), gate: make(chan struct{}), calls: map[string]int{}}
	t.Cleanup(func() { close(runner.release) })
	e.worker("w1", queue.Config{Runner: runner, Concurrency: 3, AbandonAfter: 300 * time.Millisecond})
	cases := []struct {
		host, reason string
	}{
		{"internal", portal.ReasonInternal},
		{"broken", portal.ReasonBenchError},
		{"hang", portal.ReasonDeadline},
	}
	for i, tc := range cases {
		team := e.team(tc.host, "http://"+tc.host+"/")
		j := e.enqueue(team.ID)
		start := time.Now()
		got := e.waitFinal(j.ID, 10*time.Second)
		if got.State != portal.JobErrored || got.ErrorCode != tc.reason || got.Verdict != "" || len(got.Messages) != 1 {
			t.Errorf("%s: %s %q %s (%s) %q", tc.host, got.State, got.Verdict, got.ErrorCode, got.Error, got.Messages)
		}
		if tc.host == "hang" {
			if took := time.Since(start); took < c.Timing().Deadline() || took > c.Timing().Deadline()+3*time.Second {
				t.Errorf("the hung job ended after %s; its deadline is %s", took, c.Timing().Deadline())
			}
			if !strings.Contains(got.StaffLog, "abandoned") {
				t.Errorf("staff log %q", got.StaffLog)
			}
		}
		// Each fault counts against the worker: the third of its last jobs
		// quarantines it (portal.QuarantineErrors; see
		// TestQuarantinedWorkerTakesNoJob), and staff clear it so that it
		// runs the rerun below.
		if quarantined, third := workerNamed(t, e.store, "w1").Quarantined(), i+1 == portal.QuarantineErrors; quarantined != third {
			t.Fatalf("after the %s fault: quarantined %v", tc.host, quarantined)
		} else if third {
			if err := e.store.ClearQuarantine(ctx, root, "w1"); err != nil {
				t.Fatal(err)
			}
		}
		// Staff run it again; the team's target now passes, once the test
		// lets it (the rerun must still be the team's job below).
		if err := e.store.SetTarget(ctx, team.ID, "http://held/", ""); err != nil {
			t.Fatal(err)
		}
		again, err := e.portal.Rerun(ctx, j.ID, portal.Actor{})
		if err != nil || again.RerunOf != j.ID || again.ID == j.ID || again.Target != "http://held/" {
			t.Fatalf("rerun of %d: %+v, %v", j.ID, again, err)
		}
		// The errored job can be rerun only while the team has no other job.
		if _, err := e.portal.Rerun(ctx, j.ID, portal.Actor{}); err == nil {
			t.Error("two reruns at once")
		} else if busy, ok := errors.AsType[*portal.TeamHasJobError](err); !ok || busy.JobID != again.ID {
			t.Errorf("a second rerun: %v", err)
		}
		runner.gate <- struct{}{}
		got = e.waitFinal(again.ID, 10*time.Second)
		if got.State != portal.JobFinished || got.Verdict != portal.VerdictPassed || got.Score != 12 {
			t.Errorf("rerun %+v", got)
		}
		if _, err := e.portal.Rerun(ctx, again.ID, portal.Actor{}); portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("rerun of a finished job: %v", err)
		}
	}
	ws, err := e.portal.Workers(ctx)
	if err != nil || len(ws) != 1 || ws[0].JobsDone != 6 || ws[0].InternalErrors != 3 {
		t.Errorf("workers %+v, %v", ws, err)
	}
}

// TestConcurrentEnqueuesGiveOneJob: enqueues of one team at once, through
// two portals on the database (two processes), give one job; the others get
// it back with a *portal.TeamHasJobError, and no row is left behind.
func TestConcurrentEnqueuesGiveOneJob(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, contest(time.Second))
	other := e.start(e.open(), queue.Config{})
	portals := []*queue.Queue{e.portal, other}
	team := e.team("alpha", "http://127.0.0.1:1/")
	const rounds, callers = 25, 4
	for round := range rounds {
		var wg sync.WaitGroup
		jobs := make([]portal.Job, callers)
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() { jobs[i], errs[i] = portals[i%2].Enqueue(ctx, team.ID) })
		}
		wg.Wait()
		var winner *portal.Job
		for i, err := range errs {
			if err == nil {
				if winner != nil {
					t.Fatalf("round %d: two jobs, %d and %d", round, winner.ID, jobs[i].ID)
				}
				winner = &jobs[i]
			}
		}
		if winner == nil {
			t.Fatalf("round %d: no job: %v", round, errs)
		}
		for i, err := range errs {
			if err == nil {
				continue
			}
			busy, ok := errors.AsType[*portal.TeamHasJobError](err)
			if !ok || busy.JobID != winner.ID || jobs[i].ID != winner.ID || portal.ErrorCode(err) != portal.CodeConflict {
				t.Errorf("round %d: %v (job %d), want the team's job %d", round, err, jobs[i].ID, winner.ID)
			}
		}
		if got, err := portals[round%2].Cancel(ctx, winner.ID, portal.Actor{}); err != nil || got.State != portal.JobCancelled {
			t.Fatalf("round %d: cancel: %+v, %v", round, got, err)
		}
	}
	all, err := e.portal.TeamJobs(ctx, team.ID)
	if err != nil || len(all) != rounds {
		t.Fatalf("%d jobs after %d rounds, %v", len(all), rounds, err)
	}
	for _, j := range all {
		if j.State != portal.JobCancelled {
			t.Errorf("job %d is %s", j.ID, j.State)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, contest(20*time.Second))
	team := e.team("alpha", apptest.ServeInProcess(t, example.Problem))

	// A queued job (no worker yet) is cancelled at once.
	j := e.enqueue(team.ID)
	got, err := e.portal.Cancel(ctx, j.ID, portal.Actor{})
	if err != nil || got.State != portal.JobCancelled || got.ErrorCode != portal.ReasonCancelled || got.FinishedAt.IsZero() {
		t.Fatalf("cancel of a queued job: %+v, %v", got, err)
	}
	if _, err := e.portal.Cancel(ctx, j.ID, portal.Actor{}); err == nil {
		t.Error("a cancelled job was cancelled again")
	} else if te, ok := errors.AsType[*portal.TransitionError](err); !ok || te.From != portal.JobCancelled {
		t.Errorf("cancel of a cancelled job: %v", err)
	}
	if _, err := e.portal.Rerun(ctx, j.ID, portal.Actor{}); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("rerun of a cancelled job: %v", err)
	}

	// A running job is cancelled through River: its worker stops the run.
	j = e.enqueue(team.ID)
	w1 := e.worker("w1", queue.Config{})
	e.wait(j.ID, 10*time.Second, "in its load phase", func(j portal.Job) bool { return j.Progress.Phase == engine.PhaseLoad })
	start := time.Now()
	if got, err := e.portal.Cancel(ctx, j.ID, portal.Actor{}); err != nil || got.State.Final() && got.State != portal.JobCancelled {
		t.Fatalf("cancel of a running job: %+v, %v", got, err)
	}
	got = e.waitFinal(j.ID, 5*time.Second)
	if got.State != portal.JobCancelled || got.ErrorCode != portal.ReasonCancelled || len(got.Messages) != 1 {
		t.Errorf("cancelled job %+v", got)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("cancelling a running job took %s", took)
	}
	attempts, _ := e.portal.Attempts(ctx, j.ID)
	if len(attempts) != 1 || attempts[0].Outcome != string(portal.JobCancelled) {
		t.Errorf("attempts %+v", attempts)
	}
	// The team can enqueue again at once. (The worker stops first: it
	// would take the job, and the test's end would wait for it to run.)
	if err := w1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.portal.Enqueue(ctx, team.ID); err != nil {
		t.Errorf("enqueue after a cancel: %v", err)
	}
}

func TestEnqueueRefusals(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, contest(time.Second))
	none := e.team("no-target", "")
	if _, err := e.portal.Enqueue(ctx, none.ID); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a team without a target: %v", err)
	}
	if _, err := e.portal.Enqueue(ctx, 999); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("no such team: %v", err)
	}
	if jobs, _ := e.store.Jobs(ctx); len(jobs) != 0 {
		t.Errorf("refused enqueues left %d jobs", len(jobs))
	}
	if _, err := queue.New(e.store, queue.Config{Problems: []string{example.Name}}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a worker without a name: %v", err)
	}
	if _, err := queue.New(e.store, queue.Config{Worker: "w", Problems: []string{"nonesuch"}}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a worker of an unknown problem: %v", err)
	}
}

// TestStoppedWorkerRequeues: a worker stopped mid-job (a restart) puts the
// job back in the queue without using up an attempt, and another worker
// runs it to the end.
func TestStoppedWorkerRequeues(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, contest(20*time.Second))
	team := e.team("alpha", apptest.ServeInProcess(t, example.Problem))
	j := e.enqueue(team.ID)
	w1 := e.worker("w1", queue.Config{})
	e.wait(j.ID, 10*time.Second, "in its load phase", func(j portal.Job) bool { return j.Progress.Phase == engine.PhaseLoad })
	stop, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := w1.Stop(stop); err != nil {
		t.Fatalf("stopping w1: %v", err)
	}
	got, _ := e.portal.Job(ctx, j.ID)
	if got.State != portal.JobQueued || got.Attempts != 1 || !strings.Contains(got.StaffLog, "interrupted") {
		t.Fatalf("after the worker stopped: %+v", got)
	}
	if pos, err := e.portal.Position(ctx, j.ID); err != nil || pos != 1 {
		t.Errorf("position %d, %v", pos, err)
	}
	if ws, _ := e.portal.Workers(ctx); len(ws) != 1 || ws[0].Doing != "stopped" {
		t.Errorf("workers %+v", ws)
	}
	runner := &fakeRunner{release: make(chan struct{}), calls: map[string]int{}}
	e.worker("w2", queue.Config{Runner: queue.RunnerFunc(runner.Bench)})
	got = e.waitFinal(j.ID, 10*time.Second)
	if got.State != portal.JobFinished || got.Worker != "w2" || got.Attempts != 2 {
		t.Errorf("after another worker ran it: %+v", got)
	}
	attempts, _ := e.portal.Attempts(ctx, j.ID)
	if len(attempts) != 2 || attempts[0].Outcome != portal.ReasonInterrupted || attempts[0].Worker != "w1" ||
		attempts[1].Outcome != string(portal.JobFinished) {
		t.Errorf("attempts %+v", attempts)
	}
}

// TestWorkerRefusesItsOwnAddresses: unless the contest allows local targets,
// a job aimed at one of the worker's own addresses (the portal itself, when
// it runs beside the worker on 0.0.0.0) fails without a connection made,
// naming the refusal.
func TestWorkerRefusesItsOwnAddresses(t *testing.T) {
	c := contest(time.Second)
	c.Settings.LocalTargets = false
	e := newEnv(t, c)
	own := netip.MustParseAddr("192.0.2.99")
	e.worker("w1", queue.Config{OwnAddresses: func() ([]netip.Addr, error) { return []netip.Addr{own}, nil }})
	team := e.team("portal", "http://192.0.2.99:8080/")
	got := e.waitFinal(e.enqueue(team.ID).ID, 30*time.Second)
	if got.State != portal.JobFinished || got.Verdict != portal.VerdictFailed ||
		!strings.Contains(strings.Join(got.Messages, "\n"), "worker's own machine, network link or cloud") {
		t.Errorf("%s %s %s %q; want failed, naming the refusal", got.State, got.Verdict, got.Error, got.Messages)
	}
}

// TestEnqueueKeepsToTheNetworks: with the contest's target networks set, a
// team whose target is outside them cannot enqueue.
func TestEnqueueKeepsToTheNetworks(t *testing.T) {
	c := contest(time.Second)
	c.Settings.LocalTargets = false
	c.Settings.TargetNetworks = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	e := newEnv(t, c)
	out := e.team("outside", "http://198.51.100.7/")
	if _, err := e.portal.Enqueue(context.Background(), out.ID); portal.ErrorCode(err) != portal.CodeInvalid ||
		!strings.Contains(err.Error(), "outside the contest's networks") {
		t.Errorf("a target outside the networks: %v", err)
	}
}

// TestInterfaceAddrs: a machine's own addresses include its loopback.
func TestInterfaceAddrs(t *testing.T) {
	own, err := queue.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(own, netip.MustParseAddr("127.0.0.1")) {
		t.Errorf("no 127.0.0.1 among %v", own)
	}
}
