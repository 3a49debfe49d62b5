// Package problems is the registry of tunecon's problems: each one's
// scenario and how to start its reference apps.
package problems

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/launch"
	"github.com/tunecon/tunecon/problems/bank"
	"github.com/tunecon/tunecon/problems/blog"
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
type ServeConfig = launch.Config

// App is a running reference app.
type App = launch.App

// All returns every problem, in name order.
func All() []Problem {
	return []Problem{
		{
			Name: "blog", Title: "Blog (after ISUCON1, 2011)",
			Summary:  "articles, comments, and a recently-commented sidebar on every page",
			Langs:    blog.Langs,
			Scenario: func() engine.Scenario { return blog.NewScenario() },
			Serve:    blog.Serve,
		},
		{
			Name: "bank", Title: "Bank login (after the ISUCON4 qualifier, 2014)",
			Summary:  "logins that lock users after 3 failures and ban addresses after 10; /report must match exactly",
			Langs:    bank.Langs,
			Scenario: func() engine.Scenario { return bank.MustNewScenario() },
			Serve:    bank.Serve,
		},
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
		return launch.NewApp("http://"+ln.Addr().String(), srv.Shutdown), nil
	}
}
