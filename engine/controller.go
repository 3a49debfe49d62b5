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
	// DefaultControlInterval is how often the controller looks at the target's health.
	DefaultControlInterval = 5 * time.Second
	// DefaultGrowth is the fraction of the current users added after a
	// healthy interval (at least one user).
	DefaultGrowth = 0.25
	// DefaultMaxUsers caps the users of one run.
	DefaultMaxUsers = 2000
	// DefaultSlowRequest is the latency above which a request counts as slow.
	DefaultSlowRequest = time.Second
	// DefaultMaxSlowRate is the fraction of slow requests a healthy interval may have.
	DefaultMaxSlowRate = 0.05
	// DefaultMaxTimeoutRate is the fraction of timeouts a healthy interval may have.
	DefaultMaxTimeoutRate = 0.0
)

// LoadPolicy is how the load controller grows the number of users: every
// Interval it adds ceil(Growth × users) users (at least one) if the last
// interval was healthy (requests completed, no errors, timeouts and slow
// requests within their rates, fewer than MaxUsers users), and holds
// otherwise. It never removes users. Zero fields take their Default constants.
type LoadPolicy struct {
	StartUsers     int
	Interval       time.Duration
	Growth         float64
	MaxUsers       int
	SlowRequest    time.Duration
	MaxSlowRate    float64
	MaxTimeoutRate float64
}

func (p LoadPolicy) withDefaults() LoadPolicy {
	if p.StartUsers <= 0 {
		p.StartUsers = DefaultWorkload
	}
	if p.Interval <= 0 {
		p.Interval = DefaultControlInterval
	}
	if p.Growth <= 0 {
		p.Growth = DefaultGrowth
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

// window is what the controller saw during one interval.
type window struct {
	Requests, Timeouts, Errors, Slow int64
}

// LoadChange is one decision of the controller, kept in the result.
type LoadChange struct {
	AtSeconds float64 `json:"at_s"`
	From      int     `json:"from"`
	To        int     `json:"to"`
	Cause     string  `json:"cause"`
}

// decide returns how many users to add after an interval, and why.
func (p LoadPolicy) decide(w window, users int) (int, string) {
	pct := func(n int64) float64 { return 100 * float64(n) / float64(max(w.Requests, 1)) }
	switch {
	case w.Requests == 0:
		return 0, "holding: no request completed in the last interval"
	case w.Errors > 0:
		return 0, fmt.Sprintf("holding: %d error(s) in %d requests", w.Errors, w.Requests)
	case float64(w.Timeouts) > p.MaxTimeoutRate*float64(w.Requests):
		return 0, fmt.Sprintf("holding: %d timeout(s) in %d requests (%.1f%%, limit %.1f%%)", w.Timeouts, w.Requests, pct(w.Timeouts), 100*p.MaxTimeoutRate)
	case float64(w.Slow) > p.MaxSlowRate*float64(w.Requests):
		return 0, fmt.Sprintf("holding: %.1f%% of %d requests slower than %s (limit %.1f%%)", pct(w.Slow), w.Requests, p.SlowRequest, 100*p.MaxSlowRate)
	case users >= p.MaxUsers:
		return 0, fmt.Sprintf("holding: at the maximum of %d users", p.MaxUsers)
	}
	add := max(1, int(math.Ceil(p.Growth*float64(users))))
	add = min(add, p.MaxUsers-users)
	return add, fmt.Sprintf("healthy: %d requests, %.1f%% slower than %s, no timeouts or errors", w.Requests, pct(w.Slow), p.SlowRequest)
}
