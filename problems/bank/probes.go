package bank

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// The negative cases' odds (MANUAL: "The users"): a session that logged in
// then, one time in probeOdds each, sends a session cookie the app never
// issued, or logs in again and replays the cookie that attempt ended; any
// session, one time in strayOdds, opens a page that does not exist.
const (
	probeOdds = 15
	strayOdds = 25

	endpointForged = "GET /mypage (forged cookie)"
	endpointEnded  = "GET /mypage (ended session)"
	endpointStray  = "GET (unknown path)"
)

// strayPaths are pages a browser or a hurried user asks for that the bank
// does not have: each is a 404 with an HTML page. GET /login is left out: a
// router that knows only POST there may answer 405, which is no leak.
var strayPaths = []string{"/favicon.ico", "/mypage/", "/robots.txt", "/apple-touch-icon.png", "/index.html", "/logout"}

// wrongPassword returns a wrong password for a user whose password is
// right, in one of many shapes, so that no shape tells a wrong password
// from a right one: one character changed, dropped, added or swapped with
// its neighbour, the case changed, spaces around it, another user's
// password, or a password made up.
func wrongPassword(rnd *rand.Rand, cfg data.Config, right string) string {
	for {
		if w := wrongShape(rnd, cfg, right); w != right {
			return w
		}
	}
}

func wrongShape(rnd *rand.Rand, cfg data.Config, right string) string {
	pick := func() byte { return data.PasswordChars[rnd.IntN(len(data.PasswordChars))] }
	k := rnd.IntN(len(right))
	switch rnd.IntN(8) {
	case 0:
		return right[:k] + string(pick()) + right[k+1:]
	case 1:
		return right[:k] + right[k+1:]
	case 2:
		return right[:k] + string(pick()) + right[k:]
	case 3:
		if k == len(right)-1 {
			k--
		}
		return right[:k] + right[k+1:k+2] + right[k:k+1] + right[k+2:]
	case 4:
		return strings.ToUpper(right[:k+1]) + right[k+1:]
	case 5:
		return []string{" " + right, right + " "}[rnd.IntN(2)]
	case 6:
		return cfg.User(1 + rnd.Int64N(int64(cfg.Users))).Password
	}
	return madeUpPassword(rnd)
}

// madeUpPassword is a password of the users' alphabet and lengths, for
// logins that name no user.
func madeUpPassword(rnd *rand.Rand) string {
	b := make([]byte, 8+rnd.IntN(5))
	for i := range b {
		b[i] = data.PasswordChars[rnd.IntN(len(data.PasswordChars))]
	}
	return string(b)
}

// forgeCookie returns a session cookie the app never issued, of the shape
// of real, a cookie it did: a value made up of real's length and
// characters, real with one character changed, or, when real holds its
// user's login or that login's digits, real with another user's in their
// place.
func forgeCookie(rnd *rand.Rand, real, login, other string) string {
	kinds := 2
	if strings.Contains(real, login[1:]) {
		kinds = 3
	}
	switch rnd.IntN(kinds) {
	case 0:
		return madeUpLike(rnd, real)
	case 1:
		if forged := oneChanged(rnd, real); forged != real {
			return forged
		}
		return madeUpLike(rnd, real)
	}
	return strings.ReplaceAll(strings.ReplaceAll(real, login, other), login[1:], other[1:])
}

// alphabetOf returns the letters and digits a value like real is made of:
// hexadecimal digits for a hex token, else every class (digits, lowercase,
// uppercase) real has one of.
func alphabetOf(real string) string {
	for _, hex := range []string{"0123456789abcdef", "0123456789ABCDEF"} {
		if strings.Trim(real, hex) == "" {
			return hex
		}
	}
	var b strings.Builder
	for _, class := range []string{"0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"} {
		if strings.ContainsAny(real, class) {
			b.WriteString(class)
		}
	}
	return b.String()
}

// madeUpLike returns a value of real's length whose letters and digits are
// drawn afresh from real's alphabet; other characters stay in place.
func madeUpLike(rnd *rand.Rand, real string) string {
	alpha := alphabetOf(real)
	b := []byte(real)
	for i, c := range b {
		if isAlnum(c) {
			b[i] = alpha[rnd.IntN(len(alpha))]
		}
	}
	return string(b)
}

// oneChanged returns real with one of its letters or digits replaced by
// another of real's alphabet (real itself if it has none).
func oneChanged(rnd *rand.Rand, real string) string {
	return oneChangedIn(rnd, real, 0, len(real))
}

// oneChangedIn is oneChanged with the character changed at an index from
// lo to hi-1: the pre-check changes one near the start and one near the
// end, for an app that would read only a part of its cookie.
func oneChangedIn(rnd *rand.Rand, real string, lo, hi int) string {
	alpha := alphabetOf(real)
	var at []int
	for i := lo; i < hi; i++ {
		if isAlnum(real[i]) {
			at = append(at, i)
		}
	}
	if len(at) == 0 || len(alpha) < 2 {
		return real
	}
	i := at[rnd.IntN(len(at))]
	c := real[i]
	for c == real[i] {
		c = alpha[rnd.IntN(len(alpha))]
	}
	return real[:i] + string(c) + real[i+1:]
}

// swapCase returns real with the case of its letters swapped: an app
// that compares cookies in one case would take it for real.
func swapCase(real string) string {
	b := []byte(real)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// forgedSession sends, in a session logged in to account id, /mypage with
// a session cookie the app never issued: it names no session, so /mypage
// must send the browser to / with the login-required notice.
func (s *Scenario) forgedSession(ctx context.Context, u *engine.User, v *viewer, id int64) error {
	real := v.sessionCookie()
	if !v.loggedIn(id) || !u.Think(ctx, thinkMin, thinkMax) {
		return nil
	}
	other := 1 + u.Rand.Int64N(loadAccounts-1)
	if other >= id {
		other++
	}
	forged := forgeCookie(u.Rand, real, data.Login(id), data.Login(other))
	u.SetCookie(&http.Cookie{Name: cookieName, Value: forged, Path: "/"})
	return s.noSession(ctx, u.Agent, endpointForged, "a session cookie the app never issued")
}

// endedSession logs in to account id again from ip, which ends the
// session the last attempt started, with a right password or a wrong one,
// then replays that session's cookie: it names no session any more, so
// /mypage must send the browser to / with the login-required notice.
func (s *Scenario) endedSession(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, id int64, ip string) error {
	ended := v.sessionCookie()
	if !v.loggedIn(id) {
		return nil
	}
	user := s.m.cfg.User(id)
	password := user.Password
	if u.Rand.IntN(2) == 0 {
		password = wrongPassword(u.Rand, s.m.cfg, password)
	}
	if err := s.try(ctx, r, u, v, id, user.Login, password, ip); err != nil || ctx.Err() != nil || v.sessionCookie() == ended {
		return err
	}
	u.SetCookie(&http.Cookie{Name: cookieName, Value: ended, Path: "/"})
	return s.noSession(ctx, u.Agent, endpointEnded, "the cookie of a session a later attempt ended")
}

// noSession opens /mypage with a cookie that names no session, what: it
// counts as no cookie, so the answer is 303 to / and / then shows the
// login-required notice; anything else is critical.
func (s *Scenario) noSession(ctx context.Context, a *engine.Agent, endpoint, what string) error {
	res, err := a.Get(ctx, endpoint, "/mypage")
	if err != nil {
		return err
	}
	if err := checkNoSession(res, what); err != nil {
		return err
	}
	return s.top(ctx, a, reasonLoginRequired)
}

// stray opens a page the bank does not have: a 404, scanned like every
// answer for what its viewer may not see.
func (s *Scenario) stray(ctx context.Context, u *engine.User) error {
	res, err := u.Get(ctx, endpointStray, strayPaths[u.Rand.IntN(len(strayPaths))])
	if err != nil {
		return err
	}
	return res.Check(engine.Status(http.StatusNotFound))
}
