package cli_test

// Tests with real `tunecon worker` processes on one SQLite file: the test
// builds the command, plays the portal in process (an insert-only queue that
// sets the contest, adds the teams and enqueues), serves each team's target
// (the example app, in process) and kills, stops and restarts things.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems/example"
)

// buildTunecon builds the tunecon command into a temporary directory.
func buildTunecon(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to build tunecon")
	}
	bin := filepath.Join(t.TempDir(), "tunecon")
	start := time.Now()
	out, err := exec.Command(gobin, "build", "-o", bin, "github.com/tunecon/tunecon/cmd/tunecon").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built tunecon in %.1fs", time.Since(start).Seconds())
	return bin
}

// workerProc is a `tunecon worker` process.
type workerProc struct {
	name   string
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // Wait's, once done
}

// startWorker starts a worker process for the example problem; the test's
// end kills it if it still runs, and shows its stderr if the test failed.
func startWorker(t *testing.T, bin, dsn, name string) *workerProc {
	t.Helper()
	return startWorkerFor(t, bin, dsn, name, example.Name)
}

func (w *workerProc) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// signal sends sig and waits up to timeout for the process to exit.
func (w *workerProc) signal(t *testing.T, sig syscall.Signal, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := w.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.done:
	case <-time.After(timeout):
		t.Fatalf("worker %s still runs %s after %v", w.name, timeout, sig)
	}
	return time.Since(start)
}

// exitCode is the process's exit status, -1 when a signal ended it.
func (w *workerProc) exitCode() int {
	<-w.done
	var ee *exec.ExitError
	if errors.As(w.err, &ee) {
		return ee.ExitCode()
	}
	if w.err != nil {
		return -2
	}
	return 0
}

// waitFor polls f until it says yes, failing after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, f func() bool) {
	t.Helper()
	end := time.Now().Add(timeout)
	for !f() {
		if time.Now().After(end) {
			t.Fatalf("not %s after %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// enqueueTeam adds a team with an example app of its own and enqueues its
// job.
func enqueueTeam(t *testing.T, s *store.Store, q *queue.Queue, name string) portal.Job {
	t.Helper()
	team, err := s.CreateTeam(context.Background(), name, apptest.ServeInProcess(t, example.Problem))
	if err != nil {
		t.Fatal(err)
	}
	j, err := q.Enqueue(context.Background(), team.ID)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func inLoad(j portal.Job) bool {
	return j.State == portal.JobRunning && j.Progress.Phase == engine.PhaseLoad
}

// TestKilledWorkers: three worker processes on one database; the workers
// running two teams' jobs are killed (SIGKILL) in the middle of the load.
// Neither job is lost or left running: the one with two attempts is rescued
// by River and finishes on the surviving worker as attempt 2; the one whose
// contest allowed one attempt ends errored, reason worker-lost, and its team
// sees which. The other teams' jobs are unaffected.
//
// It takes about a minute: a killed worker's job waits for its timeout (the
// deadline, 17 s here, plus the shortest wrap-up, portal.MinWrapUp) and then
// for the next pass of River's rescuer, which runs every 30 s on the leader
// and cannot be configured. The leader here is the first worker, which is
// not killed: a killed leader adds its lease (up to 15 s) and possibly one
// more rescuer interval.
func TestKilledWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("kills worker processes and waits for River's rescuer: about a minute")
	}
	t.Parallel()
	ctx := context.Background()
	bin := buildTunecon(t)
	c := shortContest(8 * time.Second)
	c.Settings.WrapUp = portal.MinWrapUp
	dsn, s := contestDB(t, c)
	portalQ := portalQueue(t, s)

	// The first worker leads River's maintenance: its rescuer will bring the
	// killed workers' jobs back.
	w1 := startWorker(t, bin, dsn, "w1")
	waitFor(t, 15*time.Second, "led by w1", func() bool {
		id, _, err := s.RiverLeader(ctx)
		return err == nil && id == "w1"
	})
	steady := enqueueTeam(t, s, portalQ, "steady")
	waitJob(t, s, steady.ID, 15*time.Second, "running on w1", func(j portal.Job) bool { return j.State == portal.JobRunning })
	workers := map[string]*workerProc{"w1": w1, "w2": startWorker(t, bin, dsn, "w2"), "w3": startWorker(t, bin, dsn, "w3")}

	rescued := enqueueTeam(t, s, portalQ, "rescued") // two attempts, the default
	c.Settings.MaxAttempts = 1
	if err := s.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	lost := enqueueTeam(t, s, portalQ, "lost")
	c.Settings.MaxAttempts = 0
	if err := s.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	if rescued.MaxAttempts != 2 || lost.MaxAttempts != 1 {
		t.Fatalf("max attempts %d and %d", rescued.MaxAttempts, lost.MaxAttempts)
	}
	killed := map[int64]string{}
	for _, j := range []portal.Job{rescued, lost} {
		got := waitJob(t, s, j.ID, 20*time.Second, "in its load phase", inLoad)
		if got.Worker == "w1" {
			t.Fatalf("job %d runs on w1, which runs job %d", j.ID, steady.ID)
		}
		killed[j.ID] = got.Worker
	}
	later := enqueueTeam(t, s, portalQ, "later") // waits for w1
	time.Sleep(time.Second)
	kill := time.Now()
	for id, name := range killed {
		w := workers[name]
		w.signal(t, syscall.SIGKILL, 5*time.Second)
		if code := w.exitCode(); code != -1 {
			t.Errorf("%s: exit %d, want killed by a signal", name, code)
		}
		t.Logf("killed %s, which ran job %d", name, id)
	}

	// Until every job ends: never lost, never in a state it should not be
	// in; when the killed jobs change, and how.
	all := []portal.Job{steady, rescued, lost, later}
	seen := map[int64]portal.JobState{}
	waitFor(t, 100*time.Second, "all ended", func() bool {
		done := true
		for _, j := range all {
			got, err := s.Job(ctx, j.ID)
			if err != nil {
				t.Fatalf("job %d: %v", j.ID, err)
			}
			if got.State != seen[j.ID] {
				t.Logf("%5.1fs after the kill: job %d (team %d) %s, attempt %d on %s %s",
					time.Since(kill).Seconds(), j.ID, j.TeamID, got.State, got.Attempts, got.Worker, got.ErrorCode)
				seen[j.ID] = got.State
			}
			if j.ID == lost.ID && got.State == portal.JobQueued {
				t.Errorf("job %d has one attempt but was queued again", j.ID)
			}
			done = done && got.State.Final()
		}
		return done
	})
	t.Logf("all ended %.1fs after the kill", time.Since(kill).Seconds())

	// The job with two attempts: rescued, run again on w1, finished.
	got, _ := s.Job(ctx, rescued.ID)
	if got.State != portal.JobFinished || got.Verdict != portal.VerdictPassed || got.Attempts != 2 || got.Worker != "w1" ||
		!strings.Contains(got.StaffLog, "attempt 1 lost") {
		t.Errorf("the rescued job: %s %s, attempts %d, worker %s, %s\nstaff log:\n%s", got.State, got.Verdict, got.Attempts, got.Worker, got.Error, got.StaffLog)
	}
	attempts, err := s.JobAttempts(ctx, rescued.ID)
	if err != nil || len(attempts) != 2 || attempts[0].Worker != killed[rescued.ID] || attempts[0].Outcome != portal.ReasonLost ||
		attempts[1].Worker != "w1" || attempts[1].Outcome != string(portal.JobFinished) {
		t.Errorf("the rescued job's attempts: %+v, %v", attempts, err)
	}
	if !strings.Contains(w1.stderr.String(), fmt.Sprintf(`msg="attempt started" river_job=%d worker=w1 job=%d team=%d attempt=2`, got.RiverJobID, got.ID, got.TeamID)) {
		t.Error("w1's stderr does not show the second attempt")
	}

	// The job with one attempt: errored, worker-lost, and its team sees so.
	got, _ = s.Job(ctx, lost.ID)
	if got.State != portal.JobErrored || got.ErrorCode != portal.ReasonWorkerLost || got.Attempts != 1 || got.Verdict != "" {
		t.Errorf("the lost job: %s %s, attempts %d, %s", got.State, got.ErrorCode, got.Attempts, got.Error)
	}
	seenByTeam := got.ForContestant()
	if seenByTeam.State != portal.JobErrored || seenByTeam.ErrorCode != portal.ReasonWorkerLost || seenByTeam.Attempts != 1 ||
		len(seenByTeam.Messages) != 1 || !strings.Contains(seenByTeam.Messages[0], "does not count") ||
		seenByTeam.Worker != "" || seenByTeam.StaffLog != "" {
		t.Errorf("what the lost job's team sees: %+v", seenByTeam)
	}
	attempts, err = s.JobAttempts(ctx, lost.ID)
	if err != nil || len(attempts) != 1 || attempts[0].Worker != killed[lost.ID] || attempts[0].Outcome != string(portal.JobErrored) {
		t.Errorf("the lost job's attempts: %+v, %v", attempts, err)
	}

	for _, j := range []portal.Job{steady, later} {
		got, _ := s.Job(ctx, j.ID)
		if got.State != portal.JobFinished || got.Verdict != portal.VerdictPassed || got.Attempts != 1 || got.Worker != "w1" {
			t.Errorf("job %d: %s %s, attempts %d on %s", j.ID, got.State, got.Verdict, got.Attempts, got.Worker)
		}
	}

	// The survivor stops on SIGINT (Ctrl-C); the killed workers' rows keep
	// their last heartbeat and what they were doing, as staff will see them.
	if took := w1.signal(t, syscall.SIGINT, cli.WorkerStopWait+5*time.Second); w1.exitCode() != 0 || took > 3*time.Second {
		t.Errorf("w1 on SIGINT: exit %d after %s", w1.exitCode(), took)
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 3 {
		t.Fatalf("workers %+v, %v", ws, err)
	}
	for _, w := range ws {
		if w.Name == "w1" && (w.Doing != "stopped" || w.JobsDone != 3) {
			t.Errorf("w1: %+v", w)
		}
		if w.Name != "w1" && (w.Doing == "stopped" || w.HeartbeatAt.After(kill)) {
			t.Errorf("the killed %s: %+v", w.Name, w)
		}
	}
}

// TestPortalRestartAndWorkerStop: while two worker processes run jobs, the
// portal (an insert-only process) closes its queue and database and opens
// them again, and one worker is stopped with SIGTERM in the middle of a job.
// Nothing is lost: the stopped worker's job goes back to the queue without
// using up an attempt and finishes on the other worker, and every job ends
// finished with its verdict, as the reopened portal reads.
func TestPortalRestartAndWorkerStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes: about half a minute")
	}
	t.Parallel()
	ctx := context.Background()
	bin := buildTunecon(t)
	dsn, s := contestDB(t, shortContest(6*time.Second))
	portalQ, err := queue.New(s, queue.Config{SettleEvery: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := portalQ.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var jobs []portal.Job
	for i := range 4 {
		jobs = append(jobs, enqueueTeam(t, s, portalQ, fmt.Sprintf("team-%d", i)))
	}
	w1, w2 := startWorker(t, bin, dsn, "w1"), startWorker(t, bin, dsn, "w2")

	// The first two jobs run; the portal goes away.
	var onW2 portal.Job
	for _, j := range jobs[:2] {
		got := waitJob(t, s, j.ID, 20*time.Second, "in its load phase", inLoad)
		if got.Worker == "w2" {
			onW2 = got
		}
	}
	if onW2.ID == 0 {
		t.Fatal("w2 runs neither of the first two jobs")
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := portalQ.Stop(stop); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// w2 is stopped mid-job while the portal is down.
	took := w2.signal(t, syscall.SIGTERM, cli.WorkerStopWait+queue.WrapUp+5*time.Second)
	if code := w2.exitCode(); code != 0 || took > cli.WorkerStopWait+3*time.Second {
		t.Errorf("w2 on SIGTERM: exit %d after %s", code, took)
	}
	log := w2.stderr.String()
	for _, want := range []string{fmt.Sprintf(`msg="attempt interrupted: the job is queued again" river_job=%d worker=w2 job=%d`, onW2.RiverJobID, onW2.ID),
		`msg="worker stopped" worker=w2`} {
		if !strings.Contains(log, want) {
			t.Errorf("w2's stderr lacks %q:\n%s", want, log)
		}
	}
	time.Sleep(time.Second)

	// The portal comes back: a new process opens the database.
	s = openStore(t, dsn, portal.Contest{})
	portalQ = portalQueue(t, s)
	for _, j := range jobs {
		got := waitJob(t, s, j.ID, 60*time.Second, "final", final)
		if got.State != portal.JobFinished || got.Verdict != portal.VerdictPassed || got.Worker != "w1" {
			t.Errorf("job %d: %s %s on %s (%s)", j.ID, got.State, got.Verdict, got.Worker, got.Error)
		}
	}
	got, _ := s.Job(ctx, onW2.ID)
	attempts, err := s.JobAttempts(ctx, onW2.ID)
	if got.Attempts != 2 || got.Worker != "w1" || err != nil || len(attempts) != 2 || attempts[0].Worker != "w2" ||
		attempts[0].Outcome != portal.ReasonInterrupted || attempts[1].Outcome != string(portal.JobFinished) {
		t.Errorf("the interrupted job: %d attempts on %s, %+v, %v", got.Attempts, got.Worker, attempts, err)
	}
	// The team's slot is free: it enqueues again.
	if _, err := portalQ.Enqueue(ctx, onW2.TeamID); err != nil {
		t.Errorf("enqueue after the restart: %v", err)
	}
	if w1.exited() {
		t.Errorf("w1 exited: %v", w1.err)
	}
	if _, err := os.Stat(strings.TrimPrefix(dsn, "sqlite:")); err != nil {
		t.Error(err)
	}
}
