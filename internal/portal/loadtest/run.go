package loadtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/web"
	"github.com/tunecon/tunecon/kit"
)

// Report is a load test's outcome.
type Report struct {
	Result            *engine.Result
	Reports, Finished int64 // the workers' progress reports and finished jobs
}

// noJobs is the portal's queue in a load test: nobody enqueues.
type noJobs struct{}

var errNoQueue = errors.New("no queue in a load test")

func (noJobs) Enqueue(context.Context, int64) (portal.Job, error) { return portal.Job{}, errNoQueue }
func (noJobs) Rerun(context.Context, int64, portal.Actor) (portal.Job, error) {
	return portal.Job{}, errNoQueue
}
func (noJobs) Cancel(context.Context, int64, portal.Actor) (portal.Job, error) {
	return portal.Job{}, errNoQueue
}

// Run seeds a contest in a SQLite database in dir, serves the portal on
// loopback, and loads it for load with the workers writing beside it.
func Run(ctx context.Context, dir string, cfg Config, load time.Duration, opts ...engine.Option) (*Report, error) {
	dsn := "sqlite:" + filepath.Join(dir, "portal.db")
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		return nil, err
	}
	teams, err := Seed(ctx, s, cfg)
	if err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	// The workers write through a store of their own, as processes of
	// their own would.
	ws, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	srv, err := web.New(web.Config{Store: s, Jobs: noJobs{}, Lookup: func(string) (kit.Problem, bool) { return kit.Problem{}, false },
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var h http.Handler = srv
	if cfg.Wrap != nil {
		h = cfg.Wrap(srv)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	defer hs.Close()
	go func() { _ = hs.Serve(ln) }()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go srv.Run(runCtx)
	rep := &Report{}
	workersDone := make(chan error, 1)
	go func() {
		var err error
		rep.Reports, rep.Finished, err = Workers(runCtx, ws, teams, cfg)
		workersDone <- err
	}()
	target := &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"}
	sc := &Scenario{Teams: teams, ThinkMin: time.Second, ThinkMax: 2 * time.Second, Arrival: cfg.Arrival}
	rep.Result = engine.New(sc, target, append([]engine.Option{engine.WithLoadDuration(load), engine.WithSeed(cfg.Seed)}, opts...)...).Run(ctx)
	stop()
	if err := <-workersDone; err != nil {
		return rep, fmt.Errorf("the workers: %w", err)
	}
	return rep, nil
}
