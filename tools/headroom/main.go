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

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/cli"
)

func main() {
	problem := flag.String("problem", "blog", "problem to measure")
	duration := flag.String("duration", "60s", "load duration of each run")
	seed := flag.String("seed", "1", "seed of both runs")
	flag.Parse()
	cli.TuneRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	env := cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	score := func(lang string) *engine.Result {
		fmt.Printf("=== %s, %s app\n", *problem, lang)
		res, _, err := cli.RunForResult(ctx, []string{"try", *problem, "--lang", lang, "--duration", *duration, "--seed", *seed}, env)
		if err != nil {
			fail(err)
		}
		return res
	}
	ref, tuned := score("go"), score("tuned")
	for _, r := range []struct {
		name string
		res  *engine.Result
	}{{"reference", ref}, {"tuned", tuned}} {
		fmt.Printf("%-10s %s score %.1f (users %d -> %d, benchmarker saturated: %v)\n", r.name+":", verdict(r.res),
			r.res.Score, r.res.Workload.Start, r.res.Workload.Final, r.res.Benchmarker.Saturated)
	}
	if !ref.Passed || !tuned.Passed || ref.Score == 0 {
		fail(fmt.Errorf("both runs must pass with a score for a ratio"))
	}
	fmt.Printf("tuned/reference score: %.1f\n", tuned.Score/ref.Score)
}

func verdict(r *engine.Result) string {
	if r.Passed {
		return "SUCCESS"
	}
	return "FAIL"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "headroom:", err)
	os.Exit(1)
}
