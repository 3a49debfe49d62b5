// Package leagues is tunecon's sixth problem, after the ISUCON12 qualifier (2022): a multi-tenant software-as-a-
// service for e-sports leagues, a JSON API chosen by host name, where organizers upload score files, players read
// rankings and every tenant is billed exactly for what its players saw. This package holds the scenario (the
// benchmarker's side); MANUAL.md is the contestant's side of the same contract, and webapp/ the reference apps.
package leagues

import (
	_ "embed"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/leagues/data"
)

// Name is the problem's name.
const Name = "leagues"

// Problem describes the problem to the command, the tools and the portal.
var Problem = kit.Problem{
	Name:        Name,
	Title:       "Leagues (after the ISUCON12 qualifier, 2022)",
	Summary:     "a multi-tenant e-sports service: score uploads, rankings current at once, exact bills, players who leave a slow app",
	After:       "ISUCON12 qualifier (2022)",
	Langs:       []string{"go", "python"},
	Tuned:       "go",
	Stores:      []string{kit.StoreSQLite, kit.StoreMariaDB},
	Manual:      "problems/leagues/MANUAL.md",
	ManualText:  manual,
	NewScenario: kit.EnvConstructor(NewScenario),
	DataDir:     func(dir string) (bool, error) { return data.Ensure(dir, data.Default()) },
}

// manual is MANUAL.md, for the portal.
//
//go:embed MANUAL.md
var manual string

// assetSums is `sha256sum` of webapp/public as the problem ships it: the benchmarker's manifest, fixed here so
// that a contestant's edit of the public files is caught rather than adopted.
//
//go:embed assets.sha256
var assetSums string

// Manifest maps each static file's URL path to its SHA-256; index.html is also served at /.
func Manifest() engine.Manifest { return engine.MustManifestFromSums(assetSums, "/static") }
