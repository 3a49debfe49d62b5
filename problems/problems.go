// Package problems is the registry of tunecon's problems: each one's
// scenario and how to start its reference apps.
package problems

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/example"
)

// Problem is one contest problem.
type Problem struct {
	Name    string
	Title   string
	Summary string
	// Langs are the reference apps' languages; the first is the default.
	Langs []string
	// Scenario returns a fresh scenario for one run.
	Scenario func() engine.Scenario
	// Serve starts a reference app and returns once it answers.
	Serve func(ctx context.Context, cfg ServeConfig) (*App, error)
}

// ServeConfig says which reference app to start and where.
type ServeConfig struct {
	Lang string
	// Addr is host:port to listen on; port 0 picks a free port.
	Addr string
	// DB is the app's database DSN; empty means its embedded default.
	DB string
	// Root is the repository's root directory (where problems/ lives).
	Root string
	// Log receives the app's own output and setup progress.
	Log io.Writer
}

// App is a running reference app.
type App struct {
	URL  string
	stop func(context.Context) error
}

// Stop stops the app and waits for it to exit.
func (a *App) Stop(ctx context.Context) error { return a.stop(ctx) }

// All returns every problem, in name order.
func All() []Problem {
	return []Problem{
		{
			Name: "example", Title: "Notes (the engine's worked example)",
			Summary: "a tiny in-process notes app: pages, posts, a freshness check, an asset",
			Langs:   []string{"go"},
			Scenario: func() engine.Scenario {
				return example.NewScenario()
			},
			Serve: serveHandler(func() http.Handler { return (&example.App{}).Handler() }),
		},
	}
}

// Lookup finds a problem by name.
func Lookup(name string) (Problem, bool) {
	all := All()
	i := slices.IndexFunc(all, func(p Problem) bool { return p.Name == name })
	if i < 0 {
		return Problem{}, false
	}
	return all[i], true
}

// Names lists the problems' names.
func Names() []string {
	var out []string
	for _, p := range All() {
		out = append(out, p.Name)
	}
	return out
}

// serveHandler serves an in-process handler (for problems whose reference
// app is part of this module).
func serveHandler(newHandler func() http.Handler) func(context.Context, ServeConfig) (*App, error) {
	return func(ctx context.Context, cfg ServeConfig) (*App, error) {
		if cfg.DB != "" {
			return nil, fmt.Errorf("this problem keeps its data in memory and takes no --db")
		}
		ln, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			return nil, err
		}
		srv := &http.Server{Handler: newHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		return &App{URL: "http://" + ln.Addr().String(), stop: srv.Shutdown}, nil
	}
}
