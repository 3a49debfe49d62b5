// Command headroom benchmarks a problem's reference app and its tuned
// solution one after the other, with the same seed and duration, and prints
// the ratio of their scores. Run it with `make headroom PROBLEM=blog`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems"
)

func main() {
	name := flag.String("problem", "blog", "problem to measure")
	duration := flag.Duration("duration", 60*time.Second, "load duration of each run")
	seed := flag.Uint64("seed", 1, "seed of both runs")
	flag.Parse()
	cli.TuneRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p, ok := problems.Lookup(*name)
	if !ok || p.Tuned == "" {
		fail(fmt.Errorf("problem %q does not exist or has no tuned solution", *name))
	}
	root, err := kit.FindRoot(".")
	if err != nil {
		fail(err)
	}
	score := func(lang string) *engine.Result {
		fmt.Printf("=== %s, %s app\n", p.Name, lang)
		res, err := kit.Try(ctx, p, kit.ServeConfig{Lang: lang, Root: root, Log: os.Stderr},
			engine.WithLoadDuration(*duration), engine.WithSeed(*seed))
		if res != nil {
			_ = res.WriteSummary(os.Stdout)
		}
		if err != nil {
			fail(err)
		}
		return res
	}
	ref, tuned := score(p.Langs[0]), score(kit.TunedLang)
	for _, r := range []struct {
		name string
		res  *engine.Result
	}{{"reference", ref}, {"tuned", tuned}} {
		fmt.Printf("%-10s %s score %.1f (users %d -> %d, benchmarker saturated: %v)\n", r.name+":", r.res.Verdict(),
			r.res.Score, r.res.Workload.Start, r.res.Workload.Final, r.res.Benchmarker.Saturated)
	}
	if !ref.Passed || !tuned.Passed || ref.Score == 0 {
		fail(fmt.Errorf("both runs must pass with a score for a ratio"))
	}
	fmt.Printf("tuned/reference score: %.1f\n", tuned.Score/ref.Score)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "headroom:", err)
	os.Exit(1)
}
