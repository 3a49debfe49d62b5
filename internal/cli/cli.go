// Package cli is the tunecon command: it parses arguments, runs the engine and
// reports. main only wires the process to Run.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems"
)

// Exit statuses.
const (
	ExitPass     = 0
	ExitFail     = 1
	ExitUsage    = 2
	ExitInternal = 3
)

// Env is the process's outside world, injected so tests run the command in
// process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// IsTerminal reports whether Stderr is a terminal (live progress line).
	IsTerminal bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

const usage = `tunecon: benchmark web apps for performance-tuning contests

Usage:
  tunecon problems                         list the problems
  tunecon bench PROBLEM --target URL [flags] benchmark a running app
  tunecon serve PROBLEM [flags]            run a problem's reference app
  tunecon try PROBLEM [flags]              serve + bench + report + stop
  tunecon version                          print the engine version

Run 'tunecon COMMAND -h' for a command's flags.
Exit status: 0 passed, 1 failed, 2 bad usage, 3 internal error.
`

// GCPercent is the garbage collector's target for the tunecon process: a
// benchmarker allocates a body per request, and trading memory (there is
// plenty) for fewer collections raises its requests per CPU-second.
const GCPercent = 400

// TuneRuntime applies GCPercent unless the user set GOGC. It changes the
// whole process, so only main (and tools measuring the command) call it.
func TuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}

// usageError is a bad command line: one line on stderr and exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func badUsage(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// Run runs the command line args and returns the exit status.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return ExitUsage
	}
	var code int
	var err error
	switch args[0] {
	case "problems":
		code, err = cmdProblems(args[1:], env)
	case "bench":
		code, err = cmdBench(ctx, args[1:], env)
	case "serve":
		code, err = cmdServe(ctx, args[1:], env)
	case "try":
		code, err = cmdTry(ctx, args[1:], env)
	case "version":
		fmt.Fprintf(env.Stdout, "tunecon %s\n", engine.Version)
		return ExitPass
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return ExitPass
	default:
		err = badUsage("unknown command %q (try: problems, bench, serve, try)", args[0])
	}
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitPass
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "tunecon: %s\n", ue.msg)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(env.Stderr, "tunecon: %v\n", err)
		return ExitInternal
	}
	return code
}

func cmdProblems(args []string, env Env) (int, error) {
	if len(args) > 0 {
		return 0, badUsage("problems takes no arguments")
	}
	for _, p := range problems.All() {
		fmt.Fprintf(env.Stdout, "%-10s %s [%s]\n           %s\n", p.Name, p.Title, strings.Join(p.Langs, ", "), p.Summary)
	}
	return ExitPass, nil
}

// parse parses a subcommand's flags, accepting the PROBLEM argument before or
// after them, and returns the problem.
func parse(fs *flag.FlagSet, args []string, env Env) (problems.Problem, error) {
	fs.SetOutput(env.Stderr)
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return problems.Problem{}, err
		}
		return problems.Problem{}, badUsage("%s: %v", fs.Name(), err)
	}
	rest := fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return problems.Problem{}, badUsage("%s: unexpected argument %q", fs.Name(), rest[0])
	}
	if name == "" {
		return problems.Problem{}, badUsage("%s: which problem? (one of: %s)", fs.Name(), strings.Join(problems.Names(), ", "))
	}
	p, ok := problems.Lookup(name)
	if !ok {
		return problems.Problem{}, badUsage("unknown problem %q (one of: %s)", name, strings.Join(problems.Names(), ", "))
	}
	return p, nil
}

// benchFlags are the flags bench and try share.
type benchFlags struct {
	duration time.Duration
	workload int
	seed     uint64
	seedSet  bool
	json     string
	repeat   int
	staffLog string
}

func (b *benchFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&b.duration, "duration", engine.DefaultLoadDuration, "length of the load phase (1s to 1h)")
	fs.IntVar(&b.workload, "workload", 0, "users at the start of the load (0: the scenario's default)")
	fs.Func("seed", "seed of every random choice (default: chosen from the clock and printed)", func(s string) error {
		_, err := fmt.Sscan(s, &b.seed)
		b.seedSet = err == nil
		return err
	})
	fs.StringVar(&b.json, "json", "", "write the result as JSON to this file")
	fs.IntVar(&b.repeat, "repeat", 1, "run this many times and report the score's mean, stdev and CV")
	fs.StringVar(&b.staffLog, "staff-log", "", "write error details and load decisions to this file ('-' for stderr)")
}

func (b *benchFlags) validate() error {
	if b.duration < time.Second || b.duration > time.Hour {
		return badUsage("--duration must be between 1s and 1h, got %s", b.duration)
	}
	if b.workload < 0 || b.workload > engine.DefaultMaxUsers {
		return badUsage("--workload must be between 1 and %d", engine.DefaultMaxUsers)
	}
	if b.repeat < 1 || b.repeat > 100 {
		return badUsage("--repeat must be between 1 and 100")
	}
	return nil
}

func parseTarget(s string) (*url.URL, error) {
	if s == "" {
		return nil, badUsage("bench: --target URL is required (for example --target http://127.0.0.1:8080)")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, badUsage("--target must be an http:// or https:// URL with a host, got %q", s)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// repoRoot finds the directory holding problems/ (for reference apps).
func repoRoot(env Env) (string, error) {
	if r := env.Getenv("TUNECON_ROOT"); r != "" {
		return r, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "problems", "problems.go")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the tunecon source tree (run from inside it, or set TUNECON_ROOT)")
		}
		dir = parent
	}
}
