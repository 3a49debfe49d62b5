package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// TestLoadRunsOnTheRunsClock runs a whole minute of load in a synctest
// bubble, where time passes only when every goroutine waits: think times,
// the user loop and the load controller must all wait on the clock (a busy
// loop or a wall-clock sleep outside it would hang or miscount), and the
// counts come out exact.
func TestLoadRunsOnTheRunsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sessions atomic.Int64
		var progress []engine.Progress
		p := initializer{&probe{meta: engine.Meta{Load: engine.LoadPolicy{Interval: 5 * time.Second, Evidence: 1}}, user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			if u.Think(ctx, time.Second, time.Second) {
				sessions.Add(1)
			}
			return nil
		}}}
		start := time.Now()
		res := engine.New(p, mustURL(t, "http://127.0.0.1:1/"),
			engine.WithLoadDuration(time.Minute), engine.WithWorkload(3), engine.WithSeed(1),
			engine.WithProgress(10*time.Second, func(pr engine.Progress) { progress = append(progress, pr) }),
		).Run(context.Background())
		if !res.Passed {
			t.Fatalf("reasons %q", res.FailReasons)
		}
		// Three users, one session a second for 60 s; the last one is cut off.
		if got := sessions.Load(); got < 3*59 || got > 3*60 {
			t.Errorf("%d whole sessions in a minute of 3 users thinking 1 s each", got)
		}
		if took := time.Since(start); took != time.Minute {
			t.Errorf("the run took %s of the bubble's time, want exactly the load's minute", took)
		}
		// The controller looks every 5 s from the load's start, to the
		// instant; it holds (no request) eleven times, kept as one entry.
		if len(res.Load) != 1 || res.Load[0].AtSeconds != 5 || res.Load[0].Times != 11 || res.Load[0].LastAtSeconds != 55 {
			t.Fatalf("load decisions %+v, want one hold at 5s repeated 11 times until 55s", res.Load)
		}
		// Progress every 10 s of the run, and once more at its end.
		if len(progress) != 7 || progress[len(progress)-1].Phase != "done" || progress[0].Elapsed != 10*time.Second {
			t.Errorf("progress reports: %+v", progress)
		}
	})
}
