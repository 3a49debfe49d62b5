// Command portalperf benchmarks the contest portal with tunecon's engine: a
// contest of 600 teams on SQLite, each team's browser on the leaderboard and
// its job pages, 50 workers reporting progress every second and finishing
// jobs. It prints each page's latencies. Run it with `make portal-perf`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"time"

	"github.com/tunecon/tunecon/internal/portal/loadtest"
	"github.com/tunecon/tunecon/problems/example"
)

// LeaderboardGoal is the leaderboard's p99 the portal aims under.
const LeaderboardGoal = 100 * time.Millisecond

func main() { os.Exit(run()) }

func run() int {
	cfg := loadtest.Config{Problem: example.Name, JobLength: 20 * time.Second}
	flag.DurationVar(&cfg.Arrival, "arrival", 5*time.Second, "the browsers' first visits are spread over this")
	flag.IntVar(&cfg.Teams, "teams", 600, "teams, one browser each")
	flag.IntVar(&cfg.Workers, "workers", 50, "workers reporting progress")
	flag.IntVar(&cfg.History, "history", 20, "finished jobs per team at the start")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "the seed")
	load := flag.Duration("duration", 60*time.Second, "how long the load runs")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole process (portal and benchmarker) to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "portalperf:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "portalperf:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "portalperf")
	if err != nil {
		fmt.Fprintln(os.Stderr, "portalperf:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	fmt.Printf("portal load: %d teams' browsers, %d workers, %d finished jobs per team, %s on SQLite\n",
		cfg.Teams, cfg.Workers, cfg.History, *load)
	rep, err := loadtest.Run(ctx, dir, cfg, *load)
	if rep != nil && rep.Result != nil {
		_ = rep.Result.WriteSummary(os.Stdout)
		fmt.Printf("\nworkers: %d progress reports, %d jobs finished\n\n", rep.Reports, rep.Finished)
		fmt.Printf("%-28s %8s %8s %8s\n", "page", "count", "p50 ms", "p99 ms")
		for _, e := range rep.Result.Endpoints {
			fmt.Printf("%-28s %8d %8.1f %8.1f\n", e.Name, e.Count, e.P50ms, e.P99ms)
		}
		for _, e := range rep.Result.Endpoints {
			if e.Name == "GET /leaderboard" {
				verdict := "under"
				if e.P99ms > float64(LeaderboardGoal.Milliseconds()) {
					verdict = "OVER"
				}
				fmt.Printf("\nleaderboard p99 %.1f ms: %s the goal of %s\n", e.P99ms, verdict, LeaderboardGoal)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "portalperf:", err)
		return 1
	}
	if !rep.Result.Passed {
		return 1
	}
	return 0
}
