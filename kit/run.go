package kit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// StopTimeout bounds how long Serving waits for an app to stop.
const StopTimeout = 10 * time.Second

// NewBench prepares a benchmark of target with a fresh scenario of p.
func NewBench(p Problem, target *url.URL, opts ...engine.Option) (*engine.Bench, error) {
	s, err := p.Scenario()
	if err != nil {
		return nil, err
	}
	return engine.New(s, target, opts...), nil
}

// Bench benchmarks the app at target once. It is what `tunecon bench` and
// the portal's workers run.
func Bench(ctx context.Context, p Problem, target *url.URL, opts ...engine.Option) (*engine.Result, error) {
	b, err := NewBench(p, target, opts...)
	if err != nil {
		return nil, err
	}
	return b.Run(ctx), nil
}

// Serving starts a reference app of p, calls f with its base URL, and stops
// the app, whatever f returns. An error stopping the app is returned when f
// succeeded.
func Serving(ctx context.Context, p Problem, cfg ServeConfig, f func(target *url.URL) error) (err error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	app, err := p.Serve(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		if serr := app.Stop(sctx); serr != nil && err == nil {
			err = fmt.Errorf("stopping the app: %w", serr)
		}
	}()
	target, err := url.Parse(app.URL + "/")
	if err != nil {
		return fmt.Errorf("the app reported an unusable URL %q: %w", app.URL, err)
	}
	return f(target)
}

// Try starts a reference app of p (cfg says which language, database and
// repository root), benchmarks it once and stops it: `tunecon try`,
// `make headroom` and `make scores` in one call.
func Try(ctx context.Context, p Problem, cfg ServeConfig, opts ...engine.Option) (*engine.Result, error) {
	var res *engine.Result
	err := Serving(ctx, p, cfg, func(target *url.URL) error {
		var err error
		res, err = Bench(ctx, p, target, opts...)
		return err
	})
	// A complete run comes back even when stopping the app failed after it.
	return res, err
}

// FindRoot returns the repository root (the directory holding
// problems/problems.go) at or above dir: reference apps are built from there.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "problems", "problems.go")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the tunecon source tree (run from inside it, or set TUNECON_ROOT)")
		}
		dir = parent
	}
}
