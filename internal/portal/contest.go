package portal

import (
	"net/netip"
	"reflect"
	"slices"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// Defaults of the portal's own settings (the engine's are engine.Default*).
const (
	// DefaultSlack is the worker's margin in a job's hard deadline beyond the
	// engine's phases: preparing the scenario and writing the result.
	DefaultSlack = 10 * time.Second
	// DefaultMaxAttempts is how many attempts River makes at a job whose
	// worker was lost: a lost attempt is run once more, then the job errors.
	DefaultMaxAttempts = 2
	// DefaultWrapUp is how much longer than a job's hard deadline an attempt
	// may run before River's rescuer may take the job from a worker that
	// stopped answering: the worker's time to give up on a hung benchmark
	// and to write how the attempt ended.
	DefaultWrapUp = 20 * time.Second
	// MinWrapUp is the shortest wrap-up a contest may set. A shorter one
	// would let the rescuer take jobs from live workers still writing their
	// outcome (the outcome would be dropped and the job run again).
	MinWrapUp = 2 * time.Second
	// MaxMembers is the largest team size a contest may allow.
	MaxMembers = 100
	// DefaultSignupLimit is how many accounts one source (an address, an
	// IPv6 /64) may make by signing up within an hour, unless the
	// settings say otherwise; MaxSignupLimit is the most they may say.
	DefaultSignupLimit = 10
	MaxSignupLimit     = 10000
)

// CheckLoad refuses a load phase longer than engine.MaxLoadDuration, the
// bound the CLI's --duration has too, or a negative one (0 is the engine's
// default). The settings form takes whole seconds from
// engine.MinLoadDuration; tests and tools may set shorter loads.
func CheckLoad(d time.Duration) error {
	if d < 0 || d > engine.MaxLoadDuration {
		return Errorf(CodeInvalid, "the load lasts 0 (the engine's default) to %s, not %s", engine.MaxLoadDuration, d)
	}
	return nil
}

// Contest is the one contest a portal runs.
type Contest struct {
	// Problem is the name of the contest's problem in the registry.
	Problem string
	// LoadDuration is how long each benchmark's load phase runs (0: the
	// engine's default).
	LoadDuration time.Duration
	// Timeline is the contest's times (zero: not set).
	Timeline
	// Revision counts the changes of the contest and of its teams' places
	// on the board (bracket, hidden, extra time): the live pages read the
	// board again when it moves. The store sets it.
	Revision int64
	Settings Settings
}

// Settings are the contest's other knobs; zero values take the defaults.
type Settings struct {
	// The engine's phase deadlines and grace (see engine.With*): zero takes
	// the engine's defaults.
	InitializeTimeout time.Duration
	PreCheckTimeout   time.Duration
	FinalCheckTimeout time.Duration
	Grace             time.Duration
	// Slack is the worker's margin (DefaultSlack when zero).
	Slack time.Duration
	// MaxAttempts bounds the attempts at a job (DefaultMaxAttempts when zero).
	MaxAttempts int
	// WrapUp is the wrap-up past a job's deadline (DefaultWrapUp when zero,
	// at least MinWrapUp). The time a killed worker's job waits before it is
	// rescued is its deadline plus this plus River's rescuer interval, so a
	// short one brings lost jobs back sooner; tests set it.
	WrapUp time.Duration
	// Seed, when not zero, is every run's seed; otherwise each run takes one
	// from the clock and records it in its result.
	Seed uint64
	// MaxTeamSize bounds a team's members (DefaultMaxTeamSize when zero).
	MaxTeamSize int
	// LocalTargets lets teams register targets on the worker's own machine
	// or link (loopback, link-local): a contest whose apps and workers share
	// one machine. Otherwise such targets are refused when registered and
	// whenever a worker connects (see CheckTarget, DialGuard).
	LocalTargets bool
	// TargetNetworks, when any, are the only address ranges a worker
	// connects to (the team servers' network), whatever a name resolves
	// to; none: any address but those always refused (see CheckTarget).
	TargetNetworks []netip.Prefix
	// AssignedServers: the organiser assigns each team its servers (on the
	// admin pages or by the team import), and a team picks which of its
	// own servers its benchmarks hit; nothing else is benchmarked. Without
	// it teams register their own targets, and a host serves one team
	// (an informal contest). The admin's settings form proposes it for a
	// contest not set up yet.
	AssignedServers bool
	// Ranking is how a team's score is chosen among its passed jobs
	// (RankLatest when empty).
	Ranking RankRule
	// Brackets are the boards teams choose one of when they register
	// ("students", "general"); none: one board.
	Brackets []string
	// SignupLimit is how many accounts one source may make by signing up
	// within an hour (DefaultSignupLimit when zero; negative: no limit),
	// for a room of contestants behind one address. See Signups.
	SignupLimit int
	// ValidationThreshold is the share of a team's final score, in
	// percent, under which its validation run is flagged
	// (DefaultValidationThreshold when zero).
	ValidationThreshold int
}

// Check reports settings no job could run with: negative durations or
// attempts, or a wrap-up under MinWrapUp.
func (s Settings) Check() error {
	for _, d := range []time.Duration{s.InitializeTimeout, s.PreCheckTimeout, s.FinalCheckTimeout, s.Grace, s.Slack, s.WrapUp} {
		if d < 0 {
			return Errorf(CodeInvalid, "contest settings: a negative duration (%s)", d)
		}
	}
	if s.MaxTeamSize < 0 || s.MaxTeamSize > MaxMembers {
		return Errorf(CodeInvalid, "contest settings: teams of %d (a team has 1 to %d members)", s.MaxTeamSize, MaxMembers)
	}
	if s.MaxAttempts < 0 {
		return Errorf(CodeInvalid, "contest settings: %d attempts", s.MaxAttempts)
	}
	if s.WrapUp != 0 && s.WrapUp < MinWrapUp {
		return Errorf(CodeInvalid, "contest settings: a wrap-up of %s is under the minimum %s", s.WrapUp, MinWrapUp)
	}
	if s.Ranking != "" && !s.Ranking.Valid() {
		return Errorf(CodeInvalid, "contest settings: no ranking rule %q (%s or %s)", s.Ranking, RankLatest, RankBest)
	}
	if s.SignupLimit < -1 || s.SignupLimit > MaxSignupLimit {
		return Errorf(CodeInvalid, "contest settings: a sign-up limit of %d (1 to %d, or none)", s.SignupLimit, MaxSignupLimit)
	}
	if s.ValidationThreshold < 0 || s.ValidationThreshold > 100 {
		return Errorf(CodeInvalid, "contest settings: a validation threshold of %d%% (0 to 100)", s.ValidationThreshold)
	}
	if len(s.TargetNetworks) > MaxTargetNetworks {
		return Errorf(CodeInvalid, "contest settings: at most %d target networks", MaxTargetNetworks)
	}
	for _, p := range s.TargetNetworks {
		if !p.IsValid() || p != p.Masked() {
			return Errorf(CodeInvalid, "contest settings: %s is not a network (its address bits past /%d must be zero: %s)", p, p.Bits(), p.Masked())
		}
	}
	if len(s.Brackets) > MaxBrackets {
		return Errorf(CodeInvalid, "contest settings: at most %d brackets", MaxBrackets)
	}
	for i, b := range s.Brackets {
		if err := CheckBracket(b); err != nil {
			return err
		}
		if slices.Contains(s.Brackets[:i], b) {
			return Errorf(CodeInvalid, "contest settings: the bracket %q twice", b)
		}
	}
	return nil
}

// Signups is the sign-up limit per source an hour, and whether there is
// one: none when the settings say so, nor when the organiser assigns the
// teams' servers (their members come by the import's sign-in links, and a
// room signing up by hand is the organiser's choice).
func (s Settings) Signups() (limit int, on bool) {
	switch {
	case s.SignupLimit < 0 || s.AssignedServers:
		return 0, false
	case s.SignupLimit == 0:
		return DefaultSignupLimit, true
	}
	return s.SignupLimit, true
}

// Rule is Ranking or its default.
func (s Settings) Rule() RankRule {
	if s.Ranking == "" {
		return RankLatest
	}
	return s.Ranking
}

// Equal reports whether s and o are the same settings.
func (s Settings) Equal(o Settings) bool {
	if !slices.Equal(s.Brackets, o.Brackets) || !slices.Equal(s.TargetNetworks, o.TargetNetworks) {
		return false
	}
	s.Brackets, o.Brackets = nil, nil
	s.TargetNetworks, o.TargetNetworks = nil, nil
	return reflect.DeepEqual(s, o)
}

// Attempts is MaxAttempts or its default.
func (s Settings) Attempts() int {
	if s.MaxAttempts > 0 {
		return s.MaxAttempts
	}
	return DefaultMaxAttempts
}

// TeamSize is MaxTeamSize or its default.
func (s Settings) TeamSize() int {
	if s.MaxTeamSize > 0 {
		return s.MaxTeamSize
	}
	return DefaultMaxTeamSize
}

// Timing returns the time budget of the contest's benchmarks.
func (c Contest) Timing() Timing {
	s := c.Settings
	return Timing{
		Initialize: s.InitializeTimeout, PreCheck: s.PreCheckTimeout, Load: c.LoadDuration,
		FinalCheck: s.FinalCheckTimeout, Grace: s.Grace, Slack: s.Slack, WrapUp: s.WrapUp,
	}.WithDefaults()
}

// Timing is one benchmark's time budget: the engine's phase deadlines, the
// grace its watchdog allows past each, the worker's slack, and the wrap-up
// past the deadline before the job may be rescued.
type Timing struct {
	Initialize time.Duration
	PreCheck   time.Duration
	Load       time.Duration
	FinalCheck time.Duration
	Grace      time.Duration
	Slack      time.Duration
	WrapUp     time.Duration
}

// WithDefaults fills the zero fields: the engine's defaults for its phases
// and grace, DefaultSlack for the slack, DefaultWrapUp for the wrap-up.
func (t Timing) WithDefaults() Timing {
	or := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	or(&t.Initialize, engine.DefaultInitializeTimeout)
	or(&t.PreCheck, engine.DefaultPreCheckTimeout)
	or(&t.Load, engine.DefaultLoadDuration)
	or(&t.FinalCheck, engine.DefaultFinalCheckTimeout)
	or(&t.Grace, engine.DefaultGrace)
	or(&t.Slack, DefaultSlack)
	or(&t.WrapUp, DefaultWrapUp)
	return t
}

// Deadline is the job's hard deadline from an attempt's start. The engine
// promises that a run returns within its phases' deadlines plus the grace
// its watchdog allows past each of the four, whatever the target does; the
// slack covers the worker's own work around the run. A run still going at
// the deadline means the benchmarker hung.
func (t Timing) Deadline() time.Duration {
	const phases = 4 // initialize, pre-check, load, final check
	return t.Initialize + t.PreCheck + t.Load + t.FinalCheck + phases*t.Grace + t.Slack
}

// Timeout is how long an attempt may run before River's rescuer may take
// the job from its worker: the deadline plus the wrap-up.
func (t Timing) Timeout() time.Duration { return t.Deadline() + t.WrapUp }

// Options are the engine options that give a run this budget.
func (t Timing) Options() []engine.Option {
	return []engine.Option{
		engine.WithInitializeTimeout(t.Initialize), engine.WithPreCheckTimeout(t.PreCheck),
		engine.WithLoadDuration(t.Load), engine.WithFinalCheckTimeout(t.FinalCheck), engine.WithGrace(t.Grace),
	}
}

// Team is a contest team.
type Team struct {
	ID   int64
	Name string
	// Target is the base URL of the team's app ("" until registered).
	Target string
	// InviteCode lets an account join the team; only its members and
	// admins see it.
	InviteCode string
	CreatedAt  time.Time
	// Bracket is the board the team chose at registration ("" for none).
	Bracket string
	// Hidden keeps the team off the public board (staff, guests); admins
	// still see it.
	Hidden bool
	// ExtraTime is how much longer than the contest the team may enqueue
	// benchmarks.
	ExtraTime time.Duration
	// Disqualified teams stay on the boards, struck and without a rank,
	// and cannot enqueue; DQReason is shown to staff and to the team.
	Disqualified bool
	DQReason     string
}

// Worker is a benchmark worker as the portal sees it: its heartbeat row.
type Worker struct {
	Name      string
	StartedAt time.Time
	// HeartbeatAt is the last time it reported; a worker whose heartbeat is
	// old is gone.
	HeartbeatAt time.Time
	// Doing says what it is doing ("idle", the jobs it runs, "stopped").
	Doing string
	// Problems are the problems it can run.
	Problems []string
	// JobsDone counts the jobs it ended; InternalErrors those that errored
	// through the benchmarker's fault.
	JobsDone       int64
	InternalErrors int64
	// Quarantine is set while the worker is quarantined: it takes no job.
	Quarantine Quarantine
}
