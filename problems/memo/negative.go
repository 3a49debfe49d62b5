package memo

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"

	"github.com/andybalholm/cascadia"

	"github.com/tunecon/tunecon/engine"
)

// The negative cases of the load (MANUAL: "The users"): requests a correct
// app refuses, sent at random moments inside ordinary sessions, with what
// they send drawn at random among several shapes, so that no app can tell
// them from a person's mistake or an attack. Each must get the answer the
// manual gives it; any other is critical. They earn no points.

// The shares of sessions that send each negative case once.
const (
	wrongPasswordShare = 0.25 // writers who first type a wrong password
	forgedCookieShare  = 0.25 // readers who send a session cookie the app never issued
	liveWrongShare     = 0.1  // readers who type a wrong password for a user signed in elsewhere
	foreignTokenShare  = 0.2  // writers who post or sign out with another session's CSRF token
	replayShare        = 0.2  // writers and newcomers who send their cookie again once signed out
	fixationShare      = 0.2  // writers who sign in carrying a made-up session cookie
	queryShare         = 0.1  // memo pages asked with a query string (memoQueries)
)

var selSigninForm = cascadia.MustCompile(`form#signin`)

// refused sends a request the app must refuse (a GET when form is nil, else
// a POST of form): check judges the answer first, before the privacy scan.
func (b *browser) refused(ctx context.Context, endpoint, path string, form url.Values, check engine.Check) (*engine.Response, error) {
	b.expect.Store(&check)
	defer b.expect.Store(nil)
	if form == nil {
		return b.Get(ctx, endpoint, path)
	}
	return b.PostForm(ctx, endpoint, path, form)
}

// wrongPassword signs in as w with a wrong password, or with w's password
// and w's name in capitals or with a space after it: 401 with the form, the
// browser still signed out.
func (s *Scenario) wrongPassword(ctx context.Context, b *browser, w *user, rnd *rand.Rand) error {
	kind, password := wrongPassword(rnd, w.password, func() string {
		return s.m.in.cfg.User(1 + rnd.Int64N(s.m.in.lastUser())).Password
	})
	name, what := w.name, "a wrong password ("+kind+") for an existing user"
	switch rnd.IntN(5) {
	case 0:
		name, password, what = strings.ToUpper(w.name), w.password, "the right password with the user's name in capitals"
	case 1:
		name, password, what = w.name+" ", w.password, "the right password with a space after the user's name"
	}
	if name == w.name && password == w.password {
		return nil
	}
	form := url.Values{"username": {name}, "password": {password}}
	res, err := b.refused(ctx, "POST /signin (wrong password)", "/signin", form, refusal(what, http.StatusUnauthorized, ""))
	if err != nil {
		return err
	}
	doc, _, err := pageBody(res, "")
	if err != nil {
		return err
	}
	if doc.FindMatcher(selSigninForm).Length() != 1 {
		return res.Applicationf("html", "the answer to a wrong password has no sign-in form (form#signin)")
	}
	return nil
}

// wrongPasswordLive types a wrong password, as wrongPassword does, for the
// user of a session live in another browser: a user signed in in one lets
// no one in without the password in another.
func (s *Scenario) wrongPasswordLive(ctx context.Context, b *browser, rnd *rand.Rand) error {
	l := s.sessions.other(rnd, nil)
	if l == nil {
		return nil
	}
	w := s.m.user(l.user)
	if w == nil {
		return nil
	}
	return s.wrongPassword(ctx, b, w, rnd)
}

// passwordChars are the characters near misses are made of.
const passwordChars = "abcdefghijkmnpqrstuvwxyz23456789"

// wrongPassword returns a password that is not right, and its kind: another
// user's (other draws one), a near miss of one of several shapes, empty, or
// long.
func wrongPassword(rnd *rand.Rand, right string, other func() string) (kind, password string) {
	char := func() string { return string(passwordChars[rnd.IntN(len(passwordChars))]) }
	kind, password = "another user's", other()
	switch rnd.IntN(8) {
	case 1:
		i := rnd.IntN(len(right) + 1)
		kind, password = "one character added", right[:i]+char()+right[i:]
	case 2:
		kind, password = "the last character left out", right[:len(right)-1]
	case 3:
		kind, password = "one character changed", changeOne(rnd, right)
	case 4:
		kind, password = "in capitals", strings.ToUpper(right)
	case 5:
		kind, password = "with a space after it", right+" "
	case 6:
		kind, password = "empty", ""
	case 7:
		kind, password = "long", right+strings.Repeat(char(), 100+rnd.IntN(900))
	}
	if password == right {
		kind, password = "one character changed", changeOne(rnd, right)
	}
	return kind, password
}

// changeOne returns s with one character changed into another of its kind
// (a digit for a digit, a lower-case hex digit for one, and so on), a
// letter or a digit rather than a separator.
func changeOne(rnd *rand.Rand, s string) string {
	if s == "" {
		return "x"
	}
	b := []byte(s)
	i := rnd.IntN(len(b))
	for range 4 * len(b) { // a letter or a digit, not a separator, if it has one
		if len(alphabetOf(s, b[i])) > 1 {
			break
		}
		i = rnd.IntN(len(b))
	}
	was, alphabet := b[i], alphabetOf(s, b[i])
	if len(alphabet) == 1 {
		b[i] = was + 1
	}
	for b[i] == was {
		b[i] = alphabet[rnd.IntN(len(alphabet))]
	}
	return string(b)
}

// madeUp returns a value of the shape of s: each character replaced by one
// of its kind at random, any other character kept.
func madeUp(rnd *rand.Rand, s string) string {
	b := []byte(s)
	for i, c := range b {
		if a := alphabetOf(s, c); len(a) > 1 {
			b[i] = a[rnd.IntN(len(a))]
		}
	}
	return string(b)
}

// alphabetOf is the kind of c in s: digits, lower-case letters (hex digits
// only if s has no other), upper-case letters likewise, or c alone.
func alphabetOf(s string, c byte) string {
	hexOnly := func(lo, hi byte) bool {
		for i := 0; i < len(s); i++ {
			if s[i] >= lo && s[i] <= hi && s[i] > lo+5 {
				return false
			}
		}
		return true
	}
	switch {
	case '0' <= c && c <= '9':
		return "0123456789"
	case 'a' <= c && c <= 'z' && hexOnly('a', 'z'):
		return "abcdef"
	case 'a' <= c && c <= 'z':
		return "abcdefghijklmnopqrstuvwxyz"
	case 'A' <= c && c <= 'Z' && hexOnly('A', 'Z'):
		return "ABCDEF"
	case 'A' <= c && c <= 'Z':
		return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	}
	return string(c)
}

// forgedCookie sends, signed out, a session cookie the app never issued: a
// live user's name, a made-up id of the shape of a live session's, or a
// live session's id with one character changed, in capitals, or with
// characters added; then asks for /mypage,
// that user's private memo, or to post with that session's token. Each must
// be answered as to a browser without a cookie.
func (s *Scenario) forgedCookie(ctx context.Context, b *browser, rnd *rand.Rand) error {
	victim := s.sessions.other(rnd, nil)
	if victim == nil {
		return nil // no session to forge one after: the start of the load
	}
	kind, value := "a live user's name", victim.name
	switch rnd.IntN(5) {
	case 1:
		kind, value = "an id of the shape of a real one", madeUp(rnd, victim.id)
	case 2:
		kind, value = "a real id with one character changed", changeOne(rnd, victim.id)
	case 3:
		kind, value = "a real id in capitals", strings.ToUpper(victim.id)
	case 4:
		kind, value = "a real id with characters added", victim.id+madeUp(rnd, "0a")
	}
	if value == victim.id {
		return nil
	}
	b.SetCookie(&http.Cookie{Name: sessionCookie, Value: value, Path: "/"})
	defer b.ClearCookies()
	what := "a session cookie the app never issued (" + kind + ")"
	return s.asSignedOut(ctx, b, what, "forged cookie", victim.user, victim.token, rnd)
}

// replay sends the cookie of w's session, signed out since, with its
// token: it names no session now, and must be answered as no cookie.
func (s *Scenario) replay(ctx context.Context, b *browser, w *user, sid, csrf string, rnd *rand.Rand) error {
	if sid == "" {
		return nil
	}
	b.SetCookie(&http.Cookie{Name: sessionCookie, Value: sid, Path: "/"})
	defer b.ClearCookies()
	return s.asSignedOut(ctx, b, "the cookie of a session signed out", "signed-out cookie", w.id, csrf, rnd)
}

// asSignedOut sends one request with a cookie that names no session (what
// it is, and label, the endpoint's note): / (the page signed out), /mypage
// (303 to /signin), a private memo of user (404), or a post with token
// (403), at random.
func (s *Scenario) asSignedOut(ctx context.Context, b *browser, what, label string, user int64, token string, rnd *rand.Rand) error {
	var res *engine.Response
	var err error
	k, id := rnd.IntN(4), s.m.privateOf(rnd, user)
	switch {
	case k == 3:
		res, err = b.refused(ctx, "GET / ("+label+")", "/", nil, signedOutPage(what+", asking for /,"))
		if err == nil {
			_, err = s.checkListPage(res, "", 0)
		}
		return err
	case k == 1 && id != 0:
		res, err = b.refused(ctx, "GET /memos/{id} ("+label+")", "/memos/"+itoa(id), nil,
			refusal(what+", asking for a private memo of its user,", http.StatusNotFound, ""))
	case k == 2:
		form := url.Values{"content": {"# " + titleOf(s.m.nextPost()) + "\n\nnever stored"}, "csrf_token": {token}}
		res, err = b.refused(ctx, "POST /memos ("+label+")", "/memos", form, refusal(what+", posting a memo,", http.StatusForbidden, ""))
	default:
		_, err = b.refused(ctx, "GET /mypage ("+label+")", "/mypage", nil, refusal(what+", asking for /mypage,", http.StatusSeeOther, "/signin"))
	}
	if err != nil || res == nil {
		return err
	}
	_, _, err = pageBody(res, "")
	return err
}

// foreignToken posts a memo, or signs out, with the CSRF token of another
// live session (or, with none, its own token with one character changed),
// with the token of w's session signed out before, or, signing out, with no
// token at all: 400, and the session goes on signed in.
func (s *Scenario) foreignToken(ctx context.Context, b *browser, w *user, rnd *rand.Rand) error {
	kind, token := "the CSRF token of another live session", ""
	if o := s.sessions.other(rnd, b.live); o != nil && o.token != b.csrf {
		token = o.token
	} else {
		kind, token = "its own CSRF token with one character changed", changeOne(rnd, b.csrf)
	}
	if w.ended != "" && w.ended != b.csrf && rnd.IntN(3) == 0 {
		kind, token = "the CSRF token of the same user's session signed out before", w.ended
	}
	if rnd.IntN(2) == 0 {
		form := url.Values{"content": {"# " + titleOf(s.m.nextPost()) + "\n\nnever stored"}, "csrf_token": {token}}
		_, err := b.refused(ctx, "POST /memos (another session's token)", "/memos", form,
			refusal("a post with "+kind, http.StatusBadRequest, ""))
		return err
	}
	form := url.Values{"csrf_token": {token}}
	if rnd.IntN(4) == 0 {
		kind, form = "no csrf_token", url.Values{}
	}
	_, err := b.refused(ctx, "POST /signout (another session's token)", "/signout", form,
		refusal("a sign-out with "+kind, http.StatusBadRequest, ""))
	return err
}
