package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tunecon/tunecon/kit/apptest/servers"
	"github.com/tunecon/tunecon/problems"
	"github.com/tunecon/tunecon/problems/example"
)

// answerConfirm makes the page's next confirm() answer yes or no without a
// dialog, and keep what it asked in body[data-asked].
func answerConfirm(yes bool) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`window.confirm = (m) => { document.body.dataset.asked = m; return %t; }`, yes))
}

// TestAdminTeamInABrowser is the organiser's page of a team in Chromium:
// it fits a laptop and a phone; a password-reset link for a member asks
// first, is made, and its owner chooses a new password through it and
// signs in with it; the team is renamed from the page.
func TestAdminTeamInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st := newSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	org, bob := browser(t, ctx, path), browser(t, ctx, path)
	page := "/admin/teams/" + strconv.FormatInt(st.teamB.ID, 10)
	must(t, "the organiser opens team B's page", chromedp.Do(org, logIn(st.url, "root", page),
		chromedp.WaitVisible(css(`#members li.member`))))
	fits(t, org, "admin-team")

	reset := `#members form[action$="/signin-link"] button`
	must(t, "a reset link, refused at the question", chromedp.Do(org, answerConfirm(false), chromedp.Click(css(reset))))
	asked, err := chromedp.Run(org, chromedp.Evaluate[string](`document.body.dataset.asked || ""`))
	if err != nil || !strings.Contains(asked, "password-reset link for bob") {
		t.Errorf("the reset link asked %q (%v)", asked, err)
	}
	if here, err := chromedp.Run(org, chromedp.Evaluate[string](`location.pathname`)); err != nil || here != page {
		t.Errorf("a refused confirmation left for %q (%v)", here, err)
	}
	must(t, "a reset link, confirmed", chromedp.Do(org, answerConfirm(true), submit(reset),
		chromedp.WaitVisible(css(`a.signin-link[data-login=bob]`))))
	fits(t, org, "admin-reset-link")
	link, err := chromedp.Run(org, chromedp.AttributeValue(css(`a.signin-link[data-login=bob]`), "href"))
	must(t, "bob's link", err)

	must(t, "bob chooses a new password with the link", chromedp.Do(bob, chromedp.Navigate(link.Value),
		chromedp.WaitVisible(css(`form[action^="/signin/"]`)),
		chromedp.SendKeys(css(`input[name=password]`), "bob-new-password"),
		chromedp.SendKeys(css(`input[name=again]`), "bob-new-password"),
		submit(`form[action^="/signin/"] button`),
		chromedp.Navigate(st.url+"/account"),
		chromedp.WaitVisible(css(`form[action="/account/password"]`)),
	))
	fits(t, bob, "admin-account")
	if resp := st.post(st.client(), "/login", url.Values{"login": {"bob"}, "password": {"bob-new-password"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("bob's new password: %d", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", url.Values{"login": {"bob"}, "password": {"bob-password"}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("bob's old password: %d", resp.StatusCode)
	}

	must(t, "the organiser renames the team", chromedp.Do(org, chromedp.Navigate(st.url+page),
		chromedp.WaitVisible(css(`form[action$="/rename"]`)),
		chromedp.SetValue(css(`form[action$="/rename"] input[name=name]`), "Busy Bees"),
		submit(`form[action$="/rename"] button`),
	))
	if name, err := text(org, `h1#team-name`); err != nil || name != "Busy Bees" {
		t.Errorf("the page after the rename: %q (%v)", name, err)
	}
}

// TestTimelineInABrowser is the admin page in Chromium: it fits a laptop
// and a phone, with a quarantined worker's Clear and the teams' Disqualify
// on screen; the timeline's buttons follow the contest's state; ending
// and revealing ask first, and a refusal changes nothing; a change of
// problem after the start asks first too. The jobs' page fits as well.
func TestTimelineInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st := newSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	org := browser(t, ctx, path)
	active := func() string {
		t.Helper()
		got, err := chromedp.Run(org, chromedp.Evaluate[string](
			`[...document.querySelectorAll("div.now button:not([disabled])")].map(b => b.dataset.event).join(" ")`))
		must(t, "the active buttons", err)
		return got
	}
	asked := func() string {
		t.Helper()
		got, err := chromedp.Run(org, chromedp.Evaluate[string](`document.body.dataset.asked || ""`))
		must(t, "what was asked", err)
		return got
	}
	st.quarantinedW1()
	must(t, "the organiser opens the admin page", chromedp.Do(org, logIn(st.url, "root", "/admin"),
		chromedp.WaitVisible(css(`div.now`))))
	fits(t, org, "admin-contest")
	// At 1280 px the workers' health with its Clear and the teams'
	// Disqualify are on screen, not past the right edge.
	offscreen, err := chromedp.Run(org, chromedp.Evaluate[[]string](`[...document.querySelectorAll(
		"table.workers td.health, form[action$='/clear'] button, form[action$='/disqualify'] button")]
		.filter(e => e.getBoundingClientRect().right > window.innerWidth || e.getBoundingClientRect().width === 0)
		.map(e => e.outerHTML.slice(0, 60))`))
	must(t, "the buttons' places", err)
	if len(offscreen) > 0 {
		t.Errorf("off screen at 1280 px: %v", offscreen)
	}
	if n, err := chromedp.Run(org, chromedp.Evaluate[int](`document.querySelectorAll("form[action$='/clear'] button").length`)); err != nil || n != 1 {
		t.Errorf("%d Clear buttons (%v), want the quarantined worker's", n, err)
	}
	if got := active(); got != "start freeze end reveal" { // registration is open
		t.Errorf("active buttons of a contest with no times: %q", got)
	}
	end := `div.now button[data-event=end]`
	must(t, "end, refused at the question", chromedp.Do(org, answerConfirm(false), chromedp.Click(css(end))))
	if a := asked(); !strings.HasPrefix(a, "End the contest now?") {
		t.Errorf("ending asked %q", a)
	}
	if state, err := text(org, `#contest-state`); err != nil || state != "running" {
		t.Errorf("after a refused end the contest is %q (%v)", state, err)
	}
	must(t, "end, confirmed", chromedp.Do(org, answerConfirm(true), submit(end)))
	if state, err := text(org, `#contest-state`); err != nil || state != "over" {
		t.Errorf("after the end the contest is %q (%v)", state, err)
	}
	if got := active(); got != "reveal" {
		t.Errorf("active buttons after the end: %q, want the reveal only", got)
	}
	reveal := `div.now button[data-event=reveal]`
	must(t, "reveal, refused at the question", chromedp.Do(org, answerConfirm(false), chromedp.Click(css(reveal))))
	if a := asked(); !strings.HasPrefix(a, "Reveal the final board now?") {
		t.Errorf("revealing asked %q", a)
	}
	must(t, "reveal, confirmed", chromedp.Do(org, answerConfirm(true), submit(reveal)))
	if got := active(); got != "" {
		t.Errorf("active buttons after the reveal: %q, want none", got)
	}
	fits(t, org, "admin-contest-over")

	other := ""
	for _, p := range problems.Names() {
		if p != example.Name {
			other = p
		}
	}
	must(t, "another problem, refused at the question", chromedp.Do(org, answerConfirm(false),
		chromedp.SetValue(css(`#settings select[name=problem]`), other),
		chromedp.Click(css(`#settings button[type=submit]`))))
	if a := asked(); !strings.Contains(a, "Change the problem from "+example.Name+" to "+other) {
		t.Errorf("a change of problem asked %q", a)
	}
	if c, err := st.store.Contest(context.Background()); err != nil || c.Problem != example.Name {
		t.Errorf("the problem after a refused change: %q (%v)", c.Problem, err)
	}
	must(t, "the organiser opens the jobs", chromedp.Do(org, chromedp.Navigate(st.url+"/admin/jobs"),
		chromedp.WaitVisible(css(`#queue`))))
	fits(t, org, "admin-jobs")
}
