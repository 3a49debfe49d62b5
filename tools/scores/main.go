// Command scores benchmarks a problem's reference apps in every language on
// every store (the embedded one, and MariaDB on a private server) with one
// seed and duration, and prints a Markdown table of their starting scores
// for the README. Run it with `make scores`.
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
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems"
)

func main() {
	name := flag.String("problem", "blog", "problem to measure")
	duration := flag.Duration("duration", 60*time.Second, "load duration of each run")
	seed := flag.Uint64("seed", 1, "seed of every run")
	flag.Parse()
	cli.TuneRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p, ok := problems.Lookup(*name)
	if !ok {
		fail(fmt.Errorf("no problem %q", *name))
	}
	root, err := kit.FindRoot(".")
	if err != nil {
		fail(err)
	}
	dir, err := os.MkdirTemp("", "scores")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)

	var maria *servers.MariaDB
	type row struct {
		lang, store string
		res         *engine.Result
	}
	var rows []row
	for _, store := range p.Stores {
		if store == kit.StoreMariaDB && maria == nil {
			if maria, err = servers.StartMariaDB(ctx, filepath.Join(dir, "mariadb"), io.Discard); err != nil {
				fmt.Fprintf(os.Stderr, "scores: MariaDB rows skipped: %v\n", err)
				continue
			}
			defer maria.Stop()
		}
		for _, lang := range p.Langs {
			db := ""
			if store == kit.StoreMariaDB {
				if db, err = maria.CreateDatabase(ctx, p.Name+"_"+lang); err != nil {
					fail(err)
				}
			}
			fmt.Fprintf(os.Stderr, "=== %s, %s on %s\n", p.Name, lang, store)
			res, err := kit.Try(ctx, p, kit.ServeConfig{Lang: lang, DB: db, Root: root, Log: os.Stderr},
				engine.WithLoadDuration(*duration), engine.WithSeed(*seed))
			if res != nil {
				_ = res.WriteSummary(os.Stderr)
			}
			if err != nil {
				fail(err)
			}
			rows = append(rows, row{lang, store, res})
		}
	}
	fmt.Printf("Starting scores of `%s`, measured %s with `make scores` (seed %d, load %s, engine %s):\n\n",
		p.Name, time.Now().UTC().Format("2006-01-02"), *seed, *duration, engine.Version)
	fmt.Println("| language | store | result | score | fails | users at the end | p50 of GET / (ms) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		var p50 float64
		for _, e := range r.res.Endpoints {
			if e.Name == "GET /" {
				p50 = e.P50ms
			}
		}
		fmt.Printf("| %s | %s | %s | %.1f | %d | %d | %.0f |\n", r.lang, r.store, r.res.Verdict(), r.res.Score, r.res.Errors.Charged(), r.res.Workload.Final, p50)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scores:", err)
	os.Exit(1)
}
