package portal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// TestTimelinePhases: where the contest stands at each moment of its day,
// for a team with and without extra time, and whether the board is frozen
// or revealed.
func TestTimelinePhases(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	c := portal.Contest{Problem: "example", Timeline: portal.Timeline{
		RegistrationAt: t0.Add(-24 * time.Hour), StartsAt: t0, FreezesAt: t0.Add(7 * time.Hour),
		EndsAt: t0.Add(8 * time.Hour), RevealsAt: t0.Add(9 * time.Hour),
	}}
	extra := portal.Team{ExtraTime: 15 * time.Minute}
	for _, w := range []struct {
		at                   time.Duration
		phase, extraPhase    portal.Phase
		open, frozen, reveal bool
	}{
		{-25 * time.Hour, portal.PhaseNotStarted, portal.PhaseNotStarted, false, false, false},
		{-time.Second, portal.PhaseNotStarted, portal.PhaseNotStarted, true, false, false},
		{0, portal.PhaseRunning, portal.PhaseRunning, true, false, false},
		{7 * time.Hour, portal.PhaseRunning, portal.PhaseRunning, true, true, false},
		{8 * time.Hour, portal.PhaseOver, portal.PhaseRunning, true, true, false},
		{8*time.Hour + 15*time.Minute, portal.PhaseOver, portal.PhaseOver, true, true, false},
		{9 * time.Hour, portal.PhaseOver, portal.PhaseOver, true, false, true},
	} {
		now := t0.Add(w.at)
		if p := c.Phase(now, 0); p != w.phase {
			t.Errorf("at %s: %s, want %s", w.at, p, w.phase)
		}
		if p := c.Phase(now, extra.ExtraTime); p != w.extraPhase {
			t.Errorf("at %s with extra time: %s, want %s", w.at, p, w.extraPhase)
		}
		if err := c.CheckEnqueue(extra, now); (err == nil) != (w.extraPhase == portal.PhaseRunning) ||
			err != nil && portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("at %s, enqueue with extra time: %v", w.at, err)
		}
		if c.RegistrationOpen(now) != w.open || c.Frozen(now) != w.frozen || c.Revealed(now) != w.reveal {
			t.Errorf("at %s: registration %t, frozen %t, revealed %t", w.at, c.RegistrationOpen(now), c.Frozen(now), c.Revealed(now))
		}
	}
	// Unset times: always open, started at once, never over, never frozen.
	open := portal.Contest{Problem: "example"}
	far := t0.Add(1000 * time.Hour)
	if open.Phase(far, 0) != portal.PhaseRunning || !open.RegistrationOpen(t0) || open.Frozen(far) || open.Revealed(far) {
		t.Errorf("a contest without times: %s", open.Phase(far, 0))
	}
	if (portal.Contest{}).Phase(t0, 0) != portal.PhaseNotSetUp {
		t.Error("a contest without a problem is not 'not set up'")
	}
}

func TestTimelineCheck(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		tl   portal.Timeline
		want string // "" for valid
	}{
		{portal.Timeline{}, ""},
		{portal.Timeline{StartsAt: t0, EndsAt: t0.Add(time.Hour), RevealsAt: t0.Add(time.Hour)}, ""},
		{portal.Timeline{FreezesAt: t0, RevealsAt: t0.Add(time.Hour)}, ""},
		{portal.Timeline{StartsAt: t0, EndsAt: t0}, "end after it starts"},
		{portal.Timeline{StartsAt: t0, FreezesAt: t0.Add(-time.Minute)}, "freeze"},
		{portal.Timeline{FreezesAt: t0, EndsAt: t0.Add(-time.Minute)}, "end"},
		{portal.Timeline{RegistrationAt: t0, RevealsAt: t0.Add(-time.Minute)}, "reveal"},
	} {
		err := c.tl.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) ||
			portal.ErrorCode(err) != portal.CodeInvalid) {
			t.Errorf("%+v: %v, want %q", c.tl, err, c.want)
		}
	}
}

// TestBoards: a hidden team keeps its place on the staff's board but takes
// no rank; each bracket is ranked on its own.
func TestBoards(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	all := []portal.Standing{
		{TeamID: 1, Team: "a", Bracket: "students", Passed: true, Score: 900, ReachedAt: t0},
		{TeamID: 2, Team: "staff", Bracket: "general", Hidden: true, Passed: true, Score: 5000, ReachedAt: t0},
		{TeamID: 3, Team: "b", Bracket: "general", Passed: true, Score: 700, ReachedAt: t0},
		{TeamID: 4, Team: "c", Bracket: "students"},
	}
	line := func(board []portal.Standing) string {
		var b strings.Builder
		for _, s := range board {
			b.WriteString(s.Team + ":" + string(rune('0'+s.Rank)) + " ")
		}
		return strings.TrimSpace(b.String())
	}
	for _, c := range []struct {
		bracket string
		staff   bool
		want    string
	}{
		{"", false, "a:1 b:2 c:0"},
		{"", true, "staff:0 a:1 b:2 c:0"},
		{"students", false, "a:1 c:0"},
		{"general", false, "b:1"},
		{"general", true, "staff:0 b:1"},
	} {
		if got := line(portal.Board(all, c.bracket, c.staff)); got != c.want {
			t.Errorf("board %q (staff %t): %s, want %s", c.bracket, c.staff, got, c.want)
		}
	}
	for _, bad := range []string{"", " x", "a,b", "x\u200b", strings.Repeat("x", portal.MaxBracket+1)} {
		if portal.CheckBracket(bad) == nil {
			t.Errorf("bracket %q accepted", bad)
		}
	}
}

// TestCanSetNow: a "now" is refused when it makes no sense in the
// contest's state.
func TestCanSetNow(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	started := portal.Timeline{StartsAt: t0.Add(-time.Hour)}
	ended := portal.Timeline{StartsAt: t0.Add(-2 * time.Hour), EndsAt: t0.Add(-time.Hour)}
	revealed := portal.Timeline{StartsAt: t0.Add(-3 * time.Hour), EndsAt: t0.Add(-2 * time.Hour), RevealsAt: t0.Add(-time.Hour)}
	notYet := portal.Timeline{RegistrationAt: t0.Add(time.Hour), StartsAt: t0.Add(2 * time.Hour)}
	cases := []struct {
		t    portal.Timeline
		e    portal.Event
		want bool
	}{
		{portal.Timeline{}, portal.EventRegistration, false}, // open already
		{notYet, portal.EventRegistration, true},
		{notYet, portal.EventFreeze, false}, // not started
		{notYet, portal.EventEnd, false},
		{started, portal.EventStart, false}, // came already
		{started, portal.EventFreeze, true},
		{started, portal.EventEnd, true},
		{started, portal.EventReveal, true}, // no end set
		{ended, portal.EventStart, false},
		{ended, portal.EventFreeze, false},
		{ended, portal.EventReveal, true},
		{portal.Timeline{StartsAt: t0.Add(-time.Hour), EndsAt: t0.Add(time.Hour)}, portal.EventReveal, false},
		{revealed, portal.EventEnd, false},
		{revealed, portal.EventReveal, false},
	}
	for i, c := range cases {
		if err := c.t.CanSetNow(c.e, t0); (err == nil) != c.want {
			t.Errorf("case %d, %s now: %v, want allowed %t", i, c.e, err, c.want)
		}
	}
}
