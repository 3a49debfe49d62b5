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
// "ready", then reads a team's id a line at a time and enqueues a job for
// it at once, answering each with a line "TEAM JOB CODE" (CODE "-" for a
// new job, else the error's code; JOB the team's job either way), until its
// input ends.
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
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		team, err := strconv.ParseInt(lines.Text(), 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "enqueuer: %q: %v\n", lines.Text(), err)
			return 1
		}
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
	if err := lines.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "enqueuer: %v\n", err)
		return 1
	}
	return 0
}

// TestConcurrentEnqueuesAcrossProcesses: three processes enqueue a job for
// each of several teams at the same instants; each team gets one job, the
// first enqueue's, and the others are told it is the team's job.
//
// The processes go in step: the test sends a team to all three at once
// (each waits for it on its input), then waits for all three answers before
// the next team. Those waits are for other processes; a deadline kills the
// processes if one never answers, which ends the test's reads.
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
	deadline := time.AfterFunc(30*time.Second, func() {
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
		}
	})
	defer deadline.Stop()
	created := map[string]string{} // team -> job
	told := map[string][]string{}  // team -> the jobs the others were told of
	for _, id := range ids {
		// Every process enqueues the team at the same instant: the
		// one its line arrives, a write apart.
		for _, p := range procs {
			fmt.Fprintln(p.stdin, id)
		}
		for _, p := range procs {
			if !p.out.Scan() {
				t.Fatalf("an enqueuer stopped early: %v", p.out.Err())
			}
			f := strings.Fields(p.out.Text())
			switch {
			case len(f) != 3 || f[0] != id:
				t.Fatalf("enqueuer said %q for team %s", p.out.Text(), id)
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
	}
	for _, p := range procs {
		p.stdin.Close() // all first: they end at once
	}
	for _, p := range procs {
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
