package memo

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tunecon/tunecon/engine"
)

// browser is one agent as the scenario drives it: who it is signed in as,
// and the session the app gave it. Every answer the agent gets is passed to
// the privacy scan for its viewer before anything else reads it.
type browser struct {
	*engine.Agent
	s *Scenario
	// viewer is the name of the user the browser is signed in as, "" when
	// signed out: the scan's viewer.
	viewer atomic.Pointer[string]
	// expect, while the browser sends a request the app must refuse, checks
	// the answer before the scan does, so that a refusal that did not happen
	// is named as such.
	expect atomic.Pointer[engine.Check]
	// The session: its cookie, its token, and its entry among the live
	// sessions (nil until its token is known). Read and written by the
	// browser's own goroutine only.
	sid, csrf string
	user      int64 // the model's id of the user signed in
	live      *liveSession
	// planted is a made-up session cookie the browser carries into a
	// sign-in: the new session's id must not be it.
	planted string
}

// newBrowser wraps agent a, clearing its cookies: a browser starts signed
// out.
func (s *Scenario) newBrowser(a *engine.Agent) *browser {
	a.ClearCookies()
	b := &browser{Agent: a, s: s}
	b.viewer.Store(new(string))
	a.Inspect(b.inspect)
	return b
}

// inspect is the agent's check of every answer (see engine.Agent.Inspect).
func (b *browser) inspect(res *engine.Response) error {
	if c := b.expect.Load(); c != nil {
		if err := (*c)(res); err != nil {
			return err
		}
	}
	viewer := *b.viewer.Load()
	if viewer != "" && !isStatic(res.URL.Path) && res.StatusCode < http.StatusInternalServerError {
		// Every answer to a signed-in session, whatever its status (but a
		// server error, which may come from a proxy in front and is an
		// error already).
		if err := res.Check(engine.Critical(engine.Private())); err != nil {
			return err
		}
	}
	// The headers too, whatever the body; an asset's body is compared with
	// its SHA-256 instead (engine.Response.Readings leaves it out).
	return b.s.m.scan(res, viewer)
}

func isStatic(path string) bool { return len(path) > 8 && path[:8] == "/static/" }

// signedIn records a session signed in to w under cookie sid, and that the
// app never gave sid before.
func (b *browser) signedIn(res *engine.Response, w *user, sid string) error {
	name := w.name
	b.viewer.Store(&name)
	planted := b.planted
	b.sid, b.csrf, b.user, b.live, b.planted = sid, "", w.id, nil, ""
	if planted != "" && sid == planted {
		return res.Criticalf("session-fixation", "the session signed in to %s kept the id %q of the cookie the browser "+
			"came with, which the app never gave: a sign-in makes a new random id", name, sid)
	}
	if prev, again := b.s.sessions.issue(&b.s.sessions.ids, sid, name); again {
		return res.Criticalf("session-id", "the session signed in to %s got the session id of an earlier session (of %s): "+
			"session ids are random and never given twice", name, prev)
	}
	return nil
}

// token records the CSRF token a page of the session showed: a token seen
// for the first time must be one the app never gave another session.
func (b *browser) token(res *engine.Response, token string) error {
	if token == b.csrf {
		return nil
	}
	name := *b.viewer.Load()
	if prev, again := b.s.sessions.issue(&b.s.sessions.tokens, token, name); again {
		return res.Criticalf("csrf-token", "the session of %s shows the CSRF token of an earlier session (of %s): "+
			"tokens are random and never given twice", name, prev)
	}
	b.csrf = token
	b.s.sessions.leave(b.live)
	b.live = &liveSession{id: b.sid, token: token, name: name, user: b.user}
	b.s.sessions.enter(b.live)
	return nil
}

// plant sets a made-up session cookie, value, for the next sign-in to
// replace.
func (b *browser) plant(value string) {
	b.SetCookie(&http.Cookie{Name: sessionCookie, Value: value, Path: "/"})
	b.planted = value
}

// signedOut records that the browser's session ended: it forgets its
// cookies, and the session leaves the live ones.
func (b *browser) signedOut() {
	b.ClearCookies()
	b.s.sessions.leave(b.live)
	b.viewer.Store(new(string))
	b.sid, b.csrf, b.user, b.live = "", "", 0, nil
}

// sessionBook is what the run knows of the app's sessions: every session id
// and CSRF token the app gave (none may come twice), and the sessions live
// now, whose ids and tokens the negative cases borrow.
type sessionBook struct {
	mu     sync.Mutex
	ids    map[string]string // session id → the user it was given to
	tokens map[string]string // CSRF token → the user it was given to
	live   []*liveSession
}

// liveSession is a session signed in and not yet signed out.
type liveSession struct {
	id, token, name string
	user            int64 // the model's id of its user
	at              int   // its index in sessionBook.live
}

func newSessionBook() *sessionBook {
	return &sessionBook{ids: map[string]string{}, tokens: map[string]string{}}
}

// issue records value given to name in *seen; if it was given before, it
// returns to whom.
func (sb *sessionBook) issue(seen *map[string]string, value, name string) (string, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if prev, ok := (*seen)[value]; ok {
		return prev, true
	}
	(*seen)[value] = name
	return "", false
}

func (sb *sessionBook) enter(l *liveSession) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	l.at = len(sb.live)
	sb.live = append(sb.live, l)
}

func (sb *sessionBook) leave(l *liveSession) {
	if l == nil {
		return
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if l.at < 0 || l.at >= len(sb.live) || sb.live[l.at] != l {
		return
	}
	last := sb.live[len(sb.live)-1]
	sb.live[l.at], last.at = last, l.at
	sb.live = sb.live[:len(sb.live)-1]
	l.at = -1
}

// other returns a live session other than not's (and of another token), at
// random; nil if there is none.
func (sb *sessionBook) other(rnd *rand.Rand, not *liveSession) *liveSession {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for range 4 {
		if len(sb.live) == 0 {
			return nil
		}
		l := sb.live[rnd.IntN(len(sb.live))]
		if l != not && (not == nil || l.token != not.token && l.id != not.id) {
			c := *l
			return &c
		}
	}
	return nil
}

// madeUpID returns a value of the shape of a live session's id, at random,
// or of 32 hex digits when no session is live.
func (sb *sessionBook) madeUpID(rnd *rand.Rand) string {
	shape := "0123456789abcdef0123456789abcdef"
	if l := sb.other(rnd, nil); l != nil {
		shape = l.id
	}
	return madeUp(rnd, shape)
}
