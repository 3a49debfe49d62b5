package web_test

import (
	"context"
	"net/http"
	"net/url"
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
	"github.com/tunecon/tunecon/problems/example"
)

// auditActions lists the audit log's actions, oldest first.
func (st *site) auditActions() []string {
	st.t.Helper()
	entries, err := st.store.AuditLog(context.Background())
	if err != nil {
		st.t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Action)
	}
	return out
}

// kindJob adds a job of a kind for a team; ending it unless e is nil.
func (st *site) kindJob(teamID, riverID int64, kind portal.JobKind, e *portal.Ending) portal.Job {
	st.t.Helper()
	ctx := context.Background()
	var j portal.Job
	err := st.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		j, err = tx.InsertJob(ctx, store.NewJob{TeamID: teamID, Kind: kind, Problem: example.Name, Target: targetA,
			MaxAttempts: 2, Deadline: time.Minute, RiverJobID: riverID})
		if err != nil || e == nil {
			return err
		}
		if _, err := tx.BeginAttempt(ctx, j.ID, "w1"); err != nil {
			return err
		}
		j, err = tx.EndJob(ctx, j.ID, 1, *e)
		return err
	})
	if err != nil {
		st.t.Fatal(err)
	}
	return j
}

// quarantinedW1 starts worker w1, which ran the site's errored job, and
// has the portal quarantine it: two more of its jobs error through the
// benchmarker's fault. It returns the worker's name.
func (st *site) quarantinedW1() string {
	st.t.Helper()
	ctx := context.Background()
	if err := st.store.StartWorker(ctx, "w1", []string{example.Name}); err != nil {
		st.t.Fatal(err)
	}
	for i := range 2 {
		st.endedJob(st.teamB.ID, int64(9400+i), portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonDeadline, Error: "hung"})
	}
	err := st.store.InTx(ctx, func(tx *store.Tx) error {
		q, err := tx.QuarantineIfFaulty(ctx, "w1")
		if err == nil && !q {
			st.t.Error("worker w1 not quarantined")
		}
		return err
	})
	if err != nil {
		st.t.Fatal(err)
	}
	return "w1"
}

// disqualified disqualifies a team, as the site's admin.
func (st *site) disqualified(teamID int64) {
	st.t.Helper()
	ctx := context.Background()
	root, _, err := st.store.AccountByLogin(ctx, "root")
	if err != nil {
		st.t.Fatal(err)
	}
	if err := st.store.SetDisqualified(ctx, portal.ActorOf(root), teamID, true, "copied"); err != nil {
		st.t.Fatal(err)
	}
}

// TestDisqualifiedOnEveryBoard: a disqualified team stays on every board,
// struck, "DQ" in place of its rank, and takes no rank: on the frozen
// public board, the admin's live one, a bracket's, the revealed one and the
// ceremony. Its reason is shown to staff and to the team, nobody else; the
// team cannot enqueue. Lifted, it ranks again.
func TestDisqualifiedOnEveryBoard(t *testing.T) { systems.Run(t, testDisqualifiedOnEveryBoard) }

func testDisqualifiedOnEveryBoard(t *testing.T, db storetest.System) {
	st := liveSite(t, db.NewDSN(t))
	admin := st.users["admin"]
	a, teamA := evilName, strconv.FormatInt(st.jobA.TeamID, 10)
	teamB := strconv.FormatInt(st.teamB.ID, 10)
	const reason = "ran team A's app"
	// In this order: the brackets exist before a team is placed in one.
	for _, p := range []struct {
		path string
		form url.Values
	}{
		{"/admin/contest", url.Values{"problem": {example.Name}, "brackets": {"red, blue"}}},
		{"/admin/teams/" + teamA, url.Values{"bracket": {"red"}, "extra_minutes": {"0"}}},
		{"/admin/teams/" + teamB, url.Values{"bracket": {"red"}, "extra_minutes": {"0"}}},
	} {
		if resp := st.post(admin, p.path, p.form, nil); resp.StatusCode != see {
			t.Fatalf("POST %s: %d", p.path, resp.StatusCode)
		}
	}
	st.clock.add(time.Second)
	st.endedJob(st.teamB.ID, 9101, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 5000})
	st.clock.add(time.Second)
	st.now(portal.EventFreeze)
	st.clock.add(time.Minute)
	st.endedJob(st.jobA.TeamID, 9102, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 6000})
	st.boardIs("anon", "/leaderboard", "1|bees|red|5000|1", "2|"+a+"|red|4321|1")

	before := len(st.auditActions())
	if resp := st.post(admin, "/admin/teams/"+teamB+"/disqualify", url.Values{"reason": {" "}}, nil); resp.StatusCode != bad {
		t.Errorf("a disqualification without a reason: %d", resp.StatusCode)
	}
	if resp := st.post(admin, "/admin/teams/"+teamB+"/disqualify", url.Values{"reason": {reason}}, nil); resp.StatusCode != see {
		t.Fatalf("disqualifying: %d", resp.StatusCode)
	}
	if got := st.auditActions()[before:]; len(got) != 1 || got[0] != portal.AuditDisqualify {
		t.Errorf("audit entries %v", got)
	}
	public := []string{"1|" + a + "|red|4321|1", "DQ|bees (disqualified)|red|5000|1"}
	for _, who := range []string{"anon", "a"} {
		st.boardIs(who, "/leaderboard", public...)
		st.boardIs(who, "/leaderboard?bracket=red", "1|"+a+"|4321|1", "DQ|bees (disqualified)|5000|1")
	}
	st.boardIs("b", "/leaderboard", "1|"+a+"|red|4321|1", "DQ|bees (disqualified: "+reason+")|red|5000|1")
	st.boardIs("admin", "/leaderboard", "1|"+a+"|red|6000|2", "DQ|bees (disqualified: "+reason+")|red|5000|1")
	if _, doc := st.page("anon", "/leaderboard"); doc.Find("tr.dq s").Length() != 2 {
		t.Errorf("the disqualified line is not struck: %q", doc.Find("tr.dq").Text())
	}
	// The stream: struck for all, the reason for staff only.
	for who, withReason := range map[string]bool{"anon": false, "a": false, "admin": true} {
		events := st.firstEvents(who, "/leaderboard/events", 1)
		if len(events) == 0 || !strings.Contains(events[0].data, `"dq":true`) || strings.Contains(events[0].data, reason) != withReason {
			t.Errorf("%s's board event: %v", who, events)
		}
	}
	// The team sees why, and cannot enqueue.
	if _, doc := st.page("b", "/"); !strings.Contains(doc.Find("#disqualified").Text(), reason) {
		t.Errorf("team B's page: %q", doc.Find("main").Text())
	}
	if _, doc := st.page("a", "/"); doc.Find("#disqualified").Length() != 0 {
		t.Error("team A's page says it is disqualified")
	}
	if resp := st.post(st.users["b"], "/jobs", url.Values{}, nil); resp.StatusCode != conflict {
		t.Errorf("a disqualified team enqueued: %d", resp.StatusCode)
	}
	if jobs, err := st.store.TeamJobs(context.Background(), st.teamB.ID); err != nil || len(jobs) != 1 {
		t.Errorf("team B's jobs %+v, %v", jobs, err)
	}

	// The reveal and the ceremony: no rank, last.
	st.clock.add(time.Minute)
	st.now(portal.EventReveal)
	st.boardIs("anon", "/leaderboard", "1|"+a+"|red|6000|2", "DQ|bees (disqualified)|red|5000|1")
	for _, path := range []string{"/admin/ceremony?shown=1", "/admin/ceremony?bracket=red&shown=1"} {
		_, doc := st.page("admin", path)
		if shown := doc.Find("tr.shown"); !shown.HasClass("dq") || !strings.HasPrefix(shown.Text(), "DQ") ||
			!strings.Contains(shown.Text(), "bees") || strings.Contains(shown.Text(), reason) {
			t.Errorf("%s: the first team shown %q", path, shown.Text())
		}
	}
	if _, doc := st.page("admin", "/admin/ceremony?shown=2"); !strings.HasPrefix(doc.Find("tr.shown").First().Text(), "1") {
		t.Errorf("the ceremony's winner: %q", doc.Find("tr.shown").First().Text())
	}

	// Lifted: it ranks again; lifting again is refused and leaves no entry.
	if resp := st.post(admin, "/admin/teams/"+teamB+"/reinstate", url.Values{}, nil); resp.StatusCode != see {
		t.Fatalf("lifting: %d", resp.StatusCode)
	}
	if resp := st.post(admin, "/admin/teams/"+teamB+"/reinstate", url.Values{}, nil); resp.StatusCode != conflict {
		t.Errorf("lifting twice: %d", resp.StatusCode)
	}
	if got := st.auditActions()[before:]; !slices.Equal(got, []string{portal.AuditDisqualify, portal.AuditNow + "reveal", portal.AuditReinstate}) {
		t.Errorf("audit entries %v", got)
	}
	st.boardIs("anon", "/leaderboard", "1|"+a+"|red|6000|2", "2|bees|red|5000|1")
}

// TestValidationPage: the page sets each team's final score beside its
// latest validation run and flags a run under the threshold (a setting,
// audited), a failed one and an errored one. Validation jobs are nowhere a
// team looks: not in its jobs, not its active job, not on the board, and
// they block none of its own. "Validate all" starts after the end only, and
// is one entry.
func TestValidationPage(t *testing.T) {
	st := newSite(t)
	ctx := context.Background()
	admin := st.users["admin"]
	teamA := st.jobA.TeamID
	teamC, err := st.store.CreateTeam(ctx, "cees", "http://10.9.8.9/")
	if err != nil {
		t.Fatal(err)
	}
	st.endedJob(teamC.ID, 9200, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 1000})
	valA := st.kindJob(teamA, 9201, portal.KindValidation, &portal.Ending{State: portal.JobFinished,
		Verdict: portal.VerdictPassed, Score: 3000, StaffLog: staffSecret})
	st.kindJob(st.teamB.ID, 9202, portal.KindValidation, &portal.Ending{State: portal.JobErrored,
		ErrorCode: portal.ReasonInternal})
	st.kindJob(teamC.ID, 9203, portal.KindValidation, &portal.Ending{State: portal.JobFinished,
		Verdict: portal.VerdictPassed, Score: 900})

	if resp := st.post(admin, "/admin/validation/threshold", url.Values{"threshold": {"0"}}, nil); resp.StatusCode != bad {
		t.Errorf("a threshold of 0: %d", resp.StatusCode)
	}
	states := func() map[int64]string {
		t.Helper()
		_, doc := st.page("admin", "/admin/validation")
		out := map[int64]string{}
		doc.Find("table.validation tbody tr").Each(func(_ int, tr *goquery.Selection) {
			id, _ := strconv.ParseInt(strings.TrimPrefix(tr.AttrOr("id", ""), "team-"), 10, 64)
			state := tr.AttrOr("data-state", "")
			if tr.HasClass("bad") {
				state += " flagged"
			}
			out[id] = state
		})
		return out
	}
	// A's run is 69% of its final score, C's 90%, B's errored.
	want := map[int64]string{teamA: "low flagged", st.teamB.ID: "errored flagged", teamC.ID: "ok"}
	if got := states(); !equalMap(got, want) {
		t.Errorf("at the default 75%%: %v, want %v", got, want)
	}
	before := len(st.auditActions())
	if resp := st.post(admin, "/admin/validation/threshold", url.Values{"threshold": {"60"}}, nil); resp.StatusCode != see {
		t.Fatalf("the threshold: %d", resp.StatusCode)
	}
	want[teamA] = "ok"
	if got := states(); !equalMap(got, want) {
		t.Errorf("at 60%%: %v, want %v", got, want)
	}
	if got := st.auditActions()[before:]; len(got) != 1 || got[0] != portal.AuditSettings {
		t.Errorf("the threshold's entries %v", got)
	}
	if _, doc := st.page("admin", "/admin/validation"); !strings.Contains(doc.Find("#team-"+strconv.FormatInt(teamA, 10)).Text(), "69.4%") {
		t.Errorf("team A's line: %q", doc.Find("#team-"+strconv.FormatInt(teamA, 10)).Text())
	}

	// Invisible to the team, counted nowhere, blocking nothing.
	queued := st.kindJob(teamA, 9204, portal.KindValidation, nil)
	for _, id := range []int64{valA.ID, queued.ID} {
		path := "/jobs/" + strconv.FormatInt(id, 10)
		for _, p := range []string{path, path + "/events"} {
			if resp, _ := st.do(st.users["a"], http.MethodGet, p, nil, nil); resp.StatusCode != notFound {
				t.Errorf("GET %s as team A: %d", p, resp.StatusCode)
			}
		}
	}
	if _, doc := st.page("a", "/jobs"); doc.Find(`a[href="/jobs/`+strconv.FormatInt(valA.ID, 10)+`"]`).Length() != 0 {
		t.Error("team A's job list shows its validation job")
	}
	if _, doc := st.page("a", "/"); strings.Contains(doc.Find("main").Text(), "#"+strconv.FormatInt(queued.ID, 10)) {
		t.Errorf("team A's page shows its validation job: %q", doc.Find("main").Text())
	}
	if got := st.board("anon", "/leaderboard"); len(got) != 3 || got[0] != "1|"+evilName+"|4321|1" {
		t.Errorf("the board %v", got)
	}
	if resp := st.post(st.users["a"], "/jobs", url.Values{}, nil); resp.StatusCode != see {
		t.Errorf("team A's enqueue beside its validation job: %d", resp.StatusCode)
	}

	// "Validate all": after the end only; one entry.
	before = len(st.auditActions())
	if resp := st.post(admin, "/admin/validation", url.Values{}, nil); resp.StatusCode != conflict {
		t.Errorf("validation before the end: %d", resp.StatusCode)
	}
	st.now(portal.EventEnd)
	if resp := st.post(admin, "/admin/validation", url.Values{}, nil); resp.StatusCode != see {
		t.Errorf("validation after the end: %d", resp.StatusCode)
	}
	if got := st.auditActions()[before:]; len(got) != 2 || got[1] != portal.AuditValidate {
		t.Errorf("entries %v", got)
	}
	if got := states(); got[teamA] != "waiting" || got[st.teamB.ID] != "waiting" || got[teamC.ID] != "waiting" {
		t.Errorf("after validate all: %v", got)
	}
}

func equalMap(a, b map[int64]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestOneTeamQuarantinesNoWorker: faults of one team's jobs alone, however
// many, neither quarantine a worker nor make it unhealthy on the admin
// page (a team whose target hangs the benchmarker must not take workers
// from the others); a fault of a second team's job does.
func TestOneTeamQuarantinesNoWorker(t *testing.T) {
	st := newSite(t)
	ctx := context.Background()
	if err := st.store.StartWorker(ctx, "w9", []string{example.Name}); err != nil {
		t.Fatal(err)
	}
	quarantine := func() bool {
		var q bool
		err := st.store.InTx(ctx, func(tx *store.Tx) error {
			var err error
			q, err = tx.QuarantineIfFaulty(ctx, "w9")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	unhealthy := func() bool {
		_, doc := st.page("admin", "/admin")
		row := doc.Find("tr").FilterFunction(func(_ int, tr *goquery.Selection) bool { return tr.Find("td").First().Text() == "w9" })
		if row.Length() != 1 {
			t.Fatalf("%d lines of worker w9 on the admin page", row.Length())
		}
		return row.Find("td").Last().Text() == "unhealthy"
	}
	hung := portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonDeadline, Error: "hung"}
	for i := range portal.QuarantineRecent {
		st.endedJobOn("w9", st.teamB.ID, int64(9500+i), hung)
		if quarantine() {
			t.Fatalf("worker w9 quarantined after %d faults of one team's jobs", i+1)
		}
	}
	if unhealthy() {
		t.Error("worker w9 is unhealthy on the admin page with one team's faults")
	}
	st.endedJobOn("w9", st.jobA.TeamID, 9600, hung)
	if !unhealthy() {
		t.Error("worker w9 is not unhealthy on the admin page after a second team's fault")
	}
	if !quarantine() {
		t.Error("worker w9 not quarantined after a second team's fault")
	}
}

// TestQuarantineOnAdminPage: a quarantined worker is shown so, with a
// button that clears it (audited once, by whom; quarantining by the portal
// itself); the page warns while no worker is live and out of quarantine.
func TestQuarantineOnAdminPage(t *testing.T) {
	st := newSite(t)
	ctx := context.Background()
	admin := st.users["admin"]
	if err := st.store.StartWorker(ctx, "w1", []string{example.Name}); err != nil {
		t.Fatal(err)
	}
	warns := func() bool {
		_, doc := st.page("admin", "/admin")
		return doc.Find("#no-healthy-worker").Length() == 1
	}
	if warns() {
		t.Error("a warning with a healthy worker")
	}
	// w1 ran team A's errored job; two more errors quarantine it.
	for i := range 2 {
		st.endedJob(st.teamB.ID, int64(9300+i), portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonDeadline, Error: "hung"})
	}
	err := st.store.InTx(ctx, func(tx *store.Tx) error {
		q, err := tx.QuarantineIfFaulty(ctx, "w1")
		if err == nil && !q {
			t.Error("w1 not quarantined")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, doc := st.page("admin", "/admin")
	if h := doc.Find(`form[action="/admin/workers/w1/clear"]`).Parent().Text(); !strings.HasPrefix(h, "quarantined") {
		t.Errorf("w1's health: %q", h)
	}
	if !warns() {
		t.Error("no warning with only a quarantined worker")
	}
	if err := st.store.StartWorker(ctx, "w2", []string{example.Name}); err != nil {
		t.Fatal(err)
	}
	if warns() {
		t.Error("a warning beside a healthy worker")
	}
	st.clock.add(web.WorkerGone + time.Second)
	if !warns() {
		t.Error("no warning when the healthy worker is gone")
	}
	before := len(st.auditActions())
	if resp := st.post(admin, "/admin/workers/w1/clear", url.Values{}, nil); resp.StatusCode != see {
		t.Fatalf("clearing: %d", resp.StatusCode)
	}
	if resp := st.post(admin, "/admin/workers/w1/clear", url.Values{}, nil); resp.StatusCode != conflict {
		t.Errorf("clearing twice: %d", resp.StatusCode)
	}
	entries, err := st.store.AuditLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := entries[before:]; len(got) != 1 || got[0].Action != portal.AuditClear || got[0].By.Login != "root" {
		t.Errorf("clear entries %+v", got)
	}
	if got := entries[before-1]; got.Action != portal.AuditQuarantine || got.By != portal.SystemActor {
		t.Errorf("quarantine entry %+v", got)
	}
}
