package engine

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
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
}

func TestLedgerAddsConcurrentlyAndOnlyWhenOpen(t *testing.T) {
	t.Parallel()
	l := newLedger(map[string]float64{"get": 1, "post": 5})
	if err := l.add(0, "get", 1); err != nil || l.raw() != 0 {
		t.Fatalf("a closed ledger scored: %v %v", err, l.raw())
	}
	l.open.Store(true)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				_ = l.add(g, "get", 1)
				_ = l.add(-g, "post", 1)
			}
		}()
	}
	wg.Wait()
	if c := l.counts(); c["get"] != 8000 || c["post"] != 8000 || l.raw() != 8000+5*8000 {
		t.Errorf("counts %v raw %v", c, l.raw())
	}
	if err := l.add(0, "nope", 1); err == nil || AsError(err).Class != ClassInternal {
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

func TestControllerDecisions(t *testing.T) {
	t.Parallel()
	p := LoadPolicy{Growth: 0.25, MaxUsers: 10, SlowRequest: time.Second, MaxSlowRate: 0.05}.withDefaults()
	cases := []struct {
		w     window
		users int
		add   int
		cause string
	}{
		{window{Requests: 100}, 4, 1, "healthy"},
		{window{Requests: 100}, 8, 2, "healthy"},
		{window{Requests: 100}, 9, 1, "healthy"},
		{window{Requests: 100}, 10, 0, "maximum of 10"},
		{window{}, 4, 0, "no request completed"},
		{window{Requests: 100, Errors: 1}, 4, 0, "1 error(s)"},
		{window{Requests: 100, Timeouts: 1}, 4, 0, "1 timeout(s)"},
		{window{Requests: 100, Slow: 5}, 4, 1, "healthy"},
		{window{Requests: 100, Slow: 6}, 4, 0, "6.0% of 100 requests slower than 1s"},
	}
	for _, c := range cases {
		add, cause := p.decide(c.w, c.users)
		if add != c.add || !strings.Contains(cause, c.cause) {
			t.Errorf("%+v with %d users: add %d (%s), want %d (%s)", c.w, c.users, add, cause, c.add, c.cause)
		}
	}
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
