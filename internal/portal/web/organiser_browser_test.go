package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/kit/apptest/servers"
)

// orgShot saves a screenshot of the whole page as
// build/screenshots/organiser-NAME.png.
func orgShot(name string) chromedp.Action[chromedp.Void] { return screenshot("organiser-" + name) }

// TestOrganiserInABrowser is the organiser's path in Chromium, with the
// real queue, a real worker and the example app as the team's server: the
// admin sets the contest to assigned servers, imports the teams from a CSV
// file and gets each member's one-time sign-in link; a member follows hers,
// chooses a password, picks the team's server, enqueues, and sees the
// benchmark pass; the link then works no more. Screenshots go to
// build/screenshots/organiser-*.png.
func TestOrganiserInABrowser(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	st, target := contestSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hash, err := passwords.Hash("root-password")
	if err == nil {
		_, err = st.store.CreateAccount(ctx, "root", hash, portal.RoleAdmin)
	}
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "teams.csv")
	teams := fmt.Sprintf("team,members,servers\nBrowsers,alice:Alice Liddell <alice@example.org>;bob:Bob,app=%s\n", u.Host)
	if err := os.WriteFile(file, []byte(teams), 0o644); err != nil {
		t.Fatal(err)
	}
	org, alice := browser(t, ctx, path), browser(t, ctx, path)

	must(t, "the admin imports the teams", chromedp.Do(org, logIn(st.url, "root", "/admin"),
		chromedp.SetValue(css(`select[name=targets]`), "assigned"),
		submit(`form[action="/admin/contest"] button`),
		chromedp.Click(css(`a[href="/admin/import"]`)),
		chromedp.WaitVisible(css(`form[action="/admin/import"]`)),
		chromedp.SetUploadFiles(css(`input[name=file]`), []string{file}),
		submit(`form[action="/admin/import"] button`),
		chromedp.WaitVisible(css(`a.signin-link`)),
		orgShot("links"),
	))
	summary, err := text(org, `#import-summary`)
	if err != nil || !strings.HasPrefix(summary, "teams: 1 created, 0 updated, 0 unchanged; 2 accounts and 1 servers added") {
		t.Errorf("the import says %q (%v)", summary, err)
	}
	link, err := chromedp.Run(org, chromedp.AttributeValue(css(`a.signin-link[data-login=alice]`), "href"))
	must(t, "alice's link", err)

	must(t, "alice signs in with her link", chromedp.Do(alice, chromedp.Navigate(link.Value),
		chromedp.WaitVisible(css(`form[action^="/signin/"]`)),
		orgShot("signin"),
		chromedp.SendKeys(css(`input[name=password]`), "alice-password"),
		chromedp.SendKeys(css(`input[name=again]`), "alice-password"),
		submit(`form[action^="/signin/"] button`),
		chromedp.WaitVisible(css(`form[action="/team/server"]`)),
	))
	if heading, err := text(alice, `main h1`); err != nil || heading != "Team Browsers" {
		t.Errorf("alice's team page says %q (%v)", heading, err)
	}
	server := "app (http://" + u.Host + "/)"
	if option, err := chromedp.Run(alice, chromedp.TextContent(css(`form[action="/team/server"] option`))); err != nil || option != server {
		t.Errorf("the team's server reads %q (%v), want %q", option, err, server)
	}
	must(t, "alice picks the server and enqueues", chromedp.Do(alice,
		submit(`form[action="/team/server"] button`),
		chromedp.WaitVisible(css(`p.target code`)),
		orgShot("team"),
		chromedp.Navigate(st.url+"/"),
		submit(`form[action="/jobs"] button`),
		chromedp.WaitVisible(css(`p.verdict`)),
		orgShot("result"),
	))
	if verdict, err := text(alice, `p.verdict`); err != nil || !strings.HasPrefix(verdict, "passed: score ") {
		t.Errorf("the job ended %q (%v)", verdict, err)
	}
	if got, err := text(alice, `main p code`); err != nil || got != "http://"+u.Host+"/" {
		t.Errorf("the job's target %q (%v)", got, err)
	}
	must(t, "the link again", chromedp.Do(alice, chromedp.Navigate(link.Value), chromedp.WaitVisible(css(`main`))))
	if msg, err := text(alice, `main`); err != nil || !strings.Contains(msg, "this sign-in link does not work") {
		t.Errorf("the used link says %q (%v)", msg, err)
	}
}
