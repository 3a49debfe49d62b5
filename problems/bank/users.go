package bank

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// The session mix (MANUAL: "The users"): of every hundred sessions
// started, evenly interleaved, 55 log in, 15 lock an account, 10 get an
// address banned, 10 try a locked account, 5 try an initially banned address
// and 5 open /mypage without logging in.
func newMix() *engine.Mix {
	return engine.NewMix(engine.Share{Role: "log in", Weight: 55}, engine.Share{Role: "lock", Weight: 15},
		engine.Share{Role: "get banned", Weight: 10}, engine.Share{Role: "try locked", Weight: 10},
		engine.Share{Role: "try banned", Weight: 5}, engine.Share{Role: "anonymous", Weight: 5})
}

// play is one kind of session after its first /.
type play func(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, l *loan) error

func (s *Scenario) playsByRole() map[string]play {
	return map[string]play{"log in": s.logIn, "lock": s.lockAccount, "get banned": s.getBanned,
		"try locked": s.tryLocked, "try banned": s.tryInitiallyBanned, "anonymous": s.anonymousMypage}
}

// User plays one session: it opens / and then, as the mix says, logs in (after
// a typo or two), locks an account, gets an address banned, tries a locked
// account or a banned address, or opens /mypage without logging in. It borrows
// the account and the address it uses from the model and gives them back at its
// end: nothing ties them to u.ID, so users may come, go and reuse each other's
// IDs.
//
// Every answer the session gets is scanned for what its viewer may not see
// (see viewer), and now and then, before its play or after it, it opens a
// page the bank does not have.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	v := s.viewerOf(u)
	if err := s.top(ctx, u.Agent, ""); err != nil {
		return err
	}
	act := s.plays[s.mix.Next()]
	stray := u.Rand.IntN(2 * strayOdds) // 0: before the play, 1: after it
	if stray == 0 {
		if err := s.stray(ctx, u); err != nil {
			return err
		}
	}
	l := &loan{}
	defer func() { s.m.giveBack(l.id, l.ip) }()
	if err := act(ctx, r, u, v, l); err != nil {
		return err
	}
	if stray == 1 && ctx.Err() == nil {
		if err := s.stray(ctx, u); err != nil {
			return err
		}
	}
	u.Think(ctx, thinkMin, thinkMax)
	return nil
}

// loan is what one session borrowed: at most one account and one address of
// its own, so that no two sessions ever have attempts for one login or from
// one address in flight at once (MANUAL: "The rules"). A session that finds
// nothing to borrow skips its attempts.
type loan struct {
	id int64  // 0: none
	ip string // "": none
}

// account borrows a free account for l: unlocked when wantLocked is false,
// locked otherwise; 0 if there is none.
func (s *Scenario) account(rnd *rand.Rand, l *loan, wantLocked bool) int64 {
	l.id = s.m.borrowAccount(rnd, wantLocked)
	return l.id
}

// address borrows a free address for l with room for n more failures before
// a ban, if more than keep addresses stay free; "" if there is none.
func (s *Scenario) address(rnd *rand.Rand, l *loan, n, keep int) string {
	l.ip = s.m.borrowAddr(rnd, n, keep)
	return l.ip
}

// logIn logs in to an account, sometimes after typos.
func (s *Scenario) logIn(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, l *loan) error {
	id := s.account(u.Rand, l, false)
	if id == 0 {
		return nil
	}
	typos := u.Rand.IntN(3)
	if s.m.userFailures(id)+typos >= data.LockThreshold {
		typos = 0
	}
	ip := s.address(u.Rand, l, typos, 0)
	if ip == "" {
		return nil
	}
	if err := s.tryPasswords(ctx, r, u, v, id, typos, ip); err != nil || !v.loggedIn(id) {
		return err
	}
	switch u.Rand.IntN(probeOdds) {
	case 0:
		return s.forgedSession(ctx, u, v, id)
	case 1:
		return s.endedSession(ctx, r, u, v, id, ip)
	}
	return nil
}

// lockAccount locks an account with wrong passwords, then tries the right
// one.
func (s *Scenario) lockAccount(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, l *loan) error {
	id := s.account(u.Rand, l, false)
	if id == 0 {
		return nil
	}
	n := data.LockThreshold - s.m.userFailures(id)
	ip := s.address(u.Rand, l, n+1, 0)
	if ip == "" {
		return nil
	}
	return s.tryPasswords(ctx, r, u, v, id, n, ip)
}

// getBanned gets an address banned with unknown logins, then tries a right
// password from it. It leaves addrReserve addresses free for the other
// sessions.
func (s *Scenario) getBanned(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, l *loan) error {
	ip := s.address(u.Rand, l, 0, addrReserve)
	if ip == "" {
		return nil
	}
	id := s.account(u.Rand, l, false)
	if id == 0 {
		return nil
	}
	for ctx.Err() == nil && s.m.ipCount(ip) < data.BanThreshold {
		if err := s.try(ctx, r, u, v, 0, unknownLogin(u.Rand), madeUpPassword(u.Rand), ip); err != nil {
			return err
		}
	}
	return s.tryPasswords(ctx, r, u, v, id, 0, ip)
}

// tryLocked tries a locked account with its right password.
func (s *Scenario) tryLocked(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, l *loan) error {
	id := s.account(u.Rand, l, true)
	if id == 0 {
		return nil
	}
	ip := s.address(u.Rand, l, 1, 0)
	if ip == "" {
		return nil
	}
	return s.tryPasswords(ctx, r, u, v, id, 0, ip)
}

// tryInitiallyBanned tries a right password from an address the initial
// data bans. Those addresses are shared: attempt sends theirs one at a time.
func (s *Scenario) tryInitiallyBanned(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, l *loan) error {
	banned := s.m.init.Banned[u.Rand.IntN(len(s.m.init.Banned))]
	if !s.m.usable(0, banned) {
		return nil
	}
	id := s.account(u.Rand, l, false)
	if id == 0 {
		return nil
	}
	return s.tryPasswords(ctx, r, u, v, id, 0, banned)
}

// anonymousMypage fails a login, then opens /mypage with the session that is
// not logged in. The login names no user: half the time an unknown one, and
// half the time one near a borrowed account's, with its right password.
func (s *Scenario) anonymousMypage(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, l *loan) error {
	ip := s.address(u.Rand, l, 1, 0)
	if ip == "" {
		return nil
	}
	login, password := unknownLogin(u.Rand), madeUpPassword(u.Rand)
	if u.Rand.IntN(2) == 0 {
		if id := s.account(u.Rand, l, false); id != 0 {
			user := s.m.cfg.User(id)
			login, password = nearLogin(u.Rand, user), user.Password
		}
	}
	if err := s.try(ctx, r, u, v, 0, login, password, ip); err != nil {
		return err
	}
	return s.loginRequired(ctx, u.Agent)
}

// nearLogin is a login near u's that names no user: with a space or a tab
// after it, or shortened, without its zeros, with or without its "u".
func nearLogin(rnd *rand.Rand, u data.User) string {
	short := strconv.FormatInt(u.ID, 10)
	return []string{u.Login + " ", u.Login + "\t", "u" + short, short}[rnd.IntN(4)]
}

// tryPasswords tries user id's login from ip: wrong times with a wrong
// password, then with the right one.
func (s *Scenario) tryPasswords(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, id int64, wrong int, ip string) error {
	user := s.m.cfg.User(id)
	for range wrong {
		if err := s.try(ctx, r, u, v, id, user.Login, wrongPassword(u.Rand, s.m.cfg, user.Password), ip); err != nil {
			return err
		}
	}
	return s.try(ctx, r, u, v, id, user.Login, user.Password, ip)
}

// try thinks, then attempts; when the load ends it returns nil without
// attempting, so loops around it must check ctx.
func (s *Scenario) try(ctx context.Context, r *engine.Run, u *engine.User, v *viewer, id int64, login, password, ip string) error {
	if !u.Think(ctx, thinkMin, thinkMax) {
		return nil
	}
	return s.attempt(ctx, r, u.Agent, v, id, login, password, ip, u)
}

// unknownLogin is a login that names no user.
func unknownLogin(rnd *rand.Rand) string {
	if rnd.IntN(3) == 0 {
		return []string{"admin", "root", "test", "guest"}[rnd.IntN(4)]
	}
	return fmt.Sprintf("u%07d", 200001+rnd.IntN(9_000_000))
}

// fetch gets path and parses the answer.
func fetch[T any](ctx context.Context, a *engine.Agent, endpoint, path string, parse func(*engine.Response) (T, error)) (*engine.Response, T, error) {
	var zero T
	res, err := a.Get(ctx, endpoint, path)
	if err != nil {
		return nil, zero, err
	}
	got, err := parse(res)
	return res, got, err
}

// top loads / and its assets and checks the notice: want is the reason the
// page must show, "" for none.
func (s *Scenario) top(ctx context.Context, a *engine.Agent, want string) error {
	res, got, err := fetch(ctx, a, "GET /", "/", parseTop)
	if err != nil {
		return err
	}
	if err := checkNotice(res, got, want); err != nil {
		return err
	}
	return a.FetchAssets(ctx, res)
}

// attempt posts a login from ip and checks the decision against the model:
// the redirect, then /mypage for a success or the notice on / for a refusal.
// id is the user the login names (0: none).
// forwarded is the X-Forwarded-For header sent: the client's address is its
// first entry, without surrounding spaces or tabs, or, when that is empty,
// the connection's (socketAddr to the model).
// v, the agent's viewer, learns what the attempt makes its own.
func (s *Scenario) attempt(ctx context.Context, r *engine.Run, a *engine.Agent, v *viewer, id int64, login, password, forwarded string, sc engine.Scorer) error {
	first, _, _ := strings.Cut(forwarded, ",")
	ip := strings.Trim(first, " \t")
	if ip == "" {
		ip = socketAddr
	}
	right := id > 0 && password == s.m.cfg.User(id).Password
	if s.m.ipCount(ip) >= data.BanThreshold && strings.HasPrefix(ip, "172.") {
		mu, _ := s.bannedLocks.LoadOrStore(ip, &sync.Mutex{})
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
	}
	want := s.m.expect(id, ip, right)
	v.typed(login, forwarded)
	sent := r.Now()
	res, err := a.Do(ctx, "POST /login", http.MethodPost, "/login",
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Forwarded-For": {forwarded}},
		[]byte(url.Values{"login": {login}, "password": {password}}.Encode()))
	if err != nil {
		s.m.unsure(id, ip)
		return err
	}
	to := "/mypage"
	if want != "" {
		to = "/"
	}
	if err := res.Check(engine.Status(http.StatusSeeOther), engine.RedirectTo(func(loc string) string {
		if loc != to {
			return fmt.Sprintf("expected %s (the attempt should be %s)", to, describe(want))
		}
		return ""
	})); err != nil {
		s.m.unsure(id, ip)
		if e := engine.AsError(err); e.Code == "redirect" {
			return res.Criticalf("decision", "%s", e.Message)
		}
		return err
	}
	prev := s.m.record(id, ip, want, sent, res.Received)
	cookie, last := sessionCookie(res), v.sessionCookie()
	v.setSession(cookie, id, want == "")
	if err := checkNewSession(res, cookie, last); err != nil {
		return err
	}
	if want != "" {
		if err := s.top(ctx, a, want); err != nil {
			return err
		}
		sc.Score(tagRefusal, res)
		return nil
	}
	v.shown(prev.ip)
	if err := s.mypage(ctx, a, login, prev, r); err != nil {
		return err
	}
	sc.Score(tagLogin, res)
	return nil
}

// describe names the decision a reason stands for, for messages.
func describe(reason string) string {
	if reason == "" {
		return "a success"
	}
	return "refused as " + reason
}

// mypage checks /mypage: the login and the previous successful login, whose
// time is compared on the app's clock.
func (s *Scenario) mypage(ctx context.Context, a *engine.Agent, login string, prev success, r *engine.Run) error {
	res, got, err := fetch(ctx, a, "GET /mypage", "/mypage", parseMypage)
	if err != nil {
		return err
	}
	if !prev.sent.IsZero() {
		lo, hi := r.TargetClockBounds()
		prev.sent, prev.received = prev.sent.Add(lo), prev.received.Add(hi)
	}
	return checkMypage(res, got, login, prev)
}

// loginRequired opens /mypage with an anonymous session: it must send the
// browser to / with the login-required notice.
func (s *Scenario) loginRequired(ctx context.Context, a *engine.Agent) error {
	res, err := a.Get(ctx, "GET /mypage", "/mypage")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusSeeOther), engine.RedirectTo(func(loc string) string {
		if loc != "/" {
			return "expected / for a session that is not logged in"
		}
		return ""
	})); err != nil {
		if e := engine.AsError(err); e.Code != "status" {
			return err
		}
		return res.Criticalf("mypage", "/mypage answered %d to a session that is not logged in, expected 303 to /", res.StatusCode)
	}
	return s.top(ctx, a, reasonLoginRequired)
}

// checkReport fetches /report and compares it with the model; entries whose
// outcome is unknown may be there or not.
func (s *Scenario) checkReport(ctx context.Context, a *engine.Agent) error {
	res, got, err := fetch(ctx, a, "GET /report", "/report", parseReport)
	if err != nil {
		return err
	}
	return compareReport(res, got, s.m.report())
}
