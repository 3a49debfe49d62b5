package web

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// SessionCookie is the session cookie's name.
const SessionCookie = "tunecon_session"

// The sign-in limits, each within LoginWindow and kept per source (a
// client's IPv4 address, or its IPv6 /64, which one machine holds whole:
// see source). A source may fail MaxLoginFailures times at one login and
// MaxSourceFailures times at all logins; past either it waits until the
// window has moved on. A login that has failed MaxAccountFailures times
// from all sources is under attack: then a source that has failed at it
// already waits as well, but one that has not is still let in, so that
// no attacker, however many addresses it has, keeps the login's owner
// out. Signing in touches no open session.
const (
	MaxLoginFailures   = 5
	MaxAccountFailures = 20
	MaxSourceFailures  = 20
	LoginWindow        = 5 * time.Minute
)

// SignupWindow is the sign-up limit's (portal.Settings.Signups): so many
// accounts from one source within it.
const SignupWindow = time.Hour

// viewer reads the session cookie: nobody without one or with one that
// expired.
func (s *Server) viewer(r *http.Request) (viewer, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return viewer{}, nil
	}
	a, err := s.store.SessionAccount(r.Context(), portal.TokenHash(c.Value))
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return viewer{}, nil
	} else if err != nil {
		return viewer{}, err
	}
	return viewer{Account: a, token: c.Value}, nil
}

// signupView is the sign-up form's, sent back with what was typed and
// what was wrong.
type signupView struct {
	layout
	Error, Login string
}

func (s *Server) signupPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	if v.signedIn() {
		return seeOther(w, r, "/")
	}
	return s.render(w, r, http.StatusOK, "signup", v, &signupView{})
}

// signup makes a contestant account and signs it in.
func (s *Server) signup(w http.ResponseWriter, r *http.Request, v viewer) error {
	if v.signedIn() {
		return seeOther(w, r, "/")
	}
	login, password := r.PostFormValue("login"), r.PostFormValue("password")
	again := func(err error) error { // the form again, with what was typed
		return s.render(w, r, status(err), "signup", v, &signupView{Error: err.Error(), Login: login})
	}
	if _, err := portal.CheckLogin(login); err != nil {
		return again(err)
	}
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	if err := s.registrationOpen(c); err != nil {
		return again(err)
	}
	forgive := func() {}
	if limit, on := c.Settings.Signups(); on {
		var after time.Duration
		after, forgive = s.limiter.reserve(rule{key: "signup:" + source(s.clientAddress(r)), limit: limit, window: SignupWindow})
		if after > 0 {
			return &retryError{after: after, what: "sign-ups from your address"}
		}
	}
	hash, err := s.cfg.Passwords.Hash(password)
	if err != nil {
		forgive()
		return again(err)
	}
	a, err := s.store.CreateAccount(r.Context(), login, hash, portal.RoleContestant)
	if err != nil {
		forgive() // only accounts made count
		if portal.ErrorCode(err) == portal.CodeInternal {
			return err
		}
		return again(err)
	}
	if err := s.startSession(w, r, a); err != nil {
		return err
	}
	return seeOther(w, r, "/team")
}

// loginView is the sign-in form's: the page to go to next, and when sent
// back, what was typed and what was wrong.
type loginView struct {
	layout
	Error, Login, Next string
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	if v.signedIn() {
		return seeOther(w, r, "/")
	}
	return s.render(w, r, http.StatusOK, "login", v, &loginView{Next: localPath(r.URL.Query().Get("next"))})
}

// login checks a password, within the limits, and starts a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request, v viewer) error {
	login := strings.ToLower(strings.TrimSpace(r.PostFormValue("login")))
	next := localPath(r.PostFormValue("next"))
	after, forgive := s.limiter.reserve(signInRules(login, source(s.clientAddress(r)))...)
	if after > 0 {
		return &retryError{after: after, what: "failed sign-ins"}
	}
	a, hash, err := s.store.AccountByLogin(r.Context(), login)
	if err != nil && portal.ErrorCode(err) != portal.CodeNotFound {
		return err
	}
	if err != nil {
		hash = s.dummy // as slow as a wrong password
	}
	if !s.cfg.Passwords.Match(hash, r.PostFormValue("password")) || err != nil {
		return s.render(w, r, http.StatusUnauthorized, "login", v, &loginView{
			Error: portal.ErrBadLogin.Error(), Login: login, Next: next})
	}
	forgive()
	if err := s.startSession(w, r, a); err != nil {
		return err
	}
	if v.signedIn() { // signing in again, perhaps as someone else: one session at a time
		if err := s.store.DeleteSession(r.Context(), portal.TokenHash(v.token)); err != nil {
			s.cfg.Logger.Warn("ending the session signed in before", "err", err)
		}
	}
	if next == "" {
		next = "/"
	}
	return seeOther(w, r, next)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, v viewer) error {
	if v.signedIn() {
		if err := s.store.DeleteSession(r.Context(), portal.TokenHash(v.token)); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.cfg.SecureCookies, SameSite: http.SameSiteLaxMode})
	return seeOther(w, r, "/")
}

// signInView is a sign-in link's form: the account, the link's token, and
// when sent back, what was wrong.
type signInView struct {
	layout
	Account      portal.Account
	Token, Error string
}

// signInPage is where a sign-in link leads: a form to choose a password.
// Opening it changes nothing (a mail scanner that follows the link uses
// nothing up); a link used or expired says so.
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	a, err := s.store.SignInLinkAccount(r.Context(), portal.TokenHash(r.PathValue("token")))
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "signin", v, &signInView{Account: a, Token: r.PathValue("token")})
}

// signIn uses a sign-in link: the password chosen becomes the account's,
// the link stops working, and its owner is signed in (as nobody else).
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, v viewer) error {
	token := r.PathValue("token")
	a, err := s.store.SignInLinkAccount(r.Context(), portal.TokenHash(token))
	if err != nil {
		return err
	}
	password := r.PostFormValue("password")
	again := func(msg string) error { // the form again, with what is wrong
		return s.render(w, r, http.StatusBadRequest, "signin", v, &signInView{Account: a, Token: token, Error: msg})
	}
	if password != r.PostFormValue("again") {
		return again("the two passwords differ")
	}
	hash, err := s.cfg.Passwords.Hash(password)
	if err != nil {
		return again(err.Error())
	}
	if a, err = s.store.RedeemSignInLink(r.Context(), portal.TokenHash(token), hash); err != nil {
		return err
	}
	if err := s.startSession(w, r, a); err != nil {
		return err
	}
	if v.signedIn() && v.ID != a.ID { // one session at a time
		if err := s.store.DeleteSession(r.Context(), portal.TokenHash(v.token)); err != nil {
			s.cfg.Logger.Warn("ending the session signed in before", "err", err)
		}
	}
	return seeOther(w, r, "/team")
}

// accountView is the account page's: its password form, and when sent
// back, what was wrong or that the change was made.
type accountView struct {
	layout
	Error   string
	Changed bool
}

func (s *Server) accountPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.render(w, r, http.StatusOK, "account", v, &accountView{Changed: r.URL.Query().Has("changed")})
}

// changePassword sets the viewer's password, the current one given: a
// wrong one counts as a failed sign-in (a session left open on a shared
// machine guesses no faster than the sign-in form). The viewer's other
// sessions end; this one stays.
func (s *Server) changePassword(w http.ResponseWriter, r *http.Request, v viewer) error {
	again := func(code int, msg string) error { // the form again, with what is wrong
		return s.render(w, r, code, "account", v, &accountView{Error: msg})
	}
	after, forgive := s.limiter.reserve(signInRules(v.Login, source(s.clientAddress(r)))...)
	if after > 0 {
		return &retryError{after: after, what: "failed sign-ins"}
	}
	_, hash, err := s.store.AccountByLogin(r.Context(), v.Login)
	if err != nil {
		return err
	}
	if !s.cfg.Passwords.Match(hash, r.PostFormValue("current")) {
		return again(http.StatusUnauthorized, "the current password is wrong")
	}
	forgive()
	password := r.PostFormValue("password")
	if password != r.PostFormValue("again") {
		return again(http.StatusBadRequest, "the two new passwords differ")
	}
	if hash, err = s.cfg.Passwords.Hash(password); err != nil {
		return again(http.StatusBadRequest, err.Error())
	}
	if err := s.store.ChangePassword(r.Context(), v.Account, hash, portal.TokenHash(v.token)); err != nil {
		return err
	}
	return seeOther(w, r, "/account?changed")
}

func (s *Server) startSession(w http.ResponseWriter, r *http.Request, a portal.Account) error {
	token, hash := portal.NewToken()
	expires := s.cfg.Now().Add(s.cfg.SessionTTL)
	if err := s.store.CreateSession(r.Context(), hash, a.ID, expires); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", Expires: expires, HttpOnly: true,
		Secure: s.cfg.SecureCookies, SameSite: http.SameSiteLaxMode})
	return nil
}

// localPath keeps a "next" page on this site: a path, never another host.
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.IsAbs() || u.Host != "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.Contains(next, `\`) {
		return ""
	}
	return next
}

// clientAddress is the IP the request came from: the peer's, or behind a
// trusted proxy the last one the proxy added to X-Forwarded-For (those
// before it are the client's to write).
func (s *Server) clientAddress(r *http.Request) string {
	if s.cfg.TrustProxy {
		if hops := r.Header.Values("X-Forwarded-For"); len(hops) > 0 {
			last := hops[len(hops)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if ip := net.ParseIP(strings.TrimSpace(last)); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// codeTooMany classifies a refusal for too many attempts.
const codeTooMany portal.Code = "too-many"

// retryError refuses an attempt until after has passed.
type retryError struct {
	after time.Duration
	what  string // "failed sign-ins"
}

func (e *retryError) Error() string {
	return fmt.Sprintf("too many %s: try again in %s", e.what, e.after.Round(time.Second))
}

func (e *retryError) ErrorCode() portal.Code { return codeTooMany }

// rule is one limit: at most limit attempts under key within window. With
// onlyAfter set the rule holds back only a caller with attempts of its own
// under that key within the window (a source that failed at the login).
type rule struct {
	key       string
	limit     int
	window    time.Duration
	onlyAfter string
}

// signInRules are the limits on signing in as login from src (a source);
// a login that cannot exist is not remembered, so that made-up ones cost
// no memory.
func signInRules(login, src string) []rule {
	rules := []rule{{key: "src:" + src, limit: MaxSourceFailures, window: LoginWindow}}
	if _, err := portal.CheckLogin(login); err == nil {
		own := "login:" + login + "@" + src
		rules = append(rules,
			rule{key: own, limit: MaxLoginFailures, window: LoginWindow},
			rule{key: "login:" + login, limit: MaxAccountFailures, window: LoginWindow, onlyAfter: own})
	}
	return rules
}

// source is what the limits count an address as: an IPv4 address as it is
// (an IPv4-mapped IPv6 one too), an IPv6 address as its /64, the block a
// single machine or home is handed whole; anything else as it is.
func source(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

// limiter counts attempts per key over a sliding window.
type limiter struct {
	now   func() time.Time
	mu    sync.Mutex
	times map[string][]time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, times: map[string][]time.Time{}}
}

// reserve counts an attempt under every rule at once, or returns how long
// the caller must wait when one of them is spent. The attempt counts from
// the moment it is reserved, so that attempts made at the same time cannot
// all pass before any is counted; forgive takes it back (a sign-in whose
// password was right).
func (l *limiter) reserve(rules ...rule) (wait time.Duration, forgive func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, r := range rules {
		if r.onlyAfter != "" && l.waitFor(rule{key: r.onlyAfter, limit: 1, window: r.window}, now) == 0 {
			continue // the caller has not failed here: not held back
		}
		wait = max(wait, l.waitFor(r, now))
	}
	if wait > 0 {
		return wait, nil
	}
	for _, r := range rules {
		l.times[r.key] = append(l.times[r.key], now)
	}
	l.sweep(now)
	return 0, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, r := range rules {
			times := l.times[r.key]
			if i := slices.Index(times, now); i >= 0 {
				l.times[r.key] = slices.Delete(times, i, i+1)
			}
		}
	}
}

// waitFor drops the key's attempts older than the window and returns how
// long until one more is allowed.
func (l *limiter) waitFor(r rule, now time.Time) time.Duration {
	recent := l.times[r.key]
	i := 0
	for i < len(recent) && now.Sub(recent[i]) >= r.window {
		i++
	}
	recent = recent[i:]
	if len(recent) == 0 {
		delete(l.times, r.key)
		return 0
	}
	l.times[r.key] = recent
	if len(recent) < r.limit {
		return 0
	}
	return r.window - now.Sub(recent[len(recent)-r.limit])
}

// sweep forgets keys tried once and never again once the longest window
// has passed, so that a spray of addresses cannot fill memory.
func (l *limiter) sweep(now time.Time) {
	if len(l.times) <= maxLimiterKeys {
		return
	}
	for key, times := range l.times {
		if len(times) == 0 || now.Sub(times[len(times)-1]) >= SignupWindow {
			delete(l.times, key)
		}
	}
}

// maxLimiterKeys is how many keys the limiter remembers before it sweeps
// out those whose window has passed.
const maxLimiterKeys = 10000
