package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tunecon/tunecon/kit/apptest/servers"
)

// snap saves a screenshot of the whole page as
// build/screenshots/clarifications-NAME.png.
func snap(name string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return chromedp.Void{}, err
		}
		if err := os.MkdirAll(screenshots, 0o755); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, os.WriteFile(filepath.Join(screenshots, "clarifications-"+name+".png"), png, 0o644)
	}
}

// signIn signs login in and opens next.
func signIn(base, login, next string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/login?next="+next),
		chromedp.SendKeys(css(`form[action="/login"] input[name=login]`), login),
		chromedp.SendKeys(css(`form[action="/login"] input[name=password]`), login+"-password"),
		chromedp.Click(css(`form[action="/login"] button`)),
		chromedp.WaitVisible(css(`nav a[href="/announcements"]`)),
	)
}

// TestClarificationsInABrowser: team A asks in one browser; in a second
// browser, staff (one browser context) claim the question, the page
// fitting a laptop and a phone before and after, and publish it, its text
// edited, with a canned answer, while team B's page (another context) shows
// it without a reload; the staff's view still shows the question as asked,
// team B never sees it. Then an announcement reaches team B's open contest
// page, with its unread count. Screenshots go to build/screenshots.
func TestClarificationsInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st := liveSite(t, systems.MigratedSQLite(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice, second := browser(t, ctx, path), browser(t, ctx, path)
	staff := second
	bob, cancelBob := chromedp.NewContext(second, chromedp.WithNewBrowserContext())
	defer cancelBob()

	const asked = "Our app at 10.9.8.7 caches /api/SECRET-A for a minute: is that allowed?"
	const edited = "May an app cache API answers for a minute?"

	must(t, "bob opens the clarifications", chromedp.Do(bob, signIn(st.url, "bob", "/clarifications"),
		chromedp.WaitVisible(css(`#clarifications`)),
		chromedp.Evaluate[chromedp.Void](`window.sameLoad = true`)))
	must(t, "staff open the clarifications", chromedp.Do(staff, signIn(st.url, "root", "/clarifications"),
		chromedp.WaitVisible(css(`#clarifications`))))
	must(t, "alice asks", chromedp.Do(alice, signIn(st.url, "alice", "/clarifications"),
		chromedp.SendKeys(css(`form[action="/clarifications"] textarea[name=question]`), asked),
		chromedp.Click(css(`form[action="/clarifications"] button`)),
		chromedp.WaitVisible(css(`#clarifications article.own`)),
		snap("team-asks"),
	))
	if status, err := text(alice, `#clarifications article.own .status`); err != nil || status != "waiting for an answer" {
		t.Errorf("alice's question is %q (%v)", status, err)
	}
	must(t, "the question reaches the staff's open page", chromedp.Do(staff,
		until(`document.querySelector('#clarifications article.waiting blockquote.original')?.textContent.includes('SECRET-A') &&
			document.querySelector('nav .badge[data-count=unanswered]')?.textContent === '1' &&
			!document.querySelector('nav .badge[data-count=unanswered]').hidden`, 10*time.Second),
		snap("staff-sees"),
	))
	fits(t, staff, "admin-clarification-waiting")
	must(t, "staff claim it", chromedp.Do(staff, submit(`#clarifications article.waiting form.claim button`),
		chromedp.WaitVisible(css(`#clarifications article.waiting form.answer-form`))))
	fits(t, staff, "admin-clarification-claimed")
	if status, err := text(staff, `#clarifications article.waiting .status`); err != nil || status != "waiting, claimed by root" {
		t.Errorf("the claimed question's status reads %q (%v)", status, err)
	}
	must(t, "staff publish it, edited, with a canned answer", chromedp.Do(staff,
		chromedp.Click(css(`#clarifications article.waiting details.edit-question summary`)),
		chromedp.SetValue(css(`#clarifications article.waiting textarea[name=question]`), edited),
		chromedp.SetValue(css(`#clarifications article.waiting select[name=canned]`), "Yes."),
		chromedp.Click(css(`#clarifications article.waiting input[name=publish]`)),
		chromedp.Click(css(`#clarifications article.waiting form.answer-form button`)),
		chromedp.WaitVisible(css(`#clarifications article blockquote.answer`)),
		snap("staff-published"),
	))
	original, err1 := text(staff, `#clarifications article blockquote.original`)
	shown, err2 := text(staff, `#clarifications article blockquote.question`)
	status, err3 := text(staff, `#clarifications article .status`)
	if original != asked || shown != edited || status != "published" || err1 != nil || err2 != nil || err3 != nil {
		t.Errorf("the staff's view: as asked %q, as shown %q, %q (%v %v %v)", original, shown, status, err1, err2, err3)
	}
	must(t, "team B's open page shows it, without a reload", chromedp.Do(bob,
		until(`document.querySelector('#clarifications article.published blockquote.question')?.textContent === `+jsString(edited)+` &&
			document.querySelector('#clarifications article.published blockquote.answer')?.textContent === 'Yes.' &&
			window.sameLoad === true`, 10*time.Second),
		snap("team-b-live"),
	))
	page, err := chromedp.Run(bob, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	must(t, "bob's page", err)
	if strings.Contains(page, "SECRET-A") || strings.Contains(page, "10.9.8.7") {
		t.Error("team B's page shows the question as asked")
	}
	must(t, "alice's own question, published", chromedp.Do(alice, chromedp.Navigate(st.url+"/clarifications"),
		chromedp.WaitVisible(css(`#clarifications article.own`))))
	if status, err := text(alice, `#clarifications article.own .status`); err != nil || status != "answered, published to every team" {
		t.Errorf("alice's question is %q (%v)", status, err)
	}

	// An announcement reaches team B's open contest page.
	must(t, "bob opens the contest page", chromedp.Do(bob, chromedp.Navigate(st.url+"/"),
		chromedp.WaitVisible(css(`#announcements`)),
		chromedp.Evaluate[chromedp.Void](`window.sameLoad = true`)))
	must(t, "staff announce", chromedp.Do(staff, chromedp.Navigate(st.url+"/announcements"),
		chromedp.SendKeys(css(`form[action="/admin/announcements"] textarea[name=text]`), "Clarification #1 is **published**: caching is allowed."),
		chromedp.Click(css(`form[action="/admin/announcements"] button`)),
		chromedp.WaitVisible(css(`#announcements article`)),
	))
	must(t, "team B's contest page shows it, and its unread count", chromedp.Do(bob,
		until(`document.querySelector('#announcements article strong')?.textContent === 'published' &&
			document.querySelector('nav .badge[data-count=unread]')?.textContent === '1' &&
			!document.getElementById('notice-banner').hidden && window.sameLoad === true`, 10*time.Second),
		snap("announcement"),
	))
	must(t, "bob reads the announcements", chromedp.Do(bob, chromedp.Click(css(`#notice-banner a`)),
		chromedp.WaitVisible(css(`#announcements article`)),
		until(`document.querySelector('nav .badge[data-count=unread]').hidden`, 5*time.Second)))
}

// jsString is s as a JavaScript string literal (s holds no quote or
// backslash).
func jsString(s string) string { return "'" + s + "'" }
