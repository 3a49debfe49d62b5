package portal

import "time"

// Timeline is the contest's day: each time is zero until the admin sets it.
//
//   - RegistrationAt: accounts and teams can be made from then on (zero:
//     from the start of the portal).
//   - StartsAt: benchmarks can be enqueued from then on (zero: as soon as
//     the contest has a problem).
//   - FreezesAt: from then on the public leaderboard and chart stay as they
//     were at that moment; each team still sees its own latest score.
//   - EndsAt: no benchmark can be enqueued from then on, except by a team
//     given extra time (Team.ExtraTime); a job enqueued before a team's end
//     runs and counts whenever it finishes (zero: the contest never ends).
//   - RevealsAt: from then on everyone sees the final board (zero: the board
//     stays frozen until an admin reveals it).
type Timeline struct {
	RegistrationAt time.Time
	StartsAt       time.Time
	FreezesAt      time.Time
	EndsAt         time.Time
	RevealsAt      time.Time
}

// Event names a time of the timeline, as the admin's "now" buttons and the
// audit log name it.
type Event string

const (
	EventRegistration Event = "registration"
	EventStart        Event = "start"
	EventFreeze       Event = "freeze"
	EventEnd          Event = "end"
	EventReveal       Event = "reveal"
)

// Events lists the timeline's events in their order.
func Events() []Event {
	return []Event{EventRegistration, EventStart, EventFreeze, EventEnd, EventReveal}
}

// At is the time of event e (zero when unset), and a pointer to set it.
func (t *Timeline) At(e Event) (*time.Time, error) {
	switch e {
	case EventRegistration:
		return &t.RegistrationAt, nil
	case EventStart:
		return &t.StartsAt, nil
	case EventFreeze:
		return &t.FreezesAt, nil
	case EventEnd:
		return &t.EndsAt, nil
	case EventReveal:
		return &t.RevealsAt, nil
	}
	return nil, Errorf(CodeInvalid, "no event %q in the contest's timeline", e)
}

// Check refuses times out of order. Each set time must come no earlier
// than the set times before it: registration, start, freeze, end, reveal;
// the end comes strictly after the start, and a reveal needs no freeze.
func (t Timeline) Check() error {
	order := []struct {
		e  Event
		at time.Time
	}{{EventRegistration, t.RegistrationAt}, {EventStart, t.StartsAt}, {EventFreeze, t.FreezesAt},
		{EventEnd, t.EndsAt}, {EventReveal, t.RevealsAt}}
	for i, a := range order {
		for _, b := range order[i+1:] {
			if a.at.IsZero() || b.at.IsZero() {
				continue
			}
			if b.at.Before(a.at) {
				return Errorf(CodeInvalid, "the contest's %s (%s) would come before its %s (%s)", b.e, stamp(b.at), a.e, stamp(a.at))
			}
			if a.e == EventStart && b.e == EventEnd && b.at.Equal(a.at) {
				return Errorf(CodeInvalid, "the contest must end after it starts")
			}
		}
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// reached reports whether a set time has come by now.
func reached(at, now time.Time) bool { return !at.IsZero() && !now.Before(at) }

// RegistrationOpen reports whether accounts and teams can be made now.
func (t Timeline) RegistrationOpen(now time.Time) bool {
	return t.RegistrationAt.IsZero() || reached(t.RegistrationAt, now)
}

// Started reports whether the contest has started by now.
func (t Timeline) Started(now time.Time) bool { return t.StartsAt.IsZero() || reached(t.StartsAt, now) }

// EndFor is a team's end: the contest's end plus the team's extra time
// (zero when the contest has no end).
func (t Timeline) EndFor(extra time.Duration) time.Time {
	if t.EndsAt.IsZero() {
		return time.Time{}
	}
	return t.EndsAt.Add(extra)
}

// Frozen reports whether the public board is frozen now: the freeze has
// come and the reveal has not.
func (t Timeline) Frozen(now time.Time) bool {
	return reached(t.FreezesAt, now) && !reached(t.RevealsAt, now)
}

// Revealed reports whether the final board has been revealed by now.
func (t Timeline) Revealed(now time.Time) bool { return reached(t.RevealsAt, now) }

// CanSetNow refuses to set event e's time to now when that makes no sense
// in the contest's state: e has come already (registration is open when
// its time is unset); a later event has come before it (Check), or the
// event that ends e's use has (the end for a start or a freeze, the reveal
// for the end); the contest has not started (a freeze or an end), or has
// not ended (a reveal of a contest that has an end). The admin's "now"
// buttons are active only when it passes.
func (t Timeline) CanSetNow(e Event, now time.Time) error {
	at, err := t.At(e)
	if err != nil {
		return err
	}
	if reached(*at, now) {
		return Errorf(CodeConflict, "the contest's %s came already, at %s", e, stamp(*at))
	}
	switch {
	case e == EventRegistration && t.RegistrationOpen(now):
		return Errorf(CodeConflict, "registration is open already")
	case (e == EventStart || e == EventFreeze) && reached(t.EndsAt, now):
		return Errorf(CodeConflict, "the contest has ended: no %s after the end", e)
	case (e == EventFreeze || e == EventEnd) && !t.Started(now):
		return Errorf(CodeConflict, "the contest has not started: no %s before the start", e)
	case e == EventEnd && reached(t.RevealsAt, now):
		return Errorf(CodeConflict, "the final board is revealed: no end after the reveal")
	case e == EventReveal && !t.EndsAt.IsZero() && !reached(t.EndsAt, now):
		return Errorf(CodeConflict, "the contest has not ended: the final board is revealed after the end")
	}
	*at = now
	return t.Check()
}

// Phase is where the contest stands for a team.
type Phase string

const (
	PhaseNotSetUp   Phase = "not set up"
	PhaseNotStarted Phase = "not started"
	PhaseRunning    Phase = "running"
	PhaseOver       Phase = "over"
)

// Phase is where the contest stands now for a team with extra time extra
// (0 for anyone else).
func (c Contest) Phase(now time.Time, extra time.Duration) Phase {
	switch {
	case c.Problem == "":
		return PhaseNotSetUp
	case !c.Started(now):
		return PhaseNotStarted
	case reached(c.EndFor(extra), now):
		return PhaseOver
	}
	return PhaseRunning
}

// CheckEnqueue refuses a benchmark for team now unless the contest runs
// for it: started, and before its end (with its extra time).
func (c Contest) CheckEnqueue(team Team, now time.Time) error {
	switch p := c.Phase(now, team.ExtraTime); p {
	case PhaseRunning:
		return nil
	case PhaseOver:
		return Errorf(CodeConflict, "the contest is over (it ended for your team at %s): no benchmarks now",
			stamp(c.EndFor(team.ExtraTime)))
	default:
		return Errorf(CodeConflict, "the contest is %s: no benchmarks now", p)
	}
}

// CheckTargetChange refuses a change of team's target once the contest is
// over for it: its validation run must measure the app it ended with.
func (c Contest) CheckTargetChange(team Team, now time.Time) error {
	if c.Phase(now, team.ExtraTime) == PhaseOver {
		return Errorf(CodeConflict, "the contest is over (it ended for your team at %s): the target stays as it was",
			stamp(c.EndFor(team.ExtraTime)))
	}
	return nil
}

// MaxExtraTime bounds a team's extra time.
const MaxExtraTime = 24 * time.Hour

// CheckExtraTime refuses a negative extra time or one over MaxExtraTime.
func CheckExtraTime(d time.Duration) error {
	if d < 0 || d > MaxExtraTime {
		return Errorf(CodeInvalid, "a team's extra time is 0 to %s, not %s", MaxExtraTime, d)
	}
	return nil
}
