package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
	"github.com/tunecon/tunecon/internal/portal/web"
)

// bearer is the header of an API call with token ("" for none).
func bearer(token string) http.Header {
	if token == "" {
		return nil
	}
	return http.Header{"Authorization": {"Bearer " + token}}
}

// api calls the API with token, without cookies.
func (st *site) api(token, path string) (*http.Response, string) {
	st.t.Helper()
	return st.do(st.client(), http.MethodGet, path, nil, bearer(token))
}

// token makes a token of a team through the store, as its member login.
func (st *site) token(teamID int64, login, name string) (string, portal.APIToken) {
	st.t.Helper()
	token, hash := portal.NewAPIToken()
	t, err := st.store.CreateAPIToken(context.Background(), teamID, login, name, hash)
	if err != nil {
		st.t.Fatal(err)
	}
	return token, t
}

// apiErrorCode is the code of an API error document ("" if body is none).
func apiErrorCode(body string) string {
	var doc struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &doc) != nil || doc.Error.Message == "" {
		return ""
	}
	return doc.Error.Code
}

// apiStream reads an API event stream with token in the background, until
// stop is called or the test ends.
func (st *site) apiStream(token, path string) (events <-chan event, stop func()) {
	st.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, st.url+path, nil)
	for k, v := range bearer(token) {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		st.t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	out := make(chan event, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
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
				select {
				case out <- cur:
				case <-ctx.Done():
					return
				}
				cur = event{}
			}
		}
	}()
	return out, cancel
}

// nextEvent waits up to 5 s for a stream's next event (ok false: none).
func nextEvent(events <-chan event) (e event, ok bool) {
	select {
	case e, ok = <-events:
		return e, ok
	case <-time.After(5 * time.Second):
		return event{}, false
	}
}

// apiEvents reads the first n events of an API stream, with token.
func (st *site) apiEvents(token, path string, n int) []event {
	st.t.Helper()
	events, stop := st.apiStream(token, path)
	defer stop()
	var out []event
	for len(out) < n {
		e, ok := nextEvent(events)
		if !ok {
			break
		}
		out = append(out, e)
	}
	return out
}

// apiLines is an API board document's lines in the form of site.board
// ("rank|team|score|runs", "—" for no rank or score, "DQ" for a
// disqualified team's rank), to compare with the HTML board.
func apiLines(t *testing.T, body string) []string {
	t.Helper()
	var doc struct {
		Rows []struct {
			Rank         int      `json:"rank"`
			Team         string   `json:"team"`
			Score        *float64 `json:"score"`
			Runs         int      `json:"runs"`
			Disqualified bool     `json:"disqualified"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("an API board: %v: %.200s", err, body)
	}
	var out []string
	for _, r := range doc.Rows {
		rank, score := "—", "—"
		if r.Disqualified {
			rank = "DQ"
		} else if r.Rank != 0 {
			rank = strconv.Itoa(r.Rank)
		}
		if r.Score != nil {
			score = strconv.FormatFloat(math.Round(*r.Score), 'f', 0, 64)
		}
		out = append(out, strings.Join([]string{rank, r.Team, score, strconv.Itoa(r.Runs)}, "|"))
	}
	return out
}

// TestAPITokens: a member makes a token on the team page, which shows it
// once; the database holds only its hash. The token reads the team's own
// jobs, page by page, and not another team's (404, as a job that does not
// exist); revoked, it is refused (401). A team holds at most
// MaxAPITokens. Tokens open no page, and sessions no API route.
func TestAPITokens(t *testing.T) {
	dir := t.TempDir()
	st := newSiteAt(t, "sqlite:"+filepath.Join(dir, "portal.db"))
	ctx := context.Background()
	resp, body := st.do(st.users["a"], http.MethodPost, "/team/tokens", url.Values{"name": {"overlay"}}, nil)
	if resp.StatusCode != ok || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("making a token: %d, %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	token := doc.Find("#api-token").Text()
	if !strings.HasPrefix(token, portal.APITokenPrefix) || len(token) != len(portal.APITokenPrefix)+64 {
		t.Fatalf("the token shown: %q", token)
	}
	_, team := st.do(st.users["a"], http.MethodGet, "/team", nil, nil)
	if strings.Contains(team, token) || !strings.Contains(team, "overlay") {
		t.Error("the team page shows the token again, or not its name")
	}
	// At rest: the hash, never the token (the SQLite file and its log).
	raw := ""
	for _, f := range []string{"portal.db", "portal.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		raw += string(b)
	}
	if strings.Contains(raw, token) || strings.Contains(raw, token[len(portal.APITokenPrefix):]) || !strings.Contains(raw, portal.TokenHash(token)) {
		t.Error("the database holds the token, or not its hash")
	}
	stored, err := st.store.APITokenByHash(ctx, portal.TokenHash(token))
	if err != nil || stored.Name != "overlay" || stored.CreatedBy != "alice" || !stored.LastUsedAt.IsZero() {
		t.Fatalf("the stored token %+v, %v", stored, err)
	}

	// Its team's jobs, newest first, a page at a time.
	type page struct {
		Jobs []struct {
			ID    int64    `json:"id"`
			State string   `json:"state"`
			Score *float64 `json:"score"`
		} `json:"jobs"`
		Next *string `json:"next"`
	}
	resp, body = st.api(token, "/api/v1/jobs?limit=1")
	var p page
	if err := json.Unmarshal([]byte(body), &p); err != nil || resp.StatusCode != ok || len(p.Jobs) != 1 ||
		p.Jobs[0].ID != st.jobAErr.ID || p.Next == nil || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the first page: %d %s (%v)", resp.StatusCode, body, err)
	}
	_, body = st.api(token, *p.Next)
	p = page{}
	if err := json.Unmarshal([]byte(body), &p); err != nil || len(p.Jobs) != 1 || p.Jobs[0].ID != st.jobA.ID ||
		p.Jobs[0].Score == nil || *p.Jobs[0].Score != 4321 || p.Next != nil {
		t.Errorf("the second page: %s", body)
	}
	if strings.Contains(body, staffSecret) {
		t.Error("the job list shows the staff log")
	}
	if resp, _ := st.api(token, "/api/v1/jobs?limit=0"); resp.StatusCode != bad {
		t.Errorf("a page of 0 jobs: %d", resp.StatusCode)
	}
	resp, body = st.api(token, "/api/v1/jobs/"+strconv.FormatInt(st.jobA.ID, 10))
	if resp.StatusCode != ok || !strings.Contains(body, `"result":{`) || strings.Contains(body, staffSecret) {
		t.Errorf("team A's job: %d %s", resp.StatusCode, body)
	}
	jobB := st.endedJob(st.teamB.ID, 9200, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 777})
	resp, other := st.api(token, "/api/v1/jobs/"+strconv.FormatInt(jobB.ID, 10))
	_, none := st.api(token, "/api/v1/jobs/999999")
	if resp.StatusCode != notFound || apiErrorCode(other) != "not-found" || other != none {
		t.Errorf("team B's job with team A's token: %d %s (a missing job: %s)", resp.StatusCode, other, none)
	}
	if _, body := st.api(token, "/api/v1/jobs"); strings.Contains(body, `"id":`+strconv.FormatInt(jobB.ID, 10)+`,`) {
		t.Error("team A's list holds team B's job")
	}
	// Team A's own validation run: as a job that does not exist.
	val := st.kindJob(st.jobA.TeamID, 9201, portal.KindValidation, &portal.Ending{State: portal.JobFinished,
		Verdict: portal.VerdictPassed, Score: 4000})
	resp, body = st.api(token, "/api/v1/jobs/"+strconv.FormatInt(val.ID, 10))
	if resp.StatusCode != notFound || body != none {
		t.Errorf("team A's validation run with team A's token: %d %s", resp.StatusCode, body)
	}
	if _, body := st.api(token, "/api/v1/jobs"); strings.Contains(body, `"id":`+strconv.FormatInt(val.ID, 10)+`,`) {
		t.Error("team A's list holds its validation run")
	}
	if stored, _ := st.store.APITokenByHash(ctx, portal.TokenHash(token)); stored.LastUsedAt.IsZero() {
		t.Error("the token's use is not recorded")
	}

	// Bad tokens, sessions on the API, tokens on the pages.
	for _, h := range []http.Header{
		{"Authorization": {"Bearer " + portal.APITokenPrefix + "nope"}},
		{"Authorization": {"Basic " + token}},
		{"Authorization": {"Bearer"}},
		nil,
	} {
		resp, body := st.do(st.client(), http.MethodGet, "/api/v1/jobs", nil, h)
		if resp.StatusCode != http.StatusUnauthorized || apiErrorCode(body) != "unauthorized" ||
			!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("GET /api/v1/jobs with %v: %d %s", h, resp.StatusCode, body)
		}
	}
	if resp, _ := st.do(st.users["a"], http.MethodGet, "/api/v1/jobs", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a session on the API: %d", resp.StatusCode)
	}
	if resp, _ := st.do(st.client(), http.MethodGet, "/jobs", nil, bearer(token)); resp.StatusCode != see ||
		!strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Errorf("a token on a page: %d", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/jobs", url.Values{}, bearer(token)); resp.StatusCode != denied {
		t.Errorf("a token on a form: %d", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/api/v1/jobs", url.Values{}, bearer(token)); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/v1/jobs: %d", resp.StatusCode)
	}

	// At most MaxAPITokens, named apart.
	if resp := st.post(st.users["a"], "/team/tokens", url.Values{"name": {"overlay"}}, nil); resp.StatusCode != conflict {
		t.Errorf("a second token named overlay: %d", resp.StatusCode)
	}
	for i := 1; i < portal.MaxAPITokens; i++ {
		if resp := st.post(st.users["a"], "/team/tokens", url.Values{"name": {"t" + strconv.Itoa(i)}}, nil); resp.StatusCode != ok {
			t.Fatalf("token %d: %d", i+1, resp.StatusCode)
		}
	}
	if resp := st.post(st.users["a"], "/team/tokens", url.Values{"name": {"one more"}}, nil); resp.StatusCode != conflict {
		t.Errorf("token %d: %d", portal.MaxAPITokens+1, resp.StatusCode)
	}

	// Revoked: refused. Another team cannot revoke it.
	revoke := "/team/tokens/" + strconv.FormatInt(stored.ID, 10) + "/revoke"
	if resp := st.post(st.users["b"], revoke, url.Values{}, nil); resp.StatusCode != notFound {
		t.Errorf("team B revokes team A's token: %d", resp.StatusCode)
	}
	if resp, _ := st.api(token, "/api/v1/jobs"); resp.StatusCode != ok {
		t.Errorf("the token after team B's try: %d", resp.StatusCode)
	}
	if resp := st.post(st.users["a"], revoke, url.Values{}, nil); resp.StatusCode != see {
		t.Errorf("revoking: %d", resp.StatusCode)
	}
	for _, path := range []string{"/api/v1/jobs", "/api/v1/leaderboard"} {
		if resp, body := st.api(token, path); resp.StatusCode != http.StatusUnauthorized || apiErrorCode(body) != "unauthorized" {
			t.Errorf("GET %s with a revoked token: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestAPIRateLimit: a token makes at most APIRequests calls within
// APIWindow, then waits (429, Retry-After); calls without one are not
// counted.
func TestAPIRateLimit(t *testing.T) {
	st := newSite(t)
	token, _ := st.token(st.jobA.TeamID, "alice", "ci")
	for i := range web.APIRequests {
		if resp, _ := st.api(token, "/api/v1/leaderboard"); resp.StatusCode != ok {
			t.Fatalf("call %d: %d", i+1, resp.StatusCode)
		}
	}
	resp, body := st.api(token, "/api/v1/jobs")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || apiErrorCode(body) != "too-many" {
		t.Errorf("call %d: %d %s", web.APIRequests+1, resp.StatusCode, body)
	}
	if resp, _ := st.api("", "/api/v1/leaderboard"); resp.StatusCode != ok || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("a public call meanwhile: %d, Access-Control-Allow-Origin %q", resp.StatusCode,
			resp.Header.Get("Access-Control-Allow-Origin"))
	}
	st.clock.add(web.APIWindow)
	if resp, _ := st.api(token, "/api/v1/jobs"); resp.StatusCode != ok {
		t.Errorf("after the window: %d", resp.StatusCode)
	}
}

// TestAPIFreeze: the API's board and its stream are the public board,
// frozen at the freeze; a token adds its own team's live line, and never
// shows another team's later score. After the reveal they show the final
// board. On each database system.
func TestAPIFreeze(t *testing.T) { systems.Run(t, testAPIFreeze) }

func testAPIFreeze(t *testing.T, db storetest.System) {
	st := liveSite(t, db.NewDSN(t))
	tokenA, _ := st.token(st.jobA.TeamID, "alice", "overlay")
	tokenB, _ := st.token(st.teamB.ID, "bob", "overlay")
	st.clock.add(time.Second)
	st.now(portal.EventFreeze)
	eventually(t, "the API's board at the freeze", func() string {
		if _, body := st.api("", "/api/v1/leaderboard"); !strings.Contains(body, `"frozen":true`) {
			return body
		}
		return ""
	})
	// A stream open through the freeze: a board and team A's line, then
	// only team A's line as it moves (the jobs ending change no public
	// board, and the stream does not say that they ended).
	// (The stream may start with the board as the live loop read it a
	// moment before the freeze.)
	streamA, stopA := st.apiStream(tokenA, "/api/v1/leaderboard/events")
	for frozen, own := false, false; !frozen || !own; {
		e, ok := nextEvent(streamA)
		if !ok {
			t.Fatalf("the stream sent no frozen board and own line (frozen %t, own %t)", frozen, own)
		}
		frozen = frozen || e.name == "board" && strings.Contains(e.data, `"frozen":true`)
		own = own || e.name == "own"
	}
	st.clock.add(time.Minute)
	st.endedJob(st.teamB.ID, 9101, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 5000})
	st.clock.add(time.Minute)
	st.endedJob(st.jobA.TeamID, 9102, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 6000})
	st.boardIs("admin", "/leaderboard", "1|"+evilName+"|6000|2", "2|bees|5000|1") // the live loop has read them
	for {
		e, ok := nextEvent(streamA)
		if !ok {
			t.Fatal("the stream sent no own line of 6000")
		}
		if e.name != "own" {
			t.Errorf("during the freeze the stream sent %+v", e)
		}
		if strings.Contains(e.data, `"score":6000`) {
			break
		}
	}
	stopA()

	type board struct {
		Frozen bool `json:"frozen"`
		Rows   []struct {
			Rank  int      `json:"rank"`
			Team  string   `json:"team"`
			Score *float64 `json:"score"`
			Runs  int      `json:"runs"`
		} `json:"rows"`
		Own *struct {
			Score *float64 `json:"score"`
			Runs  int      `json:"runs"`
		} `json:"own"`
	}
	for _, c := range []struct {
		who, token string
		own        float64 // 0: none
		hidden     string
	}{{"anon", "", 0, "5000 6000"}, {"a", tokenA, 6000, "5000"}, {"b", tokenB, 5000, "6000"}} {
		resp, body := st.api(c.token, "/api/v1/leaderboard")
		var b board
		if err := json.Unmarshal([]byte(body), &b); err != nil || resp.StatusCode != ok {
			t.Fatalf("%s's board: %d %s", c.who, resp.StatusCode, body)
		}
		if !b.Frozen || len(b.Rows) != 2 || b.Rows[0].Team != evilName || *b.Rows[0].Score != 4321 || b.Rows[0].Runs != 1 ||
			b.Rows[1].Score != nil || b.Rows[1].Runs != 0 {
			t.Errorf("%s's frozen board: %s", c.who, body)
		}
		if got, public := apiLines(t, body), st.board("anon", "/leaderboard"); !slices.Equal(got, public) {
			t.Errorf("%s's API board %q is not the public board %q", c.who, got, public)
		}
		if c.own == 0 && b.Own != nil || c.own != 0 && (b.Own == nil || b.Own.Score == nil || *b.Own.Score != c.own) {
			t.Errorf("%s's own line: %s", c.who, body)
		}
		events := st.apiEvents(c.token, "/api/v1/leaderboard/events", map[bool]int{true: 1, false: 2}[c.own == 0])
		if len(events) == 0 || events[0].name != "board" || !strings.Contains(events[0].data, `"frozen":true`) ||
			strings.Contains(events[0].data, `"own"`) {
			t.Errorf("%s's first event: %v", c.who, events)
		}
		if c.own != 0 && (len(events) < 2 || events[1].name != "own" ||
			!strings.Contains(events[1].data, `"score":`+strconv.Itoa(int(c.own)))) {
			t.Errorf("%s's own event: %v", c.who, events)
		}
		for _, score := range strings.Fields(c.hidden) {
			var all strings.Builder
			all.WriteString(body)
			for _, e := range events {
				all.WriteString(e.data)
			}
			if strings.Contains(all.String(), score) {
				t.Errorf("%s sees the later score %s during the freeze", c.who, score)
			}
		}
	}
	// An admin's session changes nothing: the API is the public's.
	if _, body := st.do(st.users["admin"], http.MethodGet, "/api/v1/leaderboard", nil, nil); strings.Contains(body, "6000") {
		t.Error("an admin's session sees the live board on the API")
	}

	st.clock.add(time.Minute)
	st.now(portal.EventReveal)
	eventually(t, "the API's board after the reveal", func() string {
		_, body := st.api("", "/api/v1/leaderboard")
		if !strings.Contains(body, `"frozen":false`) || !strings.Contains(body, "6000") || !strings.Contains(body, "5000") {
			return body
		}
		return ""
	})
	st.boardIs("anon", "/leaderboard", "1|"+evilName+"|6000|2", "2|bees|5000|1")
	if _, body := st.api(tokenB, "/api/v1/leaderboard"); !slices.Equal(apiLines(t, body), st.board("anon", "/leaderboard")) {
		t.Errorf("the revealed API board %q is not the public board", apiLines(t, body))
	}
	if events := st.apiEvents("", "/api/v1/leaderboard/events", 1); len(events) != 1 || !strings.Contains(events[0].data, "6000") {
		t.Errorf("the stream after the reveal: %v", events)
	}
}

// TestContestExport: the export is one valid JSON document, version 1,
// that round-trips what the store holds: the contest, every team
// (disqualified ones too, with their members), every job with its result
// over several pages (validation runs too), each team's validation line,
// every announcement and clarification (private ones and questions as
// asked too: it is staff's archive) and the audit log, each field as the
// store reads it; and none of the credentials or staff logs.
func TestContestExport(t *testing.T) {
	st := newSite(t)
	ctx := context.Background()
	root, _, err := st.store.AccountByLogin(ctx, "root")
	if err != nil {
		t.Fatal(err)
	}
	by := portal.ActorOf(root)
	token, _ := st.token(st.jobA.TeamID, "alice", "overlay")
	const staffLog, errorSays = "STAFF-LOG-52c1", "the worker's disk filled"
	st.clock.add(time.Second)
	st.endedJob(st.teamB.ID, 9300, portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonInternal,
		Error: errorSays, StaffLog: staffLog})
	for i := range web.ExportPage {
		st.clock.add(time.Second)
		st.endedJob(st.teamB.ID, int64(9400+i), portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictFailed})
	}
	val := st.kindJob(st.jobA.TeamID, 9500, portal.KindValidation, &portal.Ending{State: portal.JobFinished,
		Verdict: portal.VerdictPassed, Score: 2000})
	if err := st.store.SetDisqualified(ctx, by, st.teamB.ID, true, "shared their app"); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Lunch at noon.", "The **load** starts at 10:00."} {
		st.clock.add(time.Second)
		if _, err := st.store.Announce(ctx, by, text); err != nil {
			t.Fatal(err)
		}
	}
	alice, _, _ := st.store.AccountByLogin(ctx, "alice")
	for i, a := range []store.Answer{
		{Question: "Question 0, as edited", Answer: "Answer 0", Publish: true},
		{Answer: "Answer 1"},
		{}, // waiting
	} {
		st.clock.add(time.Second)
		q, err := st.store.Ask(ctx, alice, "Question "+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if a.Answer != "" {
			if _, err := st.store.AnswerClarification(ctx, by, q.ID, a); err != nil {
				t.Fatal(err)
			}
		}
	}

	resp, body := st.do(st.users["admin"], http.MethodGet, "/admin/export.json", nil, nil)
	if resp.StatusCode != ok || resp.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("the export: %d %v", resp.StatusCode, resp.Header)
	}
	type job struct {
		ID          int64           `json:"id"`
		TeamID      int64           `json:"team_id"`
		Kind        portal.JobKind  `json:"kind"`
		Problem     string          `json:"problem"`
		Target      string          `json:"target"`
		State       portal.JobState `json:"state"`
		Verdict     portal.Verdict  `json:"verdict"`
		Score       *float64        `json:"score"`
		Messages    []string        `json:"messages"`
		ErrorCode   string          `json:"error_code"`
		Error       string          `json:"error"`
		CreatedAt   time.Time       `json:"created_at"`
		StartedAt   *time.Time      `json:"started_at"`
		FinishedAt  *time.Time      `json:"finished_at"`
		Worker      string          `json:"worker"`
		Attempts    int             `json:"attempts"`
		MaxAttempts int             `json:"max_attempts"`
		RerunOf     int64           `json:"rerun_of"`
		Result      json.RawMessage `json:"result"`
	}
	var doc struct {
		Format   string `json:"format"`
		Version  int    `json:"version"`
		Complete bool   `json:"complete"`
		Contest  struct {
			Problem             string `json:"problem"`
			ValidationThreshold int    `json:"validation_threshold"`
		} `json:"contest"`
		Teams []struct {
			ID               int64     `json:"id"`
			Name             string    `json:"name"`
			Bracket          string    `json:"bracket"`
			Hidden           bool      `json:"hidden"`
			ExtraTimeSeconds float64   `json:"extra_time_seconds"`
			Disqualified     bool      `json:"disqualified"`
			DQReason         string    `json:"dq_reason"`
			Target           string    `json:"target"`
			CreatedAt        time.Time `json:"created_at"`
			Members          []string  `json:"members"`
		} `json:"teams"`
		Jobs   []job `json:"jobs"`
		Boards []struct {
			Bracket string `json:"bracket"`
			Rows    []struct {
				Rank int `json:"rank"`
			} `json:"rows"`
		} `json:"boards"`
		Validation []struct {
			TeamID          int64    `json:"team_id"`
			FinalScore      *float64 `json:"final_score"`
			Job             int64    `json:"job"`
			ValidationScore *float64 `json:"validation_score"`
			State           string   `json:"state"`
			Flagged         bool     `json:"flagged"`
		} `json:"validation"`
		APITokens     []struct{ Name string } `json:"api_tokens"`
		Announcements []struct {
			ID   int64     `json:"id"`
			At   time.Time `json:"at"`
			By   string    `json:"by"`
			Text string    `json:"text"`
		} `json:"announcements"`
		Clarifications []struct {
			ID         int64      `json:"id"`
			TeamID     int64      `json:"team_id"`
			AskedBy    string     `json:"asked_by"`
			AskedAt    time.Time  `json:"asked_at"`
			Original   string     `json:"original"`
			Question   string     `json:"question"`
			Answer     string     `json:"answer"`
			AnsweredAt *time.Time `json:"answered_at"`
			AnsweredBy string     `json:"answered_by"`
			Published  bool       `json:"published"`
		} `json:"clarifications"`
		AuditLog []portal.AuditEntry `json:"audit_log"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("the export is not JSON: %v\n%.2000s", err, body)
	}
	if doc.Format != "tunecon-contest" || doc.Version != web.ExportVersion || !doc.Complete || doc.Contest.Problem == "" ||
		doc.Contest.ValidationThreshold != portal.DefaultValidationThreshold {
		t.Errorf("the export's head: %q v%d complete %t, problem %q, threshold %d", doc.Format, doc.Version, doc.Complete,
			doc.Contest.Problem, doc.Contest.ValidationThreshold)
	}
	at := func(p *time.Time) time.Time {
		if p == nil {
			return time.Time{}
		}
		return *p
	}

	// Teams.
	teams, err := st.store.Teams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Teams) != len(teams) || len(teams) != 2 {
		t.Fatalf("%d teams exported, the store has %d", len(doc.Teams), len(teams))
	}
	for i, want := range teams {
		got := doc.Teams[i]
		if got.ID != want.ID || got.Name != want.Name || got.Bracket != want.Bracket || got.Hidden != want.Hidden ||
			got.ExtraTimeSeconds != want.ExtraTime.Seconds() || got.Disqualified != want.Disqualified ||
			got.DQReason != want.DQReason || got.Target != want.Target || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("team %d exported as %+v, stored as %+v", want.ID, got, want)
		}
	}
	if b := doc.Teams[1]; !b.Disqualified || b.DQReason != "shared their app" || strings.Join(b.Members, ",") != "bob" {
		t.Errorf("team B: %+v", b)
	}

	// Jobs, oldest first, each as stored (results as the same JSON).
	jobs, err := st.store.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 + web.ExportPage; len(jobs) != want || len(doc.Jobs) != want {
		t.Fatalf("%d jobs exported, %d stored, want %d", len(doc.Jobs), len(jobs), want)
	}
	for i, got := range doc.Jobs {
		want := jobs[len(jobs)-1-i]
		var score *float64
		if want.State == portal.JobFinished {
			score = &want.Score
		}
		same := got.ID == want.ID && got.TeamID == want.TeamID && got.Kind == want.Kind && got.Problem == want.Problem &&
			got.Target == want.Target && got.State == want.State && got.Verdict == want.Verdict &&
			(got.Score == nil) == (score == nil) && (score == nil || *got.Score == *score) &&
			strings.Join(got.Messages, "\n") == strings.Join(want.Messages, "\n") && got.ErrorCode == want.ErrorCode &&
			got.Error == want.Error && got.CreatedAt.Equal(want.CreatedAt) && at(got.StartedAt).Equal(want.StartedAt) &&
			at(got.FinishedAt).Equal(want.FinishedAt) && got.Worker == want.Worker && got.Attempts == want.Attempts &&
			got.MaxAttempts == want.MaxAttempts && got.RerunOf == want.RerunOf && sameJSON(t, got.Result, want.Result)
		if !same {
			t.Errorf("job %d exported as %+v, stored as %+v", want.ID, got, want)
		}
	}
	if !strings.HasPrefix(string(doc.Jobs[0].Result), "{") || doc.Jobs[len(doc.Jobs)-1].Kind != portal.KindValidation {
		t.Errorf("the first job's result %.100s, the last job's kind %q", doc.Jobs[0].Result, doc.Jobs[len(doc.Jobs)-1].Kind)
	}

	// The validation lines, in the live board's order.
	if len(doc.Validation) != 2 {
		t.Fatalf("the validation lines: %+v", doc.Validation)
	}
	if a := doc.Validation[0]; a.TeamID != st.jobA.TeamID || a.FinalScore == nil || *a.FinalScore != 4321 || a.Job != val.ID ||
		a.ValidationScore == nil || *a.ValidationScore != 2000 || a.State != string(portal.ValidationLow) || !a.Flagged {
		t.Errorf("team A's validation line: %+v", a)
	}
	if b := doc.Validation[1]; b.TeamID != st.teamB.ID || b.FinalScore != nil || b.Job != 0 || b.ValidationScore != nil ||
		b.State != string(portal.ValidationNone) || b.Flagged {
		t.Errorf("team B's validation line: %+v", b)
	}

	// Announcements and clarifications, oldest first, every one.
	announcements, err := st.store.Announcements(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Announcements) != len(announcements) || len(announcements) != 2 {
		t.Fatalf("%d announcements exported, %d stored", len(doc.Announcements), len(announcements))
	}
	for i, got := range doc.Announcements {
		want := announcements[len(announcements)-1-i]
		if got.ID != want.ID || !got.At.Equal(want.At) || got.By != want.By || got.Text != want.Text {
			t.Errorf("announcement %d exported as %+v, stored as %+v", want.ID, got, want)
		}
	}
	clarifications, err := st.store.Clarifications(ctx, store.Seen{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Clarifications) != len(clarifications) || len(clarifications) != 3 {
		t.Fatalf("%d clarifications exported, %d stored", len(doc.Clarifications), len(clarifications))
	}
	for i, got := range doc.Clarifications {
		want := clarifications[len(clarifications)-1-i]
		if got.ID != want.ID || got.TeamID != want.TeamID || got.AskedBy != want.AskedBy || !got.AskedAt.Equal(want.AskedAt) ||
			got.Original != want.Original || got.Question != want.Question || got.Answer != want.Answer ||
			!at(got.AnsweredAt).Equal(want.AnsweredAt) || got.AnsweredBy != want.AnsweredBy || got.Published != want.Published {
			t.Errorf("clarification %d exported as %+v, stored as %+v", want.ID, got, want)
		}
	}
	if c := doc.Clarifications[0]; c.Original != "Question 0" || c.Question != "Question 0, as edited" || !c.Published {
		t.Errorf("the published, edited clarification: %+v", c)
	}
	if c := doc.Clarifications[2]; c.Answer != "" || c.AnsweredAt != nil {
		t.Errorf("the waiting clarification: %+v", c)
	}

	// The rest.
	if len(doc.Boards) != 1 || len(doc.Boards[0].Rows) != 2 {
		t.Errorf("the boards: %+v", doc.Boards)
	}
	if len(doc.APITokens) != 1 || doc.APITokens[0].Name != "overlay" {
		t.Errorf("the tokens: %+v", doc.APITokens)
	}
	audit, err := st.store.AuditLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.AuditLog) != len(audit) || len(audit) == 0 {
		t.Errorf("%d audit entries exported, %d stored", len(doc.AuditLog), len(audit))
	}
	for i := range min(len(doc.AuditLog), len(audit)) {
		if got, want := doc.AuditLog[i], audit[i]; got.ID != want.ID || got.Action != want.Action || got.Subject != want.Subject {
			t.Errorf("audit entry %d exported as %+v, stored as %+v", want.ID, got, want)
		}
	}
	if !strings.Contains(body, errorSays) {
		t.Error("the export has no errored job's reason")
	}

	// None of the secrets, by their hashes' first characters.
	u, _ := url.Parse(st.url)
	secrets := map[string]string{"the staff log": staffLog, "a bcrypt hash": "$2a$",
		"the API token": token, "the API token's hash": portal.TokenHash(token)[:16], "team B's invite code": st.teamB.InviteCode}
	for _, who := range []string{"a", "b", "admin"} {
		for _, c := range st.users[who].Jar.Cookies(u) {
			secrets[who+"'s session"] = c.Value
			secrets[who+"'s session hash"] = portal.TokenHash(c.Value)[:16]
		}
	}
	for what, secret := range secrets {
		if strings.Contains(body, secret) {
			t.Errorf("the export holds %s", what)
		}
	}
}

// sameJSON reports whether two JSON documents hold the same values (both
// empty or null count as the same).
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	decode := func(raw json.RawMessage) any {
		if len(raw) == 0 {
			return nil
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("not JSON: %v: %.100s", err, raw)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// noToken is the API's answer to a call that needs a token and has none.
const noToken = http.StatusUnauthorized

// tokenMatrix is TestAccessMatrix's bearer-token cases: team A's token,
// team B's and a made-up one, on the API and on pages, where a token
// counts for nothing (the answer is nobody's). No answer to a token holds
// a staff log or the other team's target.
func tokenMatrix(t *testing.T, st *site) {
	t.Helper()
	tokenA, _ := st.token(st.jobA.TeamID, "alice", "matrix")
	tokenB, _ := st.token(st.teamB.ID, "bob", "matrix")
	jobA := strconv.FormatInt(st.jobA.ID, 10)
	for _, c := range []struct {
		path string
		want [3]int // team A's token, team B's, a made-up one
	}{
		{"/api/v1/leaderboard", [3]int{ok, ok, noToken}},
		{"/api/v1/leaderboard/events", [3]int{ok, ok, noToken}},
		{"/api/v1/leaderboard?bracket=nosuch", [3]int{notFound, notFound, noToken}},
		{"/api/v1/jobs", [3]int{ok, ok, noToken}},
		{"/api/v1/jobs/" + jobA, [3]int{ok, notFound, noToken}},
		{"/api/v1/jobs/999999", [3]int{notFound, notFound, noToken}},
		{"/api/v1/nowhere", [3]int{notFound, notFound, notFound}},
		{"/leaderboard", [3]int{ok, ok, ok}},
		{"/team", [3]int{see, see, see}},
		{"/jobs", [3]int{see, see, see}},
		{"/jobs/" + jobA, [3]int{see, see, see}},
		{"/jobs/" + jobA + "/events", [3]int{denied, denied, denied}},
		{"/admin", [3]int{see, see, see}},
		{"/admin/export.json", [3]int{see, see, see}},
	} {
		for i, token := range []string{tokenA, tokenB, portal.APITokenPrefix + "made-up"} {
			resp, body := st.api(token, c.path)
			if resp.StatusCode != c.want[i] {
				t.Errorf("GET %s with token %d: %d, want %d", c.path, i, resp.StatusCode, c.want[i])
			}
			if strings.HasPrefix(c.path, "/api/") && resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("GET %s with token %d: Cache-Control %q", c.path, i, resp.Header.Get("Cache-Control"))
			}
			if strings.Contains(body, staffSecret) || i == 0 && strings.Contains(body, targetB) || i == 1 && strings.Contains(body, targetA) {
				t.Errorf("GET %s with token %d shows a staff log or the other team's target", c.path, i)
			}
		}
	}
}
