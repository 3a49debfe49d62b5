package memo

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// Version of the scenario: bump it when a check, a number or the user mix
// changes, so that results say which rules they were scored by.
const Version = "4"

// Score tags (MANUAL: "Scoring").
const (
	tagPage = "page"
	tagAuth = "auth"
	tagMemo = "memo"
)

// The rules' numbers, each stated in the manual.
const (
	weightPage = 1
	weightAuth = 1
	weightMemo = 10
	// penaltyError and penaltyTimeout are deducted per error.
	penaltyError   = 5
	penaltyTimeout = 1
	// maxErrorRate fails a run whose errors exceed this share of its scored
	// actions' requests (assets not counted).
	maxErrorRate = 0.01
	// fullCheckShare is the share of memo pages whose whole content is
	// compared with the Markdown.
	fullCheckShare = 0.25
	// probeShare is the share of readers who also ask for someone's
	// private memo (it must be 404).
	probeShare = 0.25
	// startUsers, growth, maxUsers and slowRequest drive the load controller.
	startUsers  = 4
	growth      = 1.0
	maxUsers    = 5000
	slowRequest = time.Second
	// finalCheckUsers is how many writers' /mypage the final check reads.
	finalCheckUsers = 20
)

// Freshness is the manual's promise: a memo shows everywhere it belongs
// within this long after its 303.
const Freshness = time.Second

// Think times of the users (MANUAL: "The users").
var (
	thinkMin = 500 * time.Millisecond
	thinkMax = 1500 * time.Millisecond
)

// Scenario is the memo benchmark.
type Scenario struct {
	m        *model
	mix      *engine.Mix
	sessions *sessionBook
	// beforeInit is the id of a session signed in just before POST
	// /initialize, which must have ended it; "" if that sign-in failed.
	beforeInit string
}

var _ engine.Scenario = (*Scenario)(nil)

// NewScenario returns a scenario for one run.
func NewScenario() (*Scenario, error) {
	return &Scenario{m: newModel(loadInitial()), mix: newMix(), sessions: newSessionBook()}, nil
}

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: Name,
		Version: Version,
		Rules: engine.Rules{
			Weights: map[string]float64{tagPage: weightPage, tagAuth: weightAuth, tagMemo: weightMemo},
			Deduction: engine.PerError(map[engine.Class]float64{
				engine.ClassApplication: penaltyError, engine.ClassTimeout: penaltyTimeout}),
			Pass: []engine.PassRule{engine.MaxErrorRate(maxErrorRate)},
		},
		Assets: Manifest(),
		Load:   engine.LoadPolicy{StartUsers: startUsers, Growth: growth, SlowRequest: slowRequest, MaxUsers: maxUsers},
	}
}

// beforeInitTimeout bounds the sign-in before POST /initialize, so that the
// reset keeps nearly all of the phase's 30 s.
const beforeInitTimeout = 5 * time.Second

// Initialize signs a user in, then posts /initialize, which must end that
// session (the pre-check sends its cookie again). A sign-in that fails is
// left unchecked here: the app may not be ready before its reset.
func (s *Scenario) Initialize(ctx context.Context, r *engine.Run) error {
	b := s.newBrowser(r.NewAgent())
	defer b.Close()
	u := s.m.borrow(r.Rand(3))
	if u == nil {
		return r.PostInitialize(ctx, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte{})
	}
	defer s.m.giveBack(u)
	form := url.Values{"username": {u.name}, "password": {u.password}}
	sctx, cancel := context.WithTimeout(ctx, beforeInitTimeout)
	defer cancel()
	if res, err := b.PostForm(sctx, "POST /signin", "/signin", form); err == nil {
		s.beforeInit, _ = checkSession(res, "/mypage")
	}
	if s.beforeInit != "" { // never to be given again, /initialize or not
		s.sessions.issue(&s.sessions.ids, s.beforeInit, u.name+", before POST /initialize")
	}
	return r.PostInitialize(ctx, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte{})
}

// preCheckInitialized sends the cookie of the session signed in before
// POST /initialize: /mypage is 303 to /signin, as to no cookie.
func (s *Scenario) preCheckInitialized(ctx context.Context, b *browser) error {
	if s.beforeInit == "" {
		return nil
	}
	b.SetCookie(&http.Cookie{Name: sessionCookie, Value: s.beforeInit, Path: "/"})
	defer b.ClearCookies()
	_, err := b.refused(ctx, "GET /mypage", "/mypage", nil, refusal("the cookie of a session signed in before "+
		"POST /initialize, asking for /mypage,", http.StatusSeeOther, "/signin"))
	return err
}

// PreCheck checks the initialized app exactly, one request at a time,
// negative cases included; any error fails the run.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	s.m.ahead = r.TargetClockBounds
	b := s.newBrowser(r.NewAgent())
	defer b.Close()
	a := b.Agent
	rnd := r.Rand(0)
	in := s.m.in
	last := int64(len(in.public)-1) / pageSize
	for _, n := range []int64{0, 1, 1 + rnd.Int64N(last)} {
		if _, err := s.list(ctx, a, "", n, engine.NoScore); err != nil {
			return err
		}
	}
	if err := a.Expect(ctx, "GET /recent/{page}", "/recent/"+itoa(last+1), nil, http.StatusNotFound, checkCookies); err != nil {
		return err
	}
	for _, path := range []string{"/recent/-1", "/recent/01", "/recent/x", "/memos/0", "/memos/abc", "/memos/99999999", "/no-such-page"} {
		endpoint := "GET (unknown path)"
		switch {
		case strings.HasPrefix(path, "/recent/"):
			endpoint = "GET /recent/{page}"
		case strings.HasPrefix(path, "/memos/"):
			endpoint = "GET /memos/{id}"
		}
		if err := a.Expect(ctx, endpoint, path, nil, http.StatusNotFound, checkCookies); err != nil {
			return err
		}
	}
	pub := in.public[rnd.IntN(len(in.public))]
	if err := s.memoPage(ctx, a, "", pub, "", true, engine.NoScore); err != nil {
		return err
	}
	private := s.m.privateMemo(rnd, 0)
	for _, q := range append([]string{""}, memoQueries...) {
		if err := s.memoPage(ctx, a, "", private, q, true, engine.NoScore); err != nil {
			return err
		}
	}
	res, err := a.Get(ctx, "GET /mypage", "/mypage")
	if err != nil {
		return err
	}
	if err := checkRedirect(res, "/signin"); err != nil {
		return err
	}
	if err := s.preCheckInitialized(ctx, b); err != nil {
		return err
	}
	if err := a.Expect(ctx, "POST /memos", "/memos", url.Values{"content": {"# signed out"}}, http.StatusForbidden, checkCookies); err != nil {
		return err
	}
	return s.preCheckUsers(ctx, r, b)
}

// preCheckUsers signs in with a wrong password and then the right one, reads
// a private memo as its author and as another user, posts what the manual
// refuses and then a public and a private memo, signs out, finds the
// session's cookie dead and the next session's id and token new, and signs
// up.
func (s *Scenario) preCheckUsers(ctx context.Context, r *engine.Run, b *browser) error {
	rnd := r.Rand(2)
	u := s.m.borrow(rnd)
	defer s.m.giveBack(u)
	if err := s.preCheckSignin(ctx, r, b, u, rnd); err != nil {
		return err
	}
	sid, csrf := b.sid, b.csrf
	if err := s.preCheckPosts(ctx, r, b, u); err != nil {
		return err
	}
	if err := s.preCheckSignedOut(ctx, b, u, sid, csrf, rnd); err != nil {
		return err
	}
	return s.preCheckSignup(ctx, b, u)
}

// preCheckSignin signs u in with a wrong password and then the right one,
// reads /mypage and, as u, one of u's memos and another user's private memo
// (picked with rnd). The browser keeps the session's CSRF token.
func (s *Scenario) preCheckSignin(ctx context.Context, r *engine.Run, b *browser, u *user, rnd *rand.Rand) error {
	wrong := url.Values{"username": {u.name}, "password": {u.password + "x"}}
	if err := b.Expect(ctx, "POST /signin", "/signin", wrong, http.StatusUnauthorized, checkCookies); err != nil {
		return err
	}
	if err := s.signin(ctx, b, u, engine.NoScore); err != nil {
		return err
	}
	if _, err := s.mypage(ctx, b, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.preCheckElsewhere(ctx, r, u, b.sid); err != nil {
		return err
	}
	v := s.m.view(r.Now(), r.Now())
	if sure, _, _ := v.authorMemos(u.id, true); len(sure) > 0 {
		if err := s.memoPage(ctx, b.Agent, u.name, sure[rnd.IntN(len(sure))], "", true, engine.NoScore); err != nil {
			return err
		}
	}
	return s.memoPage(ctx, b.Agent, u.name, s.m.privateMemo(rnd, u.id), "", false, engine.NoScore)
}

// preCheckElsewhere, while u is signed in in another browser under the
// session id sid, signs in from a new browser with a wrong password for u,
// and with u's password and u's name in capitals or with a space after it:
// 401 each. Then it sends u's name, sid in capitals, and sid with
// characters added, as its cookie: /mypage is 303 to /signin, as to no
// cookie.
func (s *Scenario) preCheckElsewhere(ctx context.Context, r *engine.Run, u *user, sid string) error {
	o := s.newBrowser(r.NewAgent())
	defer o.Close()
	for _, c := range []struct{ what, name, password string }{
		{"a wrong password for a user signed in in another session", u.name, u.password + "x"},
		{"the right password with the user's name in capitals", strings.ToUpper(u.name), u.password},
		{"the right password with a space after the user's name", u.name + " ", u.password},
	} {
		if c.name == u.name && c.password == u.password {
			continue
		}
		form := url.Values{"username": {c.name}, "password": {c.password}}
		if _, err := o.refused(ctx, "POST /signin", "/signin", form, refusal("a sign-in with "+c.what, http.StatusUnauthorized, "")); err != nil {
			return err
		}
	}
	for _, c := range []struct{ what, value string }{
		{"a live user's name", u.name},
		{"a live session's id in capitals", strings.ToUpper(sid)},
		{"a live session's id with characters added", sid + "0a"},
	} {
		if c.value == sid {
			continue
		}
		o.SetCookie(&http.Cookie{Name: sessionCookie, Value: c.value, Path: "/"})
		if _, err := o.refused(ctx, "GET /mypage", "/mypage", nil, refusal("a session cookie the app never issued ("+c.what+
			"), asking for /mypage,", http.StatusSeeOther, "/signin")); err != nil {
			return err
		}
	}
	return nil
}

// preCheckSignedOut sends the cookie of u's session, signed out, with its
// token csrf: /mypage is 303 to /signin and a post 403; then it signs u in
// again, carrying a made-up cookie of the shape of sid, whose new session
// must have an id and a token never given before, refuses a post and a
// sign-out with the old token csrf and a sign-out with no token, and signs
// it out.
func (s *Scenario) preCheckSignedOut(ctx context.Context, b *browser, u *user, sid, csrf string, rnd *rand.Rand) error {
	b.SetCookie(&http.Cookie{Name: sessionCookie, Value: sid, Path: "/"})
	what := "the cookie of a session signed out"
	if _, err := b.refused(ctx, "GET /mypage", "/mypage", nil, refusal(what+", asking for /mypage,", http.StatusSeeOther, "/signin")); err != nil {
		return err
	}
	form := url.Values{"content": {"# signed out"}, "csrf_token": {csrf}}
	if _, err := b.refused(ctx, "POST /memos", "/memos", form, refusal(what+", posting a memo,", http.StatusForbidden, "")); err != nil {
		return err
	}
	b.plant(madeUp(rnd, sid))
	if err := s.signin(ctx, b, u, engine.NoScore); err != nil {
		return err
	}
	if _, err := s.mypage(ctx, b, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.preCheckOldToken(ctx, b, csrf); err != nil {
		return err
	}
	return s.signout(ctx, b, engine.NoScore)
}

// preCheckOldToken posts a memo and signs out with old, the token of the
// same user's session signed out before, then signs out with no token: 400
// each, and the session goes on signed in.
func (s *Scenario) preCheckOldToken(ctx context.Context, b *browser, old string) error {
	what := "the CSRF token of the same user's session signed out before"
	form := url.Values{"content": {"# " + titleOf(s.m.nextPost()) + "\n\nnever stored"}, "csrf_token": {old}}
	if _, err := b.refused(ctx, "POST /memos", "/memos", form, refusal("a post with "+what, http.StatusBadRequest, "")); err != nil {
		return err
	}
	if _, err := b.refused(ctx, "POST /signout", "/signout", url.Values{"csrf_token": {old}},
		refusal("a sign-out with "+what, http.StatusBadRequest, "")); err != nil {
		return err
	}
	_, err := b.refused(ctx, "POST /signout", "/signout", url.Values{}, refusal("a sign-out with no csrf_token", http.StatusBadRequest, ""))
	return err
}

// preCheckPosts posts, as u signed in in b, what the manual refuses and
// then a public and a private memo, which must get the next ids; once they
// must show, it reads u's list and /mypage, signs out and reads the first
// two pages of the public list.
func (s *Scenario) preCheckPosts(ctx context.Context, r *engine.Run, b *browser, u *user) error {
	a, csrf := b.Agent, b.csrf
	bad := []url.Values{
		{"content": {"# no token"}},
		{"content": {"# wrong token"}, "csrf_token": {csrf + "x"}},
		{"content": {"#   \nno title"}, "csrf_token": {csrf}},
		{"content": {""}, "csrf_token": {csrf}},
		{"content": {"# long\n" + strings.Repeat("長", 10000)}, "csrf_token": {csrf}},
	}
	for _, form := range bad {
		if err := a.Expect(ctx, "POST /memos", "/memos", form, http.StatusBadRequest, checkCookies); err != nil {
			return err
		}
	}
	for i, private := range []bool{false, true} {
		p, err := s.post(ctx, r, a, u, csrf, private, engine.NoScore)
		if err != nil {
			return err
		}
		if want := s.m.in.lastMemo() + 1 + int64(i); p.id != want {
			return engine.Criticalf("id-next", "the memo posted got id %d; after /initialize the next memo id is %d", p.id, want)
		}
	}
	if !r.Sleep(ctx, Freshness) {
		return ctx.Err()
	}
	if _, err := s.list(ctx, a, u.name, 0, engine.NoScore); err != nil {
		return err
	}
	if _, err := s.mypage(ctx, b, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.signout(ctx, b, engine.NoScore); err != nil {
		return err
	}
	for _, n := range []int64{0, 1} { // read before the posts: now one memo further down
		if _, err := s.list(ctx, a, "", n, engine.NoScore); err != nil {
			return err
		}
	}
	return nil
}

// preCheckSignup refuses the sign-ups the manual refuses, u's name among
// them, then signs a new user up, reads its /mypage and signs it out.
func (s *Scenario) preCheckSignup(ctx context.Context, b *browser, u *user) error {
	for _, form := range []url.Values{
		{"username": {"ab"}, "password": {"password1"}},
		{"username": {"Upper_case"}, "password": {"password1"}},
		{"username": {"short_pw"}, "password": {"1234567"}},
	} {
		if err := b.Expect(ctx, "POST /signup", "/signup", form, http.StatusBadRequest, checkCookies); err != nil {
			return err
		}
	}
	taken := url.Values{"username": {u.name}, "password": {"password1"}}
	if err := b.Expect(ctx, "POST /signup", "/signup", taken, http.StatusConflict, checkCookies); err != nil {
		return err
	}
	nu, err := s.signup(ctx, b, engine.NoScore)
	if err != nil {
		return err
	}
	if _, err := s.mypage(ctx, b, nu, engine.NoScore); err != nil {
		return err
	}
	if err := s.signout(ctx, b, engine.NoScore); err != nil {
		return err
	}
	s.m.giveBack(nu)
	return nil
}

// checkRedirect checks a 303 to path.
func checkRedirect(res *engine.Response, path string) error {
	if err := checkCookies(res); err != nil {
		return err
	}
	return res.Check(engine.Status(http.StatusSeeOther), engine.RedirectExactly(path))
}

// FinalCheck checks the end state: / and the /mypage of a sample of the
// users who wrote, signed in again.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	b := s.newBrowser(r.NewAgent())
	defer b.Close()
	if _, err := s.list(ctx, b.Agent, "", 0, engine.NoScore); err != nil {
		return err
	}
	for _, u := range s.m.sampleUsers(r.Rand(1), finalCheckUsers) {
		if u.unsure {
			continue
		}
		b.signedOut() // the session before is left signed in, as a browser closed
		if err := s.signin(ctx, b, u, engine.NoScore); err != nil {
			return err
		}
		if _, err := s.mypage(ctx, b, u, engine.NoScore); err != nil {
			return err
		}
	}
	return nil
}
