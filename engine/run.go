package engine

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tunecon/tunecon/engine/internal/proc"
	"github.com/tunecon/tunecon/engine/internal/wire"
)

// Defaults of a run's phases.
const (
	DefaultInitializeTimeout = 30 * time.Second
	DefaultPreCheckTimeout   = 60 * time.Second
	DefaultLoadDuration      = 60 * time.Second
	// MinLoadDuration and MaxLoadDuration bound the load phase's length
	// wherever people choose it: the CLI's --duration and the portal's
	// contest settings.
	MinLoadDuration          = time.Second
	MaxLoadDuration          = time.Hour
	DefaultFinalCheckTimeout = 30 * time.Second
	// DefaultRestartTimeout bounds WithRestart's restart of the target
	// between the load and the final check: its stop and its new start.
	DefaultRestartTimeout = 60 * time.Second
	// DefaultGrace is how long past its deadline the watchdog waits for a
	// phase to return before it ends the phase itself.
	DefaultGrace = 3 * time.Second
	// ErrorPause is how long a user rests after a session that ended in an
	// error.
	ErrorPause = 500 * time.Millisecond
	// MinSession is the least time a user session takes; a faster one is
	// padded so that a broken target cannot make users spin.
	MinSession = 10 * time.Millisecond
)

// Phase names, in order.
const (
	PhaseInitialize = "initialize"
	PhasePreCheck   = "pre-check"
	PhaseLoad       = "load"
	// PhaseRestart runs only with WithRestart.
	PhaseRestart    = "restart"
	PhaseFinalCheck = "final-check"
)

// Option configures a Bench.
type Option func(*Bench)

// WithInitializeTimeout sets the initialize phase's deadline.
func WithInitializeTimeout(d time.Duration) Option { return func(b *Bench) { b.initTimeout = d } }

// WithPreCheckTimeout sets the pre-check phase's deadline.
func WithPreCheckTimeout(d time.Duration) Option { return func(b *Bench) { b.preTimeout = d } }

// WithLoadDuration sets how long the load phase runs.
func WithLoadDuration(d time.Duration) Option { return func(b *Bench) { b.loadDuration = d } }

// WithFinalCheckTimeout sets the final check's deadline.
func WithFinalCheckTimeout(d time.Duration) Option { return func(b *Bench) { b.finalTimeout = d } }

// WithRestart has the run call restart after a load that raised no critical
// error, before the final check: restart stops the target and starts it
// again at the same address, so that the final check reads what the target
// kept outside its process, as a machine restarted after a contest shows.
// Its error fails the run; it should be a critical one (Criticalf) when the
// target did not come back. limit bounds it (0: DefaultRestartTimeout).
func WithRestart(restart func(context.Context) error, limit time.Duration) Option {
	return func(b *Bench) {
		b.restart, b.restartTimeout = restart, limit
		if limit <= 0 {
			b.restartTimeout = DefaultRestartTimeout
		}
	}
}

// WithGrace sets how long the watchdog waits past a phase's deadline.
func WithGrace(d time.Duration) Option { return func(b *Bench) { b.grace = d } }

// WithWorkload sets the number of users the load phase starts with,
// overriding the scenario's LoadPolicy.StartUsers.
func WithWorkload(n int) Option { return func(b *Bench) { b.workload = n } }

// WithMaxWorkload caps the users of the load phase at n when the scenario's
// LoadPolicy.MaxUsers allows more: a test's short load that must check an
// app without taking the machine from the runs beside it.
func WithMaxWorkload(n int) Option { return func(b *Bench) { b.maxWorkload = n } }

// WithLoadTurn has the run wait, after its pre-check, for turn to return
// before its load phase, and call the function turn returned once the load
// has ended: tests that run many benchmarks side by side let them wait out
// their checks together while only a few load at once. The wait counts in
// no phase. turn returns at once (with nil) when its context ends.
func WithLoadTurn(turn func(context.Context) (done func())) Option {
	return func(b *Bench) { b.loadTurn = turn }
}

// WithSeed sets the seed of every random choice of the run. Without it, a
// run takes its seed from the clock (SeedFromTime) and records it in the
// result, so that any run can be repeated.
func WithSeed(seed uint64) Option { return func(b *Bench) { b.seed, b.seedSet = seed, true } }

// SeedFromTime is the seed of a run that was given none: nine decimal digits
// taken from the time, short enough to type back.
func SeedFromTime(t time.Time) uint64 { return uint64(t.UnixNano()) % 1_000_000_000 }

// WithStaffLog sets where error details and controller decisions are written.
func WithStaffLog(w io.Writer) Option { return func(b *Bench) { b.staff = w } }

// WithClock replaces the clock the run reads and waits on (SteadyClock).
func WithClock(c Clock) Option { return func(b *Bench) { b.clock = c } }

// WithProgress calls f with the run's Progress every interval of the run's
// clock while it runs, and once more when it has ended (phase "done"). f runs
// on a goroutine of its own and must not block for long.
func WithProgress(every time.Duration, f func(Progress)) Option {
	return func(b *Bench) { b.progressEvery, b.progress = every, f }
}

// WithDialer makes the run's connections with d instead of the network (a
// test's in-memory target, under testing/synctest).
func WithDialer(d Dialer) Option { return func(b *Bench) { b.dial = d } }

// WithDialControl has f vet each connection the run makes to the network,
// after the target's name has been resolved and before it connects (as
// net.Dialer's Control): an error refuses the connection, and counts as the
// target's failure to connect. A contest's workers use it to refuse
// addresses no team should aim them at, whatever a name resolves to. A
// run on WithDialer's connections does not call it.
func WithDialControl(f func(network, address string, c syscall.RawConn) error) Option {
	return func(b *Bench) { b.control = f }
}

// Bench runs a scenario against one target.
type Bench struct {
	scenario       Scenario
	target         *url.URL
	initTimeout    time.Duration
	preTimeout     time.Duration
	loadDuration   time.Duration
	finalTimeout   time.Duration
	restart        func(context.Context) error
	restartTimeout time.Duration
	grace          time.Duration
	workload       int
	maxWorkload    int
	loadTurn       func(context.Context) func()
	seed           uint64
	seedSet        bool
	staff          io.Writer
	clock          Clock
	dial           Dialer
	control        func(network, address string, c syscall.RawConn) error

	progressEvery time.Duration
	progress      func(Progress)

	current atomic.Pointer[Run]
}

// New prepares a benchmark of target (the base URL of the app).
func New(s Scenario, target *url.URL, opts ...Option) *Bench {
	b := &Bench{
		scenario: s, target: target,
		initTimeout: DefaultInitializeTimeout, preTimeout: DefaultPreCheckTimeout,
		loadDuration: DefaultLoadDuration, finalTimeout: DefaultFinalCheckTimeout,
		grace: DefaultGrace, staff: io.Discard, clock: SteadyClock(),
	}
	for _, o := range opts {
		o(b)
	}
	if !b.seedSet {
		b.seed = SeedFromTime(b.clock.Now())
	}
	return b
}

// Run is one benchmark run as the scenario sees it.
type Run struct {
	// Target is the base URL of the app under test.
	Target *url.URL
	// Seed drives every random choice of the run.
	Seed uint64

	meta      Meta
	policy    LoadPolicy
	b         *Bench
	col       *collector
	led       *ledger
	st        *stats
	skew      skew
	shared    *wire.Transport
	agentCfg  AgentConfig
	phase     atomic.Value // string
	started   time.Time
	users     atomic.Int64
	staffMu   sync.Mutex
	stopLoad  atomic.Pointer[context.CancelFunc]
	loadEnded atomic.Bool
}

// User is one virtual user: an Agent with its own random stream.
type User struct {
	*Agent
	// ID is the smallest not in use when the user arrived: it is below the
	// most users the load ever had at once, no two users hold it at the same
	// time, and a user that arrives after another left may get its ID.
	ID   int
	Rand *rand.Rand
	run  *Run
}

// Scorer is what a scenario's actions score through: the *User playing them
// during the load, NoScore in the pre-check and the final check.
type Scorer interface {
	// Score adds one count of tag for res, the answer that earned it. An
	// answer the user's own cache gave without asking the app earns nothing
	// (the run counts it apart); a revalidation (a 304) is the app's answer
	// and earns the count.
	Score(tag string, res *Response)
}

var _ Scorer = (*User)(nil)

// NoScore scores nothing: the checks outside the load phase use it.
var NoScore Scorer = noScore{}

type noScore struct{}

func (noScore) Score(string, *Response) {}

// Score adds one count of a score tag for res (load phase only); see
// Scorer.
func (u *User) Score(tag string, res *Response) { u.run.Score(u.ID, tag, res) }

// Think waits a random time in [lo, hi], as a person reading a page would.
// It returns false if ctx ended first.
func (u *User) Think(ctx context.Context, lo, hi time.Duration) bool {
	d := lo
	if hi > lo {
		d += time.Duration(u.Rand.Int64N(int64(hi - lo)))
	}
	return u.run.Sleep(ctx, d)
}

// Sleep waits d on the run's clock or until ctx ends; it reports whether the
// whole wait passed.
func (r *Run) Sleep(ctx context.Context, d time.Duration) bool { return sleep(ctx, r.b.clock, d) }

// SleepUntil waits until t on the run's clock or until ctx ends; it reports
// whether t was reached.
func (r *Run) SleepUntil(ctx context.Context, t time.Time) bool { return r.Sleep(ctx, t.Sub(r.Now())) }

// NewAgent returns an agent for the target that reports to this run's
// statistics and uses the scenario's connection policy.
func (r *Run) NewAgent() *Agent {
	tr := r.shared
	if r.agentCfg.Pool == PoolPerUser {
		tr = r.shared.PerUser()
	}
	a := newAgent(r.Target, r.agentCfg, tr, r.st, r.meta.Assets, r.b.clock)
	if p := r.Phase(); p == PhaseInitialize || p == PhasePreCheck {
		a.skew = &r.skew
	}
	return a
}

// TargetClockBounds are the least and the most the target's clock is ahead
// of the run's, as learned so far from the Date headers of the answers to the
// agents made before the load (the pre-check's; the load's agents do not
// look, to keep requests cheap), both 0 when unknown: a check of a time
// the app stamped during a request compares it with the request's sending
// plus lo and its answer plus hi. A target on this machine (a loopback
// address) reads the wall clock the run's clock stepped away from, if it
// did (SteadyClock): the step since the run began is added to both.
func (r *Run) TargetClockBounds() (lo, hi time.Duration) {
	lo, hi = r.skew.clock().bounds()
	if c, ok := r.b.clock.(wallStepper); ok && isLoopback(r.Target) {
		step := c.WallStep()
		lo, hi = lo+step, hi+step
	}
	return lo, hi
}

// isLoopback reports whether u's host is a loopback address or localhost.
func isLoopback(u *url.URL) bool {
	h := u.Hostname()
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback()
	}
	return h == "localhost"
}

// Rand returns a random source for a stream of the run's seed; the same seed
// and stream always give the same sequence.
func (r *Run) Rand(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(r.Seed, stream)) }

// Now reads the run's clock.
func (r *Run) Now() time.Time { return r.b.clock.Now() }

// Phase is the name of the running phase.
func (r *Run) Phase() string { p, _ := r.phase.Load().(string); return p }

// LoadEnded reports whether the load phase is over (checks scheduled for
// later should then be dropped, not failed).
func (r *Run) LoadEnded() bool { return r.loadEnded.Load() }

// Score adds one count of a score tag for res, unless res came from the
// user's own cache (see Scorer); hint spreads concurrent adds (a user id).
func (r *Run) Score(hint int, tag string, res *Response) {
	n := int64(1)
	switch {
	case res == nil:
		r.Error(Internalf("score-answer", "score tag %q was added without the answer that earned it", tag))
		return
	case res.FromCache:
		n = 0
	}
	points, err := r.led.add(hint, tag, n)
	if err != nil {
		r.Error(err)
	} else if points > 0 {
		r.st.scored(points)
	}
}

// Error records a failure. A critical error during the load phase ends the
// load early: the run has failed anyway.
func (r *Run) Error(err error) {
	e, charged := r.col.add(r.Phase(), err)
	if !charged {
		return
	}
	if e.Class != ClassInternal {
		r.st.charged(e.Request)
	}
	if e.Class == ClassCritical && r.Phase() == PhaseLoad {
		if stop := r.stopLoad.Load(); stop != nil {
			(*stop)()
		}
	}
}

// Logf writes a line to the staff log.
func (r *Run) Logf(format string, args ...any) {
	r.staffMu.Lock()
	defer r.staffMu.Unlock()
	fmt.Fprintf(r.b.staff, "%s %-8s %s\n", r.Now().UTC().Format("15:04:05.000"), r.Phase(), fmt.Sprintf(format, args...))
}

// Progress is a live view of a running benchmark.
type Progress struct {
	Phase   string
	Elapsed time.Duration
	// LoadElapsed is the time since the load phase started (0 before it).
	LoadElapsed time.Duration
	Score       float64
	Requests    int64
	// Errors counts the errors charged so far; ErrorsByClass splits them (and
	// the uncharged internal and cut-off ones) by class.
	Errors        int64
	ErrorsByClass ErrorCounts
	Users         int
}

// Progress returns the running benchmark's state; it is safe to call from
// any goroutine, also before and after Run.
func (b *Bench) Progress() Progress {
	r := b.current.Load()
	if r == nil {
		return Progress{}
	}
	var loadElapsed time.Duration
	if start := r.st.start.Load(); start != 0 {
		loadElapsed = time.Duration(b.clock.Now().UnixNano() - start)
	}
	counts := r.col.snapshot()
	return Progress{
		Phase: r.Phase(), Elapsed: b.clock.Now().Sub(r.started), LoadElapsed: loadElapsed, Score: r.led.raw(),
		Requests: r.st.requests.Load(), Errors: counts.Charged(), ErrorsByClass: counts, Users: int(r.users.Load()),
	}
}

// Run carries out the four phases and returns the result. It returns within
// the phases' deadlines plus the grace period, whatever the target does.
func (b *Bench) Run(ctx context.Context) *Result {
	meta := b.scenario.Meta()
	policy := meta.Load.withDefaults()
	if b.workload > 0 {
		policy.StartUsers = b.workload
	}
	if b.maxWorkload > 0 && b.maxWorkload < policy.MaxUsers {
		policy.MaxUsers = b.maxWorkload
		policy.StartUsers = min(policy.StartUsers, b.maxWorkload)
	}
	agentCfg := meta.Agent.withDefaults()
	agentCfg.dial, agentCfg.control = b.dial, b.control
	r := &Run{
		Target: b.target, Seed: b.seed, meta: meta, policy: policy, b: b,
		col: newCollector(b.staff, b.clock.Now), led: newLedger(meta.Rules.Weights),
		st: newStats(b.clock.Now, int(b.loadDuration/time.Second)+1), shared: newTransport(agentCfg),
		agentCfg: agentCfg, started: b.clock.Now(),
	}
	r.st.setSlow(policy.SlowRequest, policy.SlowFor)
	r.phase.Store("")
	b.current.Store(r)
	defer r.shared.CloseIdleConnections()
	defer b.reportProgress(ctx)()

	res := &Result{
		Problem: meta.Problem, Target: b.target.String(), Seed: b.seed,
		EngineVersion: Version, ScenarioVersion: meta.Version, StartedAt: r.started.UTC(),
		Workload: Workload{Start: policy.StartUsers},
	}
	ok := r.phase1(ctx, res, PhaseInitialize, b.initTimeout, r.initialize) &&
		r.phase1(ctx, res, PhasePreCheck, b.preTimeout, func(ctx context.Context) error { return b.scenario.PreCheck(ctx, r) })
	if ok {
		var done func()
		if b.loadTurn != nil {
			done = b.loadTurn(ctx)
		}
		var mon *monitor
		r.phase1(ctx, res, PhaseLoad, b.loadDuration, func(ctx context.Context) error {
			mon = startMonitor(meta.Parts)
			return r.load(ctx, res, mon)
		})
		if done != nil {
			done()
		}
		if mon != nil {
			res.Benchmarker = mon.finish()
		}
		back := true // the target, after its restart if any
		if b.restart != nil && ctx.Err() == nil && r.col.snapshot().Critical == 0 {
			back = r.phase1(ctx, res, PhaseRestart, b.restartTimeout, b.restart)
			// The shared pool's kept-alive connections led to the process
			// that stopped (an agent's own pool retries a dead one).
			r.shared.CloseIdleConnections()
		}
		if back && ctx.Err() == nil && r.col.snapshot().Critical == 0 {
			r.phase1(ctx, res, PhaseFinalCheck, b.finalTimeout, func(ctx context.Context) error { return b.scenario.FinalCheck(ctx, r) })
		}
	}
	r.phase.Store("done")
	if c, ok := b.scenario.(Closer); ok {
		if err := c.Close(); err != nil {
			r.Logf("closing the scenario: %v", err)
		}
	}
	r.finish(res)
	return res
}

// reportProgress calls the WithProgress function until the returned stop is
// called, which reports once more and returns when the last call is done.
func (b *Bench) reportProgress(ctx context.Context) (stop func()) {
	if b.progress == nil || b.progressEvery <= 0 {
		return func() {}
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := b.clock.Now()
		for k := 1; sleep(pctx, b.clock, start.Add(time.Duration(k)*b.progressEvery).Sub(b.clock.Now())); k++ {
			b.progress(b.Progress())
		}
	}()
	return func() {
		cancel()
		<-done
		b.progress(b.Progress())
	}
}

// initialize is the scenario's Initialize, or by default PostInitialize of
// an empty form.
func (r *Run) initialize(ctx context.Context) error {
	if in, ok := r.b.scenario.(Initializer); ok {
		return in.Initialize(ctx, r)
	}
	return r.PostInitialize(ctx, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte{})
}

// PostInitialize posts body to /initialize, with header, and expects 200
// within the initialize phase's deadline (its requests may take that long).
// A scenario's Initialize calls it when the request needs a body.
func (r *Run) PostInitialize(ctx context.Context, header http.Header, body []byte) error {
	cfg := r.agentCfg
	cfg.FirstByteTimeout, cfg.RequestTimeout = r.b.initTimeout, r.b.initTimeout
	a := newAgent(r.Target, cfg, newTransport(cfg), nopRecorder{}, r.meta.Assets, r.b.clock)
	defer a.Close()
	res, err := a.Do(ctx, "POST /initialize", http.MethodPost, "/initialize", header, body)
	if err != nil {
		return err
	}
	return res.Check(Status(http.StatusOK))
}

// phase1 runs one phase under its deadline and the watchdog and records it
// in res; it reports whether the phase passed.
func (r *Run) phase1(ctx context.Context, res *Result, name string, limit time.Duration, f func(context.Context) error) bool {
	r.phase.Store(name)
	before := r.col.snapshot()
	start := r.b.clock.Now()
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.Logf("panic: %v\n%s", p, debug.Stack())
				done <- Internalf("panic", "the %s phase panicked: %v", name, p)
			}
		}()
		done <- f(pctx)
	}()
	watchdog := time.NewTimer(limit + r.b.grace)
	defer watchdog.Stop()
	var err error
	pr := PhaseResult{Name: name}
	select {
	case err = <-done:
	case <-watchdog.C:
		pr.Overran = true
		err = Internalf("watchdog", "the %s phase did not end within its %s deadline plus %s grace; the watchdog ended it", name, limit, r.b.grace)
	}
	if !pr.Overran && name != PhaseLoad && name != PhaseRestart && pctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		// Whatever the phase returned, requests cut off by its own deadline
		// mean the target was too slow for it. A restart's own error says
		// whose fault its deadline was: the app's, or a restart command's.
		pr.Overran = true
		err = &Error{Code: "deadline", Class: ClassTimeout, Request: name,
			Message: fmt.Sprintf("the %s phase did not finish within its %s deadline", name, limit)}
	}
	if err != nil {
		r.Error(err)
	}
	pr.Seconds = r.b.clock.Now().Sub(start).Seconds()
	after := r.col.snapshot()
	passed := after.Charged() == before.Charged() && after.Internal == before.Internal && err == nil
	if name == PhaseLoad {
		passed = err == nil || AsError(err).Class != ClassInternal
	}
	if !passed {
		if err != nil {
			pr.Error = AsError(err).Error()
		} else {
			pr.Error = fmt.Sprintf("%d error(s)", after.Charged()-before.Charged()+after.Internal-before.Internal)
		}
	}
	pr.Passed = passed
	res.Phases = append(res.Phases, pr)
	return passed
}

// load runs the users and the load controller until the phase ends.
func (r *Run) load(ctx context.Context, res *Result, mon *monitor) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	r.stopLoad.Store(&stop)
	loadStart := r.b.clock.Now()
	r.st.start.Store(loadStart.UnixNano())
	r.st.ctlSince.Store(loadStart.UnixNano())
	r.led.open.Store(true)

	pool := &userPool{r: r, ctx: ctx}
	pool.add(r.policy.StartUsers, 0)
	r.Logf("load: %d users", pool.size())

	ctl := newController(r.policy, min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
	cpu0 := proc.CPU()
	var last window
	loadEnd := loadStart.Add(r.b.loadDuration)
	for k := 1; ; k++ {
		// The controller looks at the target every Interval of the run's
		// clock, counted from the start of the load so that it never drifts,
		// and not at the load's very end, when no decision matters.
		at := loadStart.Add(time.Duration(k) * r.policy.Interval)
		if !at.Before(loadEnd) {
			<-ctx.Done()
			break
		}
		if !r.SleepUntil(ctx, at) {
			break
		}
		c := r.col.snapshot()
		r.st.countStuck(at)
		cur := r.st.controlWindow()
		cur.Errors, cur.Internal = c.Application+c.Critical, c.Internal
		cur.Ticks, cur.LateTicks = mon.ticks.Load(), mon.late.Load()
		if cpu := proc.CPU(); cpu > 0 {
			cur.CPU, cur.Span = cpu-cpu0, at.Sub(loadStart)
		}
		w := cur.minus(last)
		last = cur
		users := pool.size()
		ctl.files.open, ctl.files.limit = proc.OpenFiles()
		delta, kind, reason, cause := ctl.decide(w, users, pool.settling())
		if kind == wait {
			continue
		}
		now := r.b.clock.Now()
		if delta != 0 {
			// From now on only requests that start under the new number
			// of users are evidence.
			r.st.ctlSince.Store(now.UnixNano())
		}
		ch := LoadChange{AtSeconds: now.Sub(loadStart).Seconds(), From: users, To: users + delta, Kind: kind, Cause: cause, Reason: reason}
		if n := len(res.Load); n > 0 && kind == Hold && res.Load[n-1].Kind == Hold && res.Load[n-1].Reason == reason {
			prev := &res.Load[n-1]
			prev.Times, prev.LastAtSeconds = max(prev.Times, 1)+1, ch.AtSeconds
			continue
		}
		res.Load = append(res.Load, ch)
		r.Logf("load controller at %.0fs: users %d -> %d; %s", ch.AtSeconds, ch.From, ch.To, cause)
		if delta > 0 {
			// Users arrive one after another, MaxArrivalRate a second.
			spread := time.Duration(float64(delta) / MaxArrivalRate * float64(time.Second))
			pool.add(delta, spread)
		} else {
			pool.retire(-delta)
		}
	}
	r.led.open.Store(false)
	r.loadEnded.Store(true)
	res.Workload.Final, res.Workload.Peak = pool.size(), pool.peak
	res.Workload.MaxReached = pool.peak >= r.policy.MaxUsers
	// Users end with the context; the phase's watchdog covers any that do not.
	pool.wg.Wait()
	return nil
}

// userPool is the load phase's users: those playing, the newest last, and
// those told to leave after their current session. A user's ID is the
// smallest not in use when it arrives: IDs stay below the most users there
// ever were at once, and no two users hold one ID at the same time (a
// leaving user's ID is free once its last session has ended).
type userPool struct {
	r      *Run
	ctx    context.Context
	wg     sync.WaitGroup
	active []*atomic.Bool // each playing user's "leave after this session" flag
	live   atomic.Int64   // users in a session, those told to leave included
	// arrived is when the users last added have all arrived; settleBy the
	// latest the controller waits for the users last removed to leave.
	arrived, settleBy time.Time
	peak              int
	born              uint64 // users started so far: each has a random stream of its own

	mu   sync.Mutex
	free []int // IDs given back by users that left
	next int   // the smallest ID never used
}

func (p *userPool) size() int { return len(p.active) }

// leaving is how many users told to leave are still in their last session.
func (p *userPool) leaving() int { return max(0, int(p.live.Load())-len(p.active)) }

// settling reports whether the users the controller counts are not yet the
// ones playing: those last added still arriving, or those last removed
// still in their session (maxSettle intervals at most). Until they are,
// the app's answers show the load before the change, not its effect.
func (p *userPool) settling() bool {
	now := p.r.b.clock.Now()
	return now.Before(p.arrived) || (p.leaving() > 0 && now.Before(p.settleBy))
}

// add starts n users; with spread > 0 their first sessions start one after
// another across spread, as visitors arrive, rather than all at once: a
// thousand new users opening their connections in the same instant would
// overflow the target's listen queue, a fault of the benchmarker's, not of
// the app.
func (p *userPool) add(n int, spread time.Duration) {
	p.arrived = p.r.b.clock.Now().Add(spread)
	for i := range n {
		leave := new(atomic.Bool)
		p.active = append(p.active, leave)
		p.wg.Add(1)
		p.live.Add(1)
		go p.play(p.takeID(), p.born, spread*time.Duration(i)/time.Duration(n), leave)
		p.born++
	}
	p.changed()
}

func (p *userPool) takeID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		p.next++
		return p.next - 1
	}
	i := 0
	for j, id := range p.free {
		if id < p.free[i] {
			i = j
		}
	}
	id := p.free[i]
	p.free = slices.Delete(p.free, i, i+1)
	return id
}

func (p *userPool) play(id int, stream uint64, delay time.Duration, leave *atomic.Bool) {
	defer p.wg.Done()
	defer p.live.Add(-1)
	p.r.userLoop(p.ctx, id, stream, delay, leave)
	p.mu.Lock()
	p.free = append(p.free, id)
	p.mu.Unlock()
}

// retire tells the n newest users to leave when their current session ends.
func (p *userPool) retire(n int) {
	p.settleBy = p.r.b.clock.Now().Add(maxSettle * p.r.policy.Interval)
	n = min(n, len(p.active))
	for _, leave := range p.active[len(p.active)-n:] {
		leave.Store(true)
	}
	p.active = p.active[:len(p.active)-n]
	p.changed()
}

func (p *userPool) changed() {
	p.peak = max(p.peak, len(p.active))
	p.r.users.Store(int64(len(p.active)))
	p.r.st.setUsers(len(p.active))
}

// userLoop plays one user's sessions until the load ends or the user is told
// to leave; a session is never cut short for leaving.
func (r *Run) userLoop(ctx context.Context, id int, stream uint64, delay time.Duration, leave *atomic.Bool) {
	if !r.Sleep(ctx, delay) || leave.Load() {
		return
	}
	u := &User{Agent: r.NewAgent(), ID: id, Rand: r.Rand(1<<32 + stream), run: r}
	defer u.Close()
	for ctx.Err() == nil && !leave.Load() {
		start := r.Now()
		err := r.session(ctx, u)
		if err != nil {
			r.Error(err)
			r.Sleep(ctx, ErrorPause)
		} else if took := r.Now().Sub(start); took < MinSession {
			r.Sleep(ctx, MinSession-took)
		}
	}
}

func (r *Run) session(ctx context.Context, u *User) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.Logf("user %d panicked: %v\n%s", u.ID, p, debug.Stack())
			err = Internalf("panic", "a user session panicked: %v", p)
		}
	}()
	return r.b.scenario.User(ctx, r, u)
}

// finish judges the run and fills in the result.
func (r *Run) finish(res *Result) {
	counts := r.col.snapshot()
	t := Tally{Counts: r.led.counts(), Raw: r.led.raw(), Errors: counts, Requests: r.st.requests.Load(),
		ErrorsByRequest: r.col.byRequestCounts()}
	res.RawScore, res.Breakdown, res.Errors, res.Requests = t.Raw, t.Counts, counts, t.Requests
	res.AssetRequests, res.CachedAnswers = r.st.assets.Load(), r.led.cached.Load()
	res.TargetClock = r.skew.clock()
	res.ErrorsByCode = r.col.byCodeCounts()
	restarted := false
	for _, p := range res.Phases {
		name := p.Name
		if name == PhaseFinalCheck && restarted {
			name += " (after the app was stopped and started again)"
		}
		restarted = restarted || p.Name == PhaseRestart && p.Passed
		if !p.Passed {
			res.FailReasons = append(res.FailReasons, name+" failed: "+p.Error)
		}
	}
	if counts.Critical > 0 {
		// Correctness violations fail a run whatever the scenario's rules.
		res.FailReasons = append(res.FailReasons, fmt.Sprintf("%d critical error(s): correctness violations fail the run", counts.Critical))
	}
	loadRan := slices.ContainsFunc(res.Phases, func(p PhaseResult) bool { return p.Name == PhaseLoad })
	if loadRan {
		var why []string
		res.Deduction, res.Score, why = r.meta.Rules.judge(t)
		res.FailReasons = append(res.FailReasons, why...)
	}
	if len(res.Phases) < 4 && len(res.FailReasons) == 0 {
		res.FailReasons = append(res.FailReasons, "the run was stopped before it completed")
	}
	res.Passed = len(res.FailReasons) == 0
	if !res.Passed {
		res.Score = 0
	}
	res.Internal = counts.Internal > 0
	res.Messages = r.col.contestantMessages()
	res.Endpoints = r.st.endpointResults()
	res.Points, res.Lost = r.meta.Rules.explain(t)
	res.LimitedBy = limitedBy(res.Load)
	res.Timeline = r.st.timelineResults(int(r.b.loadDuration / time.Second))
	res.DurationSeconds = r.b.clock.Now().Sub(r.started).Seconds()
}
