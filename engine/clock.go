package engine

import (
	"context"
	"time"
)

// Clock is the time a run reads and waits on. The engine reads no other
// clock for the run's logic: timestamps, sleeps, think times, the user loop
// and the load controller all go through it, so tests can replace it (or run
// under testing/synctest). The self-monitor alone reads the machine's own
// clock, since it measures the machine.
type Clock interface {
	Now() time.Time
	// After sends the time on the returned channel once d has passed.
	After(d time.Duration) <-chan time.Time
}

// WallClock is the real time.
var WallClock Clock = wallClock{}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// sleep waits d on c or until ctx ends; it reports whether the whole wait
// passed.
func sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-c.After(d):
		return true
	}
}
