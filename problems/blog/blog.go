// Package blog is tunecon's first problem, after ISUCON1 (2011): a blog whose
// every page carries a "recently commented" sidebar. It holds the scenario
// (the benchmarker's side) and starts the reference apps; MANUAL.md is the
// contestant's side of the same contract.
package blog

import (
	"context"
	_ "embed"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/launch"
	"github.com/tunecon/tunecon/problems/blog/data"
)

// assetSums is `sha256sum` of webapp/public as the problem ships it: the
// benchmarker's manifest, fixed here so that a contestant's edit of the
// public files is caught rather than adopted.
//
//go:embed assets.sha256
var assetSums string

// Manifest maps each static file's URL path to its SHA-256.
func Manifest() engine.Manifest { return engine.MustManifestFromSums(assetSums, "/static") }

// Langs are the reference apps `tunecon serve blog --lang` starts. "tuned"
// is the spoiler solution in solutions/go.
var Langs = []string{"go", "python", "tuned"}

// apps is where the blog's apps live.
var apps = launch.Problem{
	Name: "blog", EnvPrefix: "BLOG",
	Dirs:       map[string]string{"go": "webapp/go", "python": "webapp/python", "tuned": "solutions/go"},
	Python:     []string{"python"},
	EnsureData: func(path string) (bool, error) { return data.EnsureSQL(path, data.Default()) },
}

// Serve generates the initial data if needed, builds the app and starts it.
func Serve(ctx context.Context, cfg launch.Config) (*launch.App, error) { return apps.Serve(ctx, cfg) }
