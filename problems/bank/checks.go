package bank

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// checkNotice compares the notice on / with the reason the model expects,
// "" for none.
func checkNotice(res *engine.Response, got notice, want string) error {
	switch {
	case want == "" && got.present:
		return res.Criticalf("notice", "the page shows the notice %q, expected none", got.reason)
	case want != "" && !got.present:
		return res.Criticalf("notice", "the page shows no notice, expected %q", want)
	case want != "":
		if got.reason != want {
			return res.Criticalf("notice", "the notice's reason is %q, expected %q", got.reason, want)
		}
		if got.text != noticeTexts[want] {
			return res.Criticalf("notice", "the notice reads %q, expected %q", got.text, noticeTexts[want])
		}
	}
	return nil
}

// checkMypage compares /mypage with the model: the user who logged in and
// prev, the previous successful login the page must show.
func checkMypage(res *engine.Response, got mypageFields, login string, prev success) error {
	if got.login != login {
		return res.Criticalf("mypage", "/mypage shows the user %q, expected %q", got.login, login)
	}
	switch {
	case prev.ip == socketAddr:
		// The benchmarker's address as the app sees it, which only the
		// app knows: any address, but one, and not from the header.
		if net.ParseIP(got.lastIP) == nil || got.lastIP == forwardedDecoy {
			return res.Criticalf("mypage", "/mypage shows the previous login from %q, expected the address of the connection (the header's first entry was empty)", got.lastIP)
		}
	case got.lastIP != prev.ip:
		return res.Criticalf("mypage", "/mypage shows the previous login from %q, expected %q", got.lastIP, prev.ip)
	}
	if !prev.at.IsZero() {
		if want := prev.at.UTC().Format(data.TimeFormat); got.lastAt != want {
			return res.Criticalf("mypage", "/mypage shows the previous login at %q, expected %q", got.lastAt, want)
		}
		return nil
	}
	if !got.lastAtOK || got.lastTime.Before(prev.sent.Add(-time.Second).Truncate(time.Second)) || got.lastTime.After(prev.received.Add(time.Second)) {
		return res.Criticalf("mypage", "/mypage shows the previous login at %q, but it happened between %s and %s on the app's clock", got.lastAt,
			prev.sent.UTC().Format(data.TimeFormat), prev.received.UTC().Format(data.TimeFormat))
	}
	return nil
}

// compareReport compares /report with the model's expectedReport: both keys
// present, then each list.
func compareReport(res *engine.Response, got report, want expectedReport) error {
	if !got.hasBannedIPs {
		return res.Criticalf("report", "/report lacks banned_ips")
	}
	if !got.hasLockedUsers {
		return res.Criticalf("report", "/report lacks locked_users")
	}
	if err := sameList(res, "banned_ips", got.bannedIPs, want.banned, want.maybeIPs); err != nil {
		return err
	}
	return sameList(res, "locked_users", got.lockedUsers, want.locked, want.maybeLogins)
}

// sameList compares a list of /report with the model's: sorted, without
// duplicates, and the same once the entries in maybe are left out.
func sameList(res *engine.Response, name string, got, want []string, maybe map[string]bool) error {
	if !slices.IsSorted(got) {
		return res.Criticalf("report", "%s is not sorted", name)
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		return res.Criticalf("report", "%s has duplicates", name)
	}
	var kept []string
	for _, g := range got {
		if !maybe[g] {
			kept = append(kept, g)
		}
	}
	if slices.Equal(kept, want) {
		return nil
	}
	missing, extra := diff(want, kept)
	return res.Criticalf("report", "%s differs from the benchmarker's model: %d missing (first %q), %d extra (first %q)",
		name, len(missing), first(missing), len(extra), first(extra))
}

// diff returns what want has and got lacks, and what got has and want lacks,
// each in its list's order.
func diff(want, got []string) (missing, extra []string) {
	w := map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	g := map[string]bool{}
	for _, x := range got {
		g[x] = true
		if !w[x] {
			extra = append(extra, x)
		}
	}
	for _, x := range want {
		if !g[x] {
			missing = append(missing, x)
		}
	}
	return missing, extra
}

// first returns the first of xs, "" if there is none.
func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

// checkNoSession judges /mypage's answer to a cookie that names no session,
// what: it counts as no cookie (MANUAL: "Sessions and notices"), so the
// answer is 303 to /; anything else, a page above all, is critical.
func checkNoSession(res *engine.Response, what string) error {
	err := res.Check(engine.Status(http.StatusSeeOther), engine.RedirectExactly("/"))
	if err == nil {
		return nil
	}
	got := fmt.Sprintf("answered %d", res.StatusCode)
	if res.StatusCode == http.StatusSeeOther {
		got = engine.AsError(err).Message
	}
	return res.Criticalf("session", "/mypage %s to %s: a cookie that names no session counts as no cookie, so 303 to /", got, what)
}

// checkNewSession judges the session cookie a POST /login answer sets, got
// ("" for none), against last, the one the viewer's previous attempt was
// given: every attempt ends its session and starts a new one, whose cookie
// is new (keeping the old one is session fixation). That the new one was
// never handed out before is checkSessionStart's, on every answer.
func checkNewSession(res *engine.Response, got, last string) error {
	switch {
	case got == "":
		return res.Criticalf("session", "POST /login set no %s cookie: every attempt starts a new session and sends its cookie", cookieName)
	case got == last:
		return res.Criticalf("session", "POST /login set the cookie of the session the previous attempt started: every attempt ends its session and starts a new one, with a new cookie")
	}
	return nil
}

// checkSessionStart fails res, whatever its request, when the session
// cookie it sets, got, is one the app had handed out before in the run, to
// any browser or before POST /initialize; handedOut records each and says
// so. An answer sets the cookie only when it starts a session (a login's,
// or an anonymous one that holds a notice), with a value never handed out
// before (MANUAL: "Sessions and notices"). A counter that /initialize sets
// back would hand the same ones out again, and a browser holding an old
// cookie would find itself in another's session. held, the cookie the
// viewer's browser was last given, names the commonest case: the browser's
// own kept (session fixation).
func checkSessionStart(res *engine.Response, got, held string, handedOut func(string) bool) error {
	if !handedOut(got) {
		return nil
	}
	which := ""
	if got == held {
		which = " (the one this browser already held)"
	}
	return res.Criticalf("session", "%s set a %s cookie the app had handed out before in this run%s: a cookie is set only to start a new session, with a value never handed out before",
		res.Request(), cookieName, which)
}
