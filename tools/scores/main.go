// Command scores benchmarks a problem's reference apps in every language on
// every store (the embedded one, and MariaDB on a private server) with one
// seed and duration, and prints a Markdown table of their starting scores
// for docs/scores.md. Run it with `make scores`.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/kit/apptest/servers"
	"github.com/tunecon/tunecon/tools/internal/measure"
)

func main() {
	only := flag.String("langs", "", "the languages to run, comma-separated (default: every one the problem has)")
	ctx, stop, tool := measure.Setup("scores", false)
	defer stop()
	p := tool.Problem
	langs, err := pick(p.Langs, *only)
	if err != nil {
		tool.Fail(err)
	}
	dir, err := os.MkdirTemp("", "scores")
	if err != nil {
		tool.Fail(err)
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
		for _, lang := range langs {
			db := ""
			if store == kit.StoreMariaDB {
				if db, err = maria.CreateDatabase(ctx, p.Name+"_"+lang); err != nil {
					tool.Fail(err)
				}
			}
			fmt.Fprintf(os.Stderr, "=== %s, %s on %s\n", p.Name, lang, store)
			rows = append(rows, row{lang, store, tool.Try(ctx, lang, db, os.Stderr)})
		}
	}
	fmt.Printf("Starting scores of `%s`, measured %s with `make scores` (seed %d, load %s, engine %s):\n\n",
		p.Name, time.Now().UTC().Format("2006-01-02"), tool.Seed, tool.Duration, engine.Version)
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

// pick is the languages of have that list (comma-separated) names, in
// have's order; all of have if list is empty.
func pick(have []string, list string) ([]string, error) {
	if list == "" {
		return have, nil
	}
	want := strings.Split(list, ",")
	for _, l := range want {
		if !slices.Contains(have, l) {
			return nil, fmt.Errorf("-langs %s: no %q app; the problem has %s", list, l, strings.Join(have, ", "))
		}
	}
	var out []string
	for _, l := range have {
		if slices.Contains(want, l) {
			out = append(out, l)
		}
	}
	return out, nil
}
