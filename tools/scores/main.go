// Command scores benchmarks a problem's reference apps in every language on
// every store (SQLite, and MariaDB on a private server) with one seed and
// duration, and prints a Markdown table of their starting scores for the
// README. Run it with `make scores`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/internal/servers"
)

func main() {
	problem := flag.String("problem", "blog", "problem to measure")
	duration := flag.String("duration", "60s", "load duration of each run")
	seed := flag.String("seed", "1", "seed of every run")
	flag.Parse()
	cli.TuneRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "scores")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)

	stores := []string{"sqlite"}
	maria, err := servers.StartMariaDB(ctx, filepath.Join(dir, "mariadb"), io.Discard)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scores: MariaDB rows skipped: %v\n", err)
	} else {
		defer maria.Stop()
		stores = append(stores, "mariadb")
	}
	type row struct {
		lang, store string
		res         *engine.Result
	}
	var rows []row
	for _, store := range stores {
		for _, lang := range []string{"go", "python"} {
			db := ""
			if store == "mariadb" {
				if db, err = maria.CreateDatabase(ctx, *problem+"_"+lang); err != nil {
					fail(err)
				}
			}
			fmt.Fprintf(os.Stderr, "=== %s, %s on %s\n", *problem, lang, store)
			args := []string{"try", *problem, "--lang", lang, "--duration", *duration, "--seed", *seed}
			if db != "" {
				args = append(args, "--db", db)
			}
			res, _, err := cli.RunForResult(ctx, args, cli.Env{Stdout: os.Stderr, Stderr: os.Stderr, Getenv: os.Getenv})
			if err != nil {
				fail(err)
			}
			rows = append(rows, row{lang, store, res})
		}
	}
	fmt.Printf("Starting scores of `%s`, measured %s with `make scores` (seed %s, load %s, engine %s):\n\n",
		*problem, time.Now().UTC().Format("2006-01-02"), *seed, *duration, engine.Version)
	fmt.Println("| language | store | result | score | fails | users at the end | p50 of GET / (ms) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		verdict := "SUCCESS"
		if !r.res.Passed {
			verdict = "FAIL"
		}
		var p50 float64
		for _, e := range r.res.Endpoints {
			if e.Name == "GET /" {
				p50 = e.P50ms
			}
		}
		fmt.Printf("| %s | %s | %s | %.1f | %d | %d | %.0f |\n", r.lang, r.store, verdict, r.res.Score, r.res.Errors.Charged(), r.res.Workload.Final, p50)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scores:", err)
	os.Exit(1)
}
