package engine

import (
	"fmt"
	"math"
	"time"
)

// Defaults of the load controller.
const (
	// DefaultWorkload is the number of users the load phase starts with.
	DefaultWorkload = 2
	// DefaultControlInterval is how often the controller looks at the target's
	// health.
	DefaultControlInterval = time.Second
	// DefaultEvidence is how many intervals the controller watches after a
	// change before it grows the users again or removes users for slowness.
	DefaultEvidence = 3
	// DefaultGrowth is the largest step up, as a fraction of the current users.
	DefaultGrowth = 0.25
	// DefaultBackoff is the fraction of the users removed when the target
	// falls behind. A tenth keeps the users near what the target serves: a
	// fifth at a time, then seconds of settling, made a reference app's score
	// follow when its slow bursts came (bank's varied 5 to 9% between runs).
	DefaultBackoff = 0.1
	// MaxArrivalRate is how many users a second arrive when the controller
	// adds them: thousands of new users opening their connections at once
	// would overflow the target's listen queue, a fault of the benchmarker's.
	MaxArrivalRate = 500
	// DefaultMaxUsers caps the users of one run.
	DefaultMaxUsers = 2000
	// DefaultSlowRequest is the latency above which a request counts as slow.
	DefaultSlowRequest = time.Second
	// DefaultMaxSlowRate is the fraction of slow requests a healthy interval
	// may have.
	DefaultMaxSlowRate = 0.05
	// DefaultMaxTimeoutRate is the fraction of timeouts a healthy interval may
	// have.
	DefaultMaxTimeoutRate = 0.0
	// maxLateShare is the share of the benchmarker's timer ticks that may
	// come SaturatedSchedLag late or more (its p99 limit): past it over the
	// evidence and in the newest interval, users are removed.
	maxLateShare = 0.01
	// maxSettle is how many intervals at most the controller waits, after
	// it removed users, for them to finish their sessions and leave.
	maxSettle = 5
	// arrivingLateShare is the share of late ticks, in one interval, that
	// stops users still arriving.
	arrivingLateShare = 5 * maxLateShare
	// filesShare is the share of its open-files limit the benchmarker may
	// expect to use when it adds users, at the files per user it uses now:
	// the rest is its margin for the connections new users open at once.
	filesShare = 0.8
	// minStepShare is the smallest step up, as a share of Growth: the step
	// after the target fell behind, or after the benchmarker's timers came
	// late.
	minStepShare = 1.0 / 16
	// kneeStepShare is the step up, as a share of Growth, near the target's
	// capacity (slow requests near the limit, or a mean response past the
	// knee) before it ever fell behind. The smallest step there made a run's
	// score hang on the one noisy window that first crossed the knee: memo's
	// reference climbed from 31 users at a sixteenth a step in one run, from
	// 52 in another, and scored 15% less.
	kneeStepShare = 1.0 / 8
	// kneeShare is the share of SlowRequest the mean response time may
	// reach before the controller takes the target to be near its capacity
	// and grows by its knee step: past its capacity an app's responses
	// slow down steeply as requests queue.
	kneeShare = 0.25
	// kneeRise is how many times its fastest mean response the target's mean
	// may take, once over kneeFloor, before the controller takes it to be
	// near its capacity: responses that slow down that much are queueing.
	kneeRise  = 4
	kneeFloor = 10 * time.Millisecond
	// taperFrom is how many times its fastest mean response the target's
	// mean may take before the step up tapers: from the whole step there
	// down to the smallest at kneeRise. A cliff at kneeRise alone made the
	// path of a run hang on noise: a mean just under it doubled the users
	// past the target's capacity, one just over it added a sixteenth.
	taperFrom = 1.5
	// fastMean is the mean response under which a policy's FastGrowth
	// applies: a tenth of a millisecond to a few for a tuned app's API,
	// tens of milliseconds for the reference apps' lightest pages.
	fastMean = 5 * time.Millisecond
)

// LoadPolicy is how the load controller sets the number of users to what the
// target can serve. Every Interval it looks at the requests that started since
// its last change. Users are removed (a Backoff share of them, never below
// StartUsers) as soon as those requests had timeouts beyond MaxTimeoutRate, or,
// after Evidence intervals, more than MaxSlowRate of them were slower than
// SlowRequest; a request still in flight past SlowRequest counts as slow at the
// next look, not when it ends. When that happens right after a step up, before
// any decision held, the users go back to where the step started if that
// removes more: the step took the target past what it serves, and a Backoff
// share at a time would keep it there for seconds. Users are added after
// Evidence healthy intervals in a row (requests completed, no errors, under
// half the slow limit, fewer than MaxUsers users, the benchmarker under
// SaturatedCPUShare of its cores): the step starts at Growth of the users,
// falls to an eighth of that whenever the target comes near its capacity (near
// the slow limit, or a mean response past the knee, below), to a sixteenth when
// it falls behind, and doubles after each step taken, up to Growth again, until
// the target first falls behind (slow requests or timeouts): from then on every
// step is the smallest, since the target has shown where its capacity lies, and
// a step that doubled back to Growth only took it past again. A removed user
// finishes the session it is in, and until those removed have left (maxSettle
// intervals at most) only timeouts are acted on: their requests are the past
// load's, not the removal's effect. Users added arrive one after another,
// MaxArrivalRate a second, and until they all have, only timeouts are acted on
// too. Zero fields take their Default constants.
//
// Near capacity means, by default, a mean response over a quarter of
// SlowRequest, or over four times the fastest mean seen (once past 10 ms):
// responses that slow down as users are added are queueing. Between one and
// a half and four times the fastest, the step tapers towards the knee's, in
// proportion to the rise. Knee, when set, replaces both: only a mean response
// over Knee is near capacity. It is for an app whose responses wait on other
// services, whose mean rises and falls with what it has cached, not with its
// load.
//
// FastGrowth, when over Growth, is the step while the mean response stays
// under 5 ms and the step has not been cut: an app that fast has room for
// many times its users, and doubling them every few seconds from a few
// would spend half a run climbing to them.
//
// SlowFor gives endpoints (by name, as requests name them) a slow threshold
// of their own in place of SlowRequest: a report whose answer takes seconds
// by nature, asked by one user now and then, says little about the load, but
// at a few users it would be a large share of the slow requests.
type LoadPolicy struct {
	StartUsers     int
	Interval       time.Duration
	Evidence       int
	Growth         float64
	Backoff        float64
	MaxUsers       int
	SlowRequest    time.Duration
	MaxSlowRate    float64
	MaxTimeoutRate float64
	Knee           time.Duration
	FastGrowth     float64
	SlowFor        map[string]time.Duration
}

func (p LoadPolicy) withDefaults() LoadPolicy {
	if p.StartUsers <= 0 {
		p.StartUsers = DefaultWorkload
	}
	if p.Interval <= 0 {
		p.Interval = DefaultControlInterval
	}
	if p.Evidence <= 0 {
		p.Evidence = DefaultEvidence
	}
	if p.Growth <= 0 {
		p.Growth = DefaultGrowth
	}
	if p.Backoff <= 0 || p.Backoff >= 1 {
		p.Backoff = DefaultBackoff
	}
	if p.MaxUsers <= 0 {
		p.MaxUsers = DefaultMaxUsers
	}
	if p.SlowRequest <= 0 {
		p.SlowRequest = DefaultSlowRequest
	}
	if p.MaxSlowRate <= 0 {
		p.MaxSlowRate = DefaultMaxSlowRate
	}
	if p.MaxTimeoutRate < 0 {
		p.MaxTimeoutRate = DefaultMaxTimeoutRate
	}
	return p
}

// window is what the controller saw during one interval: requests that
// started after its last change and ended in the interval, how many of them
// timed out or were slow, the errors charged in the interval, and the
// benchmarker's own errors (Internal: such as running out of open files).
type window struct {
	Requests, Timeouts, Errors, Slow, Internal int64
	// Ticks and LateTicks are the benchmarker's 10 ms timer ticks and
	// those SaturatedSchedLag late or more: its goroutines waiting for a
	// CPU, so that the latencies it measures are its own.
	Ticks, LateTicks int64
	// Stuck is how many of Slow were counted while still in flight, past
	// their threshold.
	Stuck int64
	// Answered and Latency are the requests answered and their total time.
	Answered int64
	Latency  time.Duration
	// CPU is the CPU time the benchmarker's process used over Span of the
	// run's clock; a zero Span is unknown.
	CPU, Span time.Duration
}

func (w window) plus(o window) window {
	return window{w.Requests + o.Requests, w.Timeouts + o.Timeouts, w.Errors + o.Errors, w.Slow + o.Slow,
		w.Internal + o.Internal, w.Ticks + o.Ticks, w.LateTicks + o.LateTicks, w.Stuck + o.Stuck, w.Answered + o.Answered,
		w.Latency + o.Latency, w.CPU + o.CPU, w.Span + o.Span}
}

func (w window) minus(o window) window {
	return window{w.Requests - o.Requests, w.Timeouts - o.Timeouts, w.Errors - o.Errors, w.Slow - o.Slow,
		w.Internal - o.Internal, w.Ticks - o.Ticks, w.LateTicks - o.LateTicks, w.Stuck - o.Stuck, w.Answered - o.Answered,
		w.Latency - o.Latency, w.CPU - o.CPU, w.Span - o.Span}
}

// cpuShare is the share of cores the benchmarker used over the window, -1
// when unknown.
func (w window) cpuShare(cores int) float64 {
	if w.Span <= 0 || cores <= 0 {
		return -1
	}
	return float64(w.CPU) / (float64(w.Span) * float64(cores))
}

// lateShare is the share of the benchmarker's timer ticks that came late.
func (w window) lateShare() float64 {
	if w.Ticks == 0 {
		return 0
	}
	return float64(w.LateTicks) / float64(w.Ticks)
}

// stuckWhy says how many of the slow requests were still unanswered.
func (w window) stuckWhy() string {
	if w.Stuck == 0 {
		return ""
	}
	return fmt.Sprintf(", %d of them still unanswered", w.Stuck)
}

// slowPct is the percentage of the requests that were slow.
func (w window) slowPct() float64 { return 100 * float64(w.Slow) / float64(max(w.Requests, 1)) }

// mean is the mean response time of the answered requests.
func (w window) mean() time.Duration {
	if w.Answered == 0 {
		return 0
	}
	return w.Latency / time.Duration(w.Answered)
}

// The kinds of decision the controller makes.
const (
	Grow   = "grow"
	Shrink = "shrink"
	Hold   = "hold"
	// wait is a decision not yet due: too few intervals since the last change.
	wait = "wait"
)

// LoadChange is one decision of the controller, kept in the result: each
// change of the users, and each hold whose reason differs from the decision
// before it (a hold repeated for the same reason is counted, not repeated).
type LoadChange struct {
	AtSeconds float64 `json:"at_s"`
	From      int     `json:"from"`
	To        int     `json:"to"`
	Kind      string  `json:"kind"`
	Cause     string  `json:"cause"`
	// Times is how many decisions in a row this one stands for (holds only),
	// the last at LastAtSeconds.
	Times         int     `json:"times,omitempty"`
	LastAtSeconds float64 `json:"last_at_s,omitempty"`
	// Reason is the decision's cause without its figures: for a shrink
	// "timeouts" or "slow", for a hold "idle", "errors", "near", "max" or
	// "min" (see LimitReason); for growth empty, or "benchmarker" when its
	// CPU or open files cut the step short.
	Reason string `json:"reason,omitempty"`
}

// LimitReason says in words what a Reason of a hold or shrink means.
func LimitReason(reason string) string {
	switch reason {
	case "slow":
		return "slow requests over the limit"
	case "near":
		return "slow requests near the limit"
	case "idle":
		return "no request completed"
	case "max":
		return "the scenario's maximum of users"
	case "min":
		return "falling behind at the minimum of users"
	case "benchmarker":
		return "the benchmarker's own limits (its CPU or its open files)"
	case "starved":
		return "the benchmarker starved of CPU by other work (processes, the kernel, the machine's host)"
	}
	return reason // "timeouts", "errors"
}

// kneeStep is the step up near the knee: kneeStepShare of Growth, or the
// smallest once the target fell behind.
func (c *controller) kneeStep() float64 {
	if c.fellBehind {
		return c.p.Growth * minStepShare
	}
	return c.p.Growth * kneeStepShare
}

// controller holds what the load controller remembers between decisions.
type controller struct {
	p       LoadPolicy
	cores   int           // the cores the benchmarker may use; 0: unknown
	step    float64       // the next step up, as a fraction of the users
	recent  []window      // the intervals since the last change, the newest last, at most Evidence
	fastest time.Duration // the lowest mean response over a whole evidence so far
	// grownFrom is the users before the latest step up, until a decision
	// after it holds, grows or shrinks; 0: none pending.
	grownFrom int
	// fellBehind is set once the target fell behind (slow requests or
	// timeouts): every step up after it is the smallest.
	fellBehind bool
	files      fileUse // the benchmarker's open files at the latest decision
}

// fileUse is how many files the benchmarker has open and may open; a zero
// limit is unknown.
type fileUse struct{ open, limit int }

// fileRoom is how many users may be added before the benchmarker's open
// files, at as many per user as now, pass filesShare of its limit; -1 when
// that is unknown. Each user holds its connections (and a page's assets open
// more at once): past the limit, connections fail in the benchmarker.
func (c *controller) fileRoom(users int) int {
	f := c.files
	if f.limit == 0 || f.open == 0 || users == 0 {
		return -1
	}
	return max(0, int(float64(users)*filesShare*float64(f.limit)/float64(f.open))-users)
}

// cpuRoom is how many users may be added before the benchmarker, at as much
// CPU per user as over ev, uses SaturatedCPUShare of its cores; -1 when its
// CPU use is unknown. A step that doubled thousands of users took it past
// its core while they were still arriving.
func (c *controller) cpuRoom(ev window, users int) int {
	share := ev.cpuShare(c.cores)
	if share <= 0 || users == 0 {
		return -1
	}
	return max(0, int(float64(users)*SaturatedCPUShare/share)-users)
}

func newController(p LoadPolicy, cores int) *controller {
	return &controller{p: p, cores: cores, step: p.Growth}
}

// starved reports whether w's late ticks are the benchmarker's share of the
// machine taken by others rather than its own work: it used under
// SaturatedCPUShare of its cores, so its own goroutines did not fill them.
// The others are the app on a shared machine, the kernel's network work for
// both, or a virtual machine's host stealing its CPUs. The users are then
// held, not removed: removing them would not bring its timers back on time,
// and would cut the score for the machine's sake. A few late ticks at half
// a core used to cut a tuned app's users by a fifth at a time.
func (c *controller) starved(w window) bool {
	share := w.cpuShare(c.cores)
	return share >= 0 && share < SaturatedCPUShare
}

// decide takes one interval's window, the current users and whether they
// are settling (users added still arriving, or users removed still in their
// last session), and returns how many users to add (negative: remove), the
// kind of decision, a short reason and the cause in words. While they
// settle, only timeouts count: the rest waits for them.
func (c *controller) decide(w window, users int, settling bool) (delta int, kind, reason, cause string) {
	p := c.p
	if w.Internal > 0 {
		// The benchmarker itself cannot serve more users (out of open
		// files, say): fewer users, at once, whatever the app does.
		return c.shrink(users, "benchmarker", fmt.Sprintf("%d error(s) of the benchmarker's own, such as running out of open files", w.Internal))
	}
	if settling {
		switch {
		case w.Timeouts > 0 && float64(w.Timeouts) > p.MaxTimeoutRate*float64(w.Requests):
			return c.shrink(users, "timeouts", fmt.Sprintf("%d timeout(s) in %d requests (limit %.1f%%)", w.Timeouts, w.Requests, 100*p.MaxTimeoutRate))
		case w.lateShare() > arrivingLateShare && !c.starved(w):
			// The arrivals clearly outran the benchmarker (new users
			// connecting cost a burst of CPU, so a little lateness is
			// expected): the newest, mostly not yet arrived, never come.
			return c.shrink(users, "benchmarker", lateWhy(w))
		}
		return 0, wait, "", ""
	}
	c.recent = append(c.recent, w)
	if len(c.recent) > p.Evidence {
		c.recent = c.recent[1:]
	}
	var ev window
	for _, x := range c.recent {
		ev = ev.plus(x)
	}
	seen := len(c.recent)
	slowLimit := p.MaxSlowRate * float64(ev.Requests)
	switch {
	case ev.Timeouts > 0 && float64(ev.Timeouts) > p.MaxTimeoutRate*float64(ev.Requests):
		return c.shrink(users, "timeouts", fmt.Sprintf("%d timeout(s) in %d requests (limit %.1f%%)", ev.Timeouts, ev.Requests, 100*p.MaxTimeoutRate))
	case seen < p.Evidence:
		return 0, wait, "", ""
	case ev.Requests == 0:
		return c.hold("idle", fmt.Sprintf("no request completed in the last %s", time.Duration(seen)*p.Interval))
	case float64(ev.Slow) > slowLimit && float64(w.Slow) > p.MaxSlowRate*float64(w.Requests):
		// Over the limit, and the newest interval too: not already recovering.
		return c.shrink(users, "slow", fmt.Sprintf("%.1f%% of %d requests slower than %s (limit %.1f%%)%s", ev.slowPct(), ev.Requests, p.SlowRequest, 100*p.MaxSlowRate, ev.stuckWhy()))
	case ev.lateShare() > maxLateShare && w.lateShare() > maxLateShare && c.starved(ev):
		return c.hold("starved", fmt.Sprintf("%s, while it used %.0f%% of its %d core(s), under %.0f%%: other work took them",
			lateWhy(ev), 100*ev.cpuShare(c.cores), c.cores, 100*SaturatedCPUShare))
	case ev.lateShare() > maxLateShare && w.lateShare() > maxLateShare:
		// The benchmarker's goroutines wait for a CPU: it cannot drive
		// these users, and the latencies it measures are its own.
		return c.shrink(users, "benchmarker", lateWhy(ev))
	case ev.Errors > 0:
		return c.hold("errors", fmt.Sprintf("%d error(s) in the last %s", ev.Errors, time.Duration(seen)*p.Interval))
	case float64(ev.Slow) > slowLimit/2:
		c.step = min(c.step, c.kneeStep())
		return c.hold("near", fmt.Sprintf("%.1f%% of %d requests slower than %s, near the limit of %.1f%%%s", ev.slowPct(), ev.Requests, p.SlowRequest, 100*p.MaxSlowRate, ev.stuckWhy()))
	case users >= p.MaxUsers:
		return c.hold("max", fmt.Sprintf("at the maximum of %d users", p.MaxUsers))
	}
	return c.grow(ev, seen, users)
}

// grow follows an evidence of seen intervals, ev, that gave no reason to
// shrink or hold: unless one of its intervals alone was unhealthy, it adds
// the step's share of the users (the smallest step when the target seems
// near its capacity), within MaxUsers and the benchmarker's open files and
// CPU. A benchmarker that used SaturatedCPUShare of its cores over ev holds
// them.
func (c *controller) grow(ev window, seen, users int) (delta int, kind, reason, cause string) {
	p := c.p
	// Each interval of the evidence must be healthy, not just their sum.
	for _, x := range c.recent {
		if x.Requests == 0 || x.Errors > 0 || float64(x.Slow) > p.MaxSlowRate*float64(x.Requests)/2 || x.lateShare() > maxLateShare/2 {
			return 0, wait, "", ""
		}
	}
	if share := ev.cpuShare(c.cores); share >= SaturatedCPUShare {
		// Its own core is nearly full: more users would wait for it, and the
		// latencies it measures, not the target's answers, would grow.
		return c.hold("benchmarker", fmt.Sprintf("the benchmarker used %.0f%% of its %d core(s) over the last %s (limit %.0f%%)",
			100*share, c.cores, time.Duration(seen)*p.Interval, 100*SaturatedCPUShare))
	}
	mean := ev.mean()
	why := fmt.Sprintf("healthy for %s: %d requests, mean response %s, %.1f%% slower than %s, no timeouts or errors",
		time.Duration(seen)*p.Interval, ev.Requests, roundLatency(mean), ev.slowPct(), p.SlowRequest)
	if ev.Answered > 0 && (c.fastest == 0 || mean < c.fastest) {
		c.fastest = mean
	}
	switch {
	case p.Knee > 0 && mean > p.Knee:
		c.step = c.kneeStep()
		why += fmt.Sprintf("; near capacity (mean over %s): a step of %.1f%%", p.Knee, 100*c.step)
	case p.Knee == 0 && (float64(mean) > kneeShare*float64(p.SlowRequest) || (mean > kneeFloor && mean > kneeRise*c.fastest)):
		c.step = c.kneeStep()
		why += fmt.Sprintf("; near capacity (fastest mean %s): a step of %.1f%%", roundLatency(c.fastest), 100*c.step)
	case ev.lateShare() > maxLateShare/4:
		c.step = p.Growth * minStepShare
		why += "; the benchmarker's timers came late now and then: smallest step"
	case c.fellBehind:
		why += "; the target fell behind earlier in the run: smallest step from then on"
	case p.Knee == 0 && mean > kneeFloor && c.fastest > 0:
		rise := float64(mean) / float64(c.fastest)
		if taper := p.Growth * max(kneeStepShare, (kneeRise-rise)/(kneeRise-taperFrom)); taper < c.step {
			c.step = taper
			why += fmt.Sprintf("; the mean %.1f times the fastest (%s): a step of %.0f%%", rise, roundLatency(c.fastest), 100*taper)
		}
	}
	step := c.step
	if p.FastGrowth > p.Growth && step >= p.Growth && ev.Answered > 0 && mean < fastMean {
		step = p.FastGrowth
		why += fmt.Sprintf("; the mean under %s: a step of %.0f%%", fastMean, 100*step)
	}
	add := min(max(1, int(math.Ceil(step*float64(users)))), p.MaxUsers-users)
	// reason stays empty unless the benchmarker's limits cut the step short.
	if room := c.cpuRoom(ev, users); room >= 0 && add > room {
		add, reason = max(1, room), "benchmarker"
		why += fmt.Sprintf("; as many as the benchmarker's CPU allows (%.0f%% of its %d core(s) in use)", 100*ev.cpuShare(c.cores), c.cores)
	}
	if room := c.fileRoom(users); room >= 0 && add > room {
		if room == 0 {
			return c.hold("benchmarker", fmt.Sprintf("the benchmarker has %d of its %d open files in use; it adds users only while they would stay under %.0f%%",
				c.files.open, c.files.limit, 100*filesShare))
		}
		add, reason = room, "benchmarker"
		why += fmt.Sprintf("; as many as the benchmarker's open files allow (%d of %d in use)", c.files.open, c.files.limit)
	}
	if !c.fellBehind {
		c.step = min(2*c.step, p.Growth)
	}
	c.recent = c.recent[:0]
	c.grownFrom = users
	return add, Grow, reason, why
}

// shrink removes a Backoff share of the users, down to StartUsers, and starts
// the next growth from the smallest step: after the target fell behind, every
// later one.
func (c *controller) shrink(users int, reason, why string) (int, string, string, string) {
	c.step = c.p.Growth * minStepShare
	if reason == "slow" || reason == "timeouts" {
		c.fellBehind = true // not for the benchmarker's own limits
	}
	remove := max(1, int(math.Ceil(c.p.Backoff*float64(users))))
	if back := users - c.grownFrom; c.grownFrom > 0 && back > remove && (reason == "slow" || reason == "timeouts") {
		// The step up itself took the target past what it serves: the users
		// before it are the last the target was seen to serve.
		remove = back
		why += fmt.Sprintf("; back to the %d users before the last step up", c.grownFrom)
	}
	c.grownFrom = 0
	remove = min(remove, users-c.p.StartUsers)
	if remove <= 0 {
		return c.hold("min", fmt.Sprintf("at the minimum of %d users, %s", c.p.StartUsers, why))
	}
	c.recent = c.recent[:0]
	return -remove, Shrink, reason, "falling behind: " + why
}

// lateWhy says how late the benchmarker's timers came in w.
func lateWhy(w window) string {
	return fmt.Sprintf("the benchmarker's timers fired %s late or more in %.1f%% of its ticks (limit %.0f%%)",
		SaturatedSchedLag, 100*w.lateShare(), 100*maxLateShare)
}

func (c *controller) hold(reason, why string) (int, string, string, string) {
	c.grownFrom = 0 // the users since the step up were served
	return 0, Hold, reason, "holding: " + why
}

// roundLatency rounds d for a message: to 0.1 ms below 10 ms, else to 1 ms.
func roundLatency(d time.Duration) time.Duration {
	if d < 10*time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
