package engine

import "context"

// Scenario is a problem's benchmark: what users do and what must hold.
// A scenario keeps its own model of the target's state; it reports failures
// with Run.Error and points with User.Score.
type Scenario interface {
	// Meta describes the scenario; it is read once per run.
	Meta() Meta
	// PreCheck validates the freshly initialized target strictly, including
	// negative cases. Any error (returned or reported) fails the run.
	PreCheck(ctx context.Context, r *Run) error
	// User plays one session of a virtual user (think times included). The
	// engine calls it again and again until the load phase ends; a returned
	// error is reported and followed by a short pause.
	User(ctx context.Context, r *Run, u *User) error
	// FinalCheck validates the end state after the load. Any error fails the
	// run.
	FinalCheck(ctx context.Context, r *Run) error
}

// Initializer is implemented by scenarios that initialize the target in their
// own way; the default posts to /initialize and expects 200.
type Initializer interface {
	Initialize(ctx context.Context, r *Run) error
}

// Closer is implemented by scenarios that hold resources for a run, such as
// services they host for the target to call: Run calls Close once the run is
// over, whatever happened, and logs its error for the staff.
type Closer interface {
	Close() error
}

// Meta is a scenario's identity and rules.
type Meta struct {
	Problem string
	Version string
	Rules   Rules
	// Assets is the manifest every fetched asset is verified against.
	Assets Manifest
	Load   LoadPolicy
	Agent  AgentConfig
	// Parts names the parts of the benchmarker (run with Part) whose CPU
	// during the load phase the result reports: services the scenario hosts
	// for the app, say. Measuring them runs Go's CPU profiler.
	Parts []string
}
