package queue_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for attemptedBy

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// audited counts the audit log's entries of an action.
func audited(t *testing.T, s *store.Store, action string) []portal.AuditEntry {
	t.Helper()
	entries, err := s.AuditLog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []portal.AuditEntry
	for _, e := range entries {
		if e.Action == action {
			out = append(out, e)
		}
	}
	return out
}

// attemptedBy is the River clients (workers) that ever claimed a job's
// River job, as River lists them.
func (e *env) attemptedBy(riverJobID int64) string {
	e.t.Helper()
	driver, dsn := "pgx", e.dsn
	if path, ok := strings.CutPrefix(e.dsn, "sqlite:"); ok {
		driver, dsn = "sqlite", path
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	var by string
	q := fmt.Sprintf(`SELECT COALESCE(CAST(attempted_by AS TEXT), '') FROM river_job WHERE id = %d`, riverJobID)
	if err := db.QueryRow(q).Scan(&by); err != nil {
		e.t.Fatal(err)
	}
	return by
}

func workerNamed(t *testing.T, s *store.Store, name string) portal.Worker {
	t.Helper()
	ws, err := s.Workers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no worker %q in %+v", name, ws)
	return portal.Worker{}
}

// TestQuarantinedWorkerTakesNoJob: a worker whose jobs keep erroring
// through its benchmarker's fault is quarantined by the portal (audited as
// "system") and takes no job from then on: alone, it leaves a job queued
// without an attempt; beside a healthy worker, every job goes to the
// other. The errored jobs re-run in one action; cleared by staff, the
// worker takes jobs again.
func TestQuarantinedWorkerTakesNoJob(t *testing.T) { systems.Run(t, testQuarantinedWorkerTakesNoJob) }

func testQuarantinedWorkerTakesNoJob(t *testing.T, db storetest.System) {
	ctx := context.Background()
	e := newEnvAt(t, db.NewDSN(t), contest(time.Second))
	runner := &fakeRunner{release: make(chan struct{}), gate: make(chan struct{}), calls: map[string]int{}}
	t.Cleanup(func() { close(runner.release) })
	e.worker("bad", queue.Config{Runner: runner})

	var faulty []portal.Team
	for i := range portal.QuarantineErrors {
		if w := workerNamed(t, e.store, "bad"); w.Quarantined() {
			t.Fatalf("quarantined after %d errors", i)
		}
		team := e.team(fmt.Sprintf("faulty-%d", i), "http://internal/")
		j := e.waitFinal(e.enqueue(team.ID).ID, 10*time.Second)
		if j.State != portal.JobErrored || j.ErrorCode != portal.ReasonInternal || j.Worker != "bad" {
			t.Fatalf("job %+v", j)
		}
		faulty = append(faulty, team)
	}
	w := workerNamed(t, e.store, "bad")
	if !w.Quarantined() || w.Quarantine.Reason == "" {
		t.Fatalf("after %d internal errors: %+v", portal.QuarantineErrors, w)
	}
	if got := audited(t, e.store, portal.AuditQuarantine); len(got) != 1 || got[0].By != portal.SystemActor || got[0].Subject != "worker bad" {
		t.Errorf("quarantine entries %+v", got)
	}

	// Alone, the quarantined worker leaves a job queued: no attempt, no
	// start; River never hands it the job. Its heartbeat says it is
	// quarantined once it has removed its River queues (checkQuarantine
	// says so only then, within a heartbeat), so that River has no producer
	// of its to hand the job to. Its next heartbeat after the enqueue must
	// still say so, the job still queued. That River never handed it the
	// job is River's own record (attemptedBy) once the healthy worker below
	// has run it: no window of wall time is needed to show it.
	const doingNothing = "quarantined: takes no job"
	e.until(5*time.Second, "quarantined in its heartbeat", func() bool {
		return workerNamed(t, e.store, "bad").Doing == doingNothing
	})
	waiting := e.enqueue(e.team("waiting", "http://pass/").ID)
	e.until(5*time.Second, "a heartbeat after the enqueue", func() bool {
		w = workerNamed(t, e.store, "bad")
		return w.HeartbeatAt.After(waiting.CreatedAt)
	})
	if w.Doing != doingNothing {
		t.Errorf("the quarantined worker is doing %q", w.Doing)
	}
	if j, err := e.portal.Job(ctx, waiting.ID); err != nil || j.State != portal.JobQueued || j.Attempts != 0 || j.Worker != "" {
		t.Fatalf("a job with only a quarantined worker: %+v, %v", j, err)
	}
	if as, err := e.portal.Attempts(ctx, waiting.ID); err != nil || len(as) != 0 {
		t.Errorf("attempts %+v, %v", as, err)
	}

	// A healthy worker takes the waiting job and every new one.
	good := e.worker("good", queue.Config{Runner: runner})
	jobs := []portal.Job{waiting}
	for i := range 3 {
		jobs = append(jobs, e.enqueue(e.team(fmt.Sprintf("passing-%d", i), "http://pass/").ID))
	}
	for _, j := range jobs {
		got := e.waitFinal(j.ID, 10*time.Second)
		if by := e.attemptedBy(j.RiverJobID); strings.Contains(by, "bad") || !strings.Contains(by, "good") {
			t.Errorf("job %d claimed by %s", j.ID, by)
		}
		as, err := e.portal.Attempts(ctx, j.ID)
		if got.State != portal.JobFinished || got.Worker != "good" || got.Attempts != 1 || err != nil || len(as) != 1 || as[0].Worker != "good" {
			t.Errorf("job %d: %s on %q, attempts %d %+v, %v", j.ID, got.State, got.Worker, got.Attempts, as, err)
		}
	}

	// "Re-run all errored": the three errored jobs run again, in one
	// action with one entry; once they are, nothing is left to re-run.
	for _, team := range faulty {
		if err := e.store.SetTarget(ctx, team.ID, "http://pass/", ""); err != nil {
			t.Fatal(err)
		}
	}
	b, err := e.portal.RerunErrored(ctx, root)
	if err != nil || len(b.Queued) != len(faulty) {
		t.Fatalf("rerun errored: %+v, %v", b, err)
	}
	for _, j := range b.Queued {
		if got := e.waitFinal(j.ID, 10*time.Second); got.State != portal.JobFinished || got.RerunOf == 0 || got.Worker != "good" {
			t.Errorf("rerun %+v", got)
		}
	}
	if _, err := e.portal.RerunErrored(ctx, root); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a second rerun of all errored: %v", err)
	}
	if got := audited(t, e.store, portal.AuditRerunErrored); len(got) != 1 || got[0].By != root {
		t.Errorf("rerun-errored entries %+v", got)
	}

	// Cleared, the worker takes jobs again (the healthy one stopped).
	if err := good.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.store.ClearQuarantine(ctx, root, "bad"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.ClearQuarantine(ctx, root, "bad"); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("clearing a worker not quarantined: %v", err)
	}
	if got := audited(t, e.store, portal.AuditClear); len(got) != 1 || got[0].By != root {
		t.Errorf("clear entries %+v", got)
	}
	after := e.waitFinal(e.enqueue(e.team("after", "http://pass/").ID).ID, 10*time.Second)
	if after.State != portal.JobFinished || after.Worker != "bad" {
		t.Errorf("after the clearance: %+v", after)
	}
	// Its old errors count no more: one new one does not quarantine it.
	e.waitFinal(e.enqueue(e.team("one-more", "http://internal/").ID).ID, 10*time.Second)
	if w := workerNamed(t, e.store, "bad"); w.Quarantined() {
		t.Errorf("quarantined again on its old errors: %+v", w)
	}
}

// TestValidationRuns: after the end, staff queue a validation job of every
// team with a target, which ignores the end, waits while its team's own
// job runs (never two benchmarks on one target), and counts nowhere: not
// in the team's jobs, not on the board, not in the chart. Before the end
// it is refused and leaves no entry; once done, one entry.
func TestValidationRuns(t *testing.T) { systems.Run(t, testValidationRuns) }

func testValidationRuns(t *testing.T, db storetest.System) {
	ctx := context.Background()
	c := contest(time.Second)
	c.EndsAt = time.Now().Add(time.Hour)
	e := newEnvAt(t, db.NewDSN(t), c)
	runner := &fakeRunner{release: make(chan struct{}), gate: make(chan struct{}), calls: map[string]int{}}
	t.Cleanup(func() { close(runner.release) })
	e.worker("w1", queue.Config{Runner: runner, Concurrency: 2, TeamWait: 100 * time.Millisecond})
	alpha, beta := e.team("alpha", "http://held/"), e.team("beta", "http://pass/")
	gamma := e.team("gamma", "")
	own := e.enqueue(alpha.ID)
	e.wait(own.ID, 10*time.Second, "running", func(j portal.Job) bool { return j.State == portal.JobRunning })

	if _, err := e.portal.Validate(ctx, root); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("validation before the end: %v", err)
	}
	if got := audited(t, e.store, portal.AuditValidate); len(got) != 0 {
		t.Errorf("a refused validation left %+v", got)
	}
	c.EndsAt = time.Now().Add(-time.Second)
	if err := e.store.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	b, err := e.portal.Validate(ctx, root)
	if err != nil || len(b.Queued) != 2 || b.Skipped[gamma.ID] != "no target" {
		t.Fatalf("validate: %+v, %v", b, err)
	}
	byTeam := map[int64]portal.Job{}
	for _, j := range b.Queued {
		if j.Kind != portal.KindValidation {
			t.Errorf("job %d is %q", j.ID, j.Kind)
		}
		byTeam[j.TeamID] = j
	}
	if got := e.waitFinal(byTeam[beta.ID].ID, 10*time.Second); got.State != portal.JobFinished || got.Score != 12 {
		t.Errorf("beta's validation %+v", got)
	}
	// alpha's waits behind alpha's own running job: the worker has
	// claimed it from River and sent it back, without an attempt.
	e.until(10*time.Second, "looked at alpha's validation job", func() bool {
		return strings.Contains(e.attemptedBy(byTeam[alpha.ID].RiverJobID), "w1")
	})
	if j, _ := e.portal.Job(ctx, byTeam[alpha.ID].ID); j.State != portal.JobQueued || j.Attempts != 0 {
		t.Errorf("alpha's validation beside its running job: %+v", j)
	}
	runner.mu.Lock()
	held := runner.calls["held"]
	runner.mu.Unlock()
	if held != 1 {
		t.Errorf("%d benchmarks of alpha's target at once", held)
	}
	runner.gate <- struct{}{}
	if got := e.waitFinal(own.ID, 10*time.Second); got.State != portal.JobFinished {
		t.Fatalf("alpha's own job %+v", got)
	}
	runner.gate <- struct{}{}
	if got := e.waitFinal(byTeam[alpha.ID].ID, 10*time.Second); got.State != portal.JobFinished || got.Kind != portal.KindValidation {
		t.Errorf("alpha's validation %+v", got)
	}

	// Teams never see them; boards and charts never count them.
	for team, want := range map[int64]int{alpha.ID: 1, beta.ID: 0} {
		jobs, err := e.portal.TeamJobs(ctx, team)
		if err != nil || len(jobs) != want {
			t.Errorf("team %d's jobs %+v, %v", team, jobs, err)
		}
		if _, err := e.store.ActiveJob(ctx, team); portal.ErrorCode(err) != portal.CodeNotFound {
			t.Errorf("team %d's active job: %v", team, err)
		}
	}
	board, err := e.store.Leaderboard(ctx, store.BoardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range board {
		if s.TeamID == beta.ID && (s.Passed || s.Runs != 0) || s.TeamID == alpha.ID && s.Runs != 1 {
			t.Errorf("standing %+v counts a validation job", s)
		}
	}
	if points, err := e.store.ScoreHistory(ctx); err != nil || len(points) != 1 || points[0].TeamID != alpha.ID {
		t.Errorf("chart points %+v, %v", points, err)
	}
	latest, err := e.store.LatestValidations(ctx)
	if err != nil || latest[alpha.ID].ID != byTeam[alpha.ID].ID || latest[beta.ID].ID != byTeam[beta.ID].ID || len(latest) != 2 {
		t.Errorf("latest validations %+v, %v", latest, err)
	}
	if got := audited(t, e.store, portal.AuditValidate); len(got) != 1 || got[0].By != root {
		t.Errorf("validation entries %+v", got)
	}
}

// TestValidationRunsTheLastPassedTarget: a team that passed on one target
// and then pointed at another is validated on the first, the app its score
// came from.
func TestValidationRunsTheLastPassedTarget(t *testing.T) {
	ctx := context.Background()
	c := contest(time.Second)
	c.EndsAt = time.Now().Add(time.Hour)
	e := newEnv(t, c)
	e.worker("w1", queue.Config{Runner: &fakeRunner{calls: map[string]int{}}})
	team := e.team("delta", "http://pass/")
	if got := e.waitFinal(e.enqueue(team.ID).ID, 10*time.Second); got.Verdict != portal.VerdictPassed {
		t.Fatalf("delta's job %+v", got)
	}
	if err := e.store.SetTarget(ctx, team.ID, "http://broken/", ""); err != nil {
		t.Fatal(err)
	}
	c.EndsAt = time.Now().Add(-time.Second)
	if err := e.store.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	b, err := e.portal.Validate(ctx, root)
	if err != nil || len(b.Queued) != 1 || b.Queued[0].Target != "http://pass/" {
		t.Fatalf("validate: %+v, %v", b, err)
	}
	if got := e.waitFinal(b.Queued[0].ID, 10*time.Second); got.Verdict != portal.VerdictPassed || got.Score != 12 {
		t.Errorf("delta's validation %+v", got)
	}
}

// TestDisqualifiedTeamCannotEnqueue: a disqualified team's enqueue is
// refused and leaves no job; lifted, it enqueues. Each change is one entry;
// a refused one none.
func TestDisqualifiedTeamCannotEnqueue(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, contest(time.Second))
	team := e.team("cheaters", "http://127.0.0.1:1/")
	if err := e.store.SetDisqualified(ctx, root, team.ID, true, "  "); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a disqualification without a reason: %v", err)
	}
	if err := e.store.SetDisqualified(ctx, root, team.ID, false, ""); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("lifting no disqualification: %v", err)
	}
	if err := e.store.SetDisqualified(ctx, root, team.ID, true, "shared their app"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.portal.Enqueue(ctx, team.ID); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a disqualified team enqueued: %v", err)
	}
	if jobs, err := e.store.Jobs(ctx); err != nil || len(jobs) != 0 {
		t.Errorf("jobs %+v, %v", jobs, err)
	}
	if err := e.store.SetDisqualified(ctx, root, team.ID, false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.portal.Enqueue(ctx, team.ID); err != nil {
		t.Errorf("enqueue once reinstated: %v", err)
	}
	if got := audited(t, e.store, portal.AuditDisqualify); len(got) != 1 || got[0].By != root {
		t.Errorf("disqualify entries %+v", got)
	}
	if got := audited(t, e.store, portal.AuditReinstate); len(got) != 1 {
		t.Errorf("reinstate entries %+v", got)
	}
}
