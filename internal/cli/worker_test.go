package cli_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems/example"
)

func TestPortalAndWorkerBadUsage(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "contest.db")
	for _, args := range [][]string{
		{"portal", "frobnicate"},
		{"portal", "migrate"},
		{"portal", "migrate", "--db", dsn, "extra"},
		{"portal", "migrate", "--db", "postgres://u@localhost:notaport/contest"},
		{"portal", "migrate", "--db", "contest.db"},
		{"worker"},
		{"worker", "--db", dsn, "extra"},
		{"worker", "--db", dsn, "--problems", "example,nosuch"},
		{"worker", "--db", dsn, "--concurrency", "0"},
		{"worker", "--db", dsn, "--concurrency", "1000"},
		{"worker", "--db", "mysql://u@localhost/contest"},
		{"portal", "--db", dsn, "--workers", "-1"},
		{"portal", "--db", dsn, "--addr", "127.0.0.1:99999"},
		{"portal", "admin"},
		{"portal", "admin", "create", "--db", dsn},
		{"portal", "admin", "create", "--db", dsn, "--login", "x"},
		{"portal", "admin", "import", "--db", dsn},
		{"portal", "admin", "import", "--db", dsn, "--file", "no-such-file.csv"},
		{"portal", "admin", "import", "--db", dsn, "--file", "-", "--url", "portal.example"},
	} {
		code, _, stderr := run(t, args...)
		if code != cli.ExitUsage || !strings.HasPrefix(stderr, "tunecon: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, want 2 and one line; stderr %q", args, code, stderr)
		}
	}
	// An unknown flag: the flag package shows the flags, then the error.
	code, _, stderr := run(t, "worker", "--db", dsn, "--nosuchflag")
	if code != cli.ExitUsage || !strings.HasSuffix(stderr, "tunecon: worker: flag provided but not defined: -nosuchflag\n") ||
		!strings.Contains(stderr, "-concurrency") {
		t.Errorf("an unknown flag: exit %d, %q", code, stderr)
	}
	code, _, stderr = run(t, "worker", "--db", dsn, "--problems", "nosuch")
	if code != cli.ExitUsage || !strings.Contains(stderr, "one of: ") || !strings.Contains(stderr, example.Name) {
		t.Errorf("an unknown problem: exit %d, %q; want the list of problems", code, stderr)
	}
	// `tunecon portal --help` names its commands.
	code, out, _ := run(t, "portal", "--help")
	if code != 0 || !strings.Contains(out, "tunecon portal migrate --db DSN") || !strings.Contains(out, "tunecon portal admin create") {
		t.Errorf("portal --help: exit %d, %q", code, out)
	}
	if code, out, _ = run(t, "help"); code != 0 || !strings.Contains(out, "tunecon worker --db DSN") || !strings.Contains(out, "tunecon portal migrate") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

// TestWorkerRefusesADatabaseNotMigrated: a worker never creates or migrates
// the database; it names the command that does.
func TestWorkerRefusesADatabaseNotMigrated(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "contest.db")
	dsn := "sqlite:" + path
	migrate := "run `tunecon portal migrate --db " + dsn + "` first"
	code, _, stderr := run(t, "worker", "--db", dsn)
	if code != cli.ExitUsage || !strings.Contains(stderr, "no database at "+path) || !strings.Contains(stderr, migrate) {
		t.Errorf("a missing database: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the worker created the database")
	}
	// A database that exists but was never migrated.
	s, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	code, _, stderr = run(t, "worker", "--db", dsn)
	if code != cli.ExitUsage || !strings.Contains(stderr, "is not migrated") || !strings.Contains(stderr, migrate) {
		t.Errorf("an unmigrated database: exit %d, %q", code, stderr)
	}
	code, out, stderr := run(t, "portal", "migrate", "--db", dsn)
	if code != 0 || !strings.Contains(out, "migrated to schema version ") {
		t.Fatalf("migrate: exit %d, %q %q", code, out, stderr)
	}
	code, out, _ = run(t, "portal", "migrate", "--db", dsn)
	if code != 0 || !strings.Contains(out, "the schema is up to date") {
		t.Errorf("migrate again: exit %d, %q", code, out)
	}
}

// syncBuffer is a buffer the command's goroutines write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// contestDB migrates a new contest database with the command and opens it
// for the test, which plays the portal: it sets the contest, adds the teams
// and enqueues their jobs through an insert-only queue.
func contestDB(t *testing.T, c portal.Contest) (string, *store.Store) {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "contest.db")
	if code, out, stderr := run(t, "portal", "migrate", "--db", dsn); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, stderr)
	}
	return dsn, openStore(t, dsn, c)
}

func openStore(t *testing.T, dsn string, c portal.Contest) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if c.Problem != "" {
		if err := s.SetContest(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// portalQueue starts an insert-only queue on s, stopped by the test's end.
func portalQueue(t *testing.T, s *store.Store) *queue.Queue {
	t.Helper()
	q, err := queue.New(s, queue.Config{SettleEvery: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	return q
}

// waitJob polls a job until ok says so, failing the test after timeout.
func waitJob(t *testing.T, s *store.Store, id int64, timeout time.Duration, what string, ok func(portal.Job) bool) portal.Job {
	t.Helper()
	end := time.Now().Add(timeout)
	for {
		j, err := s.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(j) {
			return j
		}
		if time.Now().After(end) {
			t.Fatalf("job %d not %s after %s: %s, attempts %d, worker %q, %s %s", id, what, timeout, j.State, j.Attempts, j.Worker, j.ErrorCode, j.Error)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func final(j portal.Job) bool { return j.State.Final() }

// shortContest is the example problem with a load of load and short phase
// deadlines: against its in-process app each of the other phases takes well
// under a second.
func shortContest(load time.Duration) portal.Contest {
	return portal.Contest{Problem: example.Name, LoadDuration: load, Settings: portal.Settings{
		InitializeTimeout: 2 * time.Second, PreCheckTimeout: 2 * time.Second, FinalCheckTimeout: 2 * time.Second,
		Grace: 500 * time.Millisecond, Slack: time.Second, LocalTargets: true,
	}}
}

// TestWorkerRunsJobsUntilStopped runs the worker command in process: it
// runs the queued jobs, says so on stderr one line per start and end, and
// stops when its context ends (what SIGINT and SIGTERM do in main).
func TestWorkerRunsJobsUntilStopped(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	dsn, s := contestDB(t, shortContest(time.Second))
	portalQ := portalQueue(t, s)
	var jobs []portal.Job
	for _, name := range []string{"alpha", "beta"} {
		team, err := s.CreateTeam(bg, name, apptest.ServeInProcess(t, example.Problem))
		if err != nil {
			t.Fatal(err)
		}
		j, err := portalQ.Enqueue(bg, team.ID)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	ctx, stop := context.WithCancel(bg)
	defer stop()
	var stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- cli.Run(ctx, []string{"worker", "--db", dsn, "--name", "w-test", "--concurrency", "2", "--problems", "example"},
			cli.Env{Stdout: io.Discard, Stderr: &stderr, Getenv: os.Getenv})
	}()
	for _, j := range jobs {
		got := waitJob(t, s, j.ID, 30*time.Second, "final", final)
		if got.State != portal.JobFinished || got.Verdict != portal.VerdictPassed || got.Worker != "w-test" {
			t.Errorf("job %d: %s %s on %q (%s)", j.ID, got.State, got.Verdict, got.Worker, got.Error)
		}
	}
	ws, err := s.Workers(bg)
	if err != nil || len(ws) != 1 || ws[0].Name != "w-test" || len(ws[0].Problems) != 1 || ws[0].JobsDone != 2 {
		t.Errorf("workers %+v, %v", ws, err)
	}
	stopped := time.Now()
	stop()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(cli.WorkerStopWait + queue.WrapUp):
		t.Fatal("the worker did not stop")
	}
	if took := time.Since(stopped); took > 3*time.Second {
		t.Errorf("an idle worker took %s to stop", took)
	}
	if ws, _ := s.Workers(bg); len(ws) != 1 || ws[0].Doing != "stopped" {
		t.Errorf("after the stop: %+v", ws)
	}
	log := stderr.String()
	t.Logf("stderr:\n%s", log)
	for _, j := range jobs {
		started := regexp.MustCompile(`msg="attempt started".* job=` + itoa(j.ID) + ` team=` + itoa(j.TeamID) + ` attempt=1`)
		ended := regexp.MustCompile(`msg="attempt ended".* job=` + itoa(j.ID) + ` team=` + itoa(j.TeamID) + ` .*state=finished verdict=passed score=[1-9]`)
		if !started.MatchString(log) || !ended.MatchString(log) {
			t.Errorf("no start and end lines for job %d", j.ID)
		}
	}
	for _, want := range []string{`msg="worker started" worker=w-test problems=example concurrency=2`, `msg="worker stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
