package dashboard

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// Version of the scenario: bump it when a check, a number or the user mix
// changes, so that results say which rules they were scored by.
const Version = "7"

// Score tags (MANUAL: "Scoring").
const (
	tagPage     = "page"
	tagData     = "data"
	tagRedirect = "redirect"
)

// The rules' numbers, each stated in the manual.
const (
	weightPage     = 1
	weightData     = 3
	weightRedirect = 0.1
	penaltyError   = 10
	penaltyTimeout = 20
	// maxErrorRate fails a run whose errors and timeouts reach this share of
	// its scored requests.
	maxErrorRate = 0.01
	// Freshness promises: how old a relayed answer may be at the moment the
	// benchmarker sent the request.
	weatherFreshness  = services.WeatherPeriod + time.Second
	tokenFreshness    = services.TokenValidity
	attackedFreshness = 16 * time.Second
	// The sessions: pollsMin to pollsMax /data polls at the grade's refresh
	// interval divided by pollScale; one poll in modifyEvery is followed by a
	// change of subscription; one session in signupEvery signs up.
	pollsMin    = 5
	pollsMax    = 10
	pollScale   = 100
	modifyEvery = 4
	signupEvery = 20
	// The negative cases, each in one session in so many: a wrong password
	// before the sign-in, a forged session id at a random poll, the id of
	// the session that signed out replayed at its end, and a sign-out and
	// back in at a random poll, the old id replayed in between.
	wrongPasswordEvery = 10
	forgedEvery        = 10
	replayEvery        = 10
	resignEvery        = 20
	// More, each in one session in so many: a request signed out, with no
	// cookie, before the sign-in; a made-up session cookie the browser
	// carries when it signs in; a sign-in again while signed in at a random
	// poll, the replaced session's id replayed after it; a sign-up with the
	// user's email, taken, before the sign-in.
	anonymousEvery = 10
	fixationEvery  = 10
	reloginEvery   = 20
	takenEvery     = 20
	// One change of services in badChangeEvery is first tried with a bad
	// one; one session in faviconEvery asks /favicon.ico with the dashboard.
	badChangeEvery = 20
	faviconEvery   = 10
	// The load controller. The run starts with startUsers (the original's 50
	// sessions) and adds users while at most maxSlowRate of the requests take
	// over slowRequest: a dashboard whose data takes a second has lost its
	// user, and an app that calls the services one after another takes that
	// long for a premium user. Near capacity is a mean response over knee:
	// /data's time rises and falls with what the app has cached, so the
	// engine's default sign of queueing (a mean four times the fastest) would
	// be misread. The users double while the app keeps up, so maxUsers is far
	// above what an app that keeps up on one machine with the benchmarker
	// reaches (1,100 to 1,900 users: then the machine's CPU is the limit), lest
	// a last doubling meet it.
	startUsers  = 50
	growth      = 1.0
	maxUsers    = 8000
	slowRequest = time.Second
	maxSlowRate = 0.01
	knee        = 250 * time.Millisecond
	// The final check comes back to revisitUsers users who read /data during
	// the load, revisitAfter after their last read (past every freshness
	// promise), then reads /data of finalCheckUsers others.
	revisitUsers    = 5
	revisitAfter    = attackedFreshness + time.Second
	finalCheckUsers = 10
)

// Think times between pages (MANUAL: "The users").
var (
	thinkMin = 200 * time.Millisecond
	thinkMax = 800 * time.Millisecond
)

// Scenario is the dashboard benchmark.
type Scenario struct {
	m *model
	// grades is the sessions' grades, in the initial data's shares,
	// interleaved: a run of 50 users draws the same mix whatever its seed.
	grades *engine.Mix

	mu  sync.Mutex
	svc *services.Services // started by Initialize, stopped by Close
}

var (
	_ engine.Scenario    = (*Scenario)(nil)
	_ engine.Initializer = (*Scenario)(nil)
	_ engine.Closer      = (*Scenario)(nil)
)

// NewScenario returns a scenario for one run.
func NewScenario() (*Scenario, error) {
	return &Scenario{m: newModel(data.Default()), grades: engine.NewMix(engine.Share{Role: data.Micro, Weight: 4},
		engine.Share{Role: data.Small, Weight: 3}, engine.Share{Role: data.Standard, Weight: 2}, engine.Share{Role: data.Premium, Weight: 1})}, nil
}

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: Name,
		Version: Version,
		Rules: engine.Rules{
			Weights: map[string]float64{tagPage: weightPage, tagData: weightData, tagRedirect: weightRedirect},
			Deduction: engine.PerError(map[engine.Class]float64{
				engine.ClassApplication: penaltyError, engine.ClassTimeout: penaltyTimeout}),
			Pass: []engine.PassRule{engine.MaxErrorRate(maxErrorRate), engine.DeductionBelowRaw()},
		},
		Assets: Manifest(),
		Parts:  []string{services.Part},
		Load: engine.LoadPolicy{StartUsers: startUsers, Growth: growth, SlowRequest: slowRequest, MaxUsers: maxUsers,
			MaxSlowRate: maxSlowRate, Knee: knee},
	}
}

// Initialize starts the external services on ports of their own, on the
// benchmarker's address toward the app (loopback for an app on this
// machine), and tells the app where they are. A user of the initial data
// signs in first; its
// session's id, replayed after, must be signed out: POST /initialize ends
// every session. The services draw the run's secret themselves, from
// crypto/rand: their answers change from run to run, while the seed still
// replays the load.
func (s *Scenario) Initialize(ctx context.Context, r *engine.Run) error {
	host, err := addressToward(ctx, r.Target)
	if err != nil {
		return engine.Internalf("services", "finding this machine's address toward the app: %v", err)
	}
	svc, err := services.Start(ctx, services.Config{Seed: r.Seed, Now: r.Now, Host: host})
	if err != nil {
		return engine.Internalf("services", "starting the external services: %v", err)
	}
	s.mu.Lock()
	s.svc = svc
	s.mu.Unlock()
	s.m.ad.facts.Store(svc.Facts())
	body, _ := json.Marshal(map[string]string{"http": svc.HTTP(), "https": svc.HTTPS()})
	a := r.NewAgent()
	defer a.Close()
	u := s.m.borrow(r.Rand(4), "")
	defer s.m.giveBack(u)
	s.watch(a).set(u)
	if err := s.signin(ctx, a, u, engine.NoScore); err != nil {
		return err
	}
	if err := r.PostInitialize(ctx, http.Header{"Content-Type": {"application/json"}}, body); err != nil {
		return err
	}
	return s.signedOut(ctx, a, u, r.Rand(5), "ended-session", suffixEnded, "the id of a session from before POST /initialize")
}

// Close stops the external services.
func (s *Scenario) Close() error {
	s.mu.Lock()
	svc := s.svc
	s.svc = nil
	s.mu.Unlock()
	if svc == nil {
		return nil
	}
	return svc.Close()
}

// services returns the running services.
func (s *Scenario) services() *services.Services {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.svc
}

// User plays one session: a user of the initial data (or, one time in
// signupEvery, a new one) signs in, loads the dashboard, polls /data at the
// grade's interval scaled down, now and then changes a subscription and reads
// /data at once, and signs out. Now and then, the negative cases come in
// between: a wrong password, a forged session id, a session's id replayed
// after it signed out, a change of services the app must refuse.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	u.ClearCookies()
	view := s.watch(u.Agent)
	if u.Rand.IntN(anonymousEvery) == 0 {
		if err := anonymous(ctx, u.Agent, u.Rand); err != nil {
			return err
		}
	}
	var w *user
	grade := s.grades.Next()
	if u.Rand.IntN(signupEvery) == 0 {
		w = s.m.newUser(grade)
		view.set(w)
		if err := s.signup(ctx, u.Agent, w, u); err != nil {
			return err // w is unsure: it is not given back
		}
	} else if w = s.m.borrow(u.Rand, grade); w == nil {
		u.Think(ctx, thinkMin, thinkMax)
		return nil
	}
	view.set(w)
	keep := true
	defer func() {
		if keep {
			s.m.giveBack(w)
		}
	}()
	if err := s.before(ctx, u, w); err != nil {
		return err
	}
	planted := ""
	if u.Rand.IntN(fixationEvery) == 0 {
		planted = s.plant(u.Agent, u.Rand)
	}
	if err := s.enter(ctx, u.Agent, w, u, planted); err != nil {
		return err
	}
	if u.Rand.IntN(faviconEvery) == 0 {
		if err := favicon(ctx, u.Agent); err != nil {
			return err
		}
	}
	stopped, err := s.polls(ctx, r, u, w)
	if w.unsure {
		keep = false
	}
	if err != nil || stopped {
		return err
	}
	if err := s.signout(ctx, u.Agent, u); err != nil {
		return err
	}
	if u.Rand.IntN(replayEvery) == 0 {
		return s.replay(ctx, u.Agent, w, u.Rand)
	}
	return nil
}

// before sends the negative cases of a session before its sign-in, each in
// one session in so many: a sign-up with w's email, taken, and a wrong
// sign-in.
func (s *Scenario) before(ctx context.Context, u *engine.User, w *user) error {
	if u.Rand.IntN(takenEvery) == 0 {
		if err := s.takenEmail(ctx, u.Agent, w, u.Rand); err != nil {
			return err
		}
	}
	if u.Rand.IntN(wrongPasswordEvery) == 0 {
		return s.wrongPassword(ctx, u.Agent, w, u.Rand)
	}
	return nil
}

// enter signs u in, its browser carrying the session cookie carried ("" for
// none), and loads the dashboard.
func (s *Scenario) enter(ctx context.Context, a *engine.Agent, u *user, sc engine.Scorer, carried string) error {
	if err := s.signinCarrying(ctx, a, u, sc, carried); err != nil {
		return err
	}
	return s.dashboard(ctx, a, u, sc)
}

// polls polls w's /data, now and then changing a subscription and reading
// /data at once. At a random poll of one session in forgedEvery, a request
// carries a forged session id; at one of one session in resignEvery, w signs
// out, its old id is replayed, and it signs in again. stopped: the load
// ended meanwhile.
func (s *Scenario) polls(ctx context.Context, r *engine.Run, u *engine.User, w *user) (stopped bool, err error) {
	interval := data.Refresh(w.grade) / pollScale
	n := pollsMin + u.Rand.IntN(pollsMax-pollsMin+1)
	forgeAt, resignAt, reloginAt := -1, -1, -1
	if u.Rand.IntN(forgedEvery) == 0 {
		forgeAt = u.Rand.IntN(n)
	}
	if u.Rand.IntN(resignEvery) == 0 {
		resignAt = 1 + u.Rand.IntN(n-1)
	}
	if u.Rand.IntN(reloginEvery) == 0 {
		reloginAt = 1 + u.Rand.IntN(n-1)
	}
	for i := range n {
		if i == reloginAt {
			if err := s.relogin(ctx, u.Agent, w, u.Rand, u); err != nil {
				return false, err
			}
		}
		if i == forgeAt {
			if err := s.forged(ctx, u.Agent, w, u.Rand); err != nil {
				return false, err
			}
		}
		if i == resignAt {
			if err := s.resign(ctx, u, w); err != nil {
				return false, err
			}
		}
		if err := s.data(ctx, r, u.Agent, w, u); err != nil {
			return false, err
		}
		if u.Rand.IntN(modifyEvery) == 0 {
			if u.Rand.IntN(badChangeEvery) == 0 {
				if err := s.badChange(ctx, u.Agent, w, u.Rand); err != nil {
					return false, err
				}
			}
			service, p := s.m.change(u.Rand, w)
			if err := s.modify(ctx, u.Agent, w, service, p, u); err != nil {
				return false, err
			}
			if err := s.data(ctx, r, u.Agent, w, u); err != nil {
				return false, err
			}
		}
		if !r.Sleep(ctx, interval) {
			return true, nil
		}
	}
	return false, nil
}

// resign signs w out, replays its session's id, and signs it in again, to
// the dashboard.
func (s *Scenario) resign(ctx context.Context, u *engine.User, w *user) error {
	if err := s.signout(ctx, u.Agent, u); err != nil {
		return err
	}
	if err := s.replay(ctx, u.Agent, w, u.Rand); err != nil {
		return err
	}
	return s.enter(ctx, u.Agent, w, u, "")
}

// FinalCheck comes back to users who read /data during the load, each at least
// revisitAfter after its last read, and reads their /data again: an answer kept
// longer than its freshness shows now, whatever the cache's lifetime. Those
// subscribed to the timed services come first. Then it reads /data of a sample
// of the others.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	rnd := r.Rand(3)
	returning := s.m.returning(revisitUsers)
	defer func() {
		for _, u := range returning {
			s.m.giveBack(u)
		}
	}()
	var last time.Time
	for _, u := range returning {
		if u.lastData.After(last) {
			last = u.lastData
		}
	}
	if len(returning) > 0 && !r.SleepUntil(ctx, last.Add(revisitAfter)) {
		return ctx.Err()
	}
	view := s.watch(a)
	read := func(u *user) error {
		a.ClearCookies()
		view.set(u)
		if err := s.signin(ctx, a, u, engine.NoScore); err != nil {
			return err
		}
		return s.data(ctx, r, a, u, engine.NoScore)
	}
	for _, u := range returning {
		if err := read(u); err != nil {
			return err
		}
	}
	if svc := s.services(); svc != nil {
		r.Logf("the external services so far: %+v", svc.Stats())
	}
	for range finalCheckUsers {
		u := s.m.borrow(rnd, "")
		if u == nil {
			return nil
		}
		err := read(u)
		s.m.giveBack(u)
		if err != nil {
			return err
		}
	}
	return nil
}

// modifyForm is the form of POST /modify that subscribes to service with p, or
// removes it when p is nil.
func modifyForm(service string, p data.Params) url.Values {
	form := url.Values{"service": {service}}
	for name, v := range map[string]string{"code": p.Code, "q": p.Q, "location": p.Location, "req": p.Req, "token": p.Token} {
		if v != "" {
			form.Set(name, v)
		}
	}
	return form
}

// checkRedirect checks a 303 to path.
func checkRedirect(res *engine.Response, path string) error {
	return res.Check(engine.Status(http.StatusSeeOther), engine.RedirectExactly(path))
}

// addressToward returns this machine's address on the route to target's
// host: where the app, on another machine of the contest's network, reaches
// the services. A UDP socket connected to the host asks the kernel for the
// route and sends nothing.
func addressToward(ctx context.Context, target *url.URL) (net.IP, error) {
	port := target.Port()
	if port == "" {
		port = "80"
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", net.JoinHostPort(target.Hostname(), port))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP, nil
}
