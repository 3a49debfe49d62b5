package bank

import (
	"strings"
	"sync"

	"github.com/tunecon/tunecon/engine"
)

// viewer is what one agent, one browser, may be shown of the bank's users
// (MANUAL: "What no answer may show"): the logins it typed, the addresses it
// acted from, and the previous logins' addresses of the users it logged in
// to. Every other user's login and every other address of the data's
// networks is forbidden to it, in any answer but /report. It also keeps the
// session its last attempt started, for the probes that forge or replay a
// session cookie.
type viewer struct {
	agent *engine.Agent

	mu     sync.Mutex
	logins map[string]bool
	addrs  map[string]bool
	cookie string // the bank_session its last POST /login set; "": none
	user   int64  // the user that attempt logged in to; 0: none
}

func newViewer(a *engine.Agent) *viewer {
	v := &viewer{agent: a, logins: map[string]bool{}, addrs: map[string]bool{}}
	a.Inspect(v.inspect)
	return v
}

// viewerOf returns the viewer of u's agent: a user keeps one for as long as
// it keeps its agent, and a user that arrives with a recycled ID gets a new
// one, so the viewers never outnumber the users.
func (s *Scenario) viewerOf(u *engine.User) *viewer {
	s.viewersMu.Lock()
	defer s.viewersMu.Unlock()
	v := s.viewers[u.ID]
	if v == nil || v.agent != u.Agent {
		v = newViewer(u.Agent)
		s.viewers[u.ID] = v
	}
	return v
}

// typed records an attempt's login and every address of its
// X-Forwarded-For header: what the viewer sent is its own.
func (v *viewer) typed(login, forwarded string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.logins[login] = true
	for entry := range strings.SplitSeq(forwarded, ",") {
		v.addrs[strings.Trim(entry, " \t")] = true
	}
}

// shown records an address the viewer's /mypage shows: its user's own.
func (v *viewer) shown(addr string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.addrs[addr] = true
}

// setSession keeps the session an attempt started: its cookie ("" when the
// answer set none), and user id when it logged in, else none.
func (v *viewer) setSession(cookie string, id int64, success bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cookie, v.user = cookie, 0
	if success {
		v.user = id
	}
}

// loggedIn reports whether the last attempt logged the viewer in to user id.
func (v *viewer) loggedIn(id int64) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cookie != "" && v.user == id
}

// sessionCookie returns the cookie of the viewer's last attempt.
func (v *viewer) sessionCookie() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cookie
}

// inspect is the agent's Inspect check, run on every answer: it fails,
// critically, an answer that carries a login or an address the viewer may
// not see, anywhere in its body (an error page, a redirect, hidden markup,
// an attribute, a comment), or a login in its headers (but Set-Cookie,
// whose random value is the app's own). /report, the security team's list, names locked
// users and banned addresses by design: only its other fields are read. An
// asset's body is checked byte for byte against the manifest already.
func (v *viewer) inspect(res *engine.Response) error {
	body := res.Body
	switch {
	case res.URL.Path == "/report":
		body = reportExtras(body)
	case res.StatusCode == 200 && strings.HasPrefix(res.URL.Path, "/static/"):
		body = nil
	}
	for name, values := range res.Header {
		if name == "Set-Cookie" {
			continue
		}
		for _, value := range values {
			if err := v.scan(res, "its "+name+" header", []byte(value), false); err != nil {
				return err
			}
		}
	}
	return v.scan(res, "its body", body, true)
}

// scan fails res if b, the part of it named where, carries a login, or
// when addrs an address of the data's networks, that the viewer may not
// see. Headers are scanned for logins alone: a proxy may name its own
// servers there, whose addresses may lie in the same private networks.
func (v *viewer) scan(res *engine.Response, where string, b []byte, addrs bool) error {
	var leak, kind string
	eachLogin(b, func(login string) {
		if leak == "" && !v.may(v.logins, login) {
			leak, kind = login, "the login"
		}
	})
	if leak == "" && addrs {
		eachDataAddr(b, func(addr string) {
			if leak == "" && !v.may(v.addrs, addr) {
				leak, kind = addr, "the address"
			}
		})
	}
	if leak != "" {
		return res.Criticalf("leak", "the answer (status %d) carries %s %s in %s, another user's: its viewer never sent it nor logged in to a user it belongs to",
			res.StatusCode, kind, leak, where)
	}
	return nil
}

// may reports whether set, one of v's, holds x.
func (v *viewer) may(set map[string]bool, x string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return set[x]
}
