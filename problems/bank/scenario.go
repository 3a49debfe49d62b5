package bank

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// Version of the scenario.
const Version = "7"

// Score tags and the rules' numbers (MANUAL: "Scoring").
const (
	tagLogin   = "login"   // a success, with its /mypage verified
	tagRefusal = "refusal" // a refusal, with its notice verified

	weightLogin   = 5
	weightRefusal = 2

	penaltyError   = 5
	penaltyTimeout = 1
	maxErrorRate   = 0.01

	startUsers = 8
	growth     = 1.0
	// maxUsers caps the load. The data does not: a session borrows one
	// account and one address, and the pool lends 198,000 and 64,770
	// (TestPoolServesMaxUsers). Open files do: every user holds three
	// keep-alive connections (its page's, and two more to fetch the page's
	// three assets at once), in the benchmarker and in the app alike (3.0
	// open files per user, measured), and 6,000 users (18,000 connections)
	// is what fits the 20,000 open files a process may have on the
	// development machine; at 8,192 both ran out and the tuned app failed.
	maxUsers = 6000
	// loadAccounts: accounts 1 to loadAccounts are lent to the load's
	// sessions; the others, to 200,000, are the pre-check's.
	loadAccounts = 198_000
	// addrReserve is how many free addresses a session that gets one banned
	// must leave to the others: one for every user there may be.
	addrReserve = maxUsers
	slowRequest = time.Second
)

var (
	thinkMin = 300 * time.Millisecond
	thinkMax = time.Second
)

// Scenario is the bank benchmark.
type Scenario struct {
	m     *model
	mix   *engine.Mix
	plays map[string]play
	// bannedLocks serialise attempts from the initially banned addresses,
	// which virtual users share (the manual promises one attempt per
	// address at a time).
	bannedLocks sync.Map
	// viewers holds each user's viewer, by the user's ID (see viewerOf).
	viewersMu sync.Mutex
	viewers   map[int]*viewer
}

var _ engine.Scenario = (*Scenario)(nil)

// NewScenario returns a scenario for one run.
func NewScenario() (*Scenario, error) {
	st, err := initialState()
	if err != nil {
		return nil, err
	}
	m := newModel(data.Default(), st)
	m.stock(loadAccounts, loadAddrs())
	sc := &Scenario{m: m, mix: newMix(), viewers: map[int]*viewer{}}
	sc.plays = sc.playsByRole()
	return sc, nil
}

// loadAddrs are the addresses lent to the load's sessions: 192.168.X.Y for
// Y from 1 to 254, every X but 250, the pre-check's.
func loadAddrs() []string {
	var addrs []string
	for x := range 256 {
		if x == preCheckNet {
			continue
		}
		for y := 1; y <= 254; y++ {
			addrs = append(addrs, fmt.Sprintf("192.168.%d.%d", x, y))
		}
	}
	return addrs
}

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: Name, Version: Version,
		Rules: engine.Rules{
			Weights:   map[string]float64{tagLogin: weightLogin, tagRefusal: weightRefusal},
			Deduction: engine.PerError(map[engine.Class]float64{engine.ClassApplication: penaltyError, engine.ClassTimeout: penaltyTimeout}),
			Pass:      []engine.PassRule{engine.MaxErrorRate(maxErrorRate)},
		},
		Assets: Manifest(),
		Load:   engine.LoadPolicy{StartUsers: startUsers, Growth: growth, MaxUsers: maxUsers, SlowRequest: slowRequest},
	}
}

// PreCheck checks every rule once, one request at a time, and /report
// before and after.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	v := newViewer(a, s.m)
	// A login without a client in X-Forwarded-For is the connection's: the
	// next /mypage shows this machine's own address, which on a contest's
	// network may lie in the data's networks.
	v.shown(ownAddr(r.Target))
	p := &preCheck{s: s, r: r, a: a, v: v, rnd: r.Rand(3), o: preCheckReserved(s)}
	if err := p.pages(ctx); err != nil {
		return err
	}
	p.pickUsers()
	for _, step := range []func(context.Context) error{p.logins, p.sessions, p.lock, p.initiallyRefused, p.ban} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return s.checkReport(ctx, a)
}

// FinalCheck compares /report with the model; its agent, which never
// logged in, may see no user's data beyond /report's two lists.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	newViewer(a, s.m)
	return s.checkReport(ctx, a)
}

// preCheckNet is the pre-check's network, 192.168.250.0/24.
const preCheckNet = 250

// socketAddr stands, in the model, for the address of the connection, which
// the app uses when X-Forwarded-For has no first entry; forwardedDecoy is the
// second entry the pre-check sends, which is never the client.
const (
	socketAddr     = "(connection)"
	forwardedDecoy = "10.0.0.1"
)

// reserved is what the pre-check uses and the load never lends: accounts
// first to last, addresses of 192.168.250.0/24, and an initially banned
// address.
type reserved struct {
	first, last int64
	addrs       []string
	banned      string
}

// preCheckReserved returns the pre-check's accounts and addresses.
func preCheckReserved(s *Scenario) reserved {
	o := reserved{first: loadAccounts + 1, last: int64(s.m.cfg.Users)}
	for k := 1; k <= 32; k++ {
		o.addrs = append(o.addrs, fmt.Sprintf("192.168.%d.%d", preCheckNet, k))
	}
	o.banned = s.m.init.Banned[len(s.m.init.Banned)-1]
	return o
}

// preCheck is the pre-check's state: its one agent, the accounts and
// addresses of preCheckReserved, and the users it picked among them.
type preCheck struct {
	s   *Scenario
	r   *engine.Run
	a   *engine.Agent
	v   *viewer
	rnd *rand.Rand
	o   reserved
	// withHistory has logged in before and fresh never has, both without
	// failures; initiallyLocked is locked in the initial data, and
	// lockedAtHome too, with a last successful login from an address that
	// is not near a ban. The lock and the ban use the users fresh+1 and
	// fresh+2.
	withHistory, fresh, initiallyLocked, lockedAtHome int64
}

// attempt is Scenario.attempt with the pre-check's agent, scoring nothing.
func (p *preCheck) attempt(ctx context.Context, id int64, login, password, ip string) error {
	return p.s.attempt(ctx, p.r, p.a, p.v, id, login, password, ip, engine.NoScore)
}

// pages checks / without a notice, /report before any attempt, a 404, and
// /mypage without a login, whose notice shows once.
func (p *preCheck) pages(ctx context.Context) error {
	if err := p.s.top(ctx, p.a, ""); err != nil {
		return err
	}
	if err := p.s.checkReport(ctx, p.a); err != nil {
		return err
	}
	res, err := p.a.Get(ctx, "GET (unknown path)", "/no-such-page")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusNotFound)); err != nil {
		return err
	}
	if err := p.s.loginRequired(ctx, p.a); err != nil {
		return err
	}
	return p.s.top(ctx, p.a, "") // the notice shows once
}

// pickUsers picks the first user of each kind in the pre-check's accounts.
func (p *preCheck) pickUsers() {
	for id := p.o.first; id <= p.o.last; id++ {
		st := p.s.m.init.Users[id]
		if st.Failures >= data.LockThreshold && p.lockedAtHome == 0 && !st.Last.At.IsZero() &&
			p.s.m.ipCount(st.Last.IP) < data.BanThreshold-1 {
			p.lockedAtHome = id
		}
		switch {
		case st.Failures >= data.LockThreshold && p.initiallyLocked == 0:
			p.initiallyLocked = id
		case st.Failures == 0 && !st.Last.At.IsZero() && p.withHistory == 0:
			p.withHistory = id
		case st.Failures == 0 && st.Last.At.IsZero() && p.fresh == 0:
			p.fresh = id
		}
	}
}

// logins: two successes from two addresses (the second /mypage shows the
// first), a first success ever, and a login that names no user.
func (p *preCheck) logins(ctx context.Context) error {
	steps := []struct {
		id       int64
		login    string
		password string
		ip       string
	}{
		{p.withHistory, "", "", p.o.addrs[0]},
		{p.withHistory, "", "", p.o.addrs[1]},
		{p.fresh, "", "", p.o.addrs[2]}, // a first success ever shows itself
		{0, "nosuchuser", "password", p.o.addrs[3]},
		// The client is the first entry of X-Forwarded-For, or, when it is
		// empty, the connection's address: the next success's /mypage shows
		// it as the previous login's address.
		{p.withHistory, "", "", p.o.addrs[10] + " , " + forwardedDecoy},
		{p.withHistory, "", "", p.o.addrs[11]},
		{p.withHistory, "", "", " , " + forwardedDecoy},
		{p.withHistory, "", "", p.o.addrs[12]},
	}
	for _, st := range steps {
		login, password := st.login, st.password
		if st.id > 0 {
			u := p.s.m.cfg.User(st.id)
			login, password = u.Login, u.Password
		}
		if err := p.attempt(ctx, st.id, login, password, st.ip); err != nil {
			return err
		}
	}
	// A login must equal a user's login exactly: in another case, or with
	// a space around it, it names no user, however right the password.
	u := p.s.m.cfg.User(p.withHistory)
	if upper := strings.ToUpper(u.Login); upper != u.Login {
		if err := p.attempt(ctx, 0, upper, u.Password, p.o.addrs[8]); err != nil {
			return err
		}
	}
	if err := p.attempt(ctx, 0, " "+u.Login, u.Password, p.o.addrs[9]); err != nil {
		return err
	}
	return p.nearLogins(ctx, u)
}

// nearLogins: logins near u's, each with u's right password, name no user
// either: with spaces or a tab after it (a PAD SPACE comparison would
// ignore them), or shortened, without its leading zeros or its "u".
func (p *preCheck) nearLogins(ctx context.Context, u data.User) error {
	short := strconv.FormatInt(u.ID, 10)
	for _, login := range []string{u.Login + " ", u.Login + "\t", u.Login + "  ", "u" + short, short} {
		if err := p.attempt(ctx, 0, login, u.Password, p.o.addrs[14]); err != nil {
			return err
		}
	}
	return nil
}

// sessions: session cookies the app never issued (one made up, the real
// one with a character changed in its first half, and in its second, the
// real one in another case, and with characters added after it), then
// one a later attempt ended, each at /mypage, which must treat it as no
// cookie.
func (p *preCheck) sessions(ctx context.Context) error {
	u := p.s.m.cfg.User(p.withHistory)
	if err := p.attempt(ctx, u.ID, u.Login, u.Password, p.o.addrs[13]); err != nil {
		return err
	}
	real := p.v.sessionCookie()
	half := len(real) / 2
	forgeries := []string{madeUpLike(p.rnd, real), oneChangedIn(p.rnd, real, 0, half), oneChangedIn(p.rnd, real, half, len(real)),
		swapCase(real), real + madeUpLike(p.rnd, real[:min(8, len(real))])}
	for _, forged := range forgeries {
		if forged == real {
			continue
		}
		p.a.SetCookie(&http.Cookie{Name: cookieName, Value: forged, Path: "/"})
		if err := p.s.noSession(ctx, p.a, endpointForged, "a session cookie the app never issued"); err != nil {
			return err
		}
	}
	p.a.SetCookie(&http.Cookie{Name: cookieName, Value: real, Path: "/"})
	if err := p.attempt(ctx, u.ID, u.Login, u.Password, p.o.addrs[13]); err != nil {
		return err
	}
	p.a.SetCookie(&http.Cookie{Name: cookieName, Value: real, Path: "/"})
	return p.s.noSession(ctx, p.a, endpointEnded, "the cookie of a session a later attempt ended")
}

// lock: three wrong passwords, then the right one is refused.
func (p *preCheck) lock(ctx context.Context) error {
	lock := p.s.m.cfg.User(p.fresh + 1)
	for range data.LockThreshold - p.s.m.userFailures(lock.ID) {
		if err := p.attempt(ctx, lock.ID, lock.Login, wrongPassword(p.rnd, p.s.m.cfg, lock.Password), p.o.addrs[4]); err != nil {
			return err
		}
	}
	return p.attempt(ctx, lock.ID, lock.Login, lock.Password, p.o.addrs[5])
}

// initiallyRefused: an initially locked user and an initially banned
// address, each with a right password, then a locked user with the right
// password from its last successful login's address.
func (p *preCheck) initiallyRefused(ctx context.Context) error {
	il := p.s.m.cfg.User(p.initiallyLocked)
	if err := p.attempt(ctx, il.ID, il.Login, il.Password, p.o.addrs[6]); err != nil {
		return err
	}
	ok := p.s.m.cfg.User(p.withHistory)
	if err := p.attempt(ctx, ok.ID, ok.Login, ok.Password, p.o.banned); err != nil {
		return err
	}
	if p.lockedAtHome == 0 {
		return nil
	}
	// A lock holds from everywhere, the user's own last address too.
	home := p.s.m.cfg.User(p.lockedAtHome)
	return p.attempt(ctx, home.ID, home.Login, home.Password, p.s.m.init.Users[home.ID].Last.IP)
}

// ban: ten failures from one address, then a right password from it.
func (p *preCheck) ban(ctx context.Context) error {
	ban := p.o.addrs[7]
	for p.s.m.ipCount(ban) < data.BanThreshold {
		if err := p.attempt(ctx, 0, unknownLogin(p.rnd), madeUpPassword(p.rnd), ban); err != nil {
			return err
		}
	}
	other := p.s.m.cfg.User(p.fresh + 2)
	return p.attempt(ctx, other.ID, other.Login, other.Password, ban)
}

// Initialize posts /initialize, logs a user in, and posts /initialize
// again: that forgets every session, so the login's cookie must name none
// (MANUAL: "Endpoints"). The login is one of the pre-check's accounts and
// addresses, and the second /initialize takes it out of the log, so the
// model never sees it.
func (s *Scenario) Initialize(ctx context.Context, r *engine.Run) error {
	post := func() error {
		return r.PostInitialize(ctx, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte{})
	}
	if err := post(); err != nil {
		return err
	}
	a := r.NewAgent()
	defer a.Close()
	o := preCheckReserved(s)
	u := s.m.cfg.User(o.last)
	for id := o.last; s.m.init.Users[id].Failures > 0; id-- {
		u = s.m.cfg.User(id - 1)
	}
	res, err := a.Do(ctx, "POST /login", http.MethodPost, "/login",
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Forwarded-For": {o.addrs[len(o.addrs)-1]}},
		[]byte(url.Values{"login": {u.Login}, "password": {u.Password}}.Encode()))
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusSeeOther), engine.RedirectExactly("/mypage")); err != nil {
		return err
	}
	cookie := sessionCookie(res)
	if cookie != "" {
		s.m.handedOut(cookie)
	}
	if err := post(); err != nil {
		return err
	}
	a.SetCookie(&http.Cookie{Name: cookieName, Value: cookie, Path: "/"})
	res, err = a.Get(ctx, endpointEnded, "/mypage")
	if err != nil {
		return err
	}
	if got := sessionCookie(res); got != "" {
		if err := checkSessionStart(res, got, cookie, s.m.handedOut); err != nil {
			return err
		}
	}
	return checkNoSession(res, "the cookie of a session from before POST /initialize")
}

// ownAddr is the address this machine connects to target from, as the app
// sees it ("" if unknown): the address a UDP socket aimed at it is bound to,
// which sends nothing.
func ownAddr(target *url.URL) string {
	port := target.Port()
	if port == "" {
		port = "80"
		if target.Scheme == "https" {
			port = "443"
		}
	}
	c, err := net.Dial("udp", net.JoinHostPort(target.Hostname(), port))
	if err != nil {
		return ""
	}
	defer c.Close()
	if a, ok := c.LocalAddr().(*net.UDPAddr); ok {
		return a.IP.String()
	}
	return ""
}
