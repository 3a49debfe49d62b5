package memo

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tunecon/tunecon/engine"
)

// The session mix (MANUAL: "The users"): of every hundred sessions started,
// evenly interleaved, 40 read signed out, 40 write as a user, 20 sign up.
func newMix() *engine.Mix {
	return engine.NewMix(engine.Share{Role: "reader", Weight: 40}, engine.Share{Role: "writer", Weight: 40},
		engine.Share{Role: "newcomer", Weight: 20})
}

// User plays one session of the role the mix gives it, in a browser whose
// cookies the previous session left behind are cleared.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	b := s.newBrowser(u.Agent)
	switch s.mix.Next() {
	case "reader":
		return s.reader(ctx, u, b)
	case "writer":
		if w := s.m.borrow(u.Rand); w != nil {
			defer s.m.giveBack(w)
			return s.writer(ctx, r, u, b, w)
		}
	}
	return s.newcomer(ctx, r, u, b)
}

// reader reads / and a few memos from it, then pages back through /recent
// one page at a time (or jumps to a random page), thinking between pages;
// some readers also ask for someone's private memo, and some send, at one
// of three moments, a session cookie the app never issued; some first type
// a wrong password for a user signed in elsewhere.
func (s *Scenario) reader(ctx context.Context, u *engine.User, b *browser) error {
	if u.Rand.Float64() < liveWrongShare {
		if err := s.wrongPasswordLive(ctx, b, u.Rand); err != nil {
			return err
		}
	}
	forgeAt := -1
	if u.Rand.Float64() < forgedCookieShare {
		forgeAt = u.Rand.IntN(3)
	}
	forge := func(at int) error {
		if at != forgeAt {
			return nil
		}
		return s.forgedCookie(ctx, b, u.Rand)
	}
	if err := forge(0); err != nil {
		return err
	}
	p, err := s.list(ctx, u.Agent, "", 0, u)
	if err != nil {
		return err
	}
	if err := s.readSome(ctx, u, "", p, 2+u.Rand.IntN(2)); err != nil {
		return err
	}
	if u.Rand.Float64() < probeShare {
		if err := s.memoPage(ctx, u.Agent, "", s.m.privateMemo(u.Rand, 0), query(u.Rand), false, engine.NoScore); err != nil {
			return err
		}
	}
	if err := forge(1); err != nil {
		return err
	}
	if err := s.readBack(ctx, u, p.total); err != nil {
		return err
	}
	return forge(2)
}

// readBack pages back through /recent from page 1 (or, for one reader in
// ten, from a random page of a list of total memos), one to three pages,
// thinking before each.
func (s *Scenario) readBack(ctx context.Context, u *engine.User, total int64) error {
	n, pages := int64(1), 1+u.Rand.IntN(3)
	if u.Rand.IntN(10) == 0 && total > 2*pageSize {
		n = 1 + u.Rand.Int64N(total/pageSize-1)
	}
	for range pages {
		if !u.Think(ctx, thinkMin, thinkMax) {
			return nil
		}
		p, err := s.list(ctx, u.Agent, "", n, u)
		if err != nil || p.more == "" {
			return err
		}
		n++
	}
	return nil
}

// readSome opens up to n memos listed on p, thinking before each. It skips
// memos the model does not know yet (posts whose answer has not come): their
// pages could not be checked.
func (s *Scenario) readSome(ctx context.Context, u *engine.User, viewer string, p *listPage, n int) error {
	known := slices.DeleteFunc(slices.Clone(p.entries), func(e entry) bool { return s.m.lookup(e.id) == nil })
	for range min(n, len(known)) {
		if !u.Think(ctx, thinkMin, thinkMax) {
			return nil
		}
		e := known[u.Rand.IntN(len(known))]
		if err := s.memoPage(ctx, u.Agent, viewer, e.id, query(u.Rand), u.Rand.Float64() < fullCheckShare, u); err != nil {
			return err
		}
	}
	return nil
}

// writer signs in as w (some writers first type a wrong password, and some
// carry a made-up session cookie into the sign-in), reads
// /mypage, writes a memo and opens it, then, once Freshness has passed,
// finds it on / or /mypage, reads someone else's memo, and signs out.
func (s *Scenario) writer(ctx context.Context, r *engine.Run, u *engine.User, b *browser, w *user) error {
	if u.Rand.Float64() < wrongPasswordShare {
		if err := s.wrongPassword(ctx, b, w, u.Rand); err != nil {
			return err
		}
		u.Think(ctx, thinkMin, thinkMax)
	}
	if u.Rand.Float64() < fixationShare {
		b.plant(s.sessions.madeUpID(u.Rand))
	}
	if err := s.signin(ctx, b, w, u); err != nil {
		return err
	}
	u.Think(ctx, thinkMin, thinkMax)
	if _, err := s.mypage(ctx, b, w, u); err != nil {
		return err
	}
	return s.writeAndLeave(ctx, r, u, b, w, u.Rand.IntN(2) == 1)
}

// newcomer signs up, reads /mypage, writes a public memo and opens it, reads
// /, and signs out; the new user joins those writers may sign in as.
func (s *Scenario) newcomer(ctx context.Context, r *engine.Run, u *engine.User, b *browser) error {
	w, err := s.signup(ctx, b, u)
	if err != nil {
		return err
	}
	defer s.m.giveBack(w)
	u.Think(ctx, thinkMin, thinkMax)
	if _, err := s.mypage(ctx, b, w, u); err != nil {
		return err
	}
	return s.writeAndLeave(ctx, r, u, b, w, false)
}

// writeAndLeave writes a memo and opens it, then, a think later and at least
// Freshness after its 303, reads / (public) or /mypage (private) where it
// must show, opens someone else's memo from /, and signs out. Some sessions
// first send a post or a sign-out with another session's token, and some
// send their cookie again once signed out.
func (s *Scenario) writeAndLeave(ctx context.Context, r *engine.Run, u *engine.User, b *browser, w *user, private bool) error {
	u.Think(ctx, thinkMin, thinkMax)
	if u.Rand.Float64() < foreignTokenShare {
		if err := s.foreignToken(ctx, b, w, u.Rand); err != nil {
			return err
		}
		u.Think(ctx, thinkMin, thinkMax)
	}
	p, err := s.post(ctx, r, u.Agent, w, b.csrf, private, u)
	if err != nil {
		return s.afterFailedPost(ctx, r, u, b, w, err)
	}
	if err := s.memoPage(ctx, u.Agent, w.name, p.id, "", true, u); err != nil {
		return err
	}
	u.Think(ctx, thinkMin, thinkMax)
	if !r.SleepUntil(ctx, p.received.Add(Freshness)) {
		return nil
	}
	if private {
		if _, err := s.mypage(ctx, b, w, u); err != nil {
			return err
		}
	}
	list, err := s.list(ctx, u.Agent, w.name, 0, u)
	if err != nil {
		return err
	}
	if err := s.readSome(ctx, u, w.name, list, 1); err != nil {
		return err
	}
	u.Think(ctx, thinkMin, thinkMax)
	sid, csrf := b.sid, b.csrf
	if err := s.signout(ctx, b, u); err != nil || u.Rand.Float64() >= replayShare {
		w.ended = csrf
		return err
	}
	w.ended = csrf
	u.Think(ctx, thinkMin, thinkMax)
	return s.replay(ctx, b, w, sid, csrf, u.Rand)
}

// afterFailedPost follows a post whose answer was missing or wrong: it
// records the error, and Freshness later opens /mypage, where the memo must
// show if the app stored it, so that the model knows it from then on.
func (s *Scenario) afterFailedPost(ctx context.Context, r *engine.Run, u *engine.User, b *browser, w *user, postErr error) error {
	if engine.AsError(postErr).Class == engine.ClassCritical || errors.Is(postErr, engine.ErrCutOff) || ctx.Err() != nil {
		return postErr
	}
	r.Error(postErr)
	if !r.Sleep(ctx, Freshness) {
		return nil
	}
	_, err := s.mypage(ctx, b, w, u)
	return err
}

// list loads / (n = 0) or /recent/n as name ("" signed out), checks it
// against the model, fetches its assets and scores it.
func (s *Scenario) list(ctx context.Context, a *engine.Agent, name string, n int64, score engine.Scorer) (*listPage, error) {
	path, endpoint := "/", "GET /"
	if n > 0 {
		path, endpoint = "/recent/"+itoa(n), "GET /recent/{page}"
	}
	res, err := a.Get(ctx, endpoint, path)
	if err != nil {
		return nil, err
	}
	if n > 0 && res.StatusCode == http.StatusNotFound {
		// Past the last page: right only if it may be.
		if sure := int64(len(s.m.in.public)); sure > n*pageSize {
			return nil, res.Criticalf("missing", "/recent/%d is 404; at least %d public memos exist", n, sure)
		}
		return &listPage{}, checkCookies(res)
	}
	p, err := s.checkListPage(res, name, n)
	if err != nil {
		return nil, err
	}
	if err := a.FetchAssets(ctx, res); err != nil {
		return nil, err
	}
	score.Score(tagPage, res)
	return p, nil
}

// checkListPage checks the answer of / (n = 0) or /recent/n served to name
// ("" signed out) against the model.
func (s *Scenario) checkListPage(res *engine.Response, name string, n int64) (*listPage, error) {
	doc, _, err := page(res, name)
	if err != nil {
		return nil, err
	}
	p, err := parseList(res, doc, false)
	if err != nil {
		return nil, err
	}
	if err := checkList(res, p, s.m.view(res.Sent, res.Received), n*pageSize); err != nil {
		return nil, err
	}
	if err := checkListTimes(res, p); err != nil {
		return nil, err
	}
	return p, nil
}

// memoPage opens /memos/id as viewer ("" signed out), with query after the
// path: a memo the viewer may not see must be 404; full compares its whole
// content.
func (s *Scenario) memoPage(ctx context.Context, a *engine.Agent, viewer string, id int64, query string, full bool, score engine.Scorer) error {
	res, err := a.Get(ctx, "GET /memos/{id}", "/memos/"+itoa(id)+query)
	if err != nil {
		return err
	}
	if q := s.m.lookup(id); q != nil && q.private && s.m.name(q.user) != viewer {
		if res.StatusCode == http.StatusOK {
			return res.Criticalf("private-leak", "memo %d is private to %s; it was shown to %s", id, s.m.name(q.user), who(viewer))
		}
		return expectedStatus(res, http.StatusNotFound)
	}
	doc, _, err := page(res, viewer)
	if err != nil {
		return err
	}
	p, err := parseMemo(res, doc)
	if err != nil {
		return err
	}
	if err := checkMemo(res, p, s.m.view(res.Sent, res.Received), id, viewer, full); err != nil {
		return err
	}
	if err := a.FetchAssets(ctx, res); err != nil {
		return err
	}
	score.Score(tagPage, res)
	return nil
}

// expectedStatus checks an answer's status and cookies.
func expectedStatus(res *engine.Response, status int) error {
	if err := checkCookies(res); err != nil {
		return err
	}
	return res.Check(engine.Status(status))
}

// mypage loads /mypage as w, checks it against w's memos and returns the
// form's CSRF token, which the browser keeps.
func (s *Scenario) mypage(ctx context.Context, b *browser, w *user, score engine.Scorer) (string, error) {
	res, err := b.Get(ctx, "GET /mypage", "/mypage")
	if err != nil {
		return "", err
	}
	doc, token, err := page(res, w.name)
	if err != nil {
		return "", err
	}
	p, err := parseList(res, doc, true)
	if err != nil {
		return "", err
	}
	if p.csrf != token {
		return "", res.Applicationf("csrf", "the form's csrf_token differs from the header's")
	}
	if err := b.token(res, token); err != nil {
		return "", err
	}
	if err := checkMine(res, p, s.m.view(res.Sent, res.Received), w); err != nil {
		return "", err
	}
	if id := s.m.settle(w, p.entries, res.Received); id != 0 {
		return "", res.Criticalf("id-order", "memo %d, whose post got no valid answer, has an id given before or "+
			"not above every memo acknowledged before it was sent", id)
	}
	if err := b.FetchAssets(ctx, res); err != nil {
		return "", err
	}
	score.Score(tagPage, res)
	return token, nil
}

// signin signs in as w: 303 to /mypage with the session cookie.
func (s *Scenario) signin(ctx context.Context, b *browser, w *user, score engine.Scorer) error {
	res, err := b.PostForm(ctx, "POST /signin", "/signin", url.Values{"username": {w.name}, "password": {w.password}})
	if err != nil {
		return err
	}
	sid, err := checkSession(res, "/mypage")
	if err != nil {
		return err
	}
	if err := b.signedIn(res, w, sid); err != nil {
		return err
	}
	score.Score(tagAuth, res)
	return nil
}

// checkSession checks a 303 to path that starts a session, and returns the
// session's cookie.
func checkSession(res *engine.Response, path string) (string, error) {
	if err := checkRedirect(res, path); err != nil {
		return "", err
	}
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			return c.Value, nil
		}
	}
	return "", res.Applicationf("cookie", "no %s cookie came with the 303", sessionCookie)
}

// signup signs up a new user: 303 to /mypage, signed in.
func (s *Scenario) signup(ctx context.Context, b *browser, score engine.Scorer) (*user, error) {
	name := s.m.newName()
	password := "pw-" + name + "-secret"
	res, err := b.PostForm(ctx, "POST /signup", "/signup", url.Values{"username": {name}, "password": {password}})
	if err != nil {
		return nil, err
	}
	sid, err := checkSession(res, "/mypage")
	if err != nil {
		return nil, err
	}
	w := s.m.signedUp(name, password)
	if err := b.signedIn(res, w, sid); err != nil {
		return nil, err
	}
	score.Score(tagAuth, res)
	return w, nil
}

// signout signs out with the session's token: 303 to /.
func (s *Scenario) signout(ctx context.Context, b *browser, score engine.Scorer) error {
	res, err := b.PostForm(ctx, "POST /signout", "/signout", url.Values{"csrf_token": {b.csrf}})
	if err != nil {
		return err
	}
	if err := checkRedirect(res, "/"); err != nil {
		return err
	}
	b.signedOut() // the app deleted the session; a browser may still hold the cookie, which names none
	score.Score(tagAuth, res)
	return nil
}

// post writes a memo as w: 303 to /memos/ID with a new id.
func (s *Scenario) post(ctx context.Context, r *engine.Run, a *engine.Agent, w *user, csrf string, private bool, score engine.Scorer) (*memo, error) {
	n := s.m.nextPost()
	title := titleOf(n)
	content := "# " + title + "\n\n" + s.m.in.cfg.Content(uint64(n))
	vis := "0"
	if private {
		vis = "1"
	}
	p := s.m.begin(w, private, title, content, r.Now())
	res, err := a.PostForm(ctx, "POST /memos", "/memos", url.Values{"content": {content}, "is_private": {vis}, "csrf_token": {csrf}})
	if err != nil {
		s.m.failed(w, p)
		return nil, err
	}
	id, err := memoCreated(res)
	if err != nil {
		s.m.failed(w, p)
		return nil, err
	}
	if !s.m.stored(p, id, res.Received) {
		return nil, res.Criticalf("id-order", "the new memo got id %d, given before or not above every memo acknowledged before it was sent", id)
	}
	score.Score(tagMemo, res)
	return p, nil
}

// memoCreated checks a post's 303 to /memos/ID and returns ID.
func memoCreated(res *engine.Response) (int64, error) {
	if err := checkCookies(res); err != nil {
		return 0, err
	}
	if err := res.Check(engine.Status(http.StatusSeeOther)); err != nil {
		return 0, err
	}
	loc, err := res.Location()
	if err != nil {
		return 0, err
	}
	id, ok := idAfter(loc.Path, "/memos/")
	if !ok {
		return 0, res.Applicationf("redirect", "the post redirected to %s, not to /memos/ID", loc.Path)
	}
	return id, nil
}

// memoQueries are the query strings memo pages are sometimes asked with, as
// links from elsewhere carry them: the answer must be the same as without.
var memoQueries = []string{"?raw=1", "?format=md", "?source=1", "?ref=home", "?utm_source=feed"}

// query returns one of memoQueries for one memo page in queryShare, else "".
func query(rnd *rand.Rand) string {
	if rnd.Float64() >= queryShare {
		return ""
	}
	return memoQueries[rnd.IntN(len(memoQueries))]
}

// titleOf returns the title of the run's n-th memo: three words and n, so
// that no two memos of a run share a title.
func titleOf(n int64) string {
	w := make([]string, 3)
	for i, k := 0, n; i < len(w); i, k = i+1, k/int64(len(titleWords)) {
		w[i] = titleWords[k%int64(len(titleWords))]
	}
	return strings.Join(w, " ") + " " + itoa(n)
}

var titleWords = strings.Fields(`tuning notes plan review 計測 改善 メモ 日報 draft ideas`)
