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

// SteadyClock returns the real time as the machine's monotonic clock counts
// it from now: the wall clock's time at the call, plus the time that has
// passed since. A step of the wall clock later on (a time sync setting it,
// a virtual machine resumed from a snapshot) moves none of the times it
// gives, so an age the run measures, such as a hosted service's answer
// relayed by the app, is the time that really passed. A run keeps one from
// its start: the wall clock's own slow corrections it follows, since they
// reach the monotonic clock too.
func SteadyClock() Clock { return steadyClock{start: time.Now()} }

type steadyClock struct{ start time.Time }

// Now keeps the monotonic reading, so times compared with time.Now()'s
// compare by it, as any two of its own do.
func (c steadyClock) Now() time.Time                       { return c.start.Add(time.Since(c.start)) }
func (steadyClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// WallStep is how far the machine's wall clock has moved since the clock was
// made beyond the time that passed: what an app on this machine, which reads
// the wall clock, sees added to the run's times.
func (c steadyClock) WallStep() time.Duration { return wallStepSince(c.start) }

// wallStepSince is how far the wall clock has moved since start (a
// time.Now() reading) beyond the time the monotonic clock counted.
func wallStepSince(start time.Time) time.Duration {
	now := time.Now()
	return now.Round(0).Sub(start.Round(0)) - now.Sub(start) // Round(0): the wall reading alone
}

// wallStepper is a Clock that knows how far the machine's wall clock has
// stepped away from it (steadyClock; a test's clock).
type wallStepper interface{ WallStep() time.Duration }

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
