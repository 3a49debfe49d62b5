// Package cli is the tunecon command: it parses arguments, calls the kit and
// the engine, and reports. main only wires the process to Run. Each
// subcommand has a file of its own.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// Exit statuses: those of engine.Outcome, and 2 for a bad command line.
const (
	ExitPass     = engine.ExitPassed
	ExitFail     = engine.ExitFailed
	ExitUsage    = engine.ExitUsage
	ExitInternal = engine.ExitInternal
)

// Env is the process's outside world, injected so tests run the command in
// process.
type Env struct {
	// Stdin is read by commands that take a secret (nil: empty).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// ReadSecret, when stdin is a terminal, prompts for a secret without
	// echoing it; nil reads the first line of Stdin.
	ReadSecret func(prompt string) (string, error)
	Getenv     func(string) string
	// IsTerminal reports whether Stderr is a terminal (live progress line).
	IsTerminal bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

const usage = `tunecon: benchmark web apps for performance-tuning contests

Usage:
  tunecon problems [--json]                list the problems
  tunecon bench PROBLEM --target URL [flags] benchmark a running app
  tunecon serve PROBLEM [flags]            run a problem's reference app
  tunecon try PROBLEM [flags]              serve + bench + report + stop
  tunecon portal [--db DSN] [flags]        serve a contest, with benchmark workers in process
  tunecon portal migrate --db DSN          create or upgrade a contest database
  tunecon portal admin create --db DSN --login NAME
                                           add an admin account (its password from stdin)
  tunecon portal admin import --db DSN --file TEAMS.csv
                                           import teams, accounts and servers (links on stdout)
  tunecon worker --db DSN [flags]          run a contest's benchmark jobs until stopped
  tunecon version                          print the engine version

Run 'tunecon COMMAND -h' for a command's flags.
Exit status: 0 passed, 1 failed, 2 bad usage, 3 internal error.
`

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
	case "portal":
		code, err = cmdPortal(ctx, args[1:], env)
	case "worker":
		code, err = cmdWorker(ctx, args[1:], env)
	case "version":
		code, err = cmdVersion(args[1:], env)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return ExitPass
	default:
		err = badUsage("unknown command %q (try: problems, bench, serve, try, portal, worker, version)", args[0])
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
