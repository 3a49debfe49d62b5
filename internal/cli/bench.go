package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems"
)

func cmdBench(ctx context.Context, args []string, env Env) (int, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	target := fs.String("target", "", "base URL of the app to benchmark (required)")
	p, err := parse(fs, args, env)
	if err != nil {
		return 0, err
	}
	if err := bf.validate(); err != nil {
		return 0, err
	}
	u, err := parseTarget(*target)
	if err != nil {
		return 0, err
	}
	return runBench(ctx, p, u, bf, env)
}

func cmdTry(ctx context.Context, args []string, env Env) (int, error) {
	fs := flag.NewFlagSet("try", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	lang := fs.String("lang", "", "reference app language (default: the problem's first)")
	db := fs.String("db", "", "database DSN for the app (default: its embedded database)")
	p, err := parse(fs, args, env)
	if err != nil {
		return 0, err
	}
	if err := bf.validate(); err != nil {
		return 0, err
	}
	app, err := startApp(ctx, p, *lang, "127.0.0.1:0", *db, env)
	if err != nil {
		return 0, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Stop(sctx); err != nil {
			fmt.Fprintf(env.Stderr, "tunecon: stopping the app: %v\n", err)
		}
	}()
	u, _ := url.Parse(app.URL + "/")
	return runBench(ctx, p, u, bf, env)
}

func cmdServe(ctx context.Context, args []string, env Env) (int, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	lang := fs.String("lang", "", "reference app language (default: the problem's first)")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	db := fs.String("db", "", "database DSN for the app (default: its embedded database)")
	p, err := parse(fs, args, env)
	if err != nil {
		return 0, err
	}
	app, err := startApp(ctx, p, *lang, *addr, *db, env)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "%s (%s) is serving on %s; stop with Ctrl-C\n", p.Name, langOr(p, *lang), app.URL)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ExitPass, app.Stop(sctx)
}

func langOr(p problems.Problem, lang string) string {
	if lang == "" {
		return p.Langs[0]
	}
	return lang
}

func startApp(ctx context.Context, p problems.Problem, lang, addr, db string, env Env) (*problems.App, error) {
	lang = langOr(p, lang)
	ok := false
	for _, l := range p.Langs {
		ok = ok || l == lang
	}
	if !ok {
		return nil, badUsage("problem %s has no %q reference app (languages: %v)", p.Name, lang, p.Langs)
	}
	root, err := repoRoot(env)
	if err != nil {
		return nil, err
	}
	if db == "" {
		db = env.Getenv("TUNECON_DB")
	}
	return p.Serve(ctx, problems.ServeConfig{Lang: lang, Addr: addr, DB: db, Root: root, Log: env.Stderr})
}

// runBench runs the benchmark bf.repeat times and reports.
func runBench(ctx context.Context, p problems.Problem, target *url.URL, bf benchFlags, env Env) (int, error) {
	staff := io.Discard
	switch bf.staffLog {
	case "":
	case "-":
		staff = env.Stderr
	default:
		f, err := os.Create(bf.staffLog)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		staff = f
	}
	seed := bf.seed
	if !bf.seedSet {
		seed = uint64(env.Now().UnixNano()) % 1_000_000_000
	}
	var results []*engine.Result
	code := ExitPass
	for i := range bf.repeat {
		if bf.repeat > 1 {
			fmt.Fprintf(env.Stdout, "=== run %d of %d\n", i+1, bf.repeat)
		}
		opts := []engine.Option{engine.WithLoadDuration(bf.duration), engine.WithSeed(seed), engine.WithClock(env.Now)}
		if bf.workload > 0 {
			opts = append(opts, engine.WithWorkload(bf.workload))
		}
		prog := newProgress(env, bf.duration)
		opts = append(opts, engine.WithStaffLog(prog.wrap(staff)))
		b := engine.New(p.Scenario(), target, opts...)
		stop := prog.watch(b)
		res := b.Run(ctx)
		stop()
		results = append(results, res)
		if err := res.WriteSummary(env.Stdout); err != nil {
			return 0, err
		}
		switch {
		case res.Internal && code == ExitPass:
			code = ExitInternal
		case !res.Passed:
			code = ExitFail
		}
		if ctx.Err() != nil {
			break
		}
	}
	if bf.repeat > 1 {
		s := summarize(results)
		fmt.Fprintf(env.Stdout, "\nScores over %d runs: mean %.1f, stdev %.1f, CV %.1f%%\n", len(results), s.Mean, s.Stdev, 100*s.CV)
	}
	if bf.json != "" {
		if err := writeJSON(bf.json, results); err != nil {
			return 0, err
		}
	}
	return code, nil
}

// Repeat summarizes repeated runs.
type Repeat struct {
	Runs  []*engine.Result `json:"runs"`
	Mean  float64          `json:"score_mean"`
	Stdev float64          `json:"score_stdev"`
	CV    float64          `json:"score_cv"`
}

func summarize(results []*engine.Result) Repeat {
	r := Repeat{Runs: results}
	for _, res := range results {
		r.Mean += res.Score
	}
	r.Mean /= float64(len(results))
	for _, res := range results {
		r.Stdev += (res.Score - r.Mean) * (res.Score - r.Mean)
	}
	if len(results) > 1 {
		r.Stdev = math.Sqrt(r.Stdev / float64(len(results)-1))
	}
	if r.Mean > 0 {
		r.CV = r.Stdev / r.Mean
	}
	return r
}

func writeJSON(path string, results []*engine.Result) error {
	var v any = results[0]
	if len(results) > 1 {
		v = summarize(results)
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// RunForResult runs a bench or try command line with --json into a
// temporary file, and returns the result it wrote and the exit status.
func RunForResult(ctx context.Context, args []string, env Env) (*engine.Result, int, error) {
	dir, err := os.MkdirTemp("", "tunecon-result")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "result.json")
	code := Run(ctx, append(args, "--json", path), env)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, code, fmt.Errorf("%q wrote no result (exit %d): %w", strings.Join(args, " "), code, err)
	}
	var res engine.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, code, err
	}
	return &res, code, nil
}
