package portal_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
)

// TestTransitions checks every pair of states against the rules: each legal
// move is allowed, every other is refused with a *TransitionError.
func TestTransitions(t *testing.T) {
	const (
		q = portal.JobQueued
		r = portal.JobRunning
		f = portal.JobFinished
		e = portal.JobErrored
		c = portal.JobCancelled
	)
	legal := map[[2]portal.JobState]bool{
		{q, r}: true, {q, c}: true, {q, e}: true,
		{r, f}: true, {r, e}: true, {r, c}: true, {r, q}: true, {r, r}: true,
	}
	for _, from := range portal.JobStates() {
		for _, to := range portal.JobStates() {
			want := legal[[2]portal.JobState{from, to}]
			if got := portal.CanTransition(from, to); got != want {
				t.Errorf("%s -> %s: %v, want %v", from, to, got, want)
			}
			err := portal.CheckTransition(7, from, to)
			var te *portal.TransitionError
			switch {
			case want && err != nil:
				t.Errorf("%s -> %s refused: %v", from, to, err)
			case !want && (!errors.As(err, &te) || te.From != from || te.To != to || te.JobID != 7 || portal.ErrorCode(err) != portal.CodeConflict):
				t.Errorf("%s -> %s: %v, want a *TransitionError", from, to, err)
			}
		}
		if from.Final() == from.Active() || from.Final() != (len(portal.Transitions()[from]) == 0) {
			t.Errorf("%s: final %v, active %v", from, from.Final(), from.Active())
		}
	}
	if got := portal.FromStates(portal.JobRunning); len(got) != 2 || got[0] != q || got[1] != r {
		t.Errorf("from states of running: %v", got)
	}
	if portal.JobState("lost").Valid() || !portal.JobErrored.Valid() {
		t.Error("Valid")
	}
}

func TestEndingCheck(t *testing.T) {
	for _, tc := range []struct {
		e  portal.Ending
		ok bool
	}{
		{portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed}, true},
		{portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictFailed}, true},
		{portal.Ending{State: portal.JobFinished}, false},
		{portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonInternal}, true},
		{portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonInternal, Verdict: portal.VerdictFailed}, false},
		{portal.Ending{State: portal.JobErrored}, false},
		{portal.Ending{State: portal.JobCancelled, ErrorCode: portal.ReasonCancelled}, true},
		{portal.Ending{State: portal.JobRunning}, false},
	} {
		if err := tc.e.Check(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.e, err)
		}
	}
}

// TestDeadlineFromThePhases: the job's deadline is computed from the
// engine's phase deadlines and grace, not written down.
func TestDeadlineFromThePhases(t *testing.T) {
	c := portal.Contest{Problem: "example"}
	got := c.Timing()
	want := engine.DefaultInitializeTimeout + engine.DefaultPreCheckTimeout + engine.DefaultLoadDuration +
		engine.DefaultFinalCheckTimeout + 4*engine.DefaultGrace + portal.DefaultSlack
	if got.Deadline() != want {
		t.Errorf("default deadline %s, want %s", got.Deadline(), want)
	}
	c.LoadDuration = 3 * time.Second
	c.Settings.Grace = time.Second
	if d := c.Timing().Deadline(); d != want-engine.DefaultLoadDuration+3*time.Second-4*engine.DefaultGrace+4*time.Second {
		t.Errorf("deadline %s", d)
	}
	if n := len(got.Options()); n != 5 {
		t.Errorf("%d options", n)
	}
	if c.Settings.Attempts() != portal.DefaultMaxAttempts {
		t.Error("default attempts")
	}
}

// TestCheckTarget: a target is an http or https URL with a host; unless
// the contest allows local targets, not one on the worker's own machine or
// link, however the address is spelled.
func TestCheckTarget(t *testing.T) {
	for target, ok := range map[string]bool{
		"http://10.0.0.1/": true, "https://team.example/": true, "http://192.168.1.5:8080/": true, "http://[2001:db8::1]/": true,
		"": false, "  ": false, "ftp://x/": false, "/relative": false, "http://": false, "http://:80/": false,
	} {
		for _, local := range []bool{false, true} {
			if _, err := portal.CheckTarget(target, portal.TargetRules{Local: local}); (err == nil) != ok || err != nil && portal.ErrorCode(err) != portal.CodeInvalid {
				t.Errorf("%q (local %v): %v", target, local, err)
			}
		}
	}
	for _, target := range []string{
		"http://127.0.0.1/", "http://127.1.2.3:8080/", "http://localhost/", "http://LocalHost./", "http://app.localhost/",
		"http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://[::]/", "http://169.254.169.254/latest/meta-data/",
		"http://[fe80::1]/", "http://224.0.0.1/", "http://[fd00:ec2::254]/latest/meta-data/", "http://100.100.100.200/",
		"http://168.63.129.16/", "http://metadata.google.internal/computeMetadata/v1/", "http://Metadata./",
	} {
		if _, err := portal.CheckTarget(target, portal.TargetRules{}); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("%q: %v, want refused", target, err)
		}
		if _, err := portal.CheckTarget(target, portal.TargetRules{Local: true}); err != nil {
			t.Errorf("%q with local targets allowed: %v", target, err)
		}
	}
}

// TestTargetNetworks: with networks set, a target's address must be in one
// of them, at registration (an address) and at every connection (whatever
// a name resolved to); the always-refused addresses stay refused inside.
func TestTargetNetworks(t *testing.T) {
	nets, err := portal.ParseNetworks("10.1.0.0/16, 2001:db8:1::/48 192.0.2.9")
	if err != nil || len(nets) != 3 || nets[2] != netip.MustParsePrefix("192.0.2.9/32") {
		t.Fatalf("%v %v", nets, err)
	}
	r := portal.TargetRules{Networks: nets}
	for target, ok := range map[string]bool{
		"http://10.1.2.3:8080/": true, "http://[2001:db8:1::5]/": true, "http://192.0.2.9/": true, "http://team.example/": true,
		"http://10.2.0.1/": false, "http://192.0.2.10/": false, "http://[2001:db8:2::5]/": false, "http://[::ffff:10.2.0.1]/": false,
	} {
		if _, err := portal.CheckTarget(target, r); (err == nil) != ok {
			t.Errorf("%s: %v", target, err)
		}
	}
	g := portal.NewDialGuard(nil, nets)
	for addr, ok := range map[string]bool{
		"10.1.2.3:80": true, "[::ffff:10.1.2.3]:80": true, "192.0.2.9:443": true,
		"10.2.0.1:80": false, "203.0.113.9:80": false,
	} {
		if err := g.Control("tcp", addr, nil); (err == nil) != ok || err != nil && portal.ErrorCode(err) != portal.CodeDenied {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := portal.NewDialGuard(nil, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}).Control("tcp", "127.0.0.1:80", nil); err == nil {
		t.Error("loopback let through inside a network that holds it")
	}
	for _, bad := range []string{"10.1.0.0/33", "team.example", "fe80::1%eth0"} {
		if _, err := portal.ParseNetworks(bad); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if err := (portal.Settings{TargetNetworks: []netip.Prefix{netip.MustParsePrefix("10.1.2.3/16")}}).Check(); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("an unmasked network: %v", err)
	}
}

// TestDialGuard: the address a name resolved to is refused when local, a
// cloud's metadata address or one of the worker's own.
func TestDialGuard(t *testing.T) {
	g := portal.NewDialGuard([]netip.Addr{netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("2001:db8::7")}, nil)
	for addr, ok := range map[string]bool{
		"10.0.0.1:80": true, "203.0.113.9:443": true, "[2001:db8::1]:80": true, "100.100.100.201:80": true, "[fd00:ec2::253]:80": true,
		"127.0.0.1:80": false, "[::1]:8080": false, "169.254.169.254:80": false, "[::ffff:127.0.0.1]:80": false, "0.0.0.0:80": false,
		"[fd00:ec2::254]:80": false, "100.100.100.200:80": false, "168.63.129.16:80": false, "169.254.0.23:80": false,
		"192.0.2.7:8080": false, "[::ffff:192.0.2.7]:80": false, "[2001:db8::7]:443": false,
	} {
		if err := g.Control("tcp", addr, nil); (err == nil) != ok || err != nil && portal.ErrorCode(err) != portal.CodeDenied {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := g.Control("tcp", "not an address", nil); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("not an address: %v", err)
	}
}

func TestForContestant(t *testing.T) {
	j := portal.Job{ID: 1, State: portal.JobErrored, ErrorCode: portal.ReasonInternal, Error: "panic in users.go:12",
		StaffLog: "goroutine 7 [running]", Worker: "bench-3", Messages: []string{"not your app's fault"}}
	c := j.ForContestant()
	if c.StaffLog != "" || c.Error != "" || c.Worker != "" || c.ErrorCode != j.ErrorCode || len(c.Messages) != 1 || j.StaffLog == "" {
		t.Errorf("%+v", c)
	}
}

// TestWrapUp: the rescue timeout is the deadline plus the contest's wrap-up,
// DefaultWrapUp unless set; a wrap-up under MinWrapUp is refused.
func TestWrapUp(t *testing.T) {
	c := portal.Contest{Problem: "example", LoadDuration: 8 * time.Second}
	if got := c.Timing().Timeout(); got != c.Timing().Deadline()+portal.DefaultWrapUp {
		t.Errorf("default timeout %s", got)
	}
	c.Settings.WrapUp = 3 * time.Second
	if got := c.Timing().Timeout(); got != c.Timing().Deadline()+3*time.Second {
		t.Errorf("timeout %s with a 3s wrap-up", got)
	}
	for _, s := range []portal.Settings{{}, {WrapUp: portal.MinWrapUp}, {MaxAttempts: 1, WrapUp: time.Minute}} {
		if err := s.Check(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, s := range []portal.Settings{{WrapUp: time.Second}, {WrapUp: -time.Second}, {Grace: -1}, {MaxAttempts: -1}} {
		if err := s.Check(); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("%+v: %v, want refused", s, err)
		}
	}
}
