package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/web"
	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems"
	"github.com/tunecon/tunecon/problems/example"
)

// contestSite is a portal on the example problem with an in-process
// worker and its live pages fed; it returns the example app's URL as the
// target to register.
func contestSite(t *testing.T) (*site, string) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	dsn := systems.MigratedSQLite(t)
	open := func() *store.Store {
		s, err := store.Open(ctx, dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := portal.Contest{Problem: example.Name, LoadDuration: 2 * time.Second, Settings: portal.Settings{
		InitializeTimeout: 2 * time.Second, PreCheckTimeout: 3 * time.Second, FinalCheckTimeout: 2 * time.Second,
		Grace: 500 * time.Millisecond, Slack: 2 * time.Second, MaxTeamSize: 2,
		LocalTargets: true,
	}}
	if err := s.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	startQueue := func(s *store.Store, cfg queue.Config) *queue.Queue {
		q, err := queue.New(s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = q.Stop(sctx)
		})
		return q
	}
	q := startQueue(s, queue.Config{})
	startQueue(open(), queue.Config{Worker: "w1", Problems: []string{example.Name}, HeartbeatEvery: 200 * time.Millisecond,
		ProgressEvery: 200 * time.Millisecond})
	srv, err := web.New(web.Config{Store: s, Jobs: q, Lookup: problems.Lookup, Problems: problems.Names(),
		Passwords: passwords, PollEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Run(ctx)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	st := &site{t: t, store: s, server: srv, url: hs.URL}
	return st, apptest.ServeInProcess(t, example.Problem)

}

// TestContestFlow is a contest on the example problem, as its people go
// through it over HTTP: two sign up and make a team, a third is refused by
// the team's size, the team registers its target (the example app) and
// enqueues a benchmark; a teammate watches its live progress to the end,
// and the leaderboard and its chart's data show the score. The benchmark
// runs for real, on an in-process worker.
func TestContestFlow(t *testing.T) {
	ctx := context.Background()
	st, target := contestSite(t)
	s := st.store
	signup := func(login string) *http.Client {
		c := st.client()
		if resp := st.post(c, "/signup", url.Values{"login": {login}, "password": {login + "-password"}}, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s signs up: %d", login, resp.StatusCode)
		}
		return c
	}
	alice, bob, carol := signup("alice"), signup("bob"), signup("carol")
	if resp := st.post(alice, "/team", url.Values{"name": {"flow team"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("creating the team: %d", resp.StatusCode)
	}
	teams, err := s.Teams(ctx)
	if err != nil || len(teams) != 1 {
		t.Fatalf("teams %v, %v", teams, err)
	}
	team := teams[0]
	if _, page := st.do(alice, http.MethodGet, "/team", nil, nil); !strings.Contains(page, team.InviteCode) {
		t.Error("the team page has no invite code")
	}
	if resp := st.post(bob, "/team/join", url.Values{"invite": {strings.ToUpper(team.InviteCode)}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob joins: %d", resp.StatusCode)
	}
	if resp := st.post(carol, "/team/join", url.Values{"invite": {team.InviteCode}}, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("carol joins a full team: %d, want 409", resp.StatusCode)
	}
	if resp := st.post(carol, "/team/join", url.Values{"invite": {"no-such-code"}}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a made-up invite: %d, want 404", resp.StatusCode)
	}
	if resp := st.post(alice, "/team/target", url.Values{"target": {"ftp://example.org/"}}, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an ftp target: %d, want 400", resp.StatusCode)
	}
	if resp := st.post(alice, "/team/target", url.Values{"target": {target}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("registering the target: %d", resp.StatusCode)
	}
	resp := st.post(alice, "/jobs", url.Values{}, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/jobs/") {
		t.Fatalf("enqueueing: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	jobPath := resp.Header.Get("Location")
	if again := st.post(bob, "/jobs", url.Values{}, nil); again.StatusCode != http.StatusConflict {
		t.Errorf("a second job while one is queued: %d, want 409", again.StatusCode)
	}

	// Bob watches the job: progress events, then done.
	events := watch(t, bob, st.url+jobPath+"/events", 60*time.Second)
	var sawRunning bool
	var done map[string]any
	for _, e := range events {
		switch e.name {
		case "progress":
			var p struct {
				State    string `json:"state"`
				Requests int64  `json:"requests"`
			}
			if err := json.Unmarshal([]byte(e.data), &p); err != nil {
				t.Fatal(err)
			}
			sawRunning = sawRunning || p.State == "running" && p.Requests > 0
		case "done":
			if err := json.Unmarshal([]byte(e.data), &done); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !sawRunning {
		t.Errorf("no progress event of the running job with requests: %v", events)
	}
	if done["state"] != "finished" || done["verdict"] != "passed" {
		t.Fatalf("the job ended %v", done)
	}
	if _, page := st.do(bob, http.MethodGet, jobPath, nil, nil); !strings.Contains(page, "Result:   SUCCESS") {
		t.Errorf("the job page shows no result summary:\n%s", page)
	}

	// The leaderboard and the chart's data, as nobody signed in sees them.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, board := st.do(st.client(), http.MethodGet, "/leaderboard", nil, nil)
		if strings.Contains(board, "flow team") && strings.Contains(board, "<td>1</td>") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leaderboard does not rank the team:\n%s", board)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, history := st.do(st.client(), http.MethodGet, "/leaderboard/history", nil, nil)
	var h struct {
		Series []struct {
			Team   string       `json:"team"`
			Points [][2]float64 `json:"points"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(history), &h); err != nil || len(h.Series) != 1 || h.Series[0].Team != "flow team" ||
		len(h.Series[0].Points) != 1 || h.Series[0].Points[0][1] <= 0 {
		t.Errorf("history %s, %v", history, err)
	}
}

type event struct{ name, data string }

// watch reads a server-sent event stream until a "done" event, the stream's
// end or the timeout.
func watch(t *testing.T, c *http.Client, u string, timeout time.Duration) []event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	cl := *c
	cl.Timeout = 0
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	var out []event
	var cur event
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.name != "":
			out = append(out, cur)
			if cur.name == "done" {
				return out
			}
			cur = event{}
		}
	}
	t.Errorf("the stream ended without done (%v)", ctx.Err())
	return out
}
