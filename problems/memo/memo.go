// Package memo is tunecon's third problem, after the ISUCON3 qualifier (2013):
// a Markdown memo service whose memos are public or private, with a list of the
// newest public memos paged back through /recent. This package holds the
// scenario (the benchmarker's side); MANUAL.md is the contestant's side of the
// same contract, and webapp/ the reference apps.
package memo

import (
	"embed"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/memo/data"
)

// Name is the problem's name.
const Name = "memo"

// Problem describes the problem to the command, the tools and the portal.
var Problem = kit.Problem{
	Name:        Name,
	Title:       "Memo (after the ISUCON3 qualifier, 2013)",
	Summary:     "public and private Markdown memos, a paged list of the newest, and privacy that must never leak",
	After:       "ISUCON3 qualifier (2013)",
	Langs:       []string{"go", "python", "rust", "node"},
	Stores:      []string{kit.StoreSQLite, kit.StoreMariaDB},
	Tuned:       "go",
	Manual:      "problems/memo/MANUAL.md",
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
