// Command headroom benchmarks a problem's reference app and its tuned
// solution one after the other, with the same seed and duration, and prints
// the ratio of their scores. Run it with `make headroom PROBLEM=blog`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

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
	dir, err := os.MkdirTemp("", "headroom")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	score := func(lang string) *engine.Result {
		path := filepath.Join(dir, lang+".json")
		fmt.Printf("=== %s, %s app\n", *problem, lang)
		code := cli.Run(ctx, []string{"try", *problem, "--lang", lang, "--duration", *duration, "--seed", *seed, "--json", path},
			cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
		data, err := os.ReadFile(path)
		if err != nil {
			fail(fmt.Errorf("the %s run wrote no result (exit %d): %w", lang, code, err))
		}
		var res engine.Result
		if err := json.Unmarshal(data, &res); err != nil {
			fail(err)
		}
		return &res
	}
	ref := score("go")
	tuned := score("tuned")
	fmt.Printf("\nreference: %s score %.1f (users %d -> %d, benchmarker saturated: %v)\n", verdict(ref), ref.Score, ref.Workload.Start, ref.Workload.Final, ref.Benchmarker.Saturated)
	fmt.Printf("tuned:     %s score %.1f (users %d -> %d, benchmarker saturated: %v)\n", verdict(tuned), tuned.Score, tuned.Workload.Start, tuned.Workload.Final, tuned.Benchmarker.Saturated)
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
