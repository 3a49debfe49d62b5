package kit

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit/launch"
)

// StopTimeout bounds how long Serving waits for an app to stop.
const StopTimeout = launch.StopGrace

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

// Serving starts a reference app of p, calls f with its base URL and the
// app (whose Restart f may call, as RestartBetween does), and stops the app,
// whatever f returns. An error stopping the app is returned when f
// succeeded.
func Serving(ctx context.Context, p Problem, cfg ServeConfig, f func(target *url.URL, app *App) error) (err error) {
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
	return f(target, app)
}

// RestartBetween is the run option that restarts app between the load and
// the final check (engine.WithRestart), or none for an app that cannot be
// restarted (one served inside this process). An app that does not start
// again fails the run with a critical error; a failure of the launcher's
// own is the benchmarker's.
func RestartBetween(app *App) engine.Option {
	if !app.CanRestart() {
		return func(*engine.Bench) {}
	}
	return engine.WithRestart(func(ctx context.Context) error {
		err := app.Restart(ctx)
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			return fmt.Errorf("%w: %v", engine.ErrCutOff, err) // the run was stopped
		}
		if notBack := (*launch.NotBack)(nil); errors.As(err, &notBack) {
			return engine.Criticalf("restart", "after the load the app was stopped and started again, "+
				"as a machine restarted after a contest is: %v", notBack)
		}
		if err != nil {
			return engine.Internalf("restart", "restarting the app: %v", err)
		}
		return nil
	}, 0)
}

// RestartByCommand is the run option that restarts the app at target
// between the load and the final check by running command with sh -c (say,
// "ssh team3 sudo systemctl restart app"), which must return once the app
// has been stopped and started again, and then waits until target answers
// HTTP again with something other than a proxy's 502, 503 or 504 (nginx
// answers those while the app behind it starts). A command that fails, or
// does not return within the restart's limit, is the operator's failure,
// reported as the benchmarker's; an app that does not answer again within
// that limit fails the run. The command's output goes to out.
func RestartByCommand(command string, target *url.URL, out io.Writer) engine.Option {
	return engine.WithRestart(func(ctx context.Context) error {
		cmd := launch.Shell(ctx, command)
		cmd.Stdout, cmd.Stderr = out, out
		err := cmd.Run()
		switch {
		case err != nil && errors.Is(ctx.Err(), context.Canceled):
			return fmt.Errorf("%w: %v", engine.ErrCutOff, err) // the run was stopped
		case err != nil && ctx.Err() != nil:
			return engine.Internalf("restart", "the restart command %q did not finish within the restart's time: %v", command, err)
		case err != nil:
			return engine.Internalf("restart", "the restart command %q: %v", command, err)
		}
		return answering(ctx, target)
	}, 0)
}

// answering waits until target answers a GET with a status other than 502,
// 503 or 504.
func answering(ctx context.Context, target *url.URL) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // as the run's agents
	defer client.CloseIdleConnections()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
		if err != nil {
			return engine.Internalf("restart", "asking %s: %v", target, err)
		}
		res, err := client.Do(req)
		if err == nil {
			res.Body.Close()
			switch res.StatusCode {
			case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
				err = fmt.Errorf("it answered %s", res.Status)
			default:
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("%w: %v", engine.ErrCutOff, ctx.Err())
			}
			return engine.Criticalf("restart", "after the restart command the app did not answer at %s: %v", target, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Try starts a reference app of p (cfg says which language, database and
// repository root), benchmarks it once and stops it: `make headroom` and
// `make scores` in one call. It does not restart the app between the load
// and the final check, as `tunecon try` does: it measures.
func Try(ctx context.Context, p Problem, cfg ServeConfig, opts ...engine.Option) (*engine.Result, error) {
	var res *engine.Result
	err := Serving(ctx, p, cfg, func(target *url.URL, _ *App) error {
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
