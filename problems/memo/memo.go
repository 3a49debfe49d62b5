// Package memo is tunecon's third problem, after the ISUCON3 qualifier (2013): a Markdown memo service
// whose memos are public or private, with a list of the newest public memos paged back through /recent.
// This package holds the scenario (the benchmarker's side); MANUAL.md is the contestant's side of the same
// contract, and webapp/ the reference apps.
package memo

import (
	_ "embed"

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
	Langs:       []string{"go", "python"},
	Stores:      []string{kit.StoreSQLite, kit.StoreMariaDB},
	Tuned:       "go",
	Manual:      "problems/memo/MANUAL.md",
	ManualText:  manual,
	NewScenario: kit.Constructor(NewScenario),
	Data:        func(path string) (bool, error) { return data.EnsureSQL(path, data.Default()) },
}

// manual is MANUAL.md, for the portal.
//
//go:embed MANUAL.md
var manual string

// assetSums is `sha256sum` of webapp/public as the problem ships it: the
// benchmarker's manifest, fixed here so that a contestant's edit of the
// public files is caught rather than adopted.
//
//go:embed assets.sha256
var assetSums string

// Manifest maps each static file's URL path to its SHA-256.
func Manifest() engine.Manifest { return engine.MustManifestFromSums(assetSums, "/static") }
