package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tunecon/tunecon/engine"
)

// Progress display: the engine reports every progressEvery; a plain display
// prints a line every plainEvery of the run.
const (
	progressEvery = time.Second
	plainEvery    = 10 * time.Second
)

// progress shows one running benchmark in the --progress mode: a live bar, a
// plain line every few seconds, or JSON lines for a program that runs
// tunecon as a child process. Staff log lines written to the same stream
// clear the bar first.
type progress struct {
	env  Env
	mode string
	run  int

	mu        sync.Mutex
	bar       *progressbar.ProgressBar
	lastReq   int64
	nextPlain time.Duration
}

func newProgress(env Env, mode string, load time.Duration, run int) *progress {
	if mode == progressAuto {
		mode = progressPlain
		if env.IsTerminal {
			mode = progressBar
		}
	}
	p := &progress{env: env, mode: mode, run: run, nextPlain: plainEvery}
	if mode == progressBar {
		p.bar = progressbar.NewOptions(int(load/time.Second),
			progressbar.OptionSetWriter(env.Stderr),
			progressbar.OptionSetWidth(20),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionShowCount(),
		)
	}
	return p
}

// option has the engine report to this display.
func (p *progress) option() engine.Option { return engine.WithProgress(progressEvery, p.show) }

// progressLine is one line of --progress jsonl while a run goes on.
type progressLine struct {
	Event        string             `json:"event"` // "progress"
	Run          int                `json:"run"`
	Phase        string             `json:"phase"`
	ElapsedS     float64            `json:"elapsed_s"`
	LoadElapsedS float64            `json:"load_elapsed_s"`
	Score        float64            `json:"score"`
	Requests     int64              `json:"requests"`
	Errors       engine.ErrorCounts `json:"errors"`
	Users        int                `json:"users"`
}

// resultLine is the line of --progress jsonl at the end of a run.
type resultLine struct {
	Event   string         `json:"event"` // "result"
	Run     int            `json:"run"`
	Outcome string         `json:"outcome"`
	Result  *engine.Result `json:"result"`
}

// repeatLine is the last line of --progress jsonl with --repeat.
type repeatLine struct {
	Event string  `json:"event"` // "repeat"
	Runs  int     `json:"runs"`
	Mean  float64 `json:"score_mean"`
	Stdev float64 `json:"score_stdev"`
	CV    float64 `json:"score_cv"`
}

func writeLine(w io.Writer, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // the lines are plain structs: this cannot fail
	}
	_, _ = w.Write(append(data, '\n'))
}

func (p *progress) show(pr engine.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rps := pr.Requests - p.lastReq
	p.lastReq = pr.Requests
	switch p.mode {
	case progressJSONL:
		writeLine(p.env.Stdout, progressLine{Event: "progress", Run: p.run, Phase: pr.Phase, ElapsedS: pr.Elapsed.Seconds(),
			LoadElapsedS: pr.LoadElapsed.Seconds(), Score: pr.Score, Requests: pr.Requests, Errors: pr.ErrorsByClass, Users: pr.Users})
		return
	case progressNone:
		return
	}
	line := fmt.Sprintf("%-11s %5.0fs  score %8.1f  %5d req/s  %3d errors  %4d users",
		pr.Phase, pr.Elapsed.Seconds(), pr.Score, rps, pr.Errors, pr.Users)
	switch {
	case p.bar != nil:
		p.bar.Describe(line)
		if pr.Phase == engine.PhaseLoad {
			_ = p.bar.Set(int(pr.LoadElapsed / time.Second))
		}
	case p.mode == progressPlain && pr.Elapsed >= p.nextPlain:
		p.nextPlain = pr.Elapsed.Truncate(plainEvery) + plainEvery
		fmt.Fprintln(p.env.Stderr, line)
	}
}

// finish ends the display of a run with its result.
func (p *progress) finish(res *engine.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
	if p.mode == progressJSONL {
		writeLine(p.env.Stdout, resultLine{Event: "result", Run: p.run, Outcome: res.Outcome().String(), Result: res})
	}
}

type lockedWriter struct {
	p *progress
	w io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if l.p.bar != nil {
		_ = l.p.bar.Clear()
	}
	return l.w.Write(b)
}

// wrap makes w safe to interleave with the progress display.
func (p *progress) wrap(w io.Writer) io.Writer {
	if w == io.Discard {
		return w
	}
	return lockedWriter{p, w}
}
