package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit/apptest/servers"
)

// jobID reads the job's id from the page's address.
func jobID(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	id, err2 := strconv.ParseInt(strings.TrimPrefix(loc, "/jobs/"), 10, 64)
	if err != nil || err2 != nil {
		t.Fatalf("the job page's address %q: %v %v", loc, err, err2)
	}
	return id
}

// newTeam signs alice up, makes her team (in bracket, unless "") and
// registers its target.
func newTeam(base, team, bracket, target string) chromedp.Action[chromedp.Void] {
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/signup"),
		chromedp.SendKeys(css(`form[action="/signup"] input[name=login]`), "alice"),
		chromedp.SendKeys(css(`form[action="/signup"] input[name=password]`), "alice-password"),
		chromedp.Click(css(`form[action="/signup"] button`)),
		chromedp.WaitVisible(css(`form[action="/team"] input[name=name]`)),
		chromedp.SendKeys(css(`form[action="/team"] input[name=name]`), team),
	}
	if bracket != "" {
		steps = append(steps, chromedp.SetValue(css(`form[action="/team"] select[name=bracket]`), bracket))
	}
	return chromedp.Steps(append(steps,
		chromedp.Click(css(`form[action="/team"] button`)),
		chromedp.WaitVisible(css(`form[action="/team/target"]`)),
		chromedp.SetValue(css(`form[action="/team/target"] input[name=target]`), target),
		chromedp.Click(css(`form[action="/team/target"] button`)),
		chromedp.WaitVisible(css(`p.target code`)),
	)...)
}

// TestJobPageInABrowser: a team enqueues and watches its job run, with
// its time elapsed and left counting; the result shows the run's charts
// drawn from the stored result, and "Enqueue again", which queues the next
// job; that one fails (the target is gone) and says why once. Each page
// fits a desktop and a phone.
func TestJobPageInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st, target := contestSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A load long enough that the job cannot end, and its page reload,
	// while the running page is being checked (the check itself takes
	// seconds on a busy machine).
	c, err := st.store.Contest(ctx)
	must(t, "the contest", err)
	c.LoadDuration = 8 * time.Second
	must(t, "a longer load", st.store.SetContest(ctx, c))
	b := browser(t, ctx, path)
	must(t, "a team enqueues", chromedp.Do(b,
		newTeam(st.url, "charts", "", target),
		chromedp.Navigate(st.url+"/"),
		chromedp.Click(css(`form[action="/jobs"] button`)),
		chromedp.WaitVisible(css(`dl.progress`)),
	))
	must(t, "the job runs, its time counting", chromedp.Do(b,
		until(`/^0:0[1-9] elapsed, (about \d+:\d\d left|finishing)$/.test(document.getElementById('job-time')?.textContent)
			&& !document.getElementById('job-bar').hidden`, 45*time.Second)))
	fits(t, b, "team-job-running")
	must(t, "the result", chromedp.Do(b, chromedp.WaitVisible(css(`p.verdict`))))
	fits(t, b, "team-job-result")
	id := jobID(t, b)
	j, err := st.store.Job(ctx, id)
	must(t, "the stored job", err)
	var res engine.Result
	must(t, "its result", json.Unmarshal(j.Result, &res))
	var want []string
	for _, s := range res.Timeline {
		want = append(want, strconv.FormatInt(s.Requests, 10))
	}
	drawn, err := chromedp.Run(b, chromedp.Evaluate[[]string](
		`[document.querySelectorAll('svg.run-chart').length + '',
		  document.querySelector('svg[data-chart=requests] path[data-series="requests/s"]').dataset.values,
		  document.querySelector('svg[data-chart=requests]').getBoundingClientRect().width + '',
		  document.querySelectorAll('.fail-reasons').length + '']`))
	must(t, "the charts", err)
	if drawn[0] != "5" || drawn[1] != strings.Join(want, " ") || drawn[2] == "0" || drawn[3] != "0" {
		t.Errorf("the result's page: %v; want 5 charts, requests %v, no reasons to fail", drawn, want)
	}

	// The target goes away; enqueue again: that job fails, and says why
	// once.
	must(t, "enqueue again", chromedp.Do(b,
		chromedp.Navigate(st.url+"/team"),
		chromedp.SetValue(css(`form[action="/team/target"] input[name=target]`), "http://127.0.0.1:1/"),
		submit(`form[action="/team/target"] button`),
		chromedp.Navigate(st.url+"/jobs/"+strconv.FormatInt(id, 10)),
		submit(`form.again button:not([disabled])`),
		chromedp.WaitVisible(css(`p.verdict`)),
	))
	fits(t, b, "team-job-failed")
	failed, err := st.store.Job(ctx, jobID(t, b))
	must(t, "the failed job", err)
	var fres engine.Result
	must(t, "its result", json.Unmarshal(failed.Result, &fres))
	if len(fres.FailReasons) == 0 {
		t.Fatalf("the job on a dead target did not fail: %s", failed.Result)
	}
	body, err := text(b, `main`)
	must(t, "the page", err)
	if n := strings.Count(body, fres.FailReasons[0]); n != 1 {
		t.Errorf("the reason %q is said %d times:\n%s", fres.FailReasons[0], n, body)
	}
	if again, err := chromedp.Run(b, chromedp.Evaluate[bool](`!!document.querySelector('form.again button:not([disabled])')`)); err != nil || !again {
		t.Errorf("no enabled \"Enqueue again\" on the failed job's page (%v)", err)
	}
}

// timedSite is contestSite whose contest started an hour ago and freezes
// and ends from now as told, with brackets if any.
func timedSite(t *testing.T, freeze, end time.Duration, brackets ...string) (*site, string, portal.Contest) {
	t.Helper()
	st, target := contestSite(t)
	ctx := context.Background()
	c, err := st.store.Contest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c.StartsAt, c.FreezesAt, c.EndsAt = now.Add(-time.Hour), now.Add(freeze), now.Add(end)
	c.Settings.Brackets = brackets
	if err := st.store.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	return st, target, c
}

// TestDashboardInABrowser: a team's contest page is its dashboard. Its
// header counts down to the board's freeze, in UTC and the viewer's own
// time; the team sees its rank, score and bracket, enqueues from the
// page and watches its job there; when the job ends the page shows the
// rank and the job's verdict, and when another team's job ends the
// standing is read again without a reload. Each state fits a desktop and
// a phone.
func TestDashboardInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st, target, c := timedSite(t, 90*time.Minute, 2*time.Hour, "open", "student")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := browser(t, ctx, path)
	must(t, "a team with a target", chromedp.Do(b,
		newTeam(st.url, "dash", "student", target),
		chromedp.Navigate(st.url+"/"),
		until(`/^The board freezes in 01:[23]\d:\d\d, at .* UTC \(.*\d\d:\d\d your time\)$/.test(document.getElementById('countdown')?.textContent)`, 5*time.Second),
	))
	head, err := text(b, `#countdown`)
	must(t, "the countdown", err)
	if want := c.FreezesAt.UTC().Format("15:04 UTC"); !strings.Contains(head, want) {
		t.Errorf("the countdown %q does not say %q", head, want)
	}
	// Every page has the countdown, those whose views have fields of
	// their own (the sign-in page's Next) too.
	for _, page := range []string{"/login", "/signup", "/leaderboard", "/announcements"} {
		if resp, body := st.do(st.client(), http.MethodGet, page, nil, nil); resp.StatusCode != http.StatusOK ||
			!strings.Contains(body, `id="countdown"`) {
			t.Errorf("%s: %d, countdown %v", page, resp.StatusCode, strings.Contains(body, `id="countdown"`))
		}
	}
	dash, err := text(b, `#dashboard`)
	must(t, "the dashboard", err)
	for _, want := range []string{"Team dash student", "of 1 teams; — of 1 in student", "Enqueue a benchmark", "No benchmarks yet."} {
		if !strings.Contains(strings.Join(strings.Fields(dash), " "), want) {
			t.Errorf("the dashboard lacks %q:\n%s", want, dash)
		}
	}
	fits(t, b, "team-dashboard-before")
	must(t, "enqueue from the dashboard, and watch it there", chromedp.Do(b,
		submit(`#enqueue form button:not([disabled])`),
		chromedp.Navigate(st.url+"/"),
		until(`/elapsed/.test(document.getElementById('job-time')?.textContent)`, 45*time.Second),
	))
	fits(t, b, "team-dashboard-running")
	must(t, "the job ends", chromedp.Do(b,
		// The page loads again when the job ends: marked before, not after
		// (unless it has already).
		chromedp.Evaluate[chromedp.Void](`if (document.getElementById('job-time')) document.body.dataset.before = 'done'`),
		chromedp.WaitVisible(css(`body:not([data-before]) #recent-jobs`)),
		until(`document.querySelector('[data-standing=rank]')?.textContent === '1' &&
			document.querySelector('#recent-jobs tbody tr td:nth-child(2)')?.textContent === 'passed' &&
			!!document.querySelector('#enqueue form button:not([disabled])')`, 5*time.Second),
		chromedp.Evaluate[chromedp.Void](`window.sameLoad = true`),
	))
	fits(t, b, "team-dashboard-after")

	// Another team's job ends: the standing is read again, in place.
	bob := st.client()
	for _, step := range []struct {
		path string
		form url.Values
	}{
		{"/signup", url.Values{"login": {"bob"}, "password": {"bob-password"}}},
		{"/team", url.Values{"name": {"other"}, "bracket": {"open"}}},
		{"/team/target", url.Values{"target": {target}}},
		{"/jobs", url.Values{}},
	} {
		if resp := st.post(bob, step.path, step.form, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("bob's %s: %d", step.path, resp.StatusCode)
		}
	}
	must(t, "the standing follows", chromedp.Do(b,
		until(`window.sameLoad && +document.body.dataset.standingUpdates > 0 &&
			/of 2 teams/.test(document.getElementById('standing').textContent)`, 45*time.Second)))

	// Every page a team uses has the header's countdown and fits.
	for _, page := range []string{"jobs", "team", "clarifications", "announcements", "manual"} {
		must(t, page, chromedp.Do(b, chromedp.Navigate(st.url+"/"+page), chromedp.WaitVisible(css(`#countdown`))))
		fits(t, b, "team-page-"+page)
	}
}

// TestAnsweredBadgeInABrowser: when staff answer a team's question, the
// team's open page (here its dashboard) shows a badge on "Clarifications"
// and a notice, without a reload; reading the clarifications page clears
// both, and they stay cleared on the next page.
func TestAnsweredBadgeInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st := liveSite(t, systems.MigratedSQLite(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := browser(t, ctx, path)
	const badge = `document.querySelector('nav .badge[data-count=answered-new]')`
	must(t, "alice signs in", chromedp.Do(alice, signIn(st.url, "alice", "/clarifications")))
	must(t, "alice asks", chromedp.Do(alice,
		chromedp.SendKeys(css(`form[action="/clarifications"] textarea[name=question]`), "May we add an index?"),
		chromedp.Click(css(`form[action="/clarifications"] button`)),
		chromedp.WaitVisible(css(`#clarifications article.own`))))
	must(t, "alice opens the contest page", chromedp.Do(alice,
		chromedp.Navigate(st.url+"/"),
		chromedp.WaitVisible(css(`#announcements`)),
		chromedp.Evaluate[chromedp.Void](`window.sameLoad = true`),
	))
	if hidden, err := chromedp.Run(alice, chromedp.Evaluate[bool](badge+`.hidden && document.getElementById('answer-banner').hidden`)); err != nil || !hidden {
		t.Errorf("a badge or a notice before any answer (%v)", err)
	}
	root, _, err := st.store.AccountByLogin(ctx, "root")
	must(t, "the admin", err)
	qs, err := st.store.Clarifications(ctx, store.Seen{All: true})
	if err != nil || len(qs) != 1 {
		t.Fatalf("the question: %v %v", qs, err)
	}
	_, err = st.store.AnswerClarification(ctx, portal.ActorOf(root), qs[0].ID, store.Answer{Answer: "Yes."})
	must(t, "staff answer", err)
	must(t, "the badge and the notice, live", chromedp.Do(alice,
		until(badge+`.textContent === '1' && !`+badge+`.hidden && !document.getElementById('answer-banner').hidden &&
			window.sameLoad === true`, 10*time.Second)))
	fits(t, alice, "team-answered")
	must(t, "alice reads the answer", chromedp.Do(alice,
		chromedp.Click(css(`#answer-banner a`)),
		chromedp.WaitVisible(css(`#clarifications article.own blockquote.answer`)),
		until(badge+`.hidden && document.getElementById('answer-banner').hidden`, 5*time.Second),
		chromedp.Navigate(st.url+"/"),
		chromedp.WaitVisible(css(`#announcements`)),
	))
	if hidden, err := chromedp.Run(alice, chromedp.Evaluate[bool](badge+`.hidden && document.getElementById('answer-banner').hidden`)); err != nil || !hidden {
		t.Errorf("the badge or the notice stayed after reading the answer (%v)", err)
	}
}

// TestLeaderboardChartInABrowser: the leaderboard's chart labels its time
// axis in 24-hour UTC, its labels apart, and marks the board's freeze;
// the page fits a desktop and a phone.
func TestLeaderboardChartInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	// The board freezes while the team's job runs: the team's own line
	// goes on past it.
	st, target, _ := timedSite(t, 3*time.Second, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := browser(t, ctx, path)
	must(t, "a team's job", chromedp.Do(b,
		newTeam(st.url, "lines", "", target),
		chromedp.Navigate(st.url+"/"),
		submit(`#enqueue form button:not([disabled])`),
		chromedp.WaitVisible(css(`p.verdict`)),
		chromedp.Navigate(st.url+"/leaderboard"),
		until(`document.querySelector('#chart .uplot') !== null && !!document.getElementById('chart').dataset.freezeX`, 15*time.Second),
	))
	type axis struct {
		Labels []string  `json:"labels"`
		Xs     []float64 `json:"xs"`
	}
	ax, err := chromedp.Run(b, chromedp.Evaluate[axis](`({labels: chart.axes[0]._values,
		xs: chart.axes[0]._splits.map((v) => chart.valToPos(v, 'x'))})`))
	must(t, "the time axis", err)
	for i, l := range ax.Labels {
		if len(l) != 5 && len(l) != 8 || l[2] != ':' {
			t.Errorf("label %q is not HH:MM or HH:MM:SS", l)
		}
		if i > 0 && ax.Xs[i]-ax.Xs[i-1] < 70 {
			t.Errorf("labels %q and %q are %.0f px apart", ax.Labels[i-1], l, ax.Xs[i]-ax.Xs[i-1])
		}
	}
	if len(ax.Labels) == 0 {
		t.Error("the time axis has no labels")
	}
	fits(t, b, "team-leaderboard")
}
