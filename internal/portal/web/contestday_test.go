package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
	"github.com/tunecon/tunecon/internal/portal/web"
	"github.com/tunecon/tunecon/problems/example"
)

// systems are the database systems the tests that run on each use
// (storetest.Systems.Run): TestMain makes them, and stops PostgreSQL's
// private server at the end.
var systems *storetest.Systems

func TestMain(m *testing.M) {
	systems = storetest.New()
	code := m.Run()
	systems.Close()
	os.Exit(code)
}

// liveSite is newSiteAt with the live pages fed, reading the database every
// 20 ms: pages follow the database within a moment (see eventually).
func liveSite(t *testing.T, dsn string) *site {
	t.Helper()
	st := newSiteAt(t, dsn, func(c *web.Config) { c.PollEvery = 20 * time.Millisecond })
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go st.server.Run(ctx)
	return st
}

// eventually retries check until it returns "" or 5 s have passed, then
// fails with what it last said.
func eventually(t *testing.T, what string, check func() string) {
	t.Helper()
	end := time.Now().Add(5 * time.Second)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(end) {
			t.Errorf("%s: %s", what, msg)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// page is a page as who sees it, parsed.
func (st *site) page(who, path string) (int, *goquery.Document) {
	st.t.Helper()
	resp, body := st.do(st.users[who], http.MethodGet, path, nil, nil)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		st.t.Fatal(err)
	}
	return resp.StatusCode, doc
}

// board is the leaderboard's lines as who sees them, each "rank|team|...".
func (st *site) board(who, path string) []string {
	st.t.Helper()
	_, doc := st.page(who, path)
	var out []string
	doc.Find("table.board tbody tr").Each(func(_ int, tr *goquery.Selection) {
		var cells []string
		tr.Find("td").Each(func(_ int, td *goquery.Selection) { cells = append(cells, strings.TrimSpace(td.Text())) })
		out = append(out, strings.Join(cells, "|"))
	})
	return out
}

// boardIs checks who's board at path until it reads want.
func (st *site) boardIs(who, path string, want ...string) {
	st.t.Helper()
	eventually(st.t, "the board at "+path+" as "+who, func() string {
		if got := st.board(who, path); !slices.Equal(got, want) {
			return strings.Join(got, " / ") + "; want " + strings.Join(want, " / ")
		}
		return ""
	})
}

// now presses an admin's timeline button.
func (st *site) now(e portal.Event) {
	st.t.Helper()
	if resp := st.post(st.users["admin"], "/admin/timeline/now", url.Values{"event": {string(e)}}, nil); resp.StatusCode != see {
		st.t.Fatalf("%s now: %d", e, resp.StatusCode)
	}
}

// series is the chart's data as who sees it: each team's scores.
func (st *site) series(who string) map[string][]float64 {
	st.t.Helper()
	_, body := st.do(st.users[who], http.MethodGet, "/leaderboard/history", nil, nil)
	var h struct {
		Series []struct {
			Team   string       `json:"team"`
			Points [][2]float64 `json:"points"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		st.t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, s := range h.Series {
		for _, p := range s.Points {
			out[s.Team] = append(out[s.Team], p[1])
		}
	}
	return out
}

// firstEvents reads a server-sent event stream's first n events.
func (st *site) firstEvents(who, path string, n int) []event {
	st.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, st.url+path, nil)
	c := *st.users[who]
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []event
	var cur event
	sc := bufio.NewScanner(resp.Body)
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.name != "":
			out = append(out, cur)
			cur = event{}
		}
	}
	return out
}

// TestFreezeAndReveal is the board's day on a clock the test controls, on
// each database system. Team A passed with 4321, then the board froze;
// after it team B scored 5000 and team A 6000. The public board and chart
// stay as they were at the freeze; each team sees its own latest score
// beside it, never the other's; the admin sees the live board under a
// "frozen" banner. The reveal publishes the final board, and the ceremony
// page shows it from the bottom, one team at a time.
func TestFreezeAndReveal(t *testing.T) { systems.Run(t, testFreezeAndReveal) }

func testFreezeAndReveal(t *testing.T, db storetest.System) {
	st := liveSite(t, db.NewDSN(t))
	a := evilName
	st.clock.add(time.Second)
	st.now(portal.EventFreeze)
	st.clock.add(time.Minute)
	st.endedJob(st.teamB.ID, 9101, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 5000})
	st.clock.add(time.Minute)
	st.endedJob(st.jobA.TeamID, 9102, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 6000})

	frozen := []string{"1|" + a + "|4321|1", "—|bees|—|0"}
	for _, who := range []string{"anon", "a", "b"} {
		st.boardIs(who, "/leaderboard", frozen...)
	}
	st.boardIs("admin", "/leaderboard", "1|"+a+"|6000|2", "2|bees|5000|1")
	own := func(who string) string {
		_, doc := st.page(who, "/leaderboard")
		return strings.Join(strings.Fields(doc.Find("#own-now").Text()), " ")
	}
	banner := func(who string) string {
		_, doc := st.page(who, "/leaderboard")
		return doc.Find("#frozen-banner").Text()
	}
	if got := own("a"); !strings.HasPrefix(got, "Your team now: score 6000, runs 2") {
		t.Errorf("team A's own line: %q", got)
	}
	if got := own("b"); !strings.HasPrefix(got, "Your team now: score 5000, runs 1") {
		t.Errorf("team B's own line: %q", got)
	}
	if got := own("anon") + own("admin"); got != "" {
		t.Errorf("an own line for nobody's team: %q", got)
	}
	if got := banner("anon"); !strings.Contains(got, "frozen since") {
		t.Errorf("the public's banner: %q", got)
	}
	if got := banner("admin"); !strings.Contains(got, "Frozen since") || !strings.Contains(got, "You see it live") {
		t.Errorf("the admin's banner: %q", got)
	}
	// The chart: the others' scores stop at the freeze, the team's own go on.
	for who, want := range map[string]map[string][]float64{
		"anon":  {a: {4321}},
		"a":     {a: {4321, 6000}},
		"b":     {a: {4321}, "bees": {5000}},
		"admin": {a: {4321, 6000}, "bees": {5000}},
	} {
		if got := st.series(who); !equalSeries(got, want) {
			t.Errorf("the chart as %s: %v, want %v", who, got, want)
		}
	}
	// The live streams say the same.
	for who, want := range map[string]string{"anon": "", "a": "6000", "b": "5000"} {
		events := st.firstEvents(who, "/leaderboard/events", map[bool]int{true: 1, false: 2}[want == ""])
		if len(events) == 0 || events[0].name != "board" || !strings.Contains(events[0].data, `"frozen":true`) ||
			strings.Contains(events[0].data, "6000") || strings.Contains(events[0].data, "5000") {
			t.Errorf("%s's first board event: %v", who, events)
		}
		if want != "" && (len(events) < 2 || events[1].name != "own" || !strings.Contains(events[1].data, `"score":`+want)) {
			t.Errorf("%s's own event: %v", who, events)
		}
	}

	// The ceremony, before the reveal: from the bottom.
	_, doc := st.page("admin", "/admin/ceremony?shown=1")
	if shown, veiled := doc.Find("tr.shown").Text(), doc.Find("tr.veiled").Length(); !strings.Contains(shown, "bees") ||
		!strings.Contains(shown, "5000") || veiled != 1 {
		t.Errorf("the ceremony with one team shown: %q and %d veiled", shown, veiled)
	}
	if _, doc := st.page("admin", "/admin/ceremony?shown=2"); doc.Find("tr.veiled").Length() != 0 ||
		!strings.Contains(doc.Find("tr.shown").First().Text(), "6000") || doc.Find("#next").Length() != 0 {
		t.Errorf("the ceremony with every team shown: %q", doc.Find("table").Text())
	}
	st.boardIs("anon", "/leaderboard", frozen...) // the ceremony changes nothing

	st.clock.add(time.Minute)
	st.now(portal.EventReveal)
	final := []string{"1|" + a + "|6000|2", "2|bees|5000|1"}
	for _, who := range []string{"anon", "a", "b", "admin"} {
		st.boardIs(who, "/leaderboard", final...)
	}
	if got := banner("anon") + own("a"); got != "" {
		t.Errorf("after the reveal, a frozen banner or an own line: %q", got)
	}
	if _, doc := st.page("anon", "/leaderboard"); !strings.Contains(doc.Find(".banner.revealed").Text(), "final board") {
		t.Errorf("no word of the final board: %q", doc.Find("main").Text())
	}
	if got := st.series("anon"); !equalSeries(got, map[string][]float64{a: {4321, 6000}, "bees": {5000}}) {
		t.Errorf("the chart after the reveal: %v", got)
	}
}

func equalSeries(a, b map[string][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestEnqueueFollowsTheTimelineOverHTTP: the enqueue button works only
// while the contest runs for the team; extra time lets one team go on.
func TestEnqueueFollowsTheTimelineOverHTTP(t *testing.T) {
	st := newSite(t)
	at := func(d time.Duration) string { return st.clock.Now().Add(d).UTC().Format("2006-01-02T15:04:05") }
	if resp := st.post(st.users["admin"], "/admin/timeline", url.Values{"starts_at": {at(time.Hour)}}, nil); resp.StatusCode != see {
		t.Fatalf("setting the start: %d", resp.StatusCode)
	}
	enqueue := func(who string, want int, says string) int64 {
		t.Helper()
		resp, body := st.do(st.users[who], http.MethodPost, "/jobs", url.Values{}, nil)
		if resp.StatusCode != want || !strings.Contains(body, says) {
			t.Errorf("%s enqueues: %d, want %d saying %q", who, resp.StatusCode, want, says)
		}
		id, _ := strconv.ParseInt(strings.TrimPrefix(resp.Header.Get("Location"), "/jobs/"), 10, 64)
		return id
	}
	cancel := func(id int64) {
		t.Helper()
		if resp := st.post(st.users["admin"], "/admin/jobs/"+strconv.FormatInt(id, 10)+"/cancel", url.Values{}, nil); resp.StatusCode != see {
			t.Fatalf("cancelling job %d: %d", id, resp.StatusCode)
		}
	}
	enqueue("a", conflict, "not started")
	if _, doc := st.page("a", "/"); doc.Find(`form[action="/jobs"] button[disabled]`).Length() != 1 {
		t.Error("the enqueue button is not disabled before the start")
	}
	st.now(portal.EventStart)
	cancel(enqueue("a", see, ""))
	st.clock.add(time.Second)
	st.now(portal.EventEnd)
	enqueue("a", conflict, "over")
	enqueue("b", conflict, "over")
	if resp := st.post(st.users["admin"], "/admin/teams/"+strconv.FormatInt(st.jobA.TeamID, 10),
		url.Values{"extra_minutes": {"10"}}, nil); resp.StatusCode != see {
		t.Fatalf("extra time for team A: %d", resp.StatusCode)
	}
	_, doc := st.page("a", "/")
	if state := doc.Find("#contest-state").Text(); state != "running" || !strings.Contains(doc.Find("table.timeline").Text(), "10m0s extra") {
		t.Errorf("team A's contest page: %q, %q", state, doc.Find("table.timeline").Text())
	}
	cancel(enqueue("a", see, ""))
	enqueue("b", conflict, "over")
	st.clock.add(10 * time.Minute)
	enqueue("a", conflict, "over")
}

// TestEveryAdminActionIsAuditedOnce: each admin action over HTTP is one
// entry of the audit log, by the admin who did it, on each database system;
// a save that changes nothing and a refused action are none. The log is on
// its page and exported as JSON.
func TestEveryAdminActionIsAuditedOnce(t *testing.T) {
	systems.Run(t, testEveryAdminActionIsAuditedOnce)
}

func testEveryAdminActionIsAuditedOnce(t *testing.T, db storetest.System) {
	st := newSiteAt(t, db.NewDSN(t))
	admin := st.users["admin"]
	post := func(path string, form url.Values, want int) *http.Response {
		t.Helper()
		resp := st.post(admin, path, form, nil)
		if resp.StatusCode != want {
			t.Errorf("POST %s %v: %d, want %d", path, form, resp.StatusCode, want)
		}
		return resp
	}
	at := func(d time.Duration) string { return st.clock.Now().Add(d).UTC().Format("2006-01-02T15:04:05") }
	settings := url.Values{"problem": {example.Name}, "ranking": {"best"}, "team_size": {"4"}}
	post("/admin/contest", settings, see)
	post("/admin/contest", settings, see) // nothing changes
	times := url.Values{"starts_at": {at(-time.Hour)}, "ends_at": {at(2 * time.Hour)}}
	post("/admin/timeline", times, see)
	post("/admin/timeline", times, see) // nothing changes
	post("/admin/timeline", url.Values{"starts_at": {at(time.Hour)}, "ends_at": {at(-time.Hour)}}, bad)
	post("/admin/timeline/now", url.Values{"event": {"lunch"}}, bad)
	st.now(portal.EventFreeze)
	// The timeline form as the admin page shows it, saved again: the times
	// set to the nanosecond by the button stay as they are.
	_, doc := st.page("admin", "/admin")
	shown := url.Values{}
	doc.Find(`form[action="/admin/timeline"] input`).Each(func(_ int, in *goquery.Selection) {
		shown.Set(in.AttrOr("name", ""), in.AttrOr("value", ""))
	})
	if shown.Get("freezes_at") == "" {
		t.Fatalf("the admin page shows no freeze: %v", shown)
	}
	post("/admin/timeline", shown, see)
	post("/admin/teams/"+strconv.FormatInt(st.teamB.ID, 10), url.Values{"hidden": {"on"}, "extra_minutes": {"0"}}, see)
	post("/admin/teams/999999", url.Values{}, notFound)
	rerun := post("/admin/jobs/"+strconv.FormatInt(st.jobAErr.ID, 10)+"/rerun", url.Values{}, see).Header.Get("Location")
	post(rerun+"/cancel", url.Values{}, see)
	post("/admin/jobs/"+strconv.FormatInt(st.jobA.ID, 10)+"/cancel", url.Values{}, conflict)
	st.clock.add(time.Minute)
	st.now(portal.EventEnd)
	// After the end: validation, its threshold, a disqualification (saved
	// again unchanged: none), lifted (twice: the second refused).
	post("/admin/validation", url.Values{}, see)
	post("/admin/validation/threshold", url.Values{"threshold": {"80"}}, see)
	teamB := "/admin/teams/" + strconv.FormatInt(st.teamB.ID, 10)
	post(teamB+"/disqualify", url.Values{"reason": {"copied"}}, see)
	post(teamB+"/disqualify", url.Values{"reason": {"copied"}}, see) // nothing changes
	post(teamB+"/reinstate", url.Values{}, see)
	post(teamB+"/reinstate", url.Values{}, conflict)
	post("/admin/jobs/rerun-errored", url.Values{}, conflict) // the errored job has its rerun
	st.now(portal.EventReveal)

	resp, body := st.do(admin, http.MethodGet, "/admin/audit.json", nil, nil)
	if resp.StatusCode != ok || resp.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("the export: %d, %v", resp.StatusCode, resp.Header)
	}
	var entries []portal.AuditEntry
	if err := json.Unmarshal([]byte(body), &entries); err != nil {
		t.Fatalf("the export: %v\n%s", err, body)
	}
	root, _, err := st.store.AccountByLogin(context.Background(), "root")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{portal.AuditSettings, portal.AuditTimeline, portal.AuditNow + "freeze", portal.AuditTeam,
		portal.AuditRerun, portal.AuditCancel, portal.AuditNow + "end", portal.AuditValidate, portal.AuditSettings,
		portal.AuditDisqualify, portal.AuditReinstate, portal.AuditNow + "reveal"}
	var got []string
	for _, e := range entries {
		got = append(got, e.Action)
		if e.By != portal.ActorOf(root) || e.At.IsZero() || len(e.Detail) == 0 {
			t.Errorf("entry %+v: not root's, or no time or detail", e)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the audit log %v, want %v", got, want)
	}
	_, doc = st.page("admin", "/admin/audit")
	if n := doc.Find("table.audit tbody tr").Length(); n != len(want) {
		t.Errorf("the audit page has %d lines, want %d", n, len(want))
	}
	if first := doc.Find("table.audit tbody tr td").Eq(3).Text(); first != portal.AuditNow+"reveal" {
		t.Errorf("the audit page's first line is %q, want the newest", first)
	}
	if what := doc.Find("table.audit tbody tr").Eq(8).Find("td.what").Text(); what != "hidden: false → true" {
		t.Errorf("the team update says %q", what)
	}
}

// TestBracketsAndHiddenTeams: with brackets, a team chooses one when it is
// made, and each bracket has its board with its own ranks; a hidden team is
// on no public board, and on the admin's marked; the ranking rule is a
// setting.
func TestBracketsAndHiddenTeams(t *testing.T) {
	st := liveSite(t, systems.MigratedSQLite(t))
	admin := st.users["admin"]
	a := evilName
	if resp := st.post(admin, "/admin/contest", url.Values{"problem": {example.Name}, "brackets": {"students, general"}}, nil); resp.StatusCode != see {
		t.Fatalf("setting brackets: %d", resp.StatusCode)
	}
	carol := st.client()
	if resp := st.post(carol, "/signup", url.Values{"login": {"carol"}, "password": {"carol-password"}}, nil); resp.StatusCode != see {
		t.Fatalf("carol signs up: %d", resp.StatusCode)
	}
	st.users["c"] = carol
	if _, doc := st.page("c", "/team"); doc.Find(`select[name=bracket] option`).Length() != 2 {
		t.Error("the team form offers no brackets")
	}
	for _, c := range []struct {
		bracket string
		want    int
	}{{"", bad}, {"pros", bad}, {"students", see}} {
		if resp := st.post(carol, "/team", url.Values{"name": {"cats"}, "bracket": {c.bracket}}, nil); resp.StatusCode != c.want {
			t.Errorf("a team in bracket %q: %d, want %d", c.bracket, resp.StatusCode, c.want)
		}
	}
	for id, form := range map[int64]url.Values{
		st.jobA.TeamID: {"bracket": {"general"}},
		st.teamB.ID:    {"bracket": {"general"}, "hidden": {"on"}},
	} {
		if resp := st.post(admin, "/admin/teams/"+strconv.FormatInt(id, 10), form, nil); resp.StatusCode != see {
			t.Fatalf("team %d's place: %d", id, resp.StatusCode)
		}
	}
	st.endedJob(st.teamB.ID, 9101, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 9999})
	st.boardIs("anon", "/leaderboard", "1|"+a+"|general|4321|1", "—|cats|students|—|0")
	st.boardIs("admin", "/leaderboard", "—|bees (hidden)|general|9999|1", "1|"+a+"|general|4321|1", "—|cats|students|—|0")
	st.boardIs("anon", "/leaderboard?bracket=students", "—|cats|—|0")
	st.boardIs("anon", "/leaderboard?bracket=general", "1|"+a+"|4321|1")
	st.boardIs("admin", "/leaderboard?bracket=general", "—|bees (hidden)|9999|1", "1|"+a+"|4321|1")
	st.boardIs("b", "/leaderboard?bracket=general", "1|"+a+"|4321|1")
	if code, _ := st.page("anon", "/leaderboard?bracket=pros"); code != notFound {
		t.Errorf("a board of no bracket: %d", code)
	}
	if events := st.firstEvents("anon", "/leaderboard/events?bracket=students", 1); len(events) != 1 ||
		!strings.Contains(events[0].data, `"team":"cats"`) || strings.Contains(events[0].data, "4321") {
		t.Errorf("the students' stream: %v", events)
	}

	// Latest or best: team A drops to 1000.
	st.clock.add(time.Minute)
	st.endedJob(st.jobA.TeamID, 9102, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 1000})
	st.boardIs("anon", "/leaderboard?bracket=general", "1|"+a+"|1000|2")
	if resp := st.post(admin, "/admin/contest", url.Values{"problem": {example.Name}, "ranking": {"best"}}, nil); resp.StatusCode != see {
		t.Fatalf("ranking by best: %d", resp.StatusCode)
	}
	st.boardIs("anon", "/leaderboard?bracket=general", "1|"+a+"|4321|2")
	if resp := st.post(admin, "/admin/contest", url.Values{"problem": {example.Name}, "ranking": {"worst"}}, nil); resp.StatusCode != bad {
		t.Errorf("an unknown rule: %d", resp.StatusCode)
	}
}

// TestRegistrationOpens: before the registration opens nobody signs up or
// makes or joins a team; from then on they do.
func TestRegistrationOpens(t *testing.T) {
	st := newSite(t)
	opens := st.clock.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05")
	if resp := st.post(st.users["admin"], "/admin/timeline", url.Values{"registration_at": {opens}}, nil); resp.StatusCode != see {
		t.Fatalf("setting the registration: %d", resp.StatusCode)
	}
	signup := url.Values{"login": {"carol"}, "password": {"carol-password"}}
	resp, body := st.do(st.client(), http.MethodPost, "/signup", signup, nil)
	if resp.StatusCode != conflict || !strings.Contains(body, "registration opens at") {
		t.Errorf("a sign-up before the registration: %d", resp.StatusCode)
	}
	// An account made otherwise cannot make or join a team yet.
	h, _ := passwords.Hash("dave-password")
	if _, err := st.store.CreateAccount(context.Background(), "dave", h, portal.RoleContestant); err != nil {
		t.Fatal(err)
	}
	dave := st.client()
	st.post(dave, "/login", url.Values{"login": {"dave"}, "password": {"dave-password"}}, nil)
	if resp := st.post(dave, "/team", url.Values{"name": {"early"}}, nil); resp.StatusCode != conflict {
		t.Errorf("a team before the registration: %d", resp.StatusCode)
	}
	if resp := st.post(dave, "/team/join", url.Values{"invite": {st.teamB.InviteCode}}, nil); resp.StatusCode != conflict {
		t.Errorf("a join before the registration: %d", resp.StatusCode)
	}
	st.now(portal.EventRegistration)
	if resp := st.post(st.client(), "/signup", signup, nil); resp.StatusCode != see {
		t.Errorf("a sign-up once the registration opened: %d", resp.StatusCode)
	}
	if resp := st.post(dave, "/team", url.Values{"name": {"early"}}, nil); resp.StatusCode != see {
		t.Errorf("a team once the registration opened: %d", resp.StatusCode)
	}
}
