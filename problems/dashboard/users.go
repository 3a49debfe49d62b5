package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/dashboard/data"
)

// signup signs u up: the form, then its post, which must send the browser to
// /login.
func (s *Scenario) signup(ctx context.Context, a *engine.Agent, u *user, sc engine.Scorer) error {
	res, err := a.Get(ctx, "GET /signup", "/signup")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusOK), engine.Exists(`form#signup[method="post"][action="/signup"]`),
		engine.Exists(`form#signup input[name="email"]`), engine.Exists(`form#signup input[name="password"]`),
		engine.Count(`form#signup select[name="grade"] option`, len(data.Grades))); err != nil {
		return err
	}
	sc.Score(tagPage, res)
	form := url.Values{"email": {u.email}, "password": {u.password}, "grade": {u.grade}}
	res, err = a.PostForm(ctx, "POST /signup", "/signup", form)
	if err != nil {
		return err
	}
	if err := checkRedirect(res, "/login"); err != nil {
		return err
	}
	sc.Score(tagRedirect, res)
	return nil
}

// signin signs u in: the form, then its post, which must send the browser to /.
func (s *Scenario) signin(ctx context.Context, a *engine.Agent, u *user, sc engine.Scorer) error {
	return s.signinCarrying(ctx, a, u, sc, "")
}

// signinCarrying is signin by a browser that carries the session cookie
// carried ("" for none).
func (s *Scenario) signinCarrying(ctx context.Context, a *engine.Agent, u *user, sc engine.Scorer, carried string) error {
	res, err := a.Get(ctx, "GET /login", "/login")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusOK), engine.Exists(`form#login[method="post"][action="/login"]`),
		engine.Exists(`form#login input[name="email"]`), engine.Exists(`form#login input[name="password"]`)); err != nil {
		return err
	}
	sc.Score(tagPage, res)
	return s.login(ctx, a, u, sc, carried)
}

// login posts u's sign-in, which must send the browser to / with a new
// session. The browser may carry a cookie already (its session, one that
// ended, one made up), carried: the new session's id must differ from it.
func (s *Scenario) login(ctx context.Context, a *engine.Agent, u *user, sc engine.Scorer, carried string) error {
	res, err := a.PostForm(ctx, "POST /login", "/login", loginForm(u.email, u.password))
	if err != nil {
		return err
	}
	if err := checkRedirect(res, "/"); err != nil {
		return err
	}
	if err := res.Check(s.newSession(u, carried)); err != nil {
		return err
	}
	sc.Score(tagRedirect, res)
	return nil
}

func loginForm(email, password string) url.Values {
	return url.Values{"email": {email}, "password": {password}}
}

// newSession checks the session a sign-in of u started: its cookie, with an
// id the app never gave before in the run (a session id derived from the
// user would come again) and other than the one the browser carried (a
// session fixed by whoever planted the cookie), and keeps the id as u's.
func (s *Scenario) newSession(u *user, carried string) engine.Check {
	return func(res *engine.Response) error {
		id := sessionOf(res)
		switch {
		case id == "":
			return engine.Fail("session-cookie", "a sign-in set no %s cookie", sessionCookie)
		case id == carried:
			return engine.Criticalf("session-fixed", "a sign-in kept the session id the browser carried: "+
				"each sign-in starts a new session, with an id the app makes")
		case !s.m.issue(id):
			return engine.Criticalf("session-reused", "a sign-in gave a session id the app had given before: "+
				"each session's id must be new and unguessable")
		}
		u.session = id
		return nil
	}
}

// signout ends the session, which must send the browser to /login.
func (s *Scenario) signout(ctx context.Context, a *engine.Agent, sc engine.Scorer) error {
	res, err := a.PostForm(ctx, "POST /logout", "/logout", url.Values{})
	if err != nil {
		return err
	}
	if err := checkRedirect(res, "/login"); err != nil {
		return err
	}
	sc.Score(tagRedirect, res)
	return nil
}

// dashboard loads / with its static files and /user.js.
func (s *Scenario) dashboard(ctx context.Context, a *engine.Agent, u *user, sc engine.Scorer) error {
	res, err := a.Get(ctx, "GET /", "/")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusOK), engine.ContentType("text/html"), signedIn(), who(u),
		engine.Exists(`a#modify-link[href="/modify"]`), engine.Exists(`ul#services`),
		engine.Exists(`script[src="/user.js"]`), engine.Exists(`script[src="/static/js/dashboard.js"]`)); err != nil {
		return err
	}
	if err := a.FetchAssets(ctx, res); err != nil {
		return err
	}
	sc.Score(tagPage, res)
	res, err = a.Get(ctx, "GET /user.js", "/user.js")
	if err != nil {
		return err
	}
	want := fmt.Sprintf("var DASHBOARD_REFRESH_MS = %d;", data.Refresh(u.grade).Milliseconds())
	if err := res.Check(engine.Status(http.StatusOK), engine.ContentType("application/javascript"), signedIn()); err != nil {
		return err
	}
	if err := res.Check(func(res *engine.Response) error {
		if !strings.Contains(string(res.Body), want) {
			return engine.Fail("user-js", "/user.js of a %s user does not say %q", u.grade, want)
		}
		return nil
	}); err != nil {
		return err
	}
	sc.Score(tagPage, res)
	return nil
}

// modifyPage reads /modify: one form per service u's grade allows, no other.
func (s *Scenario) modifyPage(ctx context.Context, a *engine.Agent, u *user) error {
	res, err := a.Get(ctx, "GET /modify", "/modify")
	if err != nil {
		return err
	}
	return res.Check(engine.Status(http.StatusOK), engine.ContentType("text/html"), signedIn(), who(u),
		engine.HTML(func(doc *goquery.Document) error {
			var got []string
			doc.Find(`form.service`).Each(func(_ int, f *goquery.Selection) {
				got = append(got, f.AttrOr("data-service", ""))
			})
			if want := data.Allowed(u.grade); !slices.Equal(got, want) {
				return engine.Fail("modify-forms", "a %s user's /modify has forms for %v, want %v", u.grade, got, want)
			}
			return nil
		}))
}

// modify subscribes u to service with p (nil: removes it) and, once the app has
// answered 303, records it.
func (s *Scenario) modify(ctx context.Context, a *engine.Agent, u *user, service string, p *data.Params, sc engine.Scorer) error {
	form := url.Values{"service": {service}, "remove": {"1"}}
	if p != nil {
		form = modifyForm(service, *p)
	}
	res, err := a.PostForm(ctx, "POST /modify", "/modify", form)
	if err == nil {
		err = checkRedirect(res, "/modify")
	}
	if err != nil {
		u.unsure = true
		return err
	}
	if old, ok := u.subs[service]; ok && old.Q != "" && (p == nil || p.Q != old.Q) {
		u.oldQueries = append(u.oldQueries, old.Q)
	}
	if p == nil {
		delete(u.subs, service)
	} else {
		u.subs[service] = *p
		s.m.own(u, *p)
	}
	sc.Score(tagRedirect, res)
	return nil
}

// data reads /data and checks every service's answer.
func (s *Scenario) data(ctx context.Context, r *engine.Run, a *engine.Agent, u *user, sc engine.Scorer) error {
	_, err := s.readData(ctx, a, u, sc)
	return err
}

// readData is data, returning the answer.
func (s *Scenario) readData(ctx context.Context, a *engine.Agent, u *user, sc engine.Scorer) (*engine.Response, error) {
	res, err := a.Get(ctx, "GET /data", "/data")
	if err != nil {
		return nil, err
	}
	if err := res.Check(engine.Status(http.StatusOK), engine.ContentType("application/json"), signedIn()); err != nil {
		return nil, err
	}
	if err := s.checkData(res, u); err != nil {
		return nil, err
	}
	u.lastData = res.Sent
	sc.Score(tagData, res)
	return res, nil
}

// who checks the heading of a signed-in page: u's email and grade.
func who(u *user) engine.Check {
	return engine.HTML(func(doc *goquery.Document) error {
		h := doc.Find("h1#who").First()
		if h.Length() == 0 {
			return engine.Fail("who", "no h1#who")
		}
		if got := strings.TrimSpace(h.Text()); got != u.email {
			return engine.Fail("who", "h1#who says %q, want %q", got, u.email)
		}
		if got := h.AttrOr("data-grade", ""); got != u.grade {
			return engine.Fail("who", "h1#who has data-grade %q, want %q", got, u.grade)
		}
		return nil
	})
}

// signedIn checks that an answer to a signed-in session may not be kept by a
// shared cache: the manual allows private or no-store.
func signedIn() engine.Check { return engine.Private("no-store") }
