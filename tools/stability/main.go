// Command stability measures how reproducible a problem's scores are: it
// runs the reference app and the tuned solution RUNS times each, one after
// the other on this machine, with seeds seed, seed+1, ..., and prints every
// score, the mean, the standard deviation and the coefficient of variation,
// ending in one line per app: `reference cv: N%` and `tuned cv: N%`. Run it
// with `make stability PROBLEM=blog [RUNS=5]`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/tools/internal/measure"
)

func main() {
	runs := flag.Int("runs", 5, "runs of each app")
	ctx, stop, tool := measure.Setup("stability", true)
	defer stop()
	p := tool.Problem
	if *runs < 2 {
		tool.Fail(fmt.Errorf("-runs must be at least 2, got %d", *runs))
	}
	apps := []struct{ name, lang string }{{"reference", p.Langs[0]}}
	if p.Tuned != "" {
		apps = append(apps, struct{ name, lang string }{"tuned", kit.TunedLang})
	}
	seed := tool.Seed
	reps := make([]engine.Repeat, len(apps))
	var appSpeeds, benchSpeeds []float64
	for i, app := range apps {
		var results []*engine.Result
		for k := range *runs {
			tool.Seed = seed + uint64(k)
			fmt.Fprintf(os.Stderr, "=== %s, %s app, run %d of %d, seed %d\n", p.Name, app.lang, k+1, *runs, tool.Seed)
			appSpeed, benchSpeed := tool.Speed()
			appSpeeds, benchSpeeds = append(appSpeeds, appSpeed), append(benchSpeeds, benchSpeed)
			res := tool.Try(ctx, app.lang, "", os.Stderr)
			fmt.Printf("%-9s run %d seed %-4d %-7s score %10.1f  users %d -> %d, at most %d; held back by: %s; CPUs before it: app's %.0f MB/s, benchmarker's %.0f MB/s\n",
				app.name, k+1, tool.Seed, res.Verdict(), res.Score, res.Workload.Start, res.Workload.Final, res.Workload.Peak, measure.HeldBack(res),
				appSpeed, benchSpeed)
			results = append(results, res)
		}
		reps[i] = engine.Summarize(results)
		fmt.Printf("%-9s mean %.1f, stdev %.1f, outcome %s\n", app.name, reps[i].Mean, reps[i].Stdev, reps[i].Outcome())
	}
	_, _, appCV := engine.Spread(appSpeeds)
	_, _, benchCV := engine.Spread(benchSpeeds)
	fmt.Printf("CPU speed cv over the %d probes: app's CPUs %.1f%%, benchmarker's %.1f%%\n", len(appSpeeds), 100*appCV, 100*benchCV)
	for i, app := range apps {
		fmt.Printf("%s cv: %.1f%%\n", app.name, 100*reps[i].CV)
	}
	for _, r := range reps {
		if r.Outcome() != engine.Passed {
			os.Exit(1)
		}
	}
}
