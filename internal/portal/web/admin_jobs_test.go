package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/web"
	"github.com/tunecon/tunecon/problems/example"
)

// TestAdminJobsPaged: /admin/jobs lists web.AdminJobsPage jobs at a time,
// the newest first, with a link to the older ones that keeps the filter;
// the filter by state, team and worker narrows the list; a filter no job
// could match is refused; the queue's summary counts the queued and
// running jobs and the oldest wait, on the page and as JSON.
func TestAdminJobsPaged(t *testing.T) {
	st := newSite(t)
	for i := range web.AdminJobsPage + 5 {
		st.endedJob(st.jobA.TeamID, int64(10000+i), portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 1})
	}
	ctx := context.Background()
	if _, err := st.store.InsertJob(ctx, store.NewJob{TeamID: st.teamB.ID, Problem: example.Name, Target: targetB,
		MaxAttempts: 2, Deadline: time.Minute, RiverJobID: 20000}); err != nil {
		t.Fatal(err)
	}
	st.clock.add(90 * time.Second)

	code, doc := st.page("admin", "/admin/jobs")
	if code != http.StatusOK {
		t.Fatalf("/admin/jobs: %d", code)
	}
	if n := doc.Find(`table.jobs tbody tr`).Length(); n != web.AdminJobsPage {
		t.Errorf("%d jobs on the first page, want %d", n, web.AdminJobsPage)
	}
	if q := doc.Find(`#queue p`).Text(); !strings.Contains(q, "1 queued, the oldest waiting 1m30s") || !strings.Contains(q, "0 running") {
		t.Errorf("the queue's summary: %q", q)
	}
	older, ok := doc.Find(`#older-jobs`).Attr("href")
	if !ok {
		t.Fatal("no link to the older jobs")
	}
	_, doc = st.page("admin", older)
	if n := doc.Find(`table.jobs tbody tr`).Length(); n != 5+2+1 { // 5 more, team A's first two, team B's queued one
		t.Errorf("%d jobs on the second page, want 8", n)
	}
	if doc.Find(`#older-jobs`).Length() != 0 {
		t.Error("the last page links to older jobs")
	}

	teamA := strconv.FormatInt(st.jobA.TeamID, 10)
	for path, want := range map[string]int{
		"/admin/jobs?state=queued":                               1,
		"/admin/jobs?state=errored&team=" + teamA:                1,
		"/admin/jobs?team=" + strconv.FormatInt(st.teamB.ID, 10): 1,
		"/admin/jobs?worker=nobody":                              0,
	} {
		_, doc := st.page("admin", path)
		if n := doc.Find(`table.jobs tbody tr td a[href^="/admin/jobs/"]`).Length(); n != want {
			t.Errorf("%s: %d jobs, want %d", path, n, want)
		}
	}
	for _, path := range []string{"/admin/jobs?state=sleeping", "/admin/jobs?team=x", "/admin/jobs?before=-1"} {
		if code, _ := st.page("admin", path); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", path, code)
		}
	}
	resp, body := st.do(st.users["admin"], http.MethodGet, "/admin/queue.json", nil, nil)
	var q struct {
		Queued, Running int
		OldestWait      string `json:"oldest_wait"`
	}
	if err := json.Unmarshal([]byte(body), &q); err != nil || resp.StatusCode != http.StatusOK || q.Queued != 1 || q.OldestWait != "1m30s" {
		t.Errorf("/admin/queue.json: %d %s (%v)", resp.StatusCode, body, err)
	}
}

// TestAdminJobPageCharts: staff see a job's run charted as its team does.
func TestAdminJobPageCharts(t *testing.T) {
	st := newSite(t)
	res, _ := json.Marshal(&engine.Result{Problem: example.Name, Passed: true, Score: 12,
		Phases: []engine.PhaseResult{{Name: engine.PhaseLoad, Passed: true, Seconds: 2}},
		Timeline: []engine.TimelineSecond{{Second: 0, Requests: 5, Users: 2, Points: 6, P50ms: 3, P99ms: 9},
			{Second: 1, Requests: 7, Users: 2, Points: 6, P50ms: 4, P99ms: 8}}})
	j := st.endedJob(st.jobA.TeamID, 9100, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed,
		Score: 12, Result: res})
	id := strconv.FormatInt(j.ID, 10)
	_, team := st.do(st.users["a"], http.MethodGet, "/jobs/"+id, nil, nil)
	_, staff := st.do(st.users["admin"], http.MethodGet, "/admin/jobs/"+id, nil, nil)
	charts := regexp.MustCompile(`data-chart="[a-z-]+"`)
	want := charts.FindAllString(team, -1)
	if len(want) == 0 {
		t.Fatal("the team's job page has no charts")
	}
	if got := charts.FindAllString(staff, -1); !slices.Equal(got, want) {
		t.Errorf("the staff's job page charts %v, want the team's %v", got, want)
	}
}

// TestAdminJobPageTimes: staff see a waiting job's times as its team does.
func TestAdminJobPageTimes(t *testing.T) {
	st := newSite(t)
	resp := st.post(st.users["b"], "/jobs", url.Values{}, nil)
	if resp.StatusCode != see {
		t.Fatalf("team B enqueues: %d", resp.StatusCode)
	}
	path := resp.Header.Get("Location")
	times := regexp.MustCompile(`<dd id="job-time"[^>]*>[^<]*</dd>`)
	_, team := st.do(st.users["b"], http.MethodGet, path, nil, nil)
	_, staff := st.do(st.users["admin"], http.MethodGet, "/admin"+path, nil, nil)
	want := times.FindString(team)
	if want == "" {
		t.Fatalf("the team's page of its queued job has no times:\n%s", team)
	}
	if got := times.FindString(staff); got != want {
		t.Errorf("the staff's page: %s, want the team's %s", got, want)
	}
}
