// Package bank is tunecon's second problem, after the ISUCON4 qualifier
// (2014): an online bank's login page that locks users and bans addresses
// after failed attempts. Its correctness is about state: every decision, the
// previous login shown on /mypage, and /report at the end must match the
// benchmarker's own model exactly. MANUAL.md is the contestant's side.
package bank

import (
	"context"
	_ "embed"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/launch"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// assetSums is `sha256sum` of webapp/public as the problem ships it.
//
//go:embed assets.sha256
var assetSums string

// Manifest maps each static file's URL path to its SHA-256.
func Manifest() engine.Manifest { return engine.MustManifestFromSums(assetSums, "/static") }

// Langs are the apps `tunecon serve bank --lang` starts. "tuned" is the
// spoiler solution in solutions/go.
var Langs = []string{"go", "python", "tuned"}

var apps = launch.Problem{
	Name: "bank", EnvPrefix: "BANK",
	Dirs:       map[string]string{"go": "webapp/go", "python": "webapp/python", "tuned": "solutions/go"},
	Python:     []string{"python"},
	EnsureData: func(path string) (bool, error) { return data.EnsureSQL(path, data.Default()) },
}

// Serve generates the initial data if needed, builds the app and starts it.
func Serve(ctx context.Context, cfg launch.Config) (*launch.App, error) { return apps.Serve(ctx, cfg) }
