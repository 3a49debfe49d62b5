package bank

import (
	"bytes"
	"net/http"
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
	// handedOut records a session cookie an answer started a session with,
	// and reports whether the app had handed it out before (model.handedOut).
	handedOut func(cookie string) bool

	mu     sync.Mutex
	logins map[string]bool
	addrs  map[string]bool
	cookie string // the bank_session its last POST /login set; "": none
	user   int64  // the user that attempt logged in to; 0: none
	held   string // the bank_session the last answer that set one set
}

func newViewer(a *engine.Agent, m *model) *viewer {
	v := &viewer{agent: a, handedOut: m.handedOut, logins: map[string]bool{}, addrs: map[string]bool{}}
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
		v = newViewer(u.Agent, s.m)
		s.viewers[u.ID] = v
	}
	return v
}

// typed records an attempt's login and every address of its
// X-Forwarded-For header: what the viewer sent is its own.
func (v *viewer) typed(login, forwarded string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.logins[strings.ToLower(login)] = true
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
// an attribute, a comment), or in its headers (but Set-Cookie, whose
// random value is the app's own) a login or an address of clientNet. Each is read as sent and decoded
// (engine.Response.Readings), and logins in any case. /report, the security
// team's list, names locked users and banned addresses by design: only its
// other fields are read. An asset's body is checked byte for byte against
// the manifest already. It also fails an answer that starts a session with
// a cookie the app handed out before in the run (checkSessionStart).
func (v *viewer) inspect(res *engine.Response) error {
	if got := sessionCookie(res); got != "" {
		v.mu.Lock()
		held := v.held
		v.held = got
		v.mu.Unlock()
		if err := checkSessionStart(res, got, held, v.handedOut); err != nil {
			return err
		}
	}
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
		one := &engine.Response{Header: http.Header{name: values}}
		if err := v.scan(res, "its "+name+" header", one.Readings()[1:], clientNet); err != nil {
			return err
		}
	}
	return v.scan(res, "its body", (&engine.Response{Body: body}).Readings(), anyDataNet)
}

// scan fails res if texts, the readings of the part of it named where,
// carry a login, in any case, or an address of the data's networks that
// addrs keeps, that the viewer may not see.
func (v *viewer) scan(res *engine.Response, where string, texts [][]byte, addrs func(string) bool) error {
	var leak, kind string
	for _, b := range texts {
		eachLogin(bytes.ToLower(b), func(login string) {
			if leak == "" && !v.may(v.logins, login) {
				leak, kind = login, "the login"
			}
		})
		if leak == "" {
			eachDataAddr(b, func(addr string) {
				if leak == "" && addrs(addr) && !v.may(v.addrs, addr) {
					leak, kind = addr, "the address"
				}
			})
		}
		if leak != "" {
			return res.Criticalf("leak", "the answer (status %d) carries %s %s in %s, another user's: its viewer never sent it nor logged in to a user it belongs to",
				res.StatusCode, kind, leak, where)
		}
	}
	return nil
}

// anyDataNet keeps every address of the data's networks, for bodies.
func anyDataNet(string) bool { return true }

// clientNet keeps the addresses of 192.168.0.0/16, the network the
// benchmarker's browsers act from, for headers: a proxy may name its own
// servers there, whose addresses may lie in the data's other networks.
func clientNet(addr string) bool { return strings.HasPrefix(addr, "192.168.") }

// may reports whether set, one of v's, holds x.
func (v *viewer) may(set map[string]bool, x string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return set[x]
}
