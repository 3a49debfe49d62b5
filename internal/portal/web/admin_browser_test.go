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
)

// viewports are the sizes every page of the admin room is checked at: a
// laptop's and a phone's.
var viewports = [][2]int64{{1280, 900}, {390, 844}}

// overflowing lists the page's elements whose content is wider than their
// box (scrollWidth > clientWidth): something cut off or scrolled sideways.
const overflowing = `[...document.querySelectorAll("*")].filter(e => e.scrollWidth > e.clientWidth).map(e =>
	e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + String(e.className).trim().replace(/\s+/g, ".") : "") +
	" " + e.scrollWidth + ">" + e.clientWidth)`

// fits checks the page open in b at each of viewports: no element wider
// than its box. It leaves a screenshot of each, build/screenshots/
// admin-NAME-WIDTH.png, and the browser at the first size.
func fits(t *testing.T, b context.Context, name string) {
	t.Helper()
	for _, vp := range viewports {
		if err := chromedp.Do(b, chromedp.EmulateViewport(vp[0], vp[1])); err != nil {
			t.Fatal(err)
		}
		over, err := chromedp.Run(b, chromedp.Evaluate[[]string](overflowing))
		if err != nil {
			t.Fatalf("%s at %d px: %v", name, vp[0], err)
		}
		if len(over) > 0 {
			t.Errorf("%s at %d px: wider than their box: %s", name, vp[0], strings.Join(over, ", "))
		}
		if err := chromedp.Do(b, screenshot(fmt.Sprintf("admin-%s-%d", name, vp[0]))); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(b, chromedp.EmulateViewport(viewports[0][0], viewports[0][1])); err != nil {
		t.Fatal(err)
	}
}

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
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("the organiser opens team B's page", chromedp.Do(org, logIn(st.url, "root", page),
		chromedp.WaitVisible(css(`#members li.member`))))
	fits(t, org, "team")

	reset := `#members form[action$="/signin-link"] button`
	must("a reset link, refused at the question", chromedp.Do(org, answerConfirm(false), chromedp.Click(css(reset))))
	asked, err := chromedp.Run(org, chromedp.Evaluate[string](`document.body.dataset.asked || ""`))
	if err != nil || !strings.Contains(asked, "password-reset link for bob") {
		t.Errorf("the reset link asked %q (%v)", asked, err)
	}
	if here, err := chromedp.Run(org, chromedp.Evaluate[string](`location.pathname`)); err != nil || here != page {
		t.Errorf("a refused confirmation left for %q (%v)", here, err)
	}
	must("a reset link, confirmed", chromedp.Do(org, answerConfirm(true), submit(reset),
		chromedp.WaitVisible(css(`a.signin-link[data-login=bob]`))))
	fits(t, org, "reset-link")
	link, err := chromedp.Run(org, chromedp.AttributeValue(css(`a.signin-link[data-login=bob]`), "href"))
	must("bob's link", err)

	must("bob chooses a new password with the link", chromedp.Do(bob, chromedp.Navigate(link.Value),
		chromedp.WaitVisible(css(`form[action^="/signin/"]`)),
		chromedp.SendKeys(css(`input[name=password]`), "bob-new-password"),
		chromedp.SendKeys(css(`input[name=again]`), "bob-new-password"),
		submit(`form[action^="/signin/"] button`),
		chromedp.Navigate(st.url+"/account"),
		chromedp.WaitVisible(css(`form[action="/account/password"]`)),
	))
	fits(t, bob, "account")
	if resp := st.post(st.client(), "/login", url.Values{"login": {"bob"}, "password": {"bob-new-password"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("bob's new password: %d", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", url.Values{"login": {"bob"}, "password": {"bob-password"}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("bob's old password: %d", resp.StatusCode)
	}

	must("the organiser renames the team", chromedp.Do(org, chromedp.Navigate(st.url+page),
		chromedp.WaitVisible(css(`form[action$="/rename"]`)),
		chromedp.SetValue(css(`form[action$="/rename"] input[name=name]`), "Busy Bees"),
		submit(`form[action$="/rename"] button`),
	))
	if name, err := text(org, `h1#team-name`); err != nil || name != "Busy Bees" {
		t.Errorf("the page after the rename: %q (%v)", name, err)
	}
}
