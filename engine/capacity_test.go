package engine_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// memNet is an in-memory network for one target: each dial hands the
// server one end of a net.Pipe, which, unlike a socket, lets a synctest
// bubble's time pass while requests wait.
type memNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newMemNet() *memNet { return &memNet{conns: make(chan net.Conn), done: make(chan struct{})} }

func (m *memNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case m.conns <- server:
		return client, nil
	case <-m.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *memNet) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	}
}

func (m *memNet) Close() error   { m.once.Do(func() { close(m.done) }); return nil }
func (m *memNet) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// capacityTarget serves each request after a service time on one of a fixed
// number of workers, so it completes workers/service requests a second and
// queues the rest; service(elapsed) may change with time, and a service time
// of "until t" stalls every worker.
type capacityTarget struct {
	workers chan struct{}
	start   time.Time
	service func(elapsed time.Duration) time.Duration
}

func (c *capacityTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case c.workers <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	time.Sleep(c.service(time.Since(c.start)))
	<-c.workers
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok"))
}

// runAgainstCapacity runs a two-minute load of users whose sessions each
// fetch pages pages, thinking a second after each, against a target of 10
// workers whose service time follows service, and returns the result.
func runAgainstCapacity(t *testing.T, pages int, service func(time.Duration) time.Duration, opts ...engine.Option) *engine.Result {
	t.Helper()
	target := &capacityTarget{workers: make(chan struct{}, 10), start: time.Now(), service: service}
	return runAgainst(t, pages, target, opts...)
}

// runAgainst is runAgainstCapacity for any target.
func runAgainst(t *testing.T, pages int, target http.Handler, opts ...engine.Option) *engine.Result {
	t.Helper()
	mem := newMemNet()
	srv := &http.Server{Handler: target}
	go srv.Serve(mem)
	defer func() {
		mem.Close()
		srv.Shutdown(context.Background()) // waits for requests still in service
	}()
	var mu sync.Mutex
	inUse := map[int]*engine.User{} // the user playing a session under each ID
	maxID := 0
	p := initializer{&probe{
		meta: engine.Meta{Load: engine.LoadPolicy{StartUsers: 10, Growth: 1, MaxUsers: 5000}},
		user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			mu.Lock()
			if other := inUse[u.ID]; other != nil && other != u {
				t.Errorf("two users play sessions with ID %d at once", u.ID)
			}
			inUse[u.ID], maxID = u, max(maxID, u.ID)
			mu.Unlock()
			defer func() { mu.Lock(); delete(inUse, u.ID); mu.Unlock() }()
			for range pages {
				res, err := u.Get(ctx, "GET /", "/")
				if err != nil {
					return err
				}
				u.Score("ok", res)
				if !u.Think(ctx, time.Second, time.Second) {
					return nil
				}
			}
			return nil
		},
	}}
	opts = append([]engine.Option{engine.WithDialer(mem.dial), engine.WithLoadDuration(2 * time.Minute),
		engine.WithSeed(1)}, opts...)
	res := engine.New(p, mustURL(t, "http://target.test/"), opts...).Run(context.Background())
	if maxID >= res.Workload.Peak {
		t.Errorf("user ID %d with at most %d users at once: IDs are not reused", maxID, res.Workload.Peak)
	}
	return res
}

// TestControllerFollowsCapacity runs the controller against a target whose
// capacity changes at 60s of a two-minute load: the users at its end over
// those just before the change must fall within the case's bounds (they
// follow the capacity up and down), and the run must stay healthy (no
// timeouts, a pass). Users removed finish their session: with long sessions
// the controller must wait for them to leave rather than remove more for
// the slowness they still cause.
func TestControllerFollowsCapacity(t *testing.T) {
	t.Parallel()
	const fast, slow = 50 * time.Millisecond, 100 * time.Millisecond // 200 and 100 requests a second
	change := func(before, after time.Duration) func(time.Duration) time.Duration {
		return func(e time.Duration) time.Duration {
			if e < time.Minute {
				return before
			}
			return after
		}
	}
	cases := []struct {
		name    string
		pages   int
		service func(time.Duration) time.Duration
		lo, hi  float64 // bounds of users at 119s / users at 59s
		floor   float64 // the fewest users from 60s on / users at 59s, at least (0: any)
	}{
		{"capacity doubles", 1, change(slow, fast), 1.6, 3, 0},
		{"capacity halves", 1, change(fast, slow), 0.3, 0.7, 0},
		{"capacity halves, sessions of 12 pages", 12, change(fast, slow), 0.35, 0.7, 0.35},
		{"the target stalls for 3s", 1, func(e time.Duration) time.Duration {
			if e >= time.Minute && e < time.Minute+3*time.Second {
				return time.Minute + 3*time.Second - e // every worker waits for the stall's end
			}
			return slow
		}, 0.8, 1.25, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				res := runAgainstCapacity(t, c.pages, c.service)
				for _, ch := range res.Load {
					t.Logf("%5.0fs %4d -> %-4d %s %s (x%d)", ch.AtSeconds, ch.From, ch.To, ch.Kind, ch.Cause, ch.Times)
				}
				if !res.Passed || res.Errors.Timeout > 0 {
					t.Fatalf("passed %v, %d timeouts, reasons %q", res.Passed, res.Errors.Timeout, res.FailReasons)
				}
				before, after := res.Timeline[59].Users, res.Timeline[119].Users
				if ratio := float64(after) / float64(before); ratio < c.lo || ratio > c.hi {
					t.Errorf("users %d at 59s, %d at 119s: ratio %.2f, want %.2f to %.2f", before, after, ratio, c.lo, c.hi)
				}
				fewest := before
				for _, s := range res.Timeline[60:120] {
					fewest = min(fewest, s.Users)
				}
				if ratio := float64(fewest) / float64(before); ratio < c.floor {
					t.Errorf("users %d at 59s fell to %d: ratio %.2f, want at least %.2f (removed users still in their sessions taken for too many)", before, fewest, ratio, c.floor)
				}
			})
		})
	}
}

// convoyTarget answers in 10 ms, but past rate requests in the last second
// one request in ten waits 8 s, as behind a lock that a few requests hold
// in turn: the answers the controller sees stay fast while users pile up
// behind the lock.
type convoyTarget struct {
	rate int
	mu   sync.Mutex
	seen []time.Time // the last second's requests
	n    int
}

func (c *convoyTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	c.mu.Lock()
	for len(c.seen) > 0 && now.Sub(c.seen[0]) >= time.Second {
		c.seen = c.seen[1:]
	}
	c.seen = append(c.seen, now)
	c.n++
	wait := 10 * time.Millisecond
	if len(c.seen) > c.rate && c.n%10 == 0 {
		wait = 8 * time.Second
	}
	c.mu.Unlock()
	time.Sleep(wait)
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok"))
}

// TestControllerSeesRequestsStuckInFlight: against a target that leaves one
// request in ten stuck for 8 s past 300 requests a second (about 300 users),
// the users must stay near that, with requests still in flight counted as
// slow. A controller that counted a request only when it ended would never
// see them: it grows every 3 s, and each growth makes the stuck requests
// older than its evidence, so the users would double on to thousands.
func TestControllerSeesRequestsStuckInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		res := runAgainst(t, 1, &convoyTarget{rate: 300})
		stuck := false
		for _, ch := range res.Load {
			t.Logf("%5.0fs %4d -> %-4d %s %s (x%d)", ch.AtSeconds, ch.From, ch.To, ch.Kind, ch.Cause, ch.Times)
			stuck = stuck || strings.Contains(ch.Cause, "still unanswered")
		}
		if res.Workload.Peak > 700 || !stuck {
			t.Errorf("users peaked at %d, want at most 700; a cause names requests still unanswered: %v", res.Workload.Peak, stuck)
		}
		if !res.Passed || res.Errors.Timeout > 0 {
			t.Errorf("passed %v, %d timeouts, reasons %q", res.Passed, res.Errors.Timeout, res.FailReasons)
		}
	})
}

// TestMaxWorkloadCapsTheUsers: against a target with room for 200 users,
// a run with WithMaxWorkload(15) holds at 15, where one without it grows
// past them.
func TestMaxWorkloadCapsTheUsers(t *testing.T) {
	t.Parallel()
	fast := func(time.Duration) time.Duration { return 50 * time.Millisecond }
	synctest.Test(t, func(t *testing.T) {
		if res := runAgainstCapacity(t, 1, fast); res.Workload.Peak <= 15 {
			t.Fatalf("without a cap the users peaked at %d: the case cannot show a cap", res.Workload.Peak)
		}
		res := runAgainstCapacity(t, 1, fast, engine.WithMaxWorkload(15))
		if res.Workload.Peak != 15 || !res.Passed {
			t.Errorf("with a cap of 15 the users peaked at %d (passed %v)", res.Workload.Peak, res.Passed)
		}
	})
}

// TestLoadTurnTakesTurns: two runs side by side that share one turn load one
// after the other, each for its whole load, the wait counted in no phase,
// and both check while the other loads.
func TestLoadTurnTakesTurns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		turn := make(chan struct{}, 1)
		take := func(ctx context.Context) func() {
			select {
			case turn <- struct{}{}:
				return func() { <-turn }
			case <-ctx.Done():
				return nil
			}
		}
		var mu sync.Mutex
		var loads [2][2]time.Time // each run's first and last user session
		results := make([]*engine.Result, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				p := initializer{&probe{user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
					mu.Lock()
					if loads[i][0].IsZero() {
						loads[i][0] = time.Now()
					}
					loads[i][1] = time.Now()
					mu.Unlock()
					u.Think(ctx, 100*time.Millisecond, 100*time.Millisecond)
					return nil
				}}}
				results[i] = engine.New(p, mustURL(t, "http://target.test/"), engine.WithLoadDuration(5*time.Second),
					engine.WithSeed(1), engine.WithLoadTurn(take)).Run(context.Background())
			})
		}
		wg.Wait()
		first, second := loads[0], loads[1]
		if second[0].Before(first[0]) {
			first, second = second, first
		}
		if second[0].Before(first[1]) || second[0].Sub(first[0]) < 5*time.Second {
			t.Errorf("the loads overlap: %v to %v and %v to %v", first[0], first[1], second[0], second[1])
		}
		for i, res := range results {
			for _, ph := range res.Phases {
				if ph.Name == engine.PhaseLoad && (ph.Seconds < 4.9 || ph.Seconds > 5.5) {
					t.Errorf("run %d's load phase took %.1f s, want its 5 s alone", i, ph.Seconds)
				}
			}
			if !res.Passed {
				t.Errorf("run %d: %q", i, res.FailReasons)
			}
		}
	})
}
