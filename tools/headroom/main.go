// Command headroom benchmarks a problem's reference app and its tuned
// solution one after the other, with the same seed and duration, and prints
// the ratio of their scores. Run it with `make headroom PROBLEM=blog`.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/tools/internal/measure"
)

func main() {
	ctx, stop, tool := measure.Setup("headroom", true)
	defer stop()
	p := tool.Problem
	if p.Tuned == "" {
		tool.Fail(fmt.Errorf("problem %s has no tuned solution", p.Name))
	}
	score := func(lang string) *engine.Result {
		fmt.Printf("=== %s, %s app\n", p.Name, lang)
		return tool.Try(ctx, lang, "", os.Stdout)
	}
	ref, tuned := score(p.Langs[0]), score(kit.TunedLang)
	for _, r := range []struct {
		name string
		res  *engine.Result
	}{{"reference", ref}, {"tuned", tuned}} {
		fmt.Printf("%-10s %s score %.1f (users %d -> %d, at most %d; held back by: %s)\n", r.name+":", r.res.Verdict(),
			r.res.Score, r.res.Workload.Start, r.res.Workload.Final, r.res.Workload.Peak, measure.HeldBack(r.res))
	}
	if !ref.Passed || !tuned.Passed || ref.Score == 0 {
		tool.Fail(errors.New("both runs must pass with a score for a ratio"))
	}
	fmt.Printf("tuned/reference score: %.1f\n", tuned.Score/ref.Score)
}
