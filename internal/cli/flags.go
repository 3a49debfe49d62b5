package cli

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems"
)

// flagGroup is a set of flags that several subcommands share.
type flagGroup interface {
	register(fs *flag.FlagSet)
	// check validates the values once the command line is parsed.
	check() error
}

// parseCommand parses the command line of the subcommand name, whose flags
// are the groups', accepting the PROBLEM argument before or after them; it
// checks every group and returns the problem.
func parseCommand(name string, args []string, env Env, groups ...flagGroup) (kit.Problem, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, g := range groups {
		g.register(fs)
	}
	p, err := parse(fs, args, env)
	if err != nil {
		return kit.Problem{}, err
	}
	for _, g := range groups {
		if err := g.check(); err != nil {
			return kit.Problem{}, err
		}
	}
	return p, nil
}

// parse parses a subcommand's flags, accepting the PROBLEM argument before or
// after them, and returns the problem.
func parse(fs *flag.FlagSet, args []string, env Env) (kit.Problem, error) {
	fs.SetOutput(env.Stderr)
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return kit.Problem{}, err
		}
		return kit.Problem{}, badUsage("%s: %v", fs.Name(), err)
	}
	rest := fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return kit.Problem{}, badUsage("%s: unexpected argument %q", fs.Name(), rest[0])
	}
	if name == "" {
		return kit.Problem{}, badUsage("%s: which problem? (one of: %s)", fs.Name(), strings.Join(problems.Names(), ", "))
	}
	p, ok := problems.Lookup(name)
	if !ok {
		return kit.Problem{}, badUsage("unknown problem %q (one of: %s)", name, strings.Join(problems.Names(), ", "))
	}
	return p, nil
}

// Progress modes of --progress.
const (
	progressAuto  = "auto"
	progressBar   = "bar"
	progressPlain = "plain"
	progressJSONL = "jsonl"
	progressNone  = "none"
)

var progressModes = []string{progressAuto, progressBar, progressPlain, progressJSONL, progressNone}

// benchFlags are the flags bench and try share.
type benchFlags struct {
	duration time.Duration
	workload int
	seed     uint64
	seedSet  bool
	seedStep uint64
	json     string
	report   string
	repeat   int
	staffLog string
	progress string
}

func (b *benchFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&b.duration, "duration", engine.DefaultLoadDuration,
		"length of the load phase ("+shortDuration(engine.MinLoadDuration)+" to "+shortDuration(engine.MaxLoadDuration)+")")
	fs.IntVar(&b.workload, "workload", 0, "users at the start of the load (0: the scenario's default)")
	fs.Func("seed", "seed of every random choice (default: chosen from the clock and printed)", func(s string) error {
		_, err := fmt.Sscan(s, &b.seed)
		b.seedSet = err == nil
		return err
	})
	fs.Uint64Var(&b.seedStep, "seed-step", 0, "with --repeat: run i uses seed + i × this (0: every run the same seed)")
	fs.StringVar(&b.json, "json", "", "write the result as JSON to this file")
	fs.StringVar(&b.report, "report", "", "write the run as one self-contained HTML page, its charts included, to this file (with --repeat: the last run)")
	fs.IntVar(&b.repeat, "repeat", 1, "run this many times and report the score's mean, stdev and CV")
	fs.StringVar(&b.staffLog, "staff-log", "", "write error details and load decisions to this file ('-' for stderr)")
	fs.StringVar(&b.progress, "progress", progressAuto,
		"how to show progress: auto (a bar on a terminal, else a line every 10 s), bar, plain, jsonl (JSON lines on stdout), none")
}

func (b *benchFlags) check() error {
	if b.duration < engine.MinLoadDuration || b.duration > engine.MaxLoadDuration {
		return badUsage("--duration must be between %s and %s, got %s",
			shortDuration(engine.MinLoadDuration), shortDuration(engine.MaxLoadDuration), b.duration)
	}
	if b.workload < 0 || b.workload > engine.DefaultMaxUsers {
		return badUsage("--workload must be between 1 and %d", engine.DefaultMaxUsers)
	}
	if b.repeat < 1 || b.repeat > 100 {
		return badUsage("--repeat must be between 1 and 100")
	}
	if !slices.Contains(progressModes, b.progress) {
		return badUsage("--progress must be one of %s, got %q", strings.Join(progressModes, ", "), b.progress)
	}
	return nil
}

// shortDuration is d as people write it: 1h rather than 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// baseSeed is the seed of the first run: --seed, or one from the clock.
func (b *benchFlags) baseSeed(env Env) uint64 {
	if b.seedSet {
		return b.seed
	}
	return engine.SeedFromTime(env.Now())
}

// options turns the flags into the engine's options for run i (from 0) of
// runs starting at seed base, less the progress and the staff log, which the
// caller adds.
func (b *benchFlags) options(base uint64, i int) []engine.Option {
	opts := []engine.Option{engine.WithLoadDuration(b.duration), engine.WithSeed(base + uint64(i)*b.seedStep)}
	if b.workload > 0 {
		opts = append(opts, engine.WithWorkload(b.workload))
	}
	return opts
}

// targetFlag is bench's --target, and its --restart-command.
type targetFlag struct {
	raw     string
	url     *url.URL
	restart string
}

func (t *targetFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&t.raw, "target", "", "base URL of the app to benchmark (required)")
	fs.StringVar(&t.restart, "restart-command", "", "a shell command that restarts the app (stops it and starts it again), "+
		"run between the load and the final check; the run then waits until the app answers again")
}

func (t *targetFlag) check() error {
	if t.raw == "" {
		return badUsage("bench: --target URL is required (for example --target http://127.0.0.1:8080)")
	}
	u, err := url.Parse(t.raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badUsage("--target must be an http:// or https:// URL with a host, got %q", t.raw)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	t.url = u
	return nil
}

// appFlags are the flags serve and try share: which reference app, on which
// database, and (serve only) where.
type appFlags struct {
	lang, db string
	addr     string
	withAddr bool
	pin      string // try's --pin
	withPin  bool
	// try's --restart
	restart, withRestart bool
}

// Values of try's --pin.
const (
	pinAuto = "auto"
	pinOn   = "on"
	pinOff  = "off"
)

// autoPinCPUs is how many CPUs try needs to split them by default: the
// app's half is then at least the 2 cores of a typical team server, while
// on 2 cores one each would measure a smaller server than a contest's.
const autoPinCPUs = 4

func (a *appFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.lang, "lang", "", "reference app language (default: the problem's first)")
	fs.StringVar(&a.db, "db", "", "database DSN for the app (default: its embedded database; TUNECON_DB sets it too)")
	a.addr = "127.0.0.1:0"
	if a.withAddr {
		fs.StringVar(&a.addr, "addr", "127.0.0.1:8080", "address to listen on")
	}
	if a.withPin {
		fs.StringVar(&a.pin, "pin", pinAuto, fmt.Sprintf("run the app and the benchmarker on separate halves of the CPUs, as a contest runs them on separate machines: on, off, or auto (on with %d CPUs or more)", autoPinCPUs))
	}
	if a.withRestart {
		fs.BoolVar(&a.restart, "restart", true, "stop the app after the load and start it again before the final check, "+
			"as a machine restarted after a contest: what it kept only in memory is gone")
	}
}

// check checks --pin and leaves the language to config, which knows the
// problem.
func (a *appFlags) check() error {
	if a.withPin && a.pin != pinAuto && a.pin != pinOn && a.pin != pinOff {
		return badUsage("--pin must be auto, on or off, not %q", a.pin)
	}
	return nil
}

// split applies --pin: it holds this process to its half of the CPUs and
// returns the app's, or says why they share them.
func (a *appFlags) split(p kit.Problem) (kit.CPUSplit, error) {
	var split kit.CPUSplit
	var err error
	switch {
	case a.pin == pinOff:
		return kit.CPUSplit{Why: "--pin off: the app and the benchmarker share every CPU"}, nil
	case p.Handler != nil:
		split.Why = fmt.Sprintf("problem %s serves its app inside this process", p.Name)
	case a.pin == pinOn:
		split, err = kit.SplitCPUs(2)
	default:
		split, err = kit.SplitCPUs(autoPinCPUs)
	}
	if err == nil && a.pin == pinOn && !split.Pinned() {
		err = fmt.Errorf("--pin on: %s", split.Why)
	}
	return split, err
}

// config checks the language and finds the repository root.
func (a *appFlags) config(p kit.Problem, env Env) (kit.ServeConfig, error) {
	lang := a.lang
	if lang == "" {
		lang = p.Langs[0]
	}
	if !slices.Contains(p.ServeLangs(), lang) {
		return kit.ServeConfig{}, badUsage("problem %s has no %q reference app (languages: %s)", p.Name, lang, strings.Join(p.ServeLangs(), ", "))
	}
	root := env.Getenv("TUNECON_ROOT")
	if root == "" {
		var err error
		if root, err = kit.FindRoot("."); err != nil {
			return kit.ServeConfig{}, err
		}
	}
	db := a.db
	if db == "" {
		db = env.Getenv("TUNECON_DB")
	}
	return kit.ServeConfig{Lang: lang, Addr: a.addr, DB: db, Root: root, Log: env.Stderr}, nil
}
