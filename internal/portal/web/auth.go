package web

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// SessionCookie is the session cookie's name.
const SessionCookie = "tunecon_session"

// The sign-in limits: at most MaxLoginFailures wrong passwords for one
// login, and MaxAddressFailures from one address, within LoginWindow; past
// them sign-ins are refused (429) until the window has moved on.
const (
	MaxLoginFailures   = 5
	MaxAddressFailures = 20
	LoginWindow        = 5 * time.Minute
)

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

func (s *Server) signupPage(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.signedIn() {
		seeOther(w, r, "/")
		return
	}
	s.render(w, r, http.StatusOK, "signup", v, nil)
}

// signup makes a contestant account and signs it in.
func (s *Server) signup(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.signedIn() {
		seeOther(w, r, "/")
		return
	}
	login, password := r.PostFormValue("login"), r.PostFormValue("password")
	again := func(err error) {
		s.render(w, r, status(err), "signup", v, map[string]any{"Error": err.Error(), "Login": login})
	}
	if _, err := portal.CheckLogin(login); err != nil {
		again(err)
		return
	}
	hash, err := s.cfg.Passwords.Hash(password)
	if err != nil {
		again(err)
		return
	}
	a, err := s.store.CreateAccount(r.Context(), login, hash, portal.RoleContestant)
	if err != nil {
		if portal.ErrorCode(err) == portal.CodeInternal {
			s.fail(w, r, v, err)
			return
		}
		again(err)
		return
	}
	if err := s.startSession(w, r, a); err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/team")
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.signedIn() {
		seeOther(w, r, "/")
		return
	}
	s.render(w, r, http.StatusOK, "login", v, map[string]any{"Next": localPath(r.URL.Query().Get("next"))})
}

// login checks a password, within the limits, and starts a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request, v viewer) {
	login := strings.ToLower(strings.TrimSpace(r.PostFormValue("login")))
	next := localPath(r.PostFormValue("next"))
	addr := clientAddress(r)
	if after := s.limiter.wait(login, addr); after > 0 {
		s.fail(w, r, v, &retryError{after: after})
		return
	}
	a, hash, err := s.store.AccountByLogin(r.Context(), login)
	if err != nil && portal.ErrorCode(err) != portal.CodeNotFound {
		s.fail(w, r, v, err)
		return
	}
	if err != nil {
		hash = s.dummy // as slow as a wrong password
	}
	if !s.cfg.Passwords.Match(hash, r.PostFormValue("password")) || err != nil {
		s.limiter.failed(login, addr)
		s.render(w, r, http.StatusUnauthorized, "login", v, map[string]any{
			"Error": portal.ErrBadLogin.Error(), "Login": login, "Next": next})
		return
	}
	if err := s.startSession(w, r, a); err != nil {
		s.fail(w, r, v, err)
		return
	}
	if next == "" {
		next = "/"
	}
	seeOther(w, r, next)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.signedIn() {
		if err := s.store.DeleteSession(r.Context(), portal.TokenHash(v.token)); err != nil {
			s.fail(w, r, v, err)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.cfg.SecureCookies, SameSite: http.SameSiteLaxMode})
	seeOther(w, r, "/")
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

// clientAddress is the request's remote IP (without its port).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// codeTooMany classifies a refusal for too many attempts.
const codeTooMany portal.Code = "too-many"

// retryError refuses a sign-in until after has passed.
type retryError struct{ after time.Duration }

func (e *retryError) Error() string {
	return fmt.Sprintf("too many failed sign-ins: try again in %s", e.after.Round(time.Second))
}

func (e *retryError) ErrorCode() portal.Code { return codeTooMany }

// limiter counts failed sign-ins per login and per address over a sliding
// window.
type limiter struct {
	now   func() time.Time
	mu    sync.Mutex
	fails map[string][]time.Time // "login:NAME" and "addr:IP" keys
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, fails: map[string][]time.Time{}}
}

// wait returns how long a sign-in for login from addr must wait (0: none).
func (l *limiter) wait(login, addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	return max(l.waitFor("login:"+login, MaxLoginFailures, now), l.waitFor("addr:"+addr, MaxAddressFailures, now))
}

func (l *limiter) waitFor(key string, limit int, now time.Time) time.Duration {
	recent := l.fails[key]
	i := 0
	for i < len(recent) && now.Sub(recent[i]) >= LoginWindow {
		i++
	}
	recent = recent[i:]
	if len(recent) == 0 {
		delete(l.fails, key)
		return 0
	}
	l.fails[key] = recent
	if len(recent) < limit {
		return 0
	}
	return LoginWindow - now.Sub(recent[len(recent)-limit])
}

// failed records a wrong password.
func (l *limiter) failed(login, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, key := range []string{"login:" + login, "addr:" + addr} {
		l.fails[key] = append(l.fails[key], now)
	}
	// Logins tried once and never again are forgotten once their window
	// has passed, so that a spray of made-up logins cannot fill memory.
	if len(l.fails) > maxLimiterKeys {
		for key, times := range l.fails {
			if now.Sub(times[len(times)-1]) >= LoginWindow {
				delete(l.fails, key)
			}
		}
	}
}

// maxLimiterKeys is how many logins and addresses the limiter remembers
// before it sweeps out those whose window has passed.
const maxLimiterKeys = 10000
