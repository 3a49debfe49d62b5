package queue_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// enqueuerEnv makes the test binary an enqueuer process (see enqueuer).
const enqueuerEnv = "TUNECON_TEST_ENQUEUER"

// systems are the database systems the tests that run on each use
// (storetest.Systems.Run): TestMain makes them, and stops PostgreSQL's
// private server at the end.
var systems *storetest.Systems

func TestMain(m *testing.M) {
	if dsn := os.Getenv(enqueuerEnv); dsn != "" {
		os.Exit(enqueuer(dsn, os.Stdin, os.Stdout))
	}
	systems = storetest.New()
	code := m.Run()
	systems.Close()
	os.Exit(code)
}

// enqueuer is a portal process of its own: it opens the database, says
// "ready", reads "GO UNIXNANO GAPNANO TEAM..." and enqueues a job for the
// i-th team at UNIXNANO + i × GAPNANO, one line per enqueue: "TEAM JOB CODE"
// (CODE "-" for a new job, else the error's code; JOB the team's job either
// way).
func enqueuer(dsn string, in io.Reader, out io.Writer) int {
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{MustExist: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	q, err := queue.New(s, queue.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(out, "ready")
	line, err := bufio.NewReader(in).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) < 3 || f[0] != "GO" {
		fmt.Fprintf(os.Stderr, "enqueuer: %q, %v\n", line, err)
		return 1
	}
	at, _ := strconv.ParseInt(f[1], 10, 64)
	gap, _ := strconv.ParseInt(f[2], 10, 64)
	for i, field := range f[3:] {
		team, _ := strconv.ParseInt(field, 10, 64)
		time.Sleep(time.Until(time.Unix(0, at+int64(i)*gap)))
		j, err := q.Enqueue(ctx, team)
		code := "-"
		if err != nil {
			code = string(portal.ErrorCode(err))
			if busy, ok := errors.AsType[*portal.TeamHasJobError](err); ok {
				j.ID = busy.JobID
			} else {
				fmt.Fprintf(os.Stderr, "enqueuer: team %d: %v\n", team, err)
			}
		}
		fmt.Fprintf(out, "%d %d %s\n", team, j.ID, code)
	}
	return 0
}

// TestConcurrentEnqueuesAcrossProcesses: three processes enqueue a job for
// each of several teams at the same instants; each team gets one job, the
// first enqueue's, and the others are told it is the team's job.
func TestConcurrentEnqueuesAcrossProcesses(t *testing.T) {
	const processes, teams = 3, 10
	ctx := context.Background()
	e := newEnv(t, contest(time.Second))
	var ids []string
	for i := range teams {
		ids = append(ids, strconv.FormatInt(e.team(fmt.Sprintf("team-%d", i), "http://127.0.0.1:1/").ID, 10))
	}
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
	}
	var procs []proc
	for range processes {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), enqueuerEnv+"="+e.dsn)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		p := proc{cmd, stdin, bufio.NewScanner(stdout)}
		if !p.out.Scan() || p.out.Text() != "ready" {
			t.Fatalf("an enqueuer did not start: %q", p.out.Text())
		}
		procs = append(procs, p)
	}
	// Every process enqueues team i at the same instant, 50 ms apart.
	at := time.Now().Add(300 * time.Millisecond)
	for _, p := range procs {
		fmt.Fprintf(p.stdin, "GO %d %d %s\n", at.UnixNano(), (50 * time.Millisecond).Nanoseconds(), strings.Join(ids, " "))
	}
	created := map[string]string{} // team -> job
	told := map[string][]string{}  // team -> the jobs the others were told of
	for _, p := range procs {
		for range teams {
			if !p.out.Scan() {
				t.Fatalf("an enqueuer stopped early: %v", p.out.Err())
			}
			f := strings.Fields(p.out.Text())
			switch {
			case len(f) != 3:
				t.Fatalf("enqueuer said %q", p.out.Text())
			case f[2] == "-":
				if prev, ok := created[f[0]]; ok {
					t.Errorf("team %s: two jobs, %s and %s", f[0], prev, f[1])
				}
				created[f[0]] = f[1]
			case f[2] == string(portal.CodeConflict):
				told[f[0]] = append(told[f[0]], f[1])
			default:
				t.Errorf("team %s: %q", f[0], p.out.Text())
			}
		}
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("an enqueuer: %v", err)
		}
	}
	for _, id := range ids {
		team, _ := strconv.ParseInt(id, 10, 64)
		job, ok := created[id]
		if !ok || len(told[id]) != processes-1 {
			t.Errorf("team %s: created %q, %d refused", id, job, len(told[id]))
		}
		for _, other := range told[id] {
			if other != job {
				t.Errorf("team %s: told of job %s, its job is %s", id, other, job)
			}
		}
		jobs, err := e.portal.TeamJobs(ctx, team)
		if err != nil || len(jobs) != 1 || strconv.FormatInt(jobs[0].ID, 10) != job || jobs[0].State != portal.JobQueued {
			t.Errorf("team %s's jobs: %+v, %v", id, jobs, err)
		}
	}
	// One River job per team, each in the queue in the order of its row.
	for i, id := range ids {
		job, _ := strconv.ParseInt(created[id], 10, 64)
		if pos, err := e.portal.Position(ctx, job); err != nil || pos != i+1 {
			t.Errorf("team %s's job %d: position %d, %v; want %d", id, job, pos, err, i+1)
		}
	}
}
