package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tunecon/tunecon/engine"
)

// progressEvery is how often a non-terminal gets a plain progress line.
const progressEvery = 10 * time.Second

// progress shows a running benchmark: a live bar on a terminal, a plain line
// every few seconds elsewhere. Staff log lines written to the same stream
// clear the bar first.
type progress struct {
	env  Env
	load time.Duration
	mu   sync.Mutex
	bar  *progressbar.ProgressBar
}

func newProgress(env Env, load time.Duration) *progress {
	p := &progress{env: env, load: load}
	if env.IsTerminal {
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

// wrap makes w safe to interleave with the progress line.
func (p *progress) wrap(w io.Writer) io.Writer {
	if w == io.Discard {
		return w
	}
	return lockedWriter{p, w}
}

// watch polls b until the returned stop is called.
func (p *progress) watch(b *engine.Bench) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var lastReq int64
		lastPlain := time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			pr := b.Progress()
			rps := pr.Requests - lastReq
			lastReq = pr.Requests
			line := fmt.Sprintf("%-11s %5.0fs  score %8.1f  %5d req/s  %3d errors  %4d users",
				pr.Phase, pr.Elapsed.Seconds(), pr.Score, rps, pr.Errors, pr.Users)
			p.mu.Lock()
			if p.bar != nil {
				p.bar.Describe(line)
				if pr.Phase == engine.PhaseLoad {
					_ = p.bar.Set(int(pr.LoadElapsed / time.Second))
				}
			} else if time.Since(lastPlain) >= progressEvery {
				lastPlain = time.Now()
				fmt.Fprintln(p.env.Stderr, line)
			}
			p.mu.Unlock()
		}
	}()
	return func() {
		close(done)
		<-finished
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.bar != nil {
			_ = p.bar.Finish()
		}
	}
}
