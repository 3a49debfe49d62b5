package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/kit/apptest/servers"
	"github.com/tunecon/tunecon/problems/bank"
)

// TestContestOnPostgres is a contest as it runs on many machines: a private
// PostgreSQL, `tunecon portal` (no workers of its own) and three `tunecon
// worker` processes; ten teams sign up, make their teams, register their
// targets and enqueue over HTTP. Eight targets are bank's Go reference app,
// each team its own; two answer every request with 500. Every job finishes
// with its right verdict, and the leaderboard ranks the eight.
func TestContestOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, eight reference apps and four tunecon processes: not in -short")
	}
	ctx := context.Background()
	// Not t.TempDir: as root PostgreSQL runs as nobody, who must reach it.
	pgDir, err := os.MkdirTemp("", "tunecon-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pgDir) })
	var pgLog syncBuffer
	pg, err := servers.StartPostgres(ctx, pgDir, &pgLog)
	servers.Require(t, err)
	t.Cleanup(pg.Stop)
	dsn, err := pg.CreateDatabase(ctx, "contest")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildTunecon(t)

	// The targets: bank's Go app, one per team, each on its own SQLite file.
	root, _ := filepath.Abs("../..")
	const teams, broken = 10, 2
	targets := make([]string, teams)
	for i := range teams - broken {
		app, err := bank.Problem.Serve(ctx, kit.ServeConfig{Lang: "go", Addr: "127.0.0.1:0", Root: root, Log: io.Discard,
			DB: "sqlite:" + filepath.Join(t.TempDir(), "bank.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = app.Stop(context.Background()) })
		targets[i] = app.URL + "/"
	}
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(fail.Close)
	for i := teams - broken; i < teams; i++ {
		targets[i] = fail.URL + "/"
	}

	admin := exec.Command(bin, "portal", "admin", "create", "--db", dsn, "--login", "root")
	admin.Stdin = strings.NewReader("root-password\n")
	if out, err := admin.CombinedOutput(); err != nil {
		t.Fatalf("admin create: %v\n%s", err, out)
	}
	portalProc := &workerProc{name: "portal", stderr: &syncBuffer{}, done: make(chan struct{})}
	portalProc.cmd = exec.Command(bin, "portal", "--db", dsn, "--addr", "127.0.0.1:0", "--workers", "0")
	portalProc.cmd.Stdout, portalProc.cmd.Stderr = io.Discard, portalProc.stderr
	if err := portalProc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { portalProc.err = portalProc.cmd.Wait(); close(portalProc.done) }()
	t.Cleanup(func() {
		_ = portalProc.cmd.Process.Kill()
		<-portalProc.done
		if t.Failed() {
			t.Logf("the portal's stderr:\n%s", portalProc.stderr.String())
		}
	})
	var base string
	started := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/)`)
	waitFor(t, 30*time.Second, "serving", func() bool {
		m := started.FindStringSubmatch(portalProc.stderr.String())
		if m != nil {
			base = m[1]
		}
		return m != nil || portalProc.exited()
	})
	if base == "" {
		t.Fatalf("the portal exited: %s", portalProc.stderr.String())
	}
	for i := range 3 {
		startWorkerFor(t, bin, dsn, fmt.Sprintf("w%d", i+1), bank.Name)
	}

	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	post := func(c *http.Client, path string, form url.Values) *http.Response {
		t.Helper()
		resp, err := c.PostForm(base+strings.TrimPrefix(path, "/"), form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
		return resp
	}
	root1 := browser()
	post(root1, "/login", url.Values{"login": {"root"}, "password": {"root-password"}})
	post(root1, "/admin/contest", url.Values{"problem": {bank.Name}, "load_seconds": {"3"}, "local_targets": {"on"}})

	jobs := map[string]string{} // job page -> the verdict it must end with
	for i := range teams {
		c, login := browser(), fmt.Sprintf("member%d", i)
		post(c, "/signup", url.Values{"login": {login}, "password": {login + "-password"}})
		post(c, "/team", url.Values{"name": {fmt.Sprintf("team %d", i)}})
		post(c, "/team/target", url.Values{"target": {targets[i]}})
		loc := post(c, "/jobs", nil).Header.Get("Location")
		jobs[loc] = string(portal.VerdictPassed)
		if i >= teams-broken {
			jobs[loc] = string(portal.VerdictFailed)
		}
	}

	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var all []portal.Job
	waitFor(t, 4*time.Minute, "every job final", func() bool {
		all, err = s.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range all {
			if !j.State.Final() {
				return false
			}
		}
		return len(all) == teams
	})
	workers := map[string]bool{}
	for _, j := range all {
		want := jobs[fmt.Sprintf("/jobs/%d", j.ID)]
		if j.State != portal.JobFinished || string(j.Verdict) != want || j.Attempts != 1 {
			t.Errorf("job %d (team %d): %s %s after %d attempt(s) %s; want finished %s\n%s", j.ID, j.TeamID, j.State,
				j.Verdict, j.Attempts, j.ErrorCode, want, strings.Join(j.Messages, "\n"))
		}
		workers[j.Worker] = true
	}
	t.Logf("the jobs ran on workers %v", workers)
	board, err := s.Leaderboard(ctx, store.BoardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ranked := 0
	for _, b := range board {
		if b.Rank > 0 {
			ranked++
		}
	}
	if ranked != teams-broken {
		t.Errorf("%d teams ranked, want %d: %+v", ranked, teams-broken, board)
	}
}

// startWorkerFor starts a worker process for one problem; the test's end
// kills it if it still runs, and shows its stderr if the test failed.
func startWorkerFor(t *testing.T, bin, dsn, name, problem string) *workerProc {
	t.Helper()
	w := &workerProc{name: name, stderr: &syncBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(bin, "worker", "--db", dsn, "--name", name, "--problems", problem)
	w.cmd.Stdout, w.cmd.Stderr = io.Discard, w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.err = w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		if !w.exited() {
			_ = w.cmd.Process.Kill()
			<-w.done
		}
		if t.Failed() {
			t.Logf("worker %s's stderr:\n%s", name, w.stderr.String())
		}
	})
	return w
}
