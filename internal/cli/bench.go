package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/report"
	"github.com/tunecon/tunecon/kit"
)

// cmdBench benchmarks a running app.
func cmdBench(ctx context.Context, args []string, env Env) (int, error) {
	var bf benchFlags
	var tf targetFlag
	p, err := parseCommand("bench", args, env, &bf, &tf)
	if err != nil {
		return 0, err
	}
	var more []engine.Option
	if tf.restart != "" {
		more = append(more, kit.RestartByCommand(tf.restart, tf.url, env.Stderr))
	}
	return runBench(ctx, p, tf.url, bf, env, more...)
}

// runBench benchmarks target bf.repeat times with one seed, reports each
// result and, for repeats, the scores' statistics; it returns the exit
// status of the worst outcome. more are options of every run.
func runBench(ctx context.Context, p kit.Problem, target *url.URL, bf benchFlags, env Env, more ...engine.Option) (int, error) {
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
	// In jsonl mode stdout carries only JSON lines; the summary goes to stderr.
	summary := env.Stdout
	if bf.progress == progressJSONL {
		summary = env.Stderr
	}
	var results []*engine.Result
	seed := bf.baseSeed(env)
	for i := range bf.repeat {
		if bf.repeat > 1 {
			fmt.Fprintf(summary, "=== run %d of %d\n", i+1, bf.repeat)
		}
		prog := newProgress(env, bf.progress, bf.duration, i+1)
		opts := append(bf.options(seed, i), engine.WithStaffLog(prog.wrap(staff)), prog.option())
		opts = append(opts, more...)
		res, err := kit.Bench(ctx, p, target, opts...)
		if err != nil {
			return 0, err
		}
		prog.finish(res)
		results = append(results, res)
		if err := res.WriteSummary(summary); err != nil {
			return 0, err
		}
		if ctx.Err() != nil {
			break
		}
	}
	rep := engine.Summarize(results)
	if bf.repeat > 1 {
		fmt.Fprintf(summary, "\nScores over %d runs: mean %.1f, stdev %.1f, CV %.1f%%\n", len(results), rep.Mean, rep.Stdev, 100*rep.CV)
		if bf.progress == progressJSONL {
			writeLine(env.Stdout, repeatLine{Event: "repeat", Mean: rep.Mean, Stdev: rep.Stdev, CV: rep.CV, Runs: len(results)})
		}
	}
	if bf.json != "" {
		var v any = results[0]
		if len(results) > 1 {
			v = rep
		}
		if err := writeJSON(bf.json, v); err != nil {
			return 0, err
		}
	}
	if bf.report != "" {
		if err := writeReport(bf.report, results[len(results)-1]); err != nil {
			return 0, err
		}
	}
	return rep.Outcome().ExitStatus(), nil
}

// writeReport writes a run's HTML report (--report).
func writeReport(path string, res *engine.Result) error {
	var b bytes.Buffer
	if err := report.Write(&b, res, report.Options{}); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
