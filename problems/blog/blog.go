// Package blog is tunecon's first problem, after ISUCON1 (2011): a blog whose
// every page carries a "recently commented" sidebar. It holds the scenario
// (the benchmarker's side); MANUAL.md is the contestant's side of the same
// contract, and webapp/ the reference apps.
package blog

import (
	"embed"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/blog/data"
)

// Name is the problem's name.
const Name = "blog"

// Problem describes the blog problem to the command, the tools and the portal.
var Problem = kit.Problem{
	Name:        Name,
	Title:       "Blog (after ISUCON1, 2011)",
	Summary:     "articles, comments, and a recently-commented sidebar on every page",
	After:       "ISUCON1 (2011)",
	Langs:       []string{"go", "python", "rust", "node"},
	Stores:      []string{kit.StoreSQLite, kit.StoreMariaDB},
	Tuned:       "go",
	Manual:      "problems/blog/MANUAL.md",
	Files:       files,
	NewScenario: kit.Constructor(NewScenario),
	Data:        func(path string) (bool, error) { return data.EnsureSQL(path, data.Default()) },
}

// files holds MANUAL.md, for the portal, and assets.sha256, the asset
// manifest (see kit.AssetSumsFile).
//
//go:embed MANUAL.md assets.sha256
var files embed.FS

// Manifest maps each static file's URL path to its SHA-256.
func Manifest() engine.Manifest { return kit.AssetManifest(files) }
