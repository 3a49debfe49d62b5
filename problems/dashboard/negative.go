package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/dashboard/data"
)

// The negative cases of the load (MANUAL: "How the benchmarker works"): sent
// by the users themselves, in their sessions, on the paths they use. Their
// endpoints are named apart in the result so that their cost shows; the app
// sees the same requests as any other.
const (
	endpointWrongLogin = "POST /login (refused)"
	endpointBadChange  = "POST /modify (refused)"
	endpointTaken      = "POST /signup (refused)"
	suffixSignedOut    = " (signed out)"
	suffixForged       = " (forged session)"
	suffixEnded        = " (ended session)"
)

// sessionCookie is the session's cookie (MANUAL: "Users, grades and
// sessions").
const sessionCookie = "dashboard_session"

// passwordChars are the characters a near miss of a password draws from.
const passwordChars = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// wrongPassword tries to sign u in with a wrong password or email, drawn
// from rnd: it must be refused with 403 and start no session.
func (s *Scenario) wrongPassword(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand) error {
	email, password, what := s.m.wrongSignin(rnd, u)
	res, err := a.PostForm(ctx, endpointWrongLogin, "/login", loginForm(email, password))
	if err != nil || res.FromCache {
		return err
	}
	return res.Check(refusal("wrong-password", "a sign-in with "+what, http.StatusForbidden, ""), noSession())
}

// wrongSignin draws a wrong sign-in of u: another user's password, a near
// miss of u's own (one character more, fewer or changed, two swapped, a
// letter's case), or u's password with the email in another case. Emails are
// compared exactly.
func (m *model) wrongSignin(rnd *rand.Rand, u *user) (email, password, what string) {
	p := u.password
	i := rnd.IntN(len(p))
	switch rnd.IntN(7) {
	case 0:
		if o := m.other(rnd, u); o.Password != p {
			return u.email, o.Password, "another user's password"
		}
		return u.email, p + p[:1], "another user's password"
	case 1:
		c := string(passwordChars[rnd.IntN(len(passwordChars))])
		return u.email, p[:i] + c + p[i:], "a character too many"
	case 2:
		return u.email, p[:i] + p[i+1:], "a character missing"
	case 3:
		return u.email, p[:i] + string(anotherOf(rnd, p[i], false)) + p[i+1:], "a character changed"
	case 4:
		for j := range len(p) - 1 {
			if k := (i + j) % (len(p) - 1); p[k] != p[k+1] {
				return u.email, p[:k] + p[k+1:k+2] + p[k:k+1] + p[k+2:], "two characters swapped"
			}
		}
		return u.email, p + "2", "a character too many"
	case 5:
		for j := range len(p) {
			if k := (i + j) % len(p); isLetter(p[k]) {
				return u.email, p[:k] + string(p[k]^0x20) + p[k+1:], "a letter in the other case"
			}
		}
		return u.email, p[1:], "a character missing"
	default:
		return otherCase(rnd, u.email), p, "the email in another case"
	}
}

// otherCase is email with some of its letters upper-cased: the first, the
// local part's or the domain's.
func otherCase(rnd *rand.Rand, email string) string {
	local, domain, _ := strings.Cut(email, "@")
	switch rnd.IntN(3) {
	case 0:
		return strings.ToUpper(local[:1]) + local[1:] + "@" + domain
	case 1:
		return strings.ToUpper(local) + "@" + domain
	default:
		return local + "@" + strings.ToUpper(domain[:1]) + domain[1:]
	}
}

// anotherOf is a character of c's class (a digit, a lowercase or an
// uppercase letter; of hex digits when hex is true), other than c. Any other
// character stays.
func anotherOf(rnd *rand.Rand, c byte, hex bool) byte {
	var class string
	switch {
	case isDigit(c):
		class = "0123456789"
	case hex && 'a' <= c && c <= 'f':
		class = "abcdef"
	case hex && 'A' <= c && c <= 'F':
		class = "ABCDEF"
	case 'a' <= c && c <= 'z':
		class = "abcdefghijklmnopqrstuvwxyz"
	case 'A' <= c && c <= 'Z':
		class = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	default:
		return c
	}
	for {
		if d := class[rnd.IntN(len(class))]; d != c {
			return d
		}
	}
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// forgeSession draws a session id the app did not issue, from u's real one:
// made up in its shape (each character replaced by one of its class), the
// real one with one character changed, or another user's name in a form a
// session id might take it (its email, its local part, its id, a hash or an
// encoding of its email, or the real id with u's name in it replaced).
func (m *model) forgeSession(rnd *rand.Rand, real string, u *user) (value, what string) {
	hexOnly := strings.Trim(strings.ToLower(real), "0123456789abcdef") == ""
	switch rnd.IntN(3) {
	case 0:
		return madeUp(rnd, real), "a made-up session id"
	case 1:
		b := []byte(real)
		for i, j := rnd.IntN(len(b)), 0; j < len(b); i, j = (i+1)%len(b), j+1 {
			if c := anotherOf(rnd, b[i], hexOnly); c != b[i] {
				b[i] = c
				return string(b), "a session id with one character changed"
			}
		}
	}
	o := m.other(rnd, u)
	local, _, _ := strings.Cut(o.Email, "@")
	sum := sha256.Sum256([]byte(o.Email))
	forms := []string{o.Email, local, strconv.FormatInt(o.ID, 10), hex.EncodeToString(sum[:]),
		base64.RawURLEncoding.EncodeToString([]byte(o.Email))}
	if mine := nameIn(real, u.email); mine != "" {
		forms = append(forms, strings.ReplaceAll(real, mine, nameLike(mine, u.email, o.Email)))
	}
	return forms[rnd.IntN(len(forms))], "a session id made of another user's name"
}

// madeUp is a session id made up in the shape of real: each character
// replaced by another of its class.
func madeUp(rnd *rand.Rand, real string) string {
	hexOnly := strings.Trim(strings.ToLower(real), "0123456789abcdef") == ""
	b := []byte(real)
	for i := range b {
		b[i] = anotherOf(rnd, b[i], hexOnly)
	}
	return string(b)
}

// nameIn is the form of email (as is, its local part, hex, base64) that id
// contains, or "".
func nameIn(id, email string) string {
	local, _, _ := strings.Cut(email, "@")
	for _, f := range []string{email, hex.EncodeToString([]byte(email)), base64.RawURLEncoding.EncodeToString([]byte(email)),
		base64.StdEncoding.EncodeToString([]byte(email)), local} {
		if strings.Contains(id, f) {
			return f
		}
	}
	return ""
}

// nameLike is other in the form that form has of email.
func nameLike(form, email, other string) string {
	local, _, _ := strings.Cut(other, "@")
	switch form {
	case email:
		return other
	case hex.EncodeToString([]byte(email)):
		return hex.EncodeToString([]byte(other))
	case base64.RawURLEncoding.EncodeToString([]byte(email)):
		return base64.RawURLEncoding.EncodeToString([]byte(other))
	case base64.StdEncoding.EncodeToString([]byte(email)):
		return base64.StdEncoding.EncodeToString([]byte(other))
	}
	return local
}

// forged sends one request of u's with a session id the app did not issue in
// place of u's own, then gives u its own back: the app must answer it signed
// out.
func (s *Scenario) forged(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand) error {
	value, what := s.m.forgeSession(rnd, u.session, u)
	a.SetCookie(&http.Cookie{Name: sessionCookie, Value: value, Path: "/"})
	err := s.signedOut(ctx, a, u, rnd, "forged-session", suffixForged, what)
	a.SetCookie(&http.Cookie{Name: sessionCookie, Value: u.session, Path: "/"})
	return err
}

// replay sends one request of u's with the cookie of its session that
// signed out, then forgets it: the app must answer it signed out.
func (s *Scenario) replay(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand) error {
	a.SetCookie(&http.Cookie{Name: sessionCookie, Value: u.session, Path: "/"})
	err := s.signedOut(ctx, a, u, rnd, "ended-session", suffixEnded, "the id of a session that signed out")
	a.ClearCookies()
	return err
}

// signedOut sends a request of a signed-in user, drawn from rnd, and checks
// that the app answers it as signed out (MANUAL: "Endpoints"): / and /modify
// send the browser to /login; /data, /user.js and a change of u's services
// are refused with 403. An answer from the agent's own cache proves nothing
// and is let go.
func (s *Scenario) signedOut(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand, code, suffix, what string) error {
	path, status, location := "/data", http.StatusForbidden, ""
	var res *engine.Response
	var err error
	switch rnd.IntN(5) {
	case 0, 1:
		res, err = a.Get(ctx, "GET /data"+suffix, path)
	case 2:
		path = "/user.js"
		res, err = a.Get(ctx, "GET /user.js"+suffix, path)
	case 3:
		path, status, location = "/", http.StatusSeeOther, "/login"
		res, err = a.Get(ctx, "GET /"+suffix, path)
	default:
		form := url.Values{"service": {data.Postal}, "remove": {"1"}}
		if service, p := s.m.change(rnd, u); p != nil {
			form = modifyForm(service, *p)
		}
		path = "/modify"
		res, err = a.PostForm(ctx, "POST /modify"+suffix, path, form)
	}
	if err != nil || res.FromCache {
		return err
	}
	return res.Check(refusal(code, res.Method+" "+path+" with "+what, status, location))
}

// badChange sends a change of u's services the app must refuse, drawn from
// rnd: a service u's grade does not allow (403), or one it allows with a
// parameter the manual's table refuses (400). Nothing may change.
func (s *Scenario) badChange(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand) error {
	form, p, status, what := badChange(rnd, u)
	u.sending = p
	res, err := a.PostForm(ctx, endpointBadChange, "/modify", form)
	u.sending = data.Params{}
	if err == nil {
		err = res.Check(refusal("bad-change", "a change of services with "+what, status, ""))
	}
	if err != nil {
		u.unsure = true // the app may have taken it
	}
	return err
}

// badChange draws the form of a change of u's services the app must refuse,
// its parameters, and the status it must answer.
func badChange(rnd *rand.Rand, u *user) (form url.Values, p data.Params, status int, what string) {
	allowed := data.Allowed(u.grade)
	if len(allowed) < len(data.Services) && rnd.IntN(4) == 0 {
		for {
			if service := data.Services[rnd.IntN(len(data.Services))]; !slices.Contains(allowed, service) {
				p := data.NewParams(rnd.IntN, service)
				return modifyForm(service, p), p, http.StatusForbidden, "a service the grade does not allow"
			}
		}
	}
	service := allowed[rnd.IntN(len(allowed))]
	p = data.NewParams(rnd.IntN, service)
	pick := func(v ...string) string { return v[rnd.IntN(len(v))] }
	switch service {
	case data.Postal, data.Postal2:
		p.Code = pick(p.Code[:6], p.Code+"0", p.Code[:3]+"a"+p.Code[4:], "")
	case data.Surname, data.GivenName:
		p.Q = pick(strings.ToUpper(p.Q), p.Q+"1", p.Q+"abcdefgh", "")
	case data.Weather:
		p.Location = pick("l"+p.Location[1:], p.Location+"0", p.Location[:4], "")
	case data.Security:
		if rnd.IntN(2) == 0 {
			p.Req = pick(p.Req+"-", p.Req+"abcdefghijklmnop", "")
			break
		}
		fallthrough
	default:
		p.Token = pick(p.Token[:31], p.Token+"0", "g"+p.Token[1:], "")
	}
	return modifyForm(service, p), p, http.StatusBadRequest, "a bad parameter"
}

// favicon asks /favicon.ico, as browsers do with a page: the app has none
// (404), or one. Either answer is scanned like any other.
func favicon(ctx context.Context, a *engine.Agent) error {
	res, err := a.Get(ctx, "GET /favicon.ico", "/favicon.ico")
	if err != nil {
		return err
	}
	return res.Check(engine.Status(http.StatusNotFound, http.StatusOK))
}

// plant gives the browser, before u signs in, a session cookie made up in
// the shape of the ids the app gives, as whoever fixes a session plants it:
// the sign-in must start a session of another id. It returns the value
// planted, "" when no id was given yet to copy the shape of.
func (s *Scenario) plant(a *engine.Agent, rnd *rand.Rand) string {
	real := s.m.lastIssued()
	if real == "" {
		return ""
	}
	value := madeUp(rnd, real)
	a.SetCookie(&http.Cookie{Name: sessionCookie, Value: value, Path: "/"})
	return value
}

// relogin signs u in again while signed in, as a browser does whose user
// signs in on the form once more: the new session replaces the old, whose
// id is then replayed once and must be signed out.
func (s *Scenario) relogin(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand, sc engine.Scorer) error {
	old := u.session
	if err := s.login(ctx, a, u, sc, old); err != nil {
		return err
	}
	a.SetCookie(&http.Cookie{Name: sessionCookie, Value: old, Path: "/"})
	err := s.signedOut(ctx, a, u, rnd, "ended-session", suffixEnded, "the id of a session a new sign-in replaced")
	a.SetCookie(&http.Cookie{Name: sessionCookie, Value: u.session, Path: "/"})
	return err
}

// takenEmail tries to sign up with u's email, taken, and a password of its
// own: it must be refused with 409 and change nothing (u's own password
// still signs it in next).
func (s *Scenario) takenEmail(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand) error {
	form := url.Values{"email": {u.email}, "password": {data.Password(rnd.IntN)}, "grade": {u.grade}}
	res, err := a.PostForm(ctx, endpointTaken, "/signup", form)
	if err == nil {
		err = res.Check(refusal("taken-email", "a sign-up with a taken email", http.StatusConflict, ""))
	}
	if err != nil {
		u.unsure = true // the app may have taken it
	}
	return err
}

// anonymous sends, from a browser that carries no cookie, a request of
// the dashboard, drawn from rnd, as someone not signed in does: / must send
// it to /login, /data and /user.js refuse it with 403.
func anonymous(ctx context.Context, a *engine.Agent, rnd *rand.Rand) error {
	path, status, location := "/data", http.StatusForbidden, ""
	switch rnd.IntN(4) {
	case 0:
		path = "/user.js"
	case 1:
		path, status, location = "/", http.StatusSeeOther, "/login"
	}
	res, err := a.Get(ctx, "GET "+path+suffixSignedOut, path)
	if err != nil || res.FromCache {
		return err
	}
	return res.Check(refusal("signed-out", "GET "+path+" without a session", status, location))
}
