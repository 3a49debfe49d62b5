package web_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/kit/apptest/servers"
	"github.com/tunecon/tunecon/problems/example"
)

// scripted is a benchmark runner that passes every run at the score the
// test has set for the target's host: the contest day's runs take no time
// and score what the story needs, while the queue, River and the worker
// are the real ones.
type scripted struct {
	mu     sync.Mutex
	scores map[string]float64
}

func (s *scripted) set(host string, score float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scores[host] = score
}

func (s *scripted) Bench(_ context.Context, p kit.Problem, target *url.URL, _ ...engine.Option) (*engine.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &engine.Result{Problem: p.Name, Passed: true, Score: s.scores[target.Hostname()]}, nil
}

var _ queue.Runner = (*scripted)(nil)

// dayShot saves a screenshot of the whole page as
// build/screenshots/contestday-NAME.png.
func dayShot(name string) chromedp.Action[chromedp.Void] { return screenshot("contestday-" + name) }

// jsLiteral is s as a JavaScript string literal (a JSON string is one).
func jsLiteral(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// boardReads waits until the open leaderboard's lines read want, each
// "rank|team|score|runs" as the cells' text.
func boardReads(want ...string) chromedp.Action[chromedp.Void] {
	// As JSON.stringify writes it: no HTML escapes.
	var lines strings.Builder
	enc := json.NewEncoder(&lines)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(want)
	return until(`JSON.stringify(Array.from(document.querySelectorAll('table.board tbody tr')).map(
		tr => Array.from(tr.cells).map(td => td.textContent.trim()).join('|'))) === `+
		jsLiteral(strings.TrimSuffix(lines.String(), "\n")), 5*time.Second)
}

// ownNow waits until the open leaderboard's "your team now" line starts so.
func ownNow(prefix string) chromedp.Action[chromedp.Void] {
	return until(`(document.getElementById('own-now')?.textContent ?? '').replace(/\s+/g, ' ').trim().startsWith(`+
		jsLiteral(prefix)+`)`, 5*time.Second)
}

// submit clicks a form's button and waits for the page it leads to: the
// page before is marked, the one after is not. (A script's condition
// polled across the navigation would fail with it.)
func submit(button string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Evaluate[chromedp.Void](`document.body.dataset.before = 'submit'`),
		chromedp.Click(css(button)),
		chromedp.WaitVisible(css(`body:not([data-before])`)),
	)
}

// logIn signs login in and waits for the page it leads to, next.
func logIn(base, login, next string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/login?next="+url.QueryEscape(next)),
		chromedp.SendKeys(css(`form[action="/login"] input[name=login]`), login),
		chromedp.SendKeys(css(`form[action="/login"] input[name=password]`), login+"-password"),
		submit(`form[action="/login"] button`),
	)
}

// TestContestDayInABrowser is a whole contest day in Chromium, on a clock
// the test controls, with the real queue and a worker whose runs score
// what the test says: staff start the contest; teams A and B each run a
// benchmark; staff freeze the board, and B's later, better score is hidden
// from A and the public while B sees it; staff end the contest, and A's
// enqueue from a page opened before the end is refused, saying why; staff
// validate every team's last target (B's run falls under the threshold and
// is flagged), disqualify B with a reason, and reveal: the final board
// shows B's later score, struck, without a rank. Screenshots go to
// build/screenshots/contestday-*.png.
func TestContestDayInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	dsn := systems.MigratedSQLite(t)
	st := liveSite(t, dsn)
	a, b := evilName, "bees"
	teamA, teamB := st.jobA.TeamID, st.teamB.ID
	hostA, hostB := "10.9.8.7", "10.9.8.8" // targetA's, targetB's

	// A worker on the site's clock: what it records is stamped as the
	// pages' times are.
	ws, err := store.Open(context.Background(), dsn, store.Options{Now: st.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	runner := &scripted{scores: map[string]float64{}}
	worker, err := queue.New(ws, queue.Config{Worker: "bench-1", Problems: []string{example.Name}, Runner: runner,
		HeartbeatEvery: 200 * time.Millisecond, ProgressEvery: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = worker.Stop(ctx)
	})
	// The contest starts in an hour, until staff press "start now".
	at := st.clock.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05")
	if resp := st.post(st.users["admin"], "/admin/timeline", url.Values{"starts_at": {at}}, nil); resp.StatusCode != see {
		t.Fatalf("setting the start: %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	alice, second := browser(t, ctx, path), browser(t, ctx, path)
	staff := second
	bob, cancelBob := chromedp.NewContext(second, chromedp.WithNewBrowserContext())
	defer cancelBob()
	// now presses an event's "now" button on the admin page and waits for
	// the page after it, where done holds.
	now := func(event, done string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.Navigate(st.url+"/admin"),
			answerConfirm(true), // the end and the reveal ask first
			submit(`button[data-event=`+event+`]`),
			until(done, 5*time.Second),
		)
	}
	state := func(s string) string {
		return `document.getElementById('contest-state')?.textContent === ` + jsLiteral(s)
	}
	run := func(host string, score float64) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.Navigate(st.url+"/"),
			chromedp.Func(func(context.Context, *chromedp.Target) error {
				runner.set(host, score)
				return nil
			}),
			chromedp.Click(css(`form[action="/jobs"] button`)),
			chromedp.WaitVisible(css(`p.verdict`)),
		)
	}
	verdict := func(c context.Context, want string) {
		t.Helper()
		if got, err := text(c, `p.verdict`); err != nil || got != want {
			t.Errorf("the job ended %q (%v), want %q", got, err, want)
		}
	}

	// The start.
	must(t, "staff sign in and start the contest", chromedp.Do(staff, logIn(st.url, "root", "/admin"), now("start", state("running")),
		dayShot("start")))
	if state, err := text(staff, `#contest-state`); err != nil || state != "running" {
		t.Errorf("after the start the contest is %q (%v)", state, err)
	}

	// Both teams' runs.
	must(t, "team A runs", chromedp.Do(alice, logIn(st.url, "alice", "/"), run(hostA, 5000)))
	verdict(alice, "passed: score 5000")
	must(t, "team B runs", chromedp.Do(bob, logIn(st.url, "bob", "/"), run(hostB, 4000)))
	verdict(bob, "passed: score 4000")
	must(t, "the board after the runs", chromedp.Do(alice, chromedp.Navigate(st.url+"/leaderboard"),
		boardReads("1|"+a+"|5000|2", "2|"+b+"|4000|1"), dayShot("runs")))

	// The freeze: B's later score is B's alone.
	st.clock.add(time.Minute)
	must(t, "staff freeze the board", chromedp.Do(staff, now("freeze", `document.getElementById('frozen-banner') !== null`)))
	st.clock.add(time.Minute)
	must(t, "team B runs after the freeze", chromedp.Do(bob, run(hostB, 7000)))
	verdict(bob, "passed: score 7000")
	frozen := []string{"1|" + a + "|5000|2", "2|" + b + "|4000|1"}
	must(t, "team A's frozen board", chromedp.Do(alice, chromedp.Navigate(st.url+"/leaderboard"),
		chromedp.WaitVisible(css(`#frozen-banner`)), boardReads(frozen...), ownNow("Your team now: score 5000, runs 2"),
		dayShot("freeze-team-a")))
	if main, err := text(alice, `main`); err != nil || strings.Contains(main, "7000") {
		t.Errorf("team A's frozen board shows team B's later score (%v): %q", err, main)
	}
	must(t, "team B's frozen board", chromedp.Do(bob, chromedp.Navigate(st.url+"/leaderboard"),
		boardReads(frozen...), ownNow("Your team now: score 7000, runs 2"), dayShot("freeze-team-b")))
	if got := st.board("anon", "/leaderboard"); strings.Join(got, " / ") != strings.Join(frozen, " / ") {
		t.Errorf("the public's frozen board %v", got)
	}
	must(t, "the staff's live board", chromedp.Do(staff, chromedp.Navigate(st.url+"/leaderboard"),
		boardReads("1|"+b+"|7000|2", "2|"+a+"|5000|2"), dayShot("freeze-staff")))

	// The end: a page opened before it cannot enqueue after it.
	must(t, "team A opens its page", chromedp.Do(alice, chromedp.Navigate(st.url+"/"),
		chromedp.WaitEnabled(css(`form[action="/jobs"] button`))))
	st.clock.add(time.Minute)
	must(t, "staff end the contest", chromedp.Do(staff, now("end", state("over"))))
	must(t, "team A's late enqueue", chromedp.Do(alice, submit(`form[action="/jobs"] button`),
		until(`location.pathname === '/jobs' && document.querySelector('p.error') !== null`, 5*time.Second),
		dayShot("late-enqueue")))
	if msg, err := text(alice, `p.error`); err != nil || !strings.Contains(msg, "the contest is over") ||
		!strings.Contains(msg, "no benchmarks now") {
		t.Errorf("the late enqueue says %q (%v)", msg, err)
	}
	if jobs, err := st.store.TeamJobs(context.Background(), teamA); err != nil || len(jobs) != 3 {
		t.Errorf("team A's jobs after the late enqueue: %d, %v", len(jobs), err)
	}

	// The validation runs: A's holds, B's falls under the threshold.
	runner.set(hostA, 4900)
	runner.set(hostB, 3000)
	idA, idB := "#team-"+strconv.FormatInt(teamA, 10), "#team-"+strconv.FormatInt(teamB, 10)
	must(t, "staff validate every team", chromedp.Do(staff, chromedp.Navigate(st.url+"/admin/validation"),
		submit(`#validate-all`), until(`location.search === '?queued=2'`, 5*time.Second)))
	validated := func() bool {
		t.Helper()
		must(t, "the validation page", chromedp.Do(staff, chromedp.Navigate(st.url+"/admin/validation"),
			chromedp.WaitVisible(css(`table.validation`))))
		states, err := chromedp.Run(staff, chromedp.Evaluate[[]string](`[`+jsLiteral(idA)+`, `+jsLiteral(idB)+`].map(
			id => document.querySelector(id).dataset.state + (document.querySelector(id).classList.contains('bad') ? ' flagged' : ''))`))
		must(t, "the validation states", err)
		return len(states) == 2 && states[0] == "ok" && states[1] == "low flagged"
	}
	for end := time.Now().Add(15 * time.Second); !validated(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the validation runs did not end ok for team A and flagged for team B")
		}
	}
	must(t, "the validation page", chromedp.Do(staff, dayShot("validation")))
	if line, err := text(staff, idB); err != nil || !strings.Contains(line, "42.9%") || !strings.Contains(line, "under 75%") {
		t.Errorf("team B's validation line %q (%v)", line, err)
	}
	for who, c := range map[string]context.Context{"a": alice, "b": bob} {
		must(t, "the team's jobs", chromedp.Do(c, chromedp.Navigate(st.url+"/jobs"), chromedp.WaitVisible(css(`main`))))
		if page, err := text(c, `main`); err != nil || strings.Contains(page, "4900") || strings.Contains(page, "3000") {
			t.Errorf("team %s's jobs show a validation run (%v): %q", who, err, page)
		}
	}

	// The disqualification.
	const reason = "its validation run scored 42.9% of its final score"
	must(t, "staff disqualify team B", chromedp.Do(staff, chromedp.Navigate(st.url+"/admin"),
		chromedp.SendKeys(css(idB+` form[action$="/disqualify"] input[name=reason]`), reason),
		answerConfirm(true),
		chromedp.Click(css(idB+` form[action$="/disqualify"] button`)),
		chromedp.WaitVisible(css(idB+`.dq`)), chromedp.ScrollIntoView(css(idB)), dayShot("disqualify")))
	if line, err := text(staff, idB); err != nil || !strings.Contains(line, reason) {
		t.Errorf("team B's line on the admin page %q (%v)", line, err)
	}

	// The reveal: the final board, B's later score struck and unranked.
	st.clock.add(time.Minute)
	must(t, "staff reveal", chromedp.Do(staff, now("reveal", `document.querySelector('.banner.revealed') !== null`)))
	final := []string{"1|" + a + "|5000|2", "DQ|" + b + " (disqualified)|7000|2"}
	must(t, "the final board", chromedp.Do(alice, chromedp.Navigate(st.url+"/leaderboard"),
		chromedp.WaitVisible(css(`.banner.revealed`)), boardReads(final...), dayShot("reveal")))
	if struck, err := text(alice, `table.board tr.dq td:nth-child(3) s`); err != nil || struck != "7000" {
		t.Errorf("the disqualified score %q (%v)", struck, err)
	}
	if main, err := text(alice, `main`); err != nil || strings.Contains(main, reason) {
		t.Errorf("the public board shows the reason (%v): %q", err, main)
	}
	// After the live rows have replaced the page's: they carry no reason,
	// but the team's own stays.
	must(t, "team B's final board", chromedp.Do(bob, chromedp.Navigate(st.url+"/leaderboard"),
		chromedp.WaitVisible(css(`table.board[data-updates]`)), boardReads(
			"1|"+a+"|5000|2", "DQ|"+b+" (disqualified: "+reason+")|7000|2")))
}
