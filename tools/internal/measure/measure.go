// Package measure is what the measuring tools (make headroom, make scores)
// share: their common flags, and one in-process run of a reference app.
package measure

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems"
)

// Tool is a measuring tool's setup: its problem, the repository root, the
// load and seed of every run, and the CPUs its apps run on.
type Tool struct {
	Name     string
	Problem  kit.Problem
	Root     string
	Duration time.Duration
	Seed     uint64
	// AppCPUs, when set, are the only CPUs the apps run on; the tool, and
	// so the benchmarker, runs on BenchCPUs (see kit.SplitCPUs).
	AppCPUs, BenchCPUs string
}

// Setup parses the common flags (-problem, -duration, -seed, -pin), tunes
// the runtime as the tunecon command does, and returns the tool and a
// context that ends on Ctrl-C. With -pin (on by default when pinByDefault)
// the tool, and so the benchmarker, keeps to one half of the CPUs and its
// apps to the other (kit.SplitCPUs). A tool that starts database servers does not pin by default:
// they would run on the benchmarker's CPUs.
func Setup(name string, pinByDefault bool) (context.Context, context.CancelFunc, *Tool) {
	problem := flag.String("problem", "blog", "problem to measure")
	duration := flag.Duration("duration", engine.DefaultLoadDuration, "load duration of each run")
	seed := flag.Uint64("seed", 1, "seed of every run")
	pinned := flag.Bool("pin", pinByDefault, "run the apps and the benchmarker on separate halves of this machine's CPUs, as a contest runs them on separate machines")
	flag.Parse()
	kit.TuneRuntime()
	t := &Tool{Name: name, Duration: *duration, Seed: *seed}
	if *pinned {
		split, err := kit.SplitCPUs(2)
		if err != nil {
			t.Fail(err)
		}
		fmt.Printf("%s (-pin=false, or make PIN=0, shares them)\n", split)
		t.AppCPUs, t.BenchCPUs = split.Apps, split.Bench
	} else {
		fmt.Println("not pinned: the apps and the benchmarker share every CPU")
	}
	p, ok := problems.Lookup(*problem)
	if !ok {
		t.Fail(fmt.Errorf("no problem %q", *problem))
	}
	root, err := kit.FindRoot(".")
	if err != nil {
		t.Fail(err)
	}
	t.Problem, t.Root = p, root
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	return ctx, stop, t
}

// Try runs the reference app of lang on db ("" for the embedded store) once,
// writes the run's summary to summary and its app's output to stderr, and
// exits on an error that left no result.
func (t *Tool) Try(ctx context.Context, lang, db string, summary io.Writer) *engine.Result {
	res, err := kit.Try(ctx, t.Problem, kit.ServeConfig{Lang: lang, DB: db, Root: t.Root, Log: os.Stderr, CPUs: t.AppCPUs},
		engine.WithLoadDuration(t.Duration), engine.WithSeed(t.Seed))
	if res != nil {
		_ = res.WriteSummary(summary)
	}
	if err != nil {
		t.Fail(err)
	}
	return res
}

// speedRounds is how many probes of kit.CPUSpeed give one figure.
const speedRounds = 5

// Speed probes the speed of the apps' CPUs and of the benchmarker's
// (kit.CPUSpeed; unpinned, both are every CPU of the tool), in MB/s, while no
// app runs: a machine whose CPUs slow down between runs moves their scores
// with them.
func (t *Tool) Speed() (app, bench float64) {
	app, err := kit.CPUSpeed(t.AppCPUs, speedRounds)
	if err != nil {
		t.Fail(err)
	}
	if bench, err = kit.CPUSpeed(t.BenchCPUs, speedRounds); err != nil {
		t.Fail(err)
	}
	return app, bench
}

// Fail prints err under the tool's name and exits with status 1.
func (t *Tool) Fail(err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
	os.Exit(1)
}

// HeldBack names what stopped the users from growing (the app, the scenario's
// cap, the benchmarker), as the run's summary does, so that the ratio is read
// with its caveats.
func HeldBack(r *engine.Result) string {
	var why []string
	for _, reason := range slices.Sorted(maps.Keys(r.LimitedBy)) {
		why = append(why, fmt.Sprintf("%s (%d)", engine.LimitReason(reason), r.LimitedBy[reason]))
	}
	if r.Workload.MaxReached && r.LimitedBy["max"] == 0 {
		why = append(why, "the scenario's maximum of users")
	}
	if r.Benchmarker.Saturated {
		why = append(why, "the benchmarker, over the whole run ("+r.Benchmarker.Reason+")")
	}
	if len(why) == 0 {
		return "nothing (the run ended first)"
	}
	return strings.Join(why, ", ")
}
