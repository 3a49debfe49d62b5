package queue

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/example"
)

// fixture is a migrated database with a contest of problem, and a raw
// connection to change River's rows behind the queue's back.
type fixture struct {
	t     *testing.T
	dsn   string
	store *store.Store
	raw   *sql.DB
}

func newFixture(t *testing.T, problem string) *fixture {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "portal.db")
	f := &fixture{t: t, dsn: "sqlite:" + path}
	f.store = f.open()
	if _, err := f.store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := portal.Contest{Problem: problem, LoadDuration: time.Second, Settings: portal.Settings{LocalTargets: true}}
	if err := f.store.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	f.raw = raw
	return f
}

func (f *fixture) open() *store.Store {
	f.t.Helper()
	s, err := store.Open(context.Background(), f.dsn, store.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s
}

func (f *fixture) exec(query string, args ...any) {
	f.t.Helper()
	if _, err := f.raw.Exec(query, args...); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) job(id int64) portal.Job {
	f.t.Helper()
	j, err := f.store.Job(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

// TestSettle plays River's rescuer by hand: the rows of jobs whose worker
// died follow what River decided.
func TestSettle(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, example.Name)
	q, err := New(f.store, Config{})
	if err != nil {
		t.Fatal(err)
	}
	begin := func(id int64, worker string, riverAttempt int) {
		t.Helper()
		f.exec(`UPDATE river_job SET state = 'running', attempt = ?, attempted_at = datetime('now') WHERE id = ?`, riverAttempt, f.job(id).RiverJobID)
		if err := f.store.InTx(ctx, func(tx *store.Tx) error { _, err := tx.BeginAttempt(ctx, id, worker); return err }); err != nil {
			t.Fatal(err)
		}
	}
	riverState := func(id int64, state string) {
		t.Helper()
		fin := "NULL"
		if state == "discarded" || state == "cancelled" || state == "completed" {
			fin = "datetime('now')"
		}
		f.exec(`UPDATE river_job SET state = ?, finalized_at = `+fin+` WHERE id = ?`, state, f.job(id).RiverJobID)
	}
	settle := func() {
		t.Helper()
		if err := q.Settle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var jobs []portal.Job
	for i := range 5 {
		team, err := f.store.CreateTeam(ctx, "team-"+string(rune('a'+i)), "http://127.0.0.1:1/")
		if err != nil {
			t.Fatal(err)
		}
		j, err := q.Enqueue(ctx, team.ID)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	settle()
	for _, j := range jobs {
		if got := f.job(j.ID); got.State != portal.JobQueued {
			t.Fatalf("settling changed a waiting job: %+v", got)
		}
	}

	// Job 0: its worker dies on attempt 1, River rescues it for attempt 2,
	// whose worker dies too: River discards it, the row ends errored.
	a := jobs[0].ID
	begin(a, "w1", 1)
	settle()
	if got := f.job(a); got.State != portal.JobRunning {
		t.Fatalf("settling changed a running job: %+v", got)
	}
	riverState(a, "retryable")
	settle()
	if got := f.job(a); got.State != portal.JobQueued || got.Attempts != 1 || !strings.Contains(got.StaffLog, "attempt 1 lost") {
		t.Errorf("after a rescue: %+v", got)
	}
	begin(a, "w2", 2)
	riverState(a, "discarded")
	settle()
	got := f.job(a)
	if got.State != portal.JobErrored || got.ErrorCode != portal.ReasonWorkerLost || got.Messages[0] != msgLost || got.Attempts != 2 {
		t.Errorf("after the last attempt was lost: %+v", got)
	}
	attempts, _ := f.store.JobAttempts(ctx, a)
	if len(attempts) != 2 || attempts[0].Outcome != portal.ReasonLost || attempts[0].Worker != "w1" ||
		attempts[1].Outcome != string(portal.JobErrored) || attempts[1].Worker != "w2" {
		t.Errorf("attempts %+v", attempts)
	}
	// Staff can run it again.
	if _, err := q.Rerun(ctx, a, portal.Actor{}); err != nil {
		t.Errorf("rerun of a lost job: %v", err)
	}

	// Job 1: staff cancelled it while its worker was dead; the rescuer
	// cancelled it in River.
	begin(jobs[1].ID, "w1", 1)
	riverState(jobs[1].ID, "cancelled")
	// Job 2: River completed it without an outcome; job 3: River lost it.
	begin(jobs[2].ID, "w1", 1)
	riverState(jobs[2].ID, "completed")
	f.exec(`DELETE FROM river_job WHERE id = ?`, jobs[3].RiverJobID)
	// Job 4: River discarded it before a worker took the row.
	riverState(jobs[4].ID, "discarded")
	settle()
	for i, want := range []portal.JobState{1: portal.JobCancelled, 2: portal.JobErrored, 3: portal.JobErrored, 4: portal.JobErrored} {
		if i == 0 {
			continue
		}
		if got := f.job(jobs[i].ID); got.State != want || got.FinishedAt.IsZero() {
			t.Errorf("job %d: %s (%s), want %s", i, got.State, got.Error, want)
		}
	}
	settle() // idempotent
}

// TestWorkerRunsOnlyItsProblems: a job of a problem a worker cannot run
// waits in its problem's queue; one that reaches the worker anyway ends
// errored, ReasonCannotRun.
func TestWorkerRunsOnlyItsProblems(t *testing.T) {
	ctx := context.Background()
	other := example.Problem
	other.Name = "other"
	lookup := func(name string) (kit.Problem, bool) {
		switch name {
		case example.Name:
			return example.Problem, true
		case other.Name:
			return other, true
		}
		return kit.Problem{}, false
	}
	f := newFixture(t, other.Name)
	writes := NewWrites()
	w, err := New(f.open(), Config{Worker: "w1", Problems: []string{example.Name}, Lookup: lookup, onWrite: writes.Wrote})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(ctx)
	portalQ, err := New(f.store, Config{Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	alpha, _ := f.store.CreateTeam(ctx, "alpha", "http://127.0.0.1:1/")
	waiting, err := portalQ.Enqueue(ctx, alpha.ID)
	if err != nil {
		t.Fatal(err)
	}

	// A River job in the example's queue whose row is of the other problem.
	beta, _ := f.store.CreateTeam(ctx, "beta", "http://127.0.0.1:1/")
	var stray portal.Job
	err = f.store.InTx(ctx, func(tx *store.Tx) error {
		res, err := portalQ.client.InsertTx(ctx, tx.SQL(), BenchArgs{TeamID: beta.ID, Problem: other.Name, Timing: timingArgsOf(portal.Timing{}.WithDefaults())},
			&river.InsertOpts{Queue: QueueName(example.Name)})
		if err != nil {
			return err
		}
		stray, err = tx.InsertJob(ctx, store.NewJob{TeamID: beta.ID, Problem: other.Name, Target: beta.Target, MaxAttempts: 2, RiverJobID: res.Job.ID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The worker ends the stray job (or the check below says how it is).
	writes.Until(10*time.Second, func() bool { return f.job(stray.ID).State.Final() })
	got := f.job(stray.ID)
	if got.State != portal.JobErrored || got.ErrorCode != portal.ReasonCannotRun || got.Worker != "w1" {
		t.Errorf("the stray job: %+v", got)
	}
	if ws, _ := f.store.Workers(ctx); len(ws) != 1 || ws[0].JobsDone != 1 || ws[0].InternalErrors != 0 {
		t.Errorf("a refusal is not the benchmarker's fault: %+v", ws)
	}
	if got := f.job(waiting.ID); got.State != portal.JobQueued {
		t.Errorf("the other problem's job: %+v", got)
	}
	if pos, err := portalQ.Position(ctx, waiting.ID); err != nil || pos != 1 {
		t.Errorf("position %d, %v", pos, err)
	}
}

func TestTimeoutCoversTheDeadline(t *testing.T) {
	c := portal.Contest{Problem: example.Name, LoadDuration: 45 * time.Second}
	args := BenchArgs{Timing: timingArgsOf(c.Timing())}
	w := &benchWorker{}
	got := w.Timeout(&river.Job[BenchArgs]{Args: args})
	if want := c.Timing().Deadline() + WrapUp; got != want {
		t.Errorf("timeout %s, want %s", got, want)
	}
	if args.Timing.Timing() != c.Timing() {
		t.Errorf("timing %+v does not survive the args: %+v", c.Timing(), args.Timing.Timing())
	}
}

// TestTimeoutTakesTheContestsWrapUp: a contest's wrap-up travels in the
// job's arguments, so the rescuer of any process computes the same timeout.
func TestTimeoutTakesTheContestsWrapUp(t *testing.T) {
	c := portal.Contest{Problem: example.Name, LoadDuration: 8 * time.Second, Settings: portal.Settings{WrapUp: 3 * time.Second}}
	args := BenchArgs{Timing: timingArgsOf(c.Timing())}
	if got, want := (&benchWorker{}).Timeout(&river.Job[BenchArgs]{Args: args}), c.Timing().Deadline()+3*time.Second; got != want {
		t.Errorf("timeout %s, want %s", got, want)
	}
	// A job queued before the wrap-up was an argument has the default.
	args.Timing.WrapUpMS = 0
	if got := args.Timing.Timing().WrapUp; got != WrapUp {
		t.Errorf("wrap-up of an old job %s", got)
	}
}
