package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/web"
	"github.com/tunecon/tunecon/problems"
	"github.com/tunecon/tunecon/problems/example"
)

// Marks the test data carries: the staff log's, and markup in what teams
// and the engine write.
const (
	staffSecret = "STAFF-ONLY-7f3a"
	evilName    = `<script>alert("team")</script>`
	evilMessage = `<img src=x onerror=alert(1)> bad answer`
	targetA     = "http://10.9.8.7:8080/"
	targetB     = "http://10.9.8.8:8080/"
)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// site is a portal on a fresh database: an admin, team A (one member, a
// target, a passed job with a staff log and an errored job) and team B
// (one member, no job), over HTTP.
type site struct {
	t       *testing.T
	store   *store.Store
	server  *web.Server
	url     string
	clock   *clock
	jobA    portal.Job // finished, passed
	jobAErr portal.Job // errored
	teamB   portal.Team
	users   map[string]*http.Client // "anon", "a", "b", "admin"
}

var passwords = portal.Passwords{Cost: bcrypt.MinCost}

func newSite(t *testing.T, options ...func(*web.Config)) *site {
	t.Helper()
	return newSiteAt(t, systems.MigratedSQLite(t), options...)
}

// newSiteAt is newSite on the database at dsn, empty or migrated. The store, the queue
// and the pages share the site's clock.
func newSiteAt(t *testing.T, dsn string, options ...func(*web.Config)) *site {
	t.Helper()
	ctx := context.Background()
	clk := &clock{now: time.Now()}
	s, err := store.Open(ctx, dsn, store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SetContest(ctx, portal.Contest{Problem: example.Name}); err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(s, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	cfg := web.Config{Store: s, Jobs: q, Lookup: problems.Lookup, Problems: problems.Names(), Now: clk.Now, Passwords: passwords}
	for _, o := range options {
		o(&cfg)
	}
	srv, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	st := &site{t: t, store: s, server: srv, url: hs.URL, clock: clk, users: map[string]*http.Client{}}

	account := func(login string, role portal.Role) portal.Account {
		h, err := passwords.Hash(login + "-password")
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.CreateAccount(ctx, login, h, role)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	account("root", portal.RoleAdmin)
	a := account("alice", portal.RoleContestant)
	b := account("bob", portal.RoleContestant)
	teamA, err := s.CreateTeamFor(ctx, a.ID, evilName, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.teamB, err = s.CreateTeamFor(ctx, b.ID, "bees", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTarget(ctx, teamA.ID, targetA, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTarget(ctx, st.teamB.ID, targetB, ""); err != nil {
		t.Fatal(err)
	}
	res, _ := json.Marshal(&engine.Result{Problem: example.Name, Passed: true, Score: 4321, Messages: []string{evilMessage}})
	st.jobA = st.endedJob(teamA.ID, 9001, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 4321,
		Result: res, StaffLog: staffSecret, Messages: []string{evilMessage}})
	st.jobAErr = st.endedJob(teamA.ID, 9002, portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonInternal,
		Error: staffSecret, StaffLog: staffSecret, Messages: []string{"the benchmarker failed"}})

	st.users["anon"] = st.client()
	for login, who := range map[string]string{"alice": "a", "bob": "b", "root": "admin"} {
		c := st.client()
		resp := st.post(c, "/login", url.Values{"login": {login}, "password": {login + "-password"}}, nil)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("signing in %s: %d", login, resp.StatusCode)
		}
		st.users[who] = c
	}
	return st
}

// endedJob adds a job that ran on worker w1 and ended.
func (st *site) endedJob(teamID, riverID int64, e portal.Ending) portal.Job {
	st.t.Helper()
	return st.endedJobOn("w1", teamID, riverID, e)
}

// endedJobOn adds a job that ran on worker and ended.
func (st *site) endedJobOn(worker string, teamID, riverID int64, e portal.Ending) portal.Job {
	st.t.Helper()
	ctx := context.Background()
	var j portal.Job
	err := st.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		j, err = tx.InsertJob(ctx, store.NewJob{TeamID: teamID, Problem: example.Name, Target: targetA, MaxAttempts: 2,
			Deadline: time.Minute, RiverJobID: riverID})
		if err != nil {
			return err
		}
		if _, err := tx.BeginAttempt(ctx, j.ID, worker); err != nil {
			return err
		}
		_, err = tx.EndJob(ctx, j.ID, 1, e)
		return err
	})
	if err != nil {
		st.t.Fatal(err)
	}
	j, err = st.store.Job(ctx, j.ID)
	if err != nil {
		st.t.Fatal(err)
	}
	return j
}

// client is a browser that keeps cookies and does not follow redirects.
func (st *site) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (st *site) do(c *http.Client, method, path string, form url.Values, header http.Header) (*http.Response, string) {
	st.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, st.url+path, body)
	if err != nil {
		st.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, "" // a stream: its status is what is asked
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		st.t.Fatal(err)
	}
	return resp, string(b)
}

func (st *site) post(c *http.Client, path string, form url.Values, header http.Header) *http.Response {
	st.t.Helper()
	resp, _ := st.do(c, http.MethodPost, path, form, header)
	return resp
}

// want is a route's expected status for anon, a (team A), b (team B) and
// admin.
type want struct{ anon, a, b, admin int }

const (
	ok       = http.StatusOK
	see      = http.StatusSeeOther
	bad      = http.StatusBadRequest
	denied   = http.StatusForbidden
	notFound = http.StatusNotFound
	conflict = http.StatusConflict
)

// TestAccessMatrix asks every route as nobody, a member of team A, a member
// of team B and an admin, and expects each one's status. Pages are asked on
// one site; each form post on a fresh one (posts change what later asks
// would see). No contestant's answer may hold a staff log, or another
// team's target.
func TestAccessMatrix(t *testing.T) {
	st := newSite(t)
	jobA, jobAErr := strconv.FormatInt(st.jobA.ID, 10), strconv.FormatInt(st.jobAErr.ID, 10)
	gets := []struct {
		path string
		want want
	}{
		{"/", want{ok, ok, ok, ok}},
		{"/manual", want{ok, ok, ok, ok}},
		{"/leaderboard", want{ok, ok, ok, ok}},
		{"/leaderboard/history", want{ok, ok, ok, ok}},
		{"/leaderboard/events", want{ok, ok, ok, ok}},
		{"/static/portal.css", want{ok, ok, ok, ok}},
		{"/signup", want{ok, see, see, see}},
		{"/login", want{ok, see, see, see}},
		{"/team", want{see, ok, ok, see}},
		{"/jobs", want{see, ok, ok, denied}},
		{"/jobs/" + jobA, want{see, ok, notFound, denied}},
		{"/jobs/" + jobAErr, want{see, ok, notFound, denied}},
		{"/jobs/999999", want{see, notFound, notFound, denied}},
		{"/jobs/" + jobA + "/events", want{denied, ok, notFound, denied}},
		{"/admin", want{see, denied, denied, ok}},
		{"/admin/jobs", want{see, denied, denied, ok}},
		{"/admin/jobs?state=finished&team=1", want{see, denied, denied, ok}},
		{"/admin/queue.json", want{see, denied, denied, ok}},
		{"/admin/jobs/" + jobA, want{see, denied, denied, ok}},
		{"/admin/audit", want{see, denied, denied, ok}},
		{"/admin/audit.json", want{see, denied, denied, ok}},
		{"/admin/export.json", want{see, denied, denied, ok}},
		{"/admin/ceremony", want{see, denied, denied, ok}},
		{"/admin/ceremony?shown=2", want{see, denied, denied, ok}},
		{"/admin/validation", want{see, denied, denied, ok}},
		{"/admin/servers", want{see, denied, denied, ok}},
		{"/admin/teams/" + strconv.FormatInt(st.jobA.TeamID, 10), want{see, denied, denied, ok}},
		{"/admin/teams/999999", want{see, denied, denied, notFound}},
		{"/admin/import", want{see, denied, denied, ok}},
		{"/signin/0123456789abcdef", want{notFound, notFound, notFound, notFound}},
		{"/leaderboard?bracket=nosuch", want{notFound, notFound, notFound, notFound}},
		{"/leaderboard/history?bracket=nosuch", want{notFound, notFound, notFound, notFound}},
		{"/leaderboard/events?bracket=nosuch", want{notFound, notFound, notFound, notFound}},
		{"/nowhere", want{notFound, notFound, notFound, notFound}},
		{"/announcements", want{ok, ok, ok, ok}},
		{"/notices/events", want{ok, ok, ok, ok}},
		{"/clarifications", want{see, ok, ok, ok}},
		{"/account", want{see, ok, ok, ok}},
		// The API, with sessions: they count for nothing there (with
		// tokens: tokenMatrix).
		{"/api/v1/leaderboard", want{ok, ok, ok, ok}},
		{"/api/v1/leaderboard/events", want{ok, ok, ok, ok}},
		{"/api/v1/leaderboard?bracket=nosuch", want{notFound, notFound, notFound, notFound}},
		{"/api/v1/jobs", want{noToken, noToken, noToken, noToken}},
		{"/api/v1/jobs/" + jobA, want{noToken, noToken, noToken, noToken}},
		{"/api/v1/nowhere", want{notFound, notFound, notFound, notFound}},
	}
	for _, g := range gets {
		for _, who := range []string{"anon", "a", "b", "admin"} {
			resp, body := st.do(st.users[who], http.MethodGet, g.path, nil, nil)
			if w := g.want.of(who); resp.StatusCode != w {
				t.Errorf("GET %s as %s: %d, want %d", g.path, who, resp.StatusCode, w)
			}
			if who != "admin" && strings.Contains(body, staffSecret) {
				t.Errorf("GET %s as %s shows the staff log", g.path, who)
			}
			if (who == "b" || who == "anon") && strings.Contains(body, targetA) {
				t.Errorf("GET %s as %s shows team A's target", g.path, who)
			}
			if (who == "a" || who == "anon") && strings.Contains(body, targetB) {
				t.Errorf("GET %s as %s shows team B's target", g.path, who)
			}
			if strings.Contains(body, evilName) || strings.Contains(body, `<img src=x`) {
				t.Errorf("GET %s as %s shows a team's markup as markup", g.path, who)
			}
		}
	}
	if _, body := st.do(st.users["admin"], http.MethodGet, "/admin/jobs/"+jobA, nil, nil); !strings.Contains(body, staffSecret) {
		t.Error("the admin's job page has no staff log")
	}
	tokenMatrix(t, st)

	posts := []struct {
		path string
		form url.Values
		want want
	}{
		{"/signup", url.Values{"login": {"carol"}, "password": {"carol-password"}}, want{see, see, see, see}},
		{"/login", url.Values{"login": {"alice"}, "password": {"alice-password"}}, want{see, see, see, see}},
		{"/logout", url.Values{}, want{see, see, see, see}},
		{"/team", url.Values{"name": {"new team"}}, want{denied, conflict, conflict, bad}},
		{"/team/join", url.Values{"invite": {"{B}"}}, want{denied, conflict, conflict, bad}},
		{"/team/target", url.Values{"target": {"http://192.0.2.1/"}}, want{denied, see, see, denied}},
		{"/jobs", url.Values{}, want{denied, see, see, denied}},
		{"/team/server", url.Values{"server": {"1"}}, want{denied, conflict, conflict, denied}}, // teams type their targets here
		{"/admin/servers", url.Values{"team": {"{BID}"}, "address": {"10.9.8.30"}}, want{denied, denied, denied, see}},
		{"/admin/servers/{SRV}/remove", url.Values{}, want{denied, denied, denied, see}},
		{"/signin/0123456789abcdef", url.Values{"password": {"whatever-1"}, "again": {"whatever-1"}}, want{notFound, notFound, notFound, notFound}},
		{"/admin/contest", url.Values{"problem": {example.Name}, "team_size": {"5"}}, want{denied, denied, denied, see}},
		{"/admin/timeline", url.Values{"freezes_at": {"2026-12-01T10:00:00"}}, want{denied, denied, denied, see}},
		{"/admin/timeline/now", url.Values{"event": {"freeze"}}, want{denied, denied, denied, see}},
		{"/admin/teams/{BID}", url.Values{"hidden": {"on"}}, want{denied, denied, denied, see}},
		{"/admin/teams/999999", url.Values{"hidden": {"on"}}, want{denied, denied, denied, notFound}},
		{"/admin/teams/{BID}/rename", url.Values{"name": {"wasps"}}, want{denied, denied, denied, see}},
		{"/admin/teams/{BID}/remove", url.Values{}, want{denied, denied, denied, conflict}},
		{"/admin/jobs/" + jobAErr + "/rerun", url.Values{}, want{denied, denied, denied, see}},
		{"/admin/jobs/" + jobA + "/cancel", url.Values{}, want{denied, denied, denied, conflict}},
		{"/admin/jobs/rerun-errored", url.Values{}, want{denied, denied, denied, see}},
		{"/admin/validation", url.Values{}, want{denied, denied, denied, conflict}}, // the contest has no end
		{"/admin/validation/threshold", url.Values{"threshold": {"80"}}, want{denied, denied, denied, see}},
		{"/admin/teams/{BID}/disqualify", url.Values{"reason": {"copied"}}, want{denied, denied, denied, see}},
		{"/admin/teams/{BID}/reinstate", url.Values{}, want{denied, denied, denied, conflict}},
		{"/admin/workers/w1/clear", url.Values{}, want{denied, denied, denied, notFound}},
		{"/admin/workers/{QW}/clear", url.Values{}, want{denied, denied, denied, see}},
		{"/admin/teams/{DQB}/reinstate", url.Values{}, want{denied, denied, denied, see}},
		{"/admin/teams/999999/disqualify", url.Values{"reason": {"copied"}}, want{denied, denied, denied, notFound}},
		{"/clarifications", url.Values{"question": {"May we?"}}, want{denied, see, see, denied}},
		{"/admin/announcements", url.Values{"text": {"Hello"}}, want{denied, denied, denied, see}},
		{"/admin/clarifications/{QID}", url.Values{"answer": {"No."}, "publish": {"on"}}, want{denied, denied, denied, see}},
		{"/admin/clarifications/999999", url.Values{"answer": {"No."}}, want{denied, denied, denied, notFound}},
		{"/team/tokens", url.Values{"name": {"ci"}}, want{denied, ok, ok, denied}},
		{"/team/tokens/{ATOK}/revoke", url.Values{}, want{denied, see, notFound, denied}},
		{"/account/password", url.Values{"current": {"wrong-password"}, "password": {"long-enough-1"}, "again": {"long-enough-1"}},
			want{denied, http.StatusUnauthorized, http.StatusUnauthorized, http.StatusUnauthorized}},
	}
	for _, p := range posts {
		for _, who := range []string{"anon", "a", "b", "admin"} {
			fresh := newSite(t)
			form := url.Values{}
			for k, v := range p.form {
				form[k] = []string{strings.NewReplacer("{B}", fresh.teamB.InviteCode, "{BID}", strconv.FormatInt(fresh.teamB.ID, 10)).Replace(v[0])}
			}
			path := strings.ReplaceAll(p.path, "{BID}", strconv.FormatInt(fresh.teamB.ID, 10))
			if strings.Contains(path, "{QID}") { // a question of team B's
				q := fresh.ask("bob", "May team B restart its database?")
				path = strings.ReplaceAll(path, "{QID}", strconv.FormatInt(q.ID, 10))
			}
			if strings.Contains(path, "{ATOK}") { // a token of team A's
				_, tok := fresh.token(fresh.jobA.TeamID, "alice", "matrix")
				path = strings.ReplaceAll(path, "{ATOK}", strconv.FormatInt(tok.ID, 10))
			}
			if strings.Contains(path, "{SRV}") { // a server of team B's
				srv, err := portal.ParseServer("10.9.8.31", 0, "", portal.TargetRules{})
				if err == nil {
					srv, err = fresh.store.AddServer(context.Background(), portal.Actor{}, fresh.teamB.ID, srv)
				}
				if err != nil {
					t.Fatal(err)
				}
				path = strings.ReplaceAll(path, "{SRV}", strconv.FormatInt(srv.ID, 10))
			}
			if strings.Contains(path, "{QW}") { // a quarantined worker
				path = strings.ReplaceAll(path, "{QW}", fresh.quarantinedW1())
			}
			if strings.Contains(path, "{DQB}") { // team B, disqualified
				fresh.disqualified(fresh.teamB.ID)
				path = strings.ReplaceAll(path, "{DQB}", strconv.FormatInt(fresh.teamB.ID, 10))
			}
			setup, err := fresh.store.AuditLog(context.Background()) // the placeholders' own entries
			if err != nil {
				t.Fatal(err)
			}
			resp := fresh.post(fresh.users[who], path, form, nil)
			if w := p.want.of(who); resp.StatusCode != w {
				t.Errorf("POST %s as %s: %d, want %d", p.path, who, resp.StatusCode, w)
			}
			// Only an admin's action that succeeded is in the audit log.
			entries, err := fresh.store.AuditLog(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if admin := who == "admin" && resp.StatusCode == see && strings.HasPrefix(p.path, "/admin/"); len(entries)-len(setup) != map[bool]int{true: 1}[admin] {
				t.Errorf("POST %s as %s left %d audit entries", p.path, who, len(entries))
			}
		}
	}
}

func (w want) of(who string) int {
	switch who {
	case "anon":
		return w.anon
	case "a":
		return w.a
	case "b":
		return w.b
	}
	return w.admin
}

// TestCrossOriginPostsRefused: a form posted from another site, as a
// browser says (Sec-Fetch-Site) or by its Origin, changes nothing.
func TestCrossOriginPostsRefused(t *testing.T) {
	st := newSite(t)
	for _, h := range []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Origin": {"http://evil.example"}},
	} {
		resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://198.51.100.9/"}}, h)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a cross-origin post (%v): %d, want 403", h, resp.StatusCode)
		}
	}
	if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://198.51.100.9/"}},
		http.Header{"Sec-Fetch-Site": {"same-origin"}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a same-origin post: %d", resp.StatusCode)
	}
	team, err := st.store.Team(context.Background(), st.jobA.TeamID)
	if err != nil || team.Target != "http://198.51.100.9/" {
		t.Errorf("team A's target %q, %v: only the same-origin post changes it", team.Target, err)
	}
}

// TestSignInLimits: after MaxLoginFailures wrong passwords for a login even
// the right one is refused with 429 and Retry-After, until the window has
// passed; a wrong password and an unknown login get the same answer.
func TestSignInLimits(t *testing.T) {
	st := newSite(t)
	c := st.client()
	_, unknown := st.do(c, http.MethodPost, "/login", url.Values{"login": {"nobody"}, "password": {"whatever-1"}}, nil)
	for i := range web.MaxLoginFailures {
		resp, body := st.do(c, http.MethodPost, "/login", url.Values{"login": {"alice"}, "password": {"wrong-password"}}, nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, resp.StatusCode)
		}
		if i == 0 && strings.ReplaceAll(body, "alice", "nobody") != unknown {
			t.Error("a wrong password and an unknown login answer differently")
		}
	}
	right := url.Values{"login": {"alice"}, "password": {"alice-password"}}
	resp := st.post(c, "/login", right, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("after %d failures: %d, Retry-After %q", web.MaxLoginFailures, resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Another login from the same address is not held back by alice's.
	if resp := st.post(st.client(), "/login", url.Values{"login": {"bob"}, "password": {"bob-password"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("bob's sign-in: %d", resp.StatusCode)
	}
	st.clock.add(web.LoginWindow)
	if resp := st.post(c, "/login", right, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the window: %d", resp.StatusCode)
	}
}

// TestSignInsAtOnceAreCounted: wrong passwords sent all at once are each
// counted before any is checked, so no more than MaxLoginFailures of them
// are tried.
func TestSignInsAtOnceAreCounted(t *testing.T) {
	st := newSite(t)
	const n = 4 * web.MaxLoginFailures
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			form := url.Values{"login": {"alice"}, "password": {"wrong-password"}}
			resp, err := st.client().PostForm(st.url+"/login", form)
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	tried := 0
	for c := range codes {
		switch c {
		case http.StatusUnauthorized:
			tried++
		case http.StatusTooManyRequests:
		default:
			t.Errorf("a sign-in answered %d", c)
		}
	}
	if tried > web.MaxLoginFailures {
		t.Errorf("%d of %d wrong passwords at once were tried, want at most %d", tried, n, web.MaxLoginFailures)
	}
}

// TestSignInLimitsPerAddress: behind a trusted proxy the limits are kept
// per client address (the proxy's last X-Forwarded-For hop): one address's
// failures do not lock the account for another, and a spoofed first hop
// does not escape them. Without TrustProxy the header is ignored.
func TestSignInLimitsPerAddress(t *testing.T) {
	st := newSite(t, func(c *web.Config) { c.TrustProxy = true })
	wrong := url.Values{"login": {"alice"}, "password": {"wrong-password"}}
	right := url.Values{"login": {"alice"}, "password": {"alice-password"}}
	from := func(addr string) http.Header { return http.Header{"X-Forwarded-For": {"203.0.113.77, " + addr}} }
	for range web.MaxLoginFailures {
		st.post(st.client(), "/login", wrong, from("192.0.2.1"))
	}
	if resp := st.post(st.client(), "/login", right, from("192.0.2.1")); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the attacker's address after %d failures: %d", web.MaxLoginFailures, resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", right, from("198.51.100.2")); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the team's own address while another is held: %d", resp.StatusCode)
	}

	direct := newSite(t)
	for i := range web.MaxLoginFailures {
		direct.post(direct.client(), "/login", wrong, from("192.0.2."+strconv.Itoa(i)))
	}
	if resp := direct.post(direct.client(), "/login", right, from("198.51.100.4")); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("without a trusted proxy X-Forwarded-For escaped the limit: %d", resp.StatusCode)
	}
}

// TestSignInLimitsKeepTheOwnerIn: ten sources failing at one login as often
// as they may put it under attack, which leaves each of them one guess
// and then holds it back, even from a new address of its own /64, but
// neither the owner's right password from another source nor the owner's
// open session.
func TestSignInLimitsKeepTheOwnerIn(t *testing.T) {
	st := newSite(t, func(c *web.Config) { c.TrustProxy = true })
	wrong := url.Values{"login": {"alice"}, "password": {"wrong-password"}}
	right := url.Values{"login": {"alice"}, "password": {"alice-password"}}
	from := func(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }
	open := st.client()
	if resp := st.post(open, "/login", right, from("198.51.100.7")); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the owner's first sign-in: %d", resp.StatusCode)
	}
	attacker := func(i int) string { return fmt.Sprintf("2001:db8:%x::1", i) }
	tried := 0
	for i := range 10 {
		for range web.MaxLoginFailures {
			switch resp := st.post(st.client(), "/login", wrong, from(attacker(i))); resp.StatusCode {
			case http.StatusUnauthorized:
				tried++
			case http.StatusTooManyRequests:
			default:
				t.Fatalf("attacker %d's guess: %d", i, resp.StatusCode)
			}
		}
	}
	// Under attack each source has one guess more, not MaxLoginFailures.
	if want := web.MaxAccountFailures + 10 - web.MaxAccountFailures/web.MaxLoginFailures; tried != want {
		t.Errorf("%d guesses tried, want %d", tried, want)
	}
	if resp := st.post(st.client(), "/login", right, from("2001:db8:3::ffff")); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("an attacker from another address of its /64: %d, want 429", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", right, from("198.51.100.8")); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the owner from another source during the attack: %d", resp.StatusCode)
	}
	if resp, _ := st.do(open, http.MethodGet, "/team", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the owner's open session during the attack: %d", resp.StatusCode)
	}
}

// TestSignInLimitsPerSlash64: the addresses of one IPv6 /64 are one source,
// those of the next /64 another; an IPv4 address is a source of its own.
func TestSignInLimitsPerSlash64(t *testing.T) {
	st := newSite(t, func(c *web.Config) { c.TrustProxy = true })
	wrong := url.Values{"login": {"alice"}, "password": {"wrong-password"}}
	right := url.Values{"login": {"alice"}, "password": {"alice-password"}}
	from := func(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }
	for i := range web.MaxLoginFailures {
		st.post(st.client(), "/login", wrong, from(fmt.Sprintf("2001:db8:0:1:%x::1", i+1)))
	}
	if resp := st.post(st.client(), "/login", right, from("2001:db8:0:1:ffff:ffff:ffff:ffff")); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("another address of the same /64: %d, want 429", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", right, from("2001:db8:0:2::1")); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the next /64: %d, want 303", resp.StatusCode)
	}
	for i := range web.MaxLoginFailures {
		st.post(st.client(), "/login", url.Values{"login": {"bob"}, "password": {"wrong-password"}},
			from(fmt.Sprintf("192.0.2.%d", i+1)))
	}
	if resp := st.post(st.client(), "/login", url.Values{"login": {"bob"}, "password": {"bob-password"}},
		from("192.0.2.99")); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("an IPv4 address next to others that failed: %d, want 303", resp.StatusCode)
	}
}

// TestSignUpLimit: one source makes at most portal.DefaultSignupLimit
// accounts within SignupWindow; a refused name does not count.
func TestSignUpLimit(t *testing.T) {
	st := newSite(t)
	if resp := st.post(st.client(), "/signup", url.Values{"login": {"alice"}, "password": {"long-enough-1"}}, nil); resp.StatusCode == http.StatusSeeOther {
		t.Fatal("a taken login was signed up")
	}
	for i := range portal.DefaultSignupLimit {
		form := url.Values{"login": {"user" + strconv.Itoa(i)}, "password": {"long-enough-1"}}
		if resp := st.post(st.client(), "/signup", form, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-up %d: %d", i+1, resp.StatusCode)
		}
	}
	form := url.Values{"login": {"onemore"}, "password": {"long-enough-1"}}
	if resp := st.post(st.client(), "/signup", form, nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("sign-up %d: %d", portal.DefaultSignupLimit+1, resp.StatusCode)
	}
	st.clock.add(web.SignupWindow)
	if resp := st.post(st.client(), "/signup", form, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the window: %d", resp.StatusCode)
	}
}

// TestSignUpLimitIsASetting: the admin sets how many accounts one source
// makes an hour, or none (0 on the form); with assigned servers there is
// none.
func TestSignUpLimitIsASetting(t *testing.T) {
	st := newSite(t)
	n := 0
	signup := func() int {
		n++
		form := url.Values{"login": {"user" + strconv.Itoa(n)}, "password": {"long-enough-1"}}
		return st.post(st.client(), "/signup", form, nil).StatusCode
	}
	settings := func(extra url.Values) {
		form := url.Values{"problem": {example.Name}}
		for k, v := range extra {
			form[k] = v
		}
		if resp := st.post(st.users["admin"], "/admin/contest", form, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("settings %v: %d", extra, resp.StatusCode)
		}
	}
	settings(url.Values{"signup_limit": {"2"}})
	if a, b, c := signup(), signup(), signup(); a != http.StatusSeeOther || b != http.StatusSeeOther || c != http.StatusTooManyRequests {
		t.Errorf("with a limit of 2: %d, %d, %d", a, b, c)
	}
	settings(url.Values{"signup_limit": {"0"}})
	for range portal.DefaultSignupLimit + 1 {
		if code := signup(); code != http.StatusSeeOther {
			t.Fatalf("with no limit: %d", code)
		}
	}
	if _, doc := st.page("admin", "/admin"); doc.Find(`input[name="signup_limit"]`).AttrOr("value", "") != "0" {
		t.Error("the settings form does not show no limit as 0")
	}
	settings(url.Values{"signup_limit": {"1"}, "targets": {"assigned"}})
	if a, b := signup(), signup(); a != http.StatusSeeOther || b != http.StatusSeeOther {
		t.Errorf("with assigned servers: %d, %d", a, b)
	}
}

// TestSignInAgainEndsTheOldSession: signing in while signed in leaves one
// session, the new one.
func TestSignInAgainEndsTheOldSession(t *testing.T) {
	st := newSite(t)
	c := st.users["a"]
	u, _ := url.Parse(st.url)
	old := c.Jar.Cookies(u)
	if resp := st.post(c, "/login", url.Values{"login": {"bob"}, "password": {"bob-password"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in again: %d", resp.StatusCode)
	}
	stale := st.client()
	stale.Jar.SetCookies(u, old)
	if resp, _ := st.do(stale, http.MethodGet, "/team", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the session signed in before still works: %d", resp.StatusCode)
	}
}

// TestLargeBodiesRefused: a form bigger than MaxForm is not read.
func TestLargeBodiesRefused(t *testing.T) {
	st := newSite(t)
	form := url.Values{"login": {"newcomer"}, "password": {"long-enough-1"}, "pad": {strings.Repeat("x", web.MaxForm)}}
	if resp := st.post(st.client(), "/signup", form, nil); resp.StatusCode == http.StatusSeeOther {
		t.Errorf("a %d-byte form was read: %d", len(form.Encode()), resp.StatusCode)
	}
}

// TestNextStaysOnSite: the page a sign-in returns to is a path of the
// portal, never another site.
func TestNextStaysOnSite(t *testing.T) {
	st := newSite(t)
	for next, want := range map[string]string{
		"/jobs":                "/jobs",
		"//evil.example/x":     "/",
		"http://evil.example/": "/",
		`/\evil.example`:       "/",
	} {
		resp := st.post(st.client(), "/login", url.Values{"login": {"alice"}, "password": {"alice-password"}, "next": {next}}, nil)
		if got := resp.Header.Get("Location"); got != want {
			t.Errorf("next %q: to %q, want %q", next, got, want)
		}
	}
}

// TestAdminSeesWorkersHealth: a worker whose recent jobs keep erroring
// through the benchmarker is unhealthy on the admin page; one whose
// heartbeat is old is gone.
func TestAdminSeesWorkersHealth(t *testing.T) {
	st := newSite(t)
	ctx := context.Background()
	for _, w := range []string{"w1", "w2"} {
		if err := st.store.StartWorker(ctx, w, []string{example.Name}); err != nil {
			t.Fatal(err)
		}
	}
	health := func() map[string]string {
		t.Helper()
		_, body := st.do(st.users["admin"], http.MethodGet, "/admin", nil, nil)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		doc.Find("tr").Each(func(_ int, tr *goquery.Selection) {
			cells := tr.Find("td")
			if cells.Length() == 7 {
				out[cells.Eq(0).Text()] = cells.Eq(6).Text()
			}
		})
		return out
	}
	// w1 ran team A's two jobs: one passed, one errored internally.
	if h := health(); h["w1"] != "ok" || h["w2"] != "ok" {
		t.Errorf("health %v, want both ok", h)
	}
	teamB := st.teamB.ID
	for i := range 2 {
		st.endedJob(teamB, int64(9100+i), portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonDeadline, Error: "hung"})
	}
	if h := health(); h["w1"] != "unhealthy" {
		t.Errorf("health %v: w1 has 3 errored of its last 4 jobs", h)
	}
	st.clock.add(web.WorkerGone + time.Second)
	if h := health(); h["w1"] != "gone" || h["w2"] != "gone" {
		t.Errorf("health %v after %s without a heartbeat", h, web.WorkerGone)
	}
}

// TestLocalTargetsOnlyWhenAllowed: a team cannot aim the workers at their
// own machine (loopback, the cloud's metadata address) unless the admin
// allows local targets for the contest.
func TestLocalTargetsOnlyWhenAllowed(t *testing.T) {
	st := newSite(t)
	for _, target := range []string{"http://127.0.0.1:8080/", "http://localhost/", "http://169.254.169.254/"} {
		if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {target}}, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s registered: %d", target, resp.StatusCode)
		}
	}
	if resp := st.post(st.users["admin"], "/admin/contest", url.Values{"problem": {example.Name}, "local_targets": {"on"}}, nil); resp.StatusCode != see {
		t.Fatalf("allowing local targets: %d", resp.StatusCode)
	}
	if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://127.0.0.1:8080/"}}, nil); resp.StatusCode != see {
		t.Errorf("a local target once allowed: %d", resp.StatusCode)
	}
}

// TestTargetsAreOneTeamsAndFixedAtTheEnd: a team cannot register a host
// another team's target is on (however the host is spelled), and once the
// contest is over for it, cannot change its target: its validation run
// measures the app it ended with.
func TestTargetsAreOneTeamsAndFixedAtTheEnd(t *testing.T) {
	st := newSite(t)
	if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://Team-A.example.:8080/"}}, nil); resp.StatusCode != see {
		t.Fatalf("team A's own host: %d", resp.StatusCode)
	}
	for _, target := range []string{"http://team-a.example/", "https://TEAM-A.EXAMPLE:9443/x"} {
		if resp := st.post(st.users["b"], "/team/target", url.Values{"target": {target}}, nil); resp.StatusCode != http.StatusConflict {
			t.Errorf("team B on team A's host (%s): %d", target, resp.StatusCode)
		}
	}
	if resp := st.post(st.users["b"], "/team/target", url.Values{"target": {"http://[::ffff:10.9.8.8]:81/"}}, nil); resp.StatusCode != see {
		t.Fatalf("team B's own host: %d", resp.StatusCode)
	}
	if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://10.9.8.8/"}}, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("team A on team B's address, spelled without ::ffff: %d", resp.StatusCode)
	}
	ctx := context.Background()
	c, err := st.store.Contest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.StartsAt, c.EndsAt = st.clock.Now().Add(-2*time.Hour), st.clock.Now().Add(-time.Minute)
	if err := st.store.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://team-a2.example/"}}, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("a target changed after the end: %d", resp.StatusCode)
	}
	if team, err := st.store.Team(ctx, st.teamB.ID); err != nil || team.Target != "http://[::ffff:10.9.8.8]:81/" {
		t.Errorf("team B's target %q, %v", team.Target, err)
	}
}

// TestTargetNetworksFromTheAdminPage: the admin page says targets are
// unrestricted until the admin sets the team servers' networks; then a
// target outside them is refused, one inside taken, and a bad network is
// refused with the settings unchanged.
func TestTargetNetworksFromTheAdminPage(t *testing.T) {
	st := newSite(t)
	if _, doc := st.page("admin", "/admin"); doc.Find("#targets-unrestricted").Length() != 1 {
		t.Error("no word that targets are unrestricted")
	}
	form := url.Values{"problem": {example.Name}, "target_networks": {"10.9.0.0/16, 192.0.2.0/24"}}
	if resp := st.post(st.users["admin"], "/admin/contest", form, nil); resp.StatusCode != see {
		t.Fatalf("setting the networks: %d", resp.StatusCode)
	}
	_, doc := st.page("admin", "/admin")
	if doc.Find("#targets-unrestricted").Length() != 0 || doc.Find(`input[name=target_networks]`).AttrOr("value", "") != "10.9.0.0/16, 192.0.2.0/24" {
		t.Errorf("the page after: unrestricted %d, networks %q", doc.Find("#targets-unrestricted").Length(),
			doc.Find(`input[name=target_networks]`).AttrOr("value", ""))
	}
	if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://203.0.113.5/"}}, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a target outside the networks: %d", resp.StatusCode)
	}
	if resp := st.post(st.users["a"], "/team/target", url.Values{"target": {"http://10.9.1.2:8080/"}}, nil); resp.StatusCode != see {
		t.Errorf("a target inside: %d", resp.StatusCode)
	}
	form.Set("target_networks", "10.9.0.0/33")
	if resp := st.post(st.users["admin"], "/admin/contest", form, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad network: %d", resp.StatusCode)
	}
	if c, err := st.store.Contest(context.Background()); err != nil || len(c.Settings.TargetNetworks) != 2 {
		t.Errorf("networks %v after a bad form, %v", c.Settings.TargetNetworks, err)
	}
}

// TestScoresRoundAsTheScriptDoes: a half is rounded up on the page, as the
// live script's Math.round does, so a live update shows the same digits.
func TestScoresRoundAsTheScriptDoes(t *testing.T) {
	st := newSite(t)
	st.endedJob(st.teamB.ID, 9100, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 1234.5})
	_, body := st.do(st.users["anon"], http.MethodGet, "/leaderboard", nil, nil)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Find("table").Text(), "1235") {
		t.Errorf("a score of 1234.5 is not shown as 1235: %q", doc.Find("table").Text())
	}
}

// TestTeamlessContestantIsSentToTeam: a signed-in contestant without a team
// who opens a team's page is sent to make or join one; a form post, and an
// event stream (which a browser's EventSource opens, and which follows no
// redirect), are refused.
func TestTeamlessContestantIsSentToTeam(t *testing.T) {
	st := newSite(t)
	c := st.client()
	if resp := st.post(c, "/signup", url.Values{"login": {"carol"}, "password": {"long-enough-1"}}, nil); resp.StatusCode != see {
		t.Fatalf("signing up: %d", resp.StatusCode)
	}
	for _, path := range []string{"/jobs", "/jobs/1"} {
		if resp, _ := st.do(c, http.MethodGet, path, nil, nil); resp.StatusCode != see || resp.Header.Get("Location") != "/team" {
			t.Errorf("GET %s: %d to %q", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if resp := st.post(c, "/jobs", url.Values{}, nil); resp.StatusCode != denied {
		t.Errorf("POST /jobs: %d", resp.StatusCode)
	}
	if resp, _ := st.do(c, http.MethodGet, "/jobs/1/events", nil, nil); resp.StatusCode != denied {
		t.Errorf("GET /jobs/1/events: %d", resp.StatusCode)
	}
}
