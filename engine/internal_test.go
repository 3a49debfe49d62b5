package engine

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine/internal/wire"
)

func TestCollectorDeduplicatesCapsAndClassifies(t *testing.T) {
	t.Parallel()
	var staff bytes.Buffer
	c := newCollector(&staff, time.Now)
	for range 25 {
		c.add("load", &Error{Code: "status", Class: ClassApplication, Request: "GET /", Message: "expected status 200, got 500"})
	}
	c.add("load", &Error{Code: "stale", Class: ClassCritical, Request: "GET /a", Message: "comment missing"})
	c.add("load", fmt.Errorf("scenario bug"))
	c.add("load", &Error{Code: "cut-off", Detail: fmt.Errorf("x: %w", ErrCutOff)})
	for i := range DefaultMaxMessages + 5 {
		c.add("load", &Error{Code: "timeout", Class: ClassTimeout, Request: fmt.Sprintf("GET /p%d", i), Message: "no response"})
	}
	got := c.snapshot()
	want := ErrorCounts{Critical: 1, Application: 25, Timeout: DefaultMaxMessages + 5, Internal: 1, CutOff: 1}
	if got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	msgs := c.contestantMessages()
	if len(msgs) != DefaultMaxMessages+1 {
		t.Fatalf("%d messages, want the cap plus a summary line: %q", len(msgs), msgs)
	}
	if !strings.HasPrefix(msgs[0], "[critical] GET /a: comment missing") {
		t.Errorf("critical messages come first, got %q", msgs[0])
	}
	if msgs[1] != "[application] GET /: expected status 200, got 500 (x25)" {
		t.Errorf("not deduplicated with a count: %q", msgs[1])
	}
	if !strings.HasPrefix(msgs[len(msgs)-1], "... and ") {
		t.Errorf("no summary of hidden messages: %q", msgs[len(msgs)-1])
	}
	all := strings.Join(msgs, "\n")
	if strings.Contains(all, "scenario bug") {
		t.Error("an internal error's details reached the contestant")
	}
	if !strings.Contains(staff.String(), "scenario bug") {
		t.Error("the staff log lacks the internal error's details")
	}
	if n := strings.Count(staff.String(), "expected status 200"); n != DefaultStaffLogPerMessage {
		t.Errorf("the staff log repeated a message %d times, want %d", n, DefaultStaffLogPerMessage)
	}
	by := c.byRequestCounts()
	var sum int64
	for _, n := range by {
		sum += n
	}
	if by["GET /"] != 25 || by["GET /a"] != 1 || by["GET /p0"] != 1 || sum != got.Charged() {
		t.Errorf("charged errors by request %v (sum %d), want GET / 25, GET /a 1, each GET /pN 1, summing to %d",
			by, sum, got.Charged())
	}
}

func TestLedgerAddsConcurrentlyAndOnlyWhenOpen(t *testing.T) {
	t.Parallel()
	l := newLedger(map[string]float64{"get": 1, "post": 5})
	if _, err := l.add(0, "get", 1); err != nil || l.raw() != 0 {
		t.Fatalf("a closed ledger scored: %v %v", err, l.raw())
	}
	l.open.Store(true)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				_, _ = l.add(g, "get", 1)
				_, _ = l.add(-g, "post", 1)
			}
		}()
	}
	wg.Wait()
	if c := l.counts(); c["get"] != 8000 || c["post"] != 8000 || l.raw() != 8000+5*8000 {
		t.Errorf("counts %v raw %v", c, l.raw())
	}
	if p, err := l.add(0, "post", 2); err != nil || p != 10 {
		t.Errorf("two posts earned %v (%v), want 10", p, err)
	}
	if _, err := l.add(0, "nope", 1); err == nil || AsError(err).Class != ClassInternal {
		t.Errorf("an undeclared tag was not an internal error: %v", err)
	}
}

func TestRulesJudge(t *testing.T) {
	t.Parallel()
	rules := Rules{
		Deduction: PerError(map[Class]float64{ClassApplication: 10, ClassTimeout: 2}),
		Pass:      []PassRule{MaxErrorRate(0.01), DeductionBelowRaw()},
	}
	cases := []struct {
		name      string
		t         Tally
		deduction float64
		score     float64
		fails     int
	}{
		{"clean", Tally{Raw: 100, Requests: 1000}, 0, 100, 0},
		{"deducted", Tally{Raw: 100, Requests: 1000, Errors: ErrorCounts{Application: 1, Timeout: 5}}, 20, 80, 0},
		{"error rate", Tally{Raw: 1000, Requests: 100, Errors: ErrorCounts{Timeout: 2}}, 4, 996, 1},
		{"deduction reaches raw", Tally{Raw: 30, Requests: 1000, Errors: ErrorCounts{Application: 3}}, 30, 0, 1},
		{"internal is free", Tally{Raw: 50, Requests: 10, Errors: ErrorCounts{Internal: 9, CutOff: 9}}, 0, 50, 0},
	}
	for _, c := range cases {
		d, s, fails := rules.judge(c.t)
		if d != c.deduction || s != c.score || len(fails) != c.fails {
			t.Errorf("%s: deduction %v score %v fails %q; want %v %v %d", c.name, d, s, fails, c.deduction, c.score, c.fails)
		}
	}
}

// TestControllerDecisions walks the controller through every kind of
// decision, one interval at a time: each row is an interval's window, the
// users then, and what the controller must do.
func TestControllerDecisions(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 4, Evidence: 2, Growth: 1, Backoff: 0.25, MaxUsers: 40, MaxSlowRate: 0.1}.withDefaults()
	// ok is a healthy interval of 25 requests per user.
	ok := func(users int64) window { return window{Requests: 25 * users} }
	steps := []struct {
		name  string
		w     window
		users int
		delta int
		kind  string
		cause string
	}{
		{"one healthy interval is not yet evidence", ok(4), 4, 0, wait, ""},
		{"two are: the first step is Growth (double)", ok(4), 4, 4, Grow, "healthy for 2s: 200 requests"},
		{"evidence starts again after a change", ok(8), 8, 0, wait, ""},
		{"double again", ok(8), 8, 8, Grow, "healthy"},
		{"waiting", ok(16), 16, 0, wait, ""},
		{"near the slow limit: hold, the users since the step up are served", window{Requests: 100, Slow: 30}, 16, 0, Hold, "near the limit"},
		{"slow beyond the limit over the evidence: remove a quarter", window{Requests: 100, Slow: 80}, 16, -4, Shrink, "falling behind: 55.0% of 200 requests slower than 1s (limit 10.0%)"},
		{"after a removal, wait for evidence", ok(12), 12, 0, wait, ""},
		{"then grow by the smallest step (1/16, at least one user)", ok(12), 12, 1, Grow, "healthy"},
		{"waiting", ok(13), 13, 0, wait, ""},
		{"the target fell behind once: the step stays the smallest, 1/16 of 13", ok(13), 13, 1, Grow, "healthy"},
		{"a timeout removes users at once, without waiting for evidence", window{Requests: 50, Timeouts: 1}, 15, -4, Shrink, "1 timeout(s) in 50 requests (limit 0.0%)"},
		{"waiting", ok(11), 11, 0, wait, ""},
		{"an interval with errors holds", window{Requests: 100, Errors: 2}, 11, 0, Hold, "holding: 2 error(s) in the last 2s"},
		{"the errors stay in the evidence for its length", ok(11), 11, 0, Hold, "holding: 2 error(s) in the last 2s"},
		{"near the slow limit (over half of it) holds", window{Requests: 100, Slow: 30}, 11, 0, Hold, "near the limit of 10.0%"},
		{"evidence still holds one near interval", ok(11), 11, 0, Hold, "near the limit"},
		{"one interval over half the limit keeps it from growing, though the sum is not", window{Requests: 100, Slow: 7}, 11, 0, wait, ""},
		{"the evidence holds it still", ok(11), 11, 0, wait, ""},
		{"the step after a near hold is the smallest again", ok(11), 11, 1, Grow, "healthy"},
		{"no request completed", window{}, 12, 0, wait, ""},
		{"no request completed twice: hold", window{}, 12, 0, Hold, "no request completed in the last 2s"},
		{"removal never goes below the start users", window{Requests: 10, Timeouts: 5}, 4, 0, Hold, "at the minimum of 4 users"},
		{"at the start users, a quarter is still at least one removed", window{Requests: 10, Timeouts: 5}, 5, -1, Shrink, "timeout"},
		{"waiting", ok(38), 38, 0, wait, ""},
		{"growth stops at the maximum", ok(38), 38, 2, Grow, "healthy"},
		{"waiting", ok(40), 40, 0, wait, ""},
		{"at the maximum: hold", ok(40), 40, 0, Hold, "at the maximum of 40 users"},
		{"the benchmarker's own errors (out of open files) remove users at once", window{Requests: 100, Internal: 3}, 40, -10, Shrink, "3 error(s) of the benchmarker's own"},
		{"waiting", ok(30), 30, 0, wait, ""},
		{"the benchmarker's timers late in 6% of the ticks over the evidence and now: remove users",
			window{Requests: 750, Ticks: 100, LateTicks: 6}, 30, -8, Shrink, "timers fired 20ms late or more in 6.0% of its ticks"},
		{"waiting", ok(22), 22, 0, wait, ""},
		{"an interval with late ticks over half the limit is no evidence to grow", window{Requests: 550, Ticks: 100, LateTicks: 1}, 22, 0, wait, ""},
		{"waiting, one late tick in 200", window{Requests: 550, Ticks: 200, LateTicks: 1}, 22, 0, wait, ""},
		{"healthy, but a late tick in 300: the smallest step", window{Requests: 550, Ticks: 100}, 22, 2, Grow, "timers came late now and then: smallest step"},
	}
	c := newController(p, 0)
	for i, s := range steps {
		delta, kind, _, cause := c.decide(s.w, s.users, false)
		if delta != s.delta || kind != s.kind || !strings.Contains(cause, s.cause) {
			t.Fatalf("step %d (%s): %+v with %d users: %+d %s %q; want %+d %s %q", i, s.name, s.w, s.users, delta, kind, cause, s.delta, s.kind, s.cause)
		}
	}
}

// TestControllerSmallStepsAfterFallingBehind: once the target fell behind,
// every step up is the smallest, where before it the step doubled back to
// Growth; the benchmarker's own limits do not count as the target's.
func TestControllerSmallStepsAfterFallingBehind(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 16, Evidence: 1, Growth: 1, MaxUsers: 10000}.withDefaults()
	ok := func(users int) window { return window{Requests: 25 * int64(users)} }
	grow := func(c *controller, users int) ([]int, string) {
		var steps []int
		var why string
		for range 4 {
			delta, kind, _, cause := c.decide(ok(users), users, false)
			if kind != Grow {
				t.Fatalf("%d users: %s %q, want a step up", users, kind, cause)
			}
			steps, why = append(steps, delta), cause
			users += delta
		}
		return steps, why
	}
	for _, c := range []struct {
		name   string
		w      window
		steps  []int // the next four steps up from 100 users
		reason string
	}{
		{"slow", window{Requests: 1000, Slow: 200}, []int{7, 7, 8, 8}, "slow"},
		{"timeouts", window{Requests: 1000, Timeouts: 1}, []int{7, 7, 8, 8}, "timeouts"},
		{"the benchmarker's timers", window{Requests: 1000, Ticks: 100, LateTicks: 10, CPU: 1900 * time.Millisecond, Span: time.Second}, []int{7, 14, 31, 76}, "benchmarker"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctl := newController(p, 2)
			if _, kind, reason, cause := ctl.decide(c.w, 100, false); kind != Shrink || reason != c.reason {
				t.Fatalf("%s %s %q, want a shrink for %s", kind, reason, cause, c.reason)
			}
			got, why := grow(ctl, 100)
			if !slices.Equal(got, c.steps) {
				t.Errorf("steps %v, want %v", got, c.steps)
			}
			// The step's message says why it stays the smallest.
			if said := strings.Contains(why, "fell behind earlier"); said != (c.reason != "benchmarker") {
				t.Errorf("the last step up says %q", why)
			}
		})
	}
}

// TestControllerStepsBack: a target too slow or timing out right after a
// step up goes back to the users before the step when that removes more
// than the Backoff share; once a decision after the step held, or for the
// benchmarker's own reasons, a Backoff share as before.
func TestControllerStepsBack(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 10, Evidence: 1, Growth: 1, Backoff: 0.2, MaxUsers: 1000, MaxSlowRate: 0.01}.withDefaults()
	ok := window{Requests: 1000}
	slow := window{Requests: 1000, Slow: 100}
	for _, c := range []struct {
		name  string
		steps []window
		want  int
		cause string
	}{
		{"slow after doubling: back to the users before it", []window{ok, slow}, -10, "back to the 10 users before the last step up"},
		{"timeouts after doubling: the same", []window{ok, {Requests: 1000, Timeouts: 5}}, -10, "back to the 10 users"},
		{"a hold after the step: a fifth", []window{ok, {Requests: 1000, Slow: 6}, slow}, -4, "slower than"},
		{"the benchmarker's own errors: a fifth", []window{ok, {Requests: 1000, Internal: 1}}, -4, "of the benchmarker's own"},
	} {
		ctl, users := newController(p, 0), 10
		var delta int
		var cause string
		for _, w := range c.steps {
			delta, _, _, cause = ctl.decide(w, users, false)
			users += delta
		}
		if delta != c.want || !strings.Contains(cause, c.cause) {
			t.Errorf("%s: %+d %q, want %+d with %q", c.name, delta, cause, c.want, c.cause)
		}
	}
}

// TestRulesExplain: the points split by tag, the largest first, and the
// deduction by class when it is a sum over classes, not otherwise.
func TestRulesExplain(t *testing.T) {
	t.Parallel()
	rules := Rules{Weights: map[string]float64{"page": 1, "post": 10, "asset": 0.1},
		Deduction: PerError(map[Class]float64{ClassApplication: 5, ClassTimeout: 1})}
	tally := Tally{Counts: map[string]int64{"page": 50, "post": 10, "asset": 30}, Errors: ErrorCounts{Application: 2, Timeout: 3}}
	points, lost := rules.explain(tally)
	want := []TagPoints{{"post", 10, 10, 100}, {"page", 50, 1, 50}, {"asset", 30, 0.1, 3}}
	if fmt.Sprint(points) != fmt.Sprint(want) {
		t.Errorf("points %v, want %v", points, want)
	}
	if fmt.Sprint(lost) != fmt.Sprint([]Loss{{"application", 2, 10}, {"timeout", 3, 3}}) {
		t.Errorf("lost %v", lost)
	}
	rules.Deduction = func(t Tally) float64 { return float64(t.Errors.Charged() * t.Errors.Charged()) }
	if _, lost := rules.explain(tally); lost != nil {
		t.Errorf("a deduction that is not a sum over classes was split: %v", lost)
	}
}

// growthStep is one decision of the controller in a knee test: the users, the
// interval's mean response, and the step up and the words of the cause it must
// give.
type growthStep struct {
	users int
	mean  time.Duration
	delta int
	cause string
}

// checkGrowth feeds c one 100-request interval per step.
func checkGrowth(t *testing.T, c *controller, steps []growthStep) {
	t.Helper()
	for _, s := range steps {
		w := window{Requests: 100, Answered: 100, Latency: 100 * s.mean}
		delta, kind, _, cause := c.decide(w, s.users, false)
		if delta != s.delta || kind != Grow || !strings.Contains(cause, s.cause) || (s.cause == "healthy" && strings.Contains(cause, "near")) {
			t.Errorf("mean %s with %d users: %+d %s %q; want %+d grow %q", s.mean, s.users, delta, kind, cause, s.delta, s.cause)
		}
	}
}

// TestControllerMindsItsOpenFiles: the users grow only as far as the
// benchmarker's open files allow at as many per user as now, and hold, as
// its own limit, when no more would fit; an unknown limit bounds nothing.
func TestControllerMindsItsOpenFiles(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 4, Evidence: 1, Growth: 1, MaxUsers: 100_000}.withDefaults()
	ok := window{Requests: 1000, Answered: 1000, Latency: 1000 * time.Millisecond}
	for _, c := range []struct {
		name        string
		files       fileUse
		users, want int
		kind, cause string
	}{
		{"unknown", fileUse{}, 1000, 1000, Grow, "healthy"},
		{"plenty", fileUse{open: 2000, limit: 20_000}, 1000, 1000, Grow, "healthy"},
		// 1,000 users hold 15,000 files: 16,000 (80% of 20,000) is room for 66
		// more.
		{"nearly full", fileUse{open: 15_000, limit: 20_000}, 1000, 66, Grow, "as many as the benchmarker's open files allow (15000 of 20000 in use)"},
		{"full", fileUse{open: 16_000, limit: 20_000}, 1000, 0, Hold, "16000 of its 20000 open files in use"},
	} {
		ctl := newController(p, 0)
		ctl.files = c.files
		delta, kind, reason, cause := ctl.decide(ok, c.users, false)
		if delta != c.want || kind != c.kind || !strings.Contains(cause, c.cause) {
			t.Errorf("%s: %+d %s %q; want %+d %s %q", c.name, delta, kind, cause, c.want, c.kind, c.cause)
		}
		if (kind == Hold || delta < c.users) && reason != "benchmarker" {
			t.Errorf("%s: held or cut short for %q, want the benchmarker's own limits", c.name, reason)
		}
		if delta == c.users && reason != "" {
			t.Errorf("%s: a whole step for %q, want no reason", c.name, reason)
		}
	}
}

// TestControllerKnee: once the mean response time passes a quarter of
// SlowRequest, or four times the fastest mean seen, though no request is yet
// slow, the target is near its capacity, and the controller takes its
// knee step, an eighth of Growth; between one and a half and four times the
// fastest, the step tapers towards it. Once the target fell behind, the knee
// step is the smallest, a sixteenth.
func TestControllerKnee(t *testing.T) {
	t.Parallel()
	checkGrowth(t, newController(LoadPolicy{StartUsers: 10, Evidence: 1, Growth: 1}.withDefaults(), 0), []growthStep{
		{10, 10 * time.Millisecond, 10, "healthy for 1s: 100 requests, mean response 10ms"},
		{20, 15 * time.Millisecond, 20, "healthy"}, // one and a half times the fastest: the whole step
		{40, 30 * time.Millisecond, 16, "the mean 3.0 times the fastest (10ms): a step of 40%"},
		{56, 50 * time.Millisecond, 7, "near capacity (fastest mean 10ms): a step of 12.5%"}, // five times: 56/8
		{63, 300 * time.Millisecond, 8, "near capacity"},                                     // over a quarter of 1s; the step is reset each time
		{71, 20 * time.Millisecond, 18, "healthy for"},                                       // then doubles: 71/4
	})
}

// TestControllerStepsNearCapacity: a hold near the slow limit cuts the next
// step to the knee's eighth of Growth, which then doubles again; once the
// target fell behind, a step near the knee is the smallest, a sixteenth.
func TestControllerStepsNearCapacity(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 10, Evidence: 1, Growth: 1}.withDefaults()
	c := newController(p, 0)
	if _, kind, _, cause := c.decide(window{Requests: 100, Slow: 3}, 80, false); kind != Hold {
		t.Fatalf("3%% slow: %s %q, want a hold near the limit", kind, cause)
	}
	checkGrowth(t, c, []growthStep{
		{80, 10 * time.Millisecond, 10, "healthy"}, // 80/8
		{90, 10 * time.Millisecond, 23, "healthy"}, // then doubles: 90/4
	})
	c = newController(p, 0)
	if _, kind, _, cause := c.decide(window{Requests: 100, Slow: 50}, 100, false); kind != Shrink {
		t.Fatalf("50%% slow: %s %q, want a shrink", kind, cause)
	}
	checkGrowth(t, c, []growthStep{
		{90, 10 * time.Millisecond, 6, "fell behind earlier"}, // 90/16
		{96, 50 * time.Millisecond, 6, "near capacity (fastest mean 10ms): a step of 6.2%"},
	})
}

// TestControllerKneeSet: with a Knee, only a mean over it is near capacity,
// however far the mean rose over the fastest.
func TestControllerKneeSet(t *testing.T) {
	t.Parallel()
	checkGrowth(t, newController(LoadPolicy{StartUsers: 10, Evidence: 1, Growth: 1, Knee: 250 * time.Millisecond}.withDefaults(), 0), []growthStep{
		{10, 5 * time.Millisecond, 10, "healthy"},
		{20, 200 * time.Millisecond, 20, "healthy"},                        // forty times the fastest, under the knee
		{40, 300 * time.Millisecond, 5, "near capacity (mean over 250ms)"}, // 40/8
		{45, 100 * time.Millisecond, 12, "healthy"},                        // then doubles: 45/4
	})
}

func TestJudgeSaturation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		share, lag float64
		saturated  bool
		reason     string
	}{
		{0.10, 1, false, ""},
		{0.90, 1, true, "used 90%"},
		{0.50, 30, true, "timers fired up to 30 ms late"},
		{0.05, 30, false, "the machine was busy"},
		{0.50, 10, false, ""},
	}
	for _, c := range cases {
		sat, why := judgeSaturation(c.share, c.lag, 2)
		if sat != c.saturated || !strings.Contains(why, c.reason) || (c.reason == "") != (why == "") {
			t.Errorf("share %.2f lag %.0f: %v %q, want %v %q", c.share, c.lag, sat, why, c.saturated, c.reason)
		}
	}
}

// TestMixInterleavesExactShares: every run of sessions as long as the total
// weight holds each role exactly its weight, spread out, not bunched.
func TestMixInterleavesExactShares(t *testing.T) {
	t.Parallel()
	m := NewMix(Share{"writer", 1}, Share{"commenter", 3}, Share{"browser", 6})
	if got := strings.Join(m.seq, " "); got != "browser commenter browser writer browser commenter browser browser commenter browser" {
		t.Errorf("sequence %s", got)
	}
	counts := map[string]int{}
	for range 1000 {
		counts[m.Next()]++
	}
	if counts["writer"] != 100 || counts["commenter"] != 300 || counts["browser"] != 600 {
		t.Errorf("1000 sessions: %v", counts)
	}
}

// TestOutOfOpenFilesIsTheBenchmarkers: a dial that fails for want of file
// descriptors is an internal error, never charged to the app.
func TestOutOfOpenFilesIsTheBenchmarkers(t *testing.T) {
	t.Parallel()
	a := &Agent{cfg: AgentConfig{}.withDefaults()}
	u, _ := url.Parse("http://127.0.0.1:1/")
	err := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}
	e := a.classify(context.Background(), "GET /", u, &wire.Error{Stage: wire.StageConnect, Err: err}, time.Millisecond, 0)
	if e.Class != ClassInternal || e.Code != "open-files" {
		t.Errorf("class %s code %s: %s", e.Class, e.Code, e.Message)
	}
}

// TestControllerWhileArriving: until the users added have all arrived, the
// controller acts on timeouts only, and the intervals are no evidence.
func TestControllerWhileArriving(t *testing.T) {
	t.Parallel()
	c := newController(LoadPolicy{StartUsers: 10, Evidence: 1, Growth: 1}.withDefaults(), 0)
	healthy := window{Requests: 100, Answered: 100, Latency: 100 * time.Millisecond}
	if d, kind, _, _ := c.decide(healthy, 20, true); d != 0 || kind != wait || len(c.recent) != 0 {
		t.Errorf("arriving, healthy: %+d %s, %d intervals of evidence", d, kind, len(c.recent))
	}
	if d, kind, _, _ := c.decide(window{Requests: 100, Ticks: 100, LateTicks: 3}, 20, true); d != 0 || kind != wait {
		t.Errorf("arriving, the benchmarker a little late: %+d %s", d, kind)
	}
	if d, kind, _, cause := c.decide(window{Requests: 100, Ticks: 100, LateTicks: 6}, 20, true); d != -2 || kind != Shrink || !strings.Contains(cause, "timers") {
		t.Errorf("arriving, the benchmarker lagging: %+d %s %q", d, kind, cause)
	}
	if d, kind, _, cause := c.decide(window{Requests: 100, Timeouts: 1}, 20, true); d != -2 || kind != Shrink {
		t.Errorf("arriving, a timeout: %+d %s %q", d, kind, cause)
	}
	if d, kind, _, _ := c.decide(healthy, 16, false); d != 1 || kind != Grow {
		t.Errorf("arrived, healthy: %+d %s", d, kind)
	}
}

// TestControllerStarvedHolds: late timers while the benchmarker used less
// than SaturatedCPUShare of its cores are other work taking them (the app on
// a shared machine, the kernel, a virtual machine's host): the users are
// held, not removed, and not grown either. The same lateness at a
// saturated benchmarker removes users as before, and so does lateness whose
// CPU use is unknown.
func TestControllerStarvedHolds(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 10, Evidence: 2, Growth: 1}.withDefaults()
	late := func(cpuShare float64) window {
		return window{Requests: 500, Answered: 500, Latency: 500 * time.Millisecond, Ticks: 100, LateTicks: 6,
			CPU: time.Duration(cpuShare * 2 * float64(time.Second)), Span: time.Second}
	}
	cases := []struct {
		name     string
		cpuShare float64
		arriving bool
		delta    int
		kind     string
		cause    string
	}{
		{"starved at 11% of 2 cores: hold", 0.11, false, 0, Hold, "while it used 11% of its 2 core(s), under 85%: other work took them"},
		{"starved at 60%: hold", 0.6, false, 0, Hold, "while it used 60% of its 2 core(s)"},
		{"saturated at 90%: remove a tenth", 0.9, false, -4, Shrink, "timers fired 20ms late or more in 6.0%"},
		{"starved while users arrive: keep waiting for them", 0.6, true, 0, wait, ""},
		{"saturated while users arrive: the newest never come", 0.9, true, -4, Shrink, "timers"},
	}
	for _, tc := range cases {
		c := newController(p, 2)
		var delta int
		var kind, cause string
		for range p.Evidence {
			delta, kind, _, cause = c.decide(late(tc.cpuShare), 40, tc.arriving)
		}
		if delta != tc.delta || kind != tc.kind || !strings.Contains(cause, tc.cause) {
			t.Errorf("%s: %+d %s %q; want %+d %s %q", tc.name, delta, kind, cause, tc.delta, tc.kind, tc.cause)
		}
	}
	unknown := late(0.11)
	unknown.Span = 0
	c := newController(p, 2)
	c.decide(unknown, 40, false)
	if delta, kind, _, _ := c.decide(unknown, 40, false); delta != -4 || kind != Shrink {
		t.Errorf("lateness at an unknown CPU use: %+d %s; want -4 shrink", delta, kind)
	}
	var summary strings.Builder
	if err := (&Result{Load: []LoadChange{{Kind: Hold, Reason: "starved", Times: 3}}, LimitedBy: map[string]int{"starved": 3}}).WriteSummary(&summary); err != nil ||
		!strings.Contains(summary.String(), "benchmarker starved of CPU by other work (processes, the kernel, the machine's host) (3)") ||
		!strings.Contains(summary.String(), "took the benchmarker's CPUs now and then") {
		t.Errorf("the summary does not say the benchmarker was starved:\n%s", summary.String())
	}
}

// TestControllerHoldsABusyBenchmarker: healthy intervals in which the
// benchmarker used SaturatedCPUShare of its cores hold the users: more would
// wait for its CPU, and the rise in the latencies it measures would be its
// own. Under that share the users grow, by no more than would take it there
// at as much CPU per user as now.
func TestControllerHoldsABusyBenchmarker(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 10, Evidence: 2, Growth: 1}.withDefaults()
	healthy := func(cpuShare float64) window {
		return window{Requests: 500, Answered: 500, Latency: 500 * time.Millisecond, Ticks: 100,
			CPU: time.Duration(cpuShare * float64(time.Second)), Span: time.Second}
	}
	cases := []struct {
		cpuShare float64
		delta    int
		kind     string
		cause    string
	}{
		{0.95, 0, Hold, "the benchmarker used 95% of its 1 core(s) over the last 2s (limit 85%)"},
		{0.85, 0, Hold, "used 85%"},
		{0.8, 2, Grow, "as many as the benchmarker's CPU allows (80% of its 1 core(s) in use)"},
		{0.4, 40, Grow, "healthy"},
	}
	for _, tc := range cases {
		c := newController(p, 1)
		var delta int
		var kind, reason, cause string
		for range p.Evidence {
			delta, kind, reason, cause = c.decide(healthy(tc.cpuShare), 40, false)
		}
		if delta != tc.delta || kind != tc.kind || !strings.Contains(cause, tc.cause) {
			t.Errorf("at %.0f%%: %+d %s %q; want %+d %s %q", 100*tc.cpuShare, delta, kind, cause, tc.delta, tc.kind, tc.cause)
		}
		if (kind == Hold || delta < 40) && reason != "benchmarker" {
			t.Errorf("at %.0f%%: reason %q; want benchmarker", 100*tc.cpuShare, reason)
		}
	}
}

// TestControllerFastGrowth: while the mean response stays under 5 ms and no
// step was cut, a policy's FastGrowth sets the step; a slower mean, or a
// step cut since, grows by Growth as before.
func TestControllerFastGrowth(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{StartUsers: 10, Evidence: 2, Growth: 1, FastGrowth: 3}.withDefaults()
	healthy := func(mean time.Duration) window {
		return window{Requests: 500, Answered: 500, Latency: 500 * mean, Ticks: 100}
	}
	grow := func(c *controller, mean time.Duration) (int, string) {
		var delta int
		var cause string
		for range p.Evidence {
			delta, _, _, cause = c.decide(healthy(mean), 40, false)
		}
		return delta, cause
	}
	if delta, cause := grow(newController(p, 1), time.Millisecond); delta != 120 || !strings.Contains(cause, "the mean under 5ms: a step of 300%") {
		t.Errorf("at a 1 ms mean: %+d %q; want +120, a step of 300%%", delta, cause)
	}
	if delta, _ := grow(newController(p, 1), 6*time.Millisecond); delta != 40 {
		t.Errorf("at a 6 ms mean: %+d; want +40", delta)
	}
	cut := newController(p, 1)
	cut.step = p.Growth * minStepShare
	if delta, _ := grow(cut, time.Millisecond); delta != 3 {
		t.Errorf("after a cut step: %+d; want +3, a sixteenth", delta)
	}
	slow := LoadPolicy{StartUsers: 10, Evidence: 2, Growth: 1}.withDefaults()
	c := newController(slow, 1)
	c.decide(healthy(time.Millisecond), 40, false)
	if delta, _, _, _ := c.decide(healthy(time.Millisecond), 40, false); delta != 40 {
		t.Errorf("without FastGrowth: %+d; want +40", delta)
	}
}

// loadStats returns the stats of a 60 s load that starts at *now, read on
// that clock, whose requests are slow past 1 s or, for slowFor's
// endpoints, past their own threshold.
func loadStats(now *time.Time, slowFor map[string]time.Duration) *stats {
	s := newStats(func() time.Time { return *now }, 60)
	s.setSlow(time.Second, slowFor)
	s.start.Store(now.UnixNano())
	return s
}

// TestControllerSlowFor: an endpoint with a slow threshold of its own is slow
// past it, and only past it; the others keep SlowRequest.
func TestControllerSlowFor(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	s := loadStats(&now, map[string]time.Duration{"GET /report": 10 * time.Second})
	now = now.Add(5 * time.Second)
	s.request("GET /report", 5*time.Second, false, noFlight)
	s.request("GET /page", 2*time.Second, false, noFlight)
	if w := s.controlWindow(); w.Requests != 2 || w.Slow != 1 {
		t.Errorf("a 5 s report (its own limit 10 s) and a 2 s page (limit 1 s): %+v, want 1 slow in 2", w)
	}
	s.request("GET /report", 11*time.Second, false, noFlight)
	if w := s.controlWindow(); w.Requests != 3 || w.Slow != 2 {
		t.Errorf("an 11 s report: %+v, want 2 slow in 3", w)
	}
}

// TestControllerCountsStuckRequests: a request still in flight past its slow
// threshold counts as slow at the controller's next look, once, and not
// again when it ends (its timeout still counts); one that ends in time, one
// whose endpoint has a longer threshold, an asset and one that started
// before the controller's last change are not counted at all.
func TestControllerCountsStuckRequests(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	s := loadStats(&now, map[string]time.Duration{"GET /report": 10 * time.Second})
	now = now.Add(2 * time.Second)
	early := s.begin("GET /", false, now)
	s.ctlSince.Store(now.Add(time.Millisecond).UnixNano()) // a change just after early started
	now = now.Add(time.Second)
	stuck := []flight{s.begin("GET /", false, now), s.begin("GET /", false, now)}
	quick := s.begin("GET /", false, now)
	report := s.begin("GET /report", false, now)
	asset := s.begin("GET /a.png", true, now)
	if asset != noFlight {
		t.Errorf("an asset's request was counted in flight: %+v", asset)
	}
	now = now.Add(500 * time.Millisecond)
	s.request("GET /", 500*time.Millisecond, false, quick)
	s.countStuck(now)
	if w := s.controlWindow(); w.Requests != 1 || w.Slow != 0 || w.Stuck != 0 {
		t.Errorf("before the threshold: %+v, want 1 request, none slow", w)
	}
	now = now.Add(1200 * time.Millisecond)
	s.countStuck(now)
	s.countStuck(now)
	if w := s.controlWindow(); w.Requests != 3 || w.Slow != 2 || w.Stuck != 2 {
		t.Errorf("two requests in flight 1.7 s: %+v, want 2 slow (both stuck) in 3", w)
	}
	s.request("GET /", 1700*time.Millisecond, false, stuck[0])
	s.request("GET /report", 1700*time.Millisecond, false, report)
	now = now.Add(30 * time.Second)
	s.failed("GET /", 31700*time.Millisecond, true, false, stuck[1])
	s.request("GET /", 32700*time.Millisecond, false, early)
	s.countStuck(now)
	if w := s.controlWindow(); w.Requests != 4 || w.Slow != 2 || w.Stuck != 2 || w.Timeouts != 1 || w.Answered != 3 {
		t.Errorf("after they ended: %+v, want 2 slow (both stuck) in 4, 1 timeout, 3 answered", w)
	}
}

// TestControllerEvidenceLeavesAssetsOut: the controller's shares are taken
// over the scored actions' requests; a slow asset is no evidence either way,
// and an asset's timeout still counts as a timeout.
func TestControllerEvidenceLeavesAssetsOut(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	s := loadStats(&now, nil)
	now = now.Add(5 * time.Second)
	for range 100 {
		s.request("GET /static/a.png", time.Millisecond, true, noFlight)
	}
	s.request("GET /", 2*time.Second, false, noFlight)
	s.failed("GET /static/b.png", time.Second, false, true, noFlight)
	if w := s.controlWindow(); w.Requests != 1 || w.Slow != 1 || w.Answered != 1 || w.Timeouts != 0 {
		t.Errorf("one slow page among 101 fast assets: %+v", w)
	}
	s.failed("GET /static/b.png", 2*time.Second, true, true, noFlight)
	if w := s.controlWindow(); w.Requests != 1 || w.Timeouts != 1 {
		t.Errorf("an asset's timeout: %+v", w)
	}
	if s.requests.Load() != 1 || s.assets.Load() != 102 {
		t.Errorf("%d action requests, %d asset requests", s.requests.Load(), s.assets.Load())
	}
}

// TestTargetClockFromDates: Dates of a clock 1.5 s ahead, answered within
// 20 ms, give the offset within a few tens of milliseconds; Dates that
// contradict each other give none.
func TestTargetClockFromDates(t *testing.T) {
	t.Parallel()
	var s skew
	if c := s.clock(); c.Known || c.Why == "" {
		t.Errorf("no responses: %+v", c)
	}
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ahead := 1500 * time.Millisecond
	for i := range 50 {
		sent := start.Add(time.Duration(i) * 137 * time.Millisecond)
		received := sent.Add(20 * time.Millisecond)
		dated := sent.Add(10 * time.Millisecond).Add(ahead).Truncate(time.Second)
		s.observe(dated.Format(http.TimeFormat), sent, received)
	}
	c := s.clock()
	if !c.Known || c.Responses != 50 || math.Abs(c.OffsetMs-1500) > 40 || c.UncertaintyMs > 40 {
		t.Errorf("1.5 s ahead: %+v", c)
	}
	if lo, hi := c.bounds(); lo > 1500*time.Millisecond || hi < 1500*time.Millisecond || hi-lo > 80*time.Millisecond {
		t.Errorf("bounds %s to %s", lo, hi)
	}
	s.observe(start.Add(-time.Hour).Format(http.TimeFormat), start, start.Add(time.Millisecond))
	if c := s.clock(); c.Known || !strings.Contains(c.Why, "contradict") {
		t.Errorf("a Date an hour off: %+v", c)
	}
}

// TestPlainPathResolvesAsParse: the resolver's shortcut gives the URL
// base.Parse gives, and leaves anything unusual to it.
func TestPlainPathResolvesAsParse(t *testing.T) {
	t.Parallel()
	paths := []string{"/", "/a", "/a/b/", "/articles/12", "/static/css/blog.css", "/a.b/c-d_e~f", "/?page=2",
		"/search?q=%E3%81%82&x=1+2", "/a?b=c/d:e@f", "/./a", "/a/../b", "//host/x", "/a//b", "a/b", "", "/a b",
		"/%41", "/a?", "/a#frag", "/a?x#y", "/.well-known/x", "/a/.b", "/a.", "/a?q=\x7f", "/ä", "/a;b", "/a!b"}
	for _, base := range []string{"http://127.0.0.1:8080/", "https://example.com/app/", "http://u:p@h/x/y"} {
		b, _ := url.Parse(base)
		a := &Agent{base: b}
		for _, p := range paths {
			want, wantErr := b.Parse(p)
			got, gotErr := a.resolve(p)
			if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && *want != *got) {
				t.Errorf("%s + %q: got %#v %v, want %#v %v", base, p, got, gotErr, want, wantErr)
			}
			if _, _, ok := plainPath(p); ok && strings.ContainsAny(p, " #") {
				t.Errorf("%q taken as plain", p)
			}
		}
	}
}

// TestPlainMediaType: the content type shortcut agrees with
// mime.ParseMediaType wherever it answers.
func TestPlainMediaType(t *testing.T) {
	t.Parallel()
	check := ContentType("text/html")
	for _, v := range []string{"text/html", "TEXT/HTML", "text/html; charset=utf-8", "text/html;charset=UTF-8",
		"text/html; charset=", "text/html; charset", "text/html; foo", "text/html ; charset=utf-8", "text/htmlx",
		"text/html; charset=utf-8; charset=x", "text/plain", "", "text/html; charset=\"utf-8\"", " text/html"} {
		res := &Response{Header: http.Header{"Content-Type": {v}}, URL: &url.URL{Path: "/"}}
		got := check(res) == nil
		mt, _, err := mimeParse(v)
		want := err == nil && strings.EqualFold(mt, "text/html")
		if got != want {
			t.Errorf("Content-Type %q: passed %v, want %v", v, got, want)
		}
	}
}

func mimeParse(v string) (string, map[string]string, error) { return mime.ParseMediaType(v) }

// TestSteadyClockCountsMonotonicTime: the steady clock's wall reading moves
// exactly as far as its monotonic one, so a step of the machine's wall clock
// during a run cannot age (or rejuvenate) what the run timed.
func TestSteadyClockCountsMonotonicTime(t *testing.T) {
	c := SteadyClock().(steadyClock)
	time.Sleep(5 * time.Millisecond)
	now := c.Now()
	mono := now.Sub(c.start)
	wall := now.Round(0).Sub(c.start.Round(0)) // Round(0) drops the monotonic reading
	if mono < 5*time.Millisecond || wall != mono {
		t.Errorf("after 5 ms: %v by the monotonic clock, %v by the wall clock; want the same, at least 5 ms", mono, wall)
	}
}

// steppedClock is a steady clock whose machine's wall clock has stepped by
// step since it was made.
type steppedClock struct {
	steadyClock
	step time.Duration
}

func (c steppedClock) WallStep() time.Duration { return c.step }

// TestTargetClockFollowsAStepOnThisMachine: after the wall clock stepped
// 25 s away from the run's clock, an app on this machine (a loopback
// target) reads times 25 s ahead of what the Date headers taught, whether
// they taught an offset or none; an app on another machine does not.
func TestTargetClockFollowsAStepOnThisMachine(t *testing.T) {
	t.Parallel()
	const step = 25 * time.Second
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, target := range []string{"http://127.0.0.1:8080/", "http://localhost/", "http://[::1]:80/", "http://192.0.2.7:8080/"} {
		for _, dated := range []bool{true, false} {
			u, _ := url.Parse(target)
			r := &Run{Target: u, b: &Bench{clock: steppedClock{steadyClock{start: time.Now()}, step}}}
			var want time.Duration // the offset the Dates teach: 1.5 s, or none
			if dated {
				want = 1500 * time.Millisecond
				for i := range 20 {
					sent := start.Add(time.Duration(i) * 137 * time.Millisecond)
					r.skew.observe(sent.Add(want).Truncate(time.Second).Format(http.TimeFormat), sent, sent)
				}
			}
			if u.Hostname() != "192.0.2.7" {
				want += step
			}
			lo, hi := r.TargetClockBounds()
			if lo > want || hi < want || hi-lo > 300*time.Millisecond {
				t.Errorf("%s, dated %v: bounds %s to %s, want about %s", target, dated, lo, hi, want)
			}
		}
	}
}
