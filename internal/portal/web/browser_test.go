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

// screenshots is where the browser test leaves its pictures for review.
var screenshots = filepath.Join("..", "..", "..", "build", "screenshots")

// browser starts a headless Chromium with a profile of its own (its own
// cookies: another person).
func browser(t *testing.T, ctx context.Context, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1000, 900))
	alloc, cancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancel)
	b, cancelB := chromedp.NewContext(alloc)
	t.Cleanup(cancelB)
	if err := chromedp.Do(b); err != nil { // starts the browser
		t.Fatal(err)
	}
	return b
}

// shoot saves a screenshot of the whole page as
// build/screenshots/portal-NAME.png.
func shoot(name string) chromedp.Action[chromedp.Void] { return screenshot("portal-" + name) }

// screenshot saves a screenshot of the whole page as
// build/screenshots/FILE.png.
func screenshot(file string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return chromedp.Void{}, err
		}
		if err := os.MkdirAll(screenshots, 0o755); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, os.WriteFile(filepath.Join(screenshots, file+".png"), png, 0o644)
	}
}

// css is a CSS selector.
type css = chromedp.CSS

// text reads an element's text.
func text(ctx context.Context, sel string) (string, error) {
	return chromedp.Run(ctx, chromedp.Text(css(sel)))
}

// until waits for a JavaScript condition.
func until(cond string, limit time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(limit))
}

// TestInABrowser walks the contest in Chromium, as two teammates: one signs
// up and creates the team, the other joins it from a second browser with
// the invite code; the first registers the target and enqueues, watches the
// live progress reach a result, while the second's leaderboard and chart
// change without a reload. Screenshots go to build/screenshots.
func TestInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st, target := contestSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice, bob := browser(t, ctx, path), browser(t, ctx, path)

	signup := func(login string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.Navigate(st.url+"/signup"),
			chromedp.SendKeys(css(`form[action="/signup"] input[name=login]`), login),
			chromedp.SendKeys(css(`form[action="/signup"] input[name=password]`), login+"-password"),
			chromedp.Click(css(`form[action="/signup"] button`)),
			chromedp.WaitVisible(css(`form[action="/team/join"]`)),
		)
	}
	for _, page := range []string{"signup", "login"} { // the pages before any team's
		must(t, "the "+page+" page", chromedp.Do(alice, chromedp.Navigate(st.url+"/"+page),
			chromedp.WaitVisible(css(`form[action="/`+page+`"]`))))
		fits(t, alice, page)
	}
	must(t, "alice makes a team", chromedp.Do(alice, signup("alice"),
		chromedp.SendKeys(css(`form[action="/team"] input[name=name]`), "<b>browsers</b>"),
		chromedp.Click(css(`form[action="/team"] button`)),
		chromedp.WaitVisible(css(`form[action="/team/target"]`)),
		shoot("team"),
	))
	invite, err := text(alice, `main p code`)
	must(t, "the invite code", err)
	must(t, "bob joins", chromedp.Do(bob, signup("bob"),
		chromedp.SendKeys(css(`form[action="/team/join"] input[name=invite]`), invite),
		chromedp.Click(css(`form[action="/team/join"] button`)),
		chromedp.WaitVisible(css(`form[action="/team/target"]`)),
	))
	if heading, err := text(bob, `main h1`); err != nil || heading != "Team <b>browsers</b>" {
		t.Errorf("bob's team page says %q (%v)", heading, err)
	}
	must(t, "alice registers the target and enqueues", chromedp.Do(alice,
		chromedp.SetValue(css(`form[action="/team/target"] input[name=target]`), target),
		chromedp.Click(css(`form[action="/team/target"] button`)),
		chromedp.WaitVisible(css(`p.target code`)), // only on the page after the save
		chromedp.Navigate(st.url+"/"),
		chromedp.Click(css(`form[action="/jobs"] button`)),
		chromedp.WaitVisible(css(`dl.progress`)),
	))
	// Bob's leaderboard, open before the result.
	must(t, "bob's leaderboard", chromedp.Do(bob, chromedp.Navigate(st.url+"/leaderboard"),
		chromedp.WaitVisible(css(`table.board tbody tr`))))
	must(t, "alice watches the job", chromedp.Do(alice,
		until(`document.querySelector('dd[data-field=state]')?.textContent === 'running' &&
			+document.querySelector('dd[data-field=requests]').textContent > 0`, 45*time.Second),
		shoot("job-running"),
		chromedp.WaitVisible(css(`p.verdict`)),
		shoot("job-result"),
	))
	if verdict, err := text(alice, `p.verdict`); err != nil || !strings.HasPrefix(verdict, "passed: score ") {
		t.Errorf("the job ended %q (%v)", verdict, err)
	}
	must(t, "bob's leaderboard changes", chromedp.Do(bob,
		until(`document.querySelector('table.board tbody tr td')?.textContent === '1' &&
			document.querySelector('#chart .uplot') !== null`, 15*time.Second),
		shoot("leaderboard"),
	))
	rank, err1 := text(bob, `table.board tbody tr td:nth-child(1)`)
	team, err2 := text(bob, `table.board tbody tr td:nth-child(2)`)
	if rank != "1" || team != "<b>browsers</b>" || err1 != nil || err2 != nil {
		t.Errorf("the leaderboard's first line: %q %q (%v, %v)", rank, team, err1, err2)
	}
}
