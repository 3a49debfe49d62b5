// Package leagues is tunecon's sixth problem, after the ISUCON12 qualifier
// (2022): a multi-tenant software-as-a- service for e-sports leagues, a JSON
// API chosen by host name, where organizers upload score files, players read
// rankings and every tenant is billed exactly for what its players saw. This
// package holds the scenario (the benchmarker's side); MANUAL.md is the
// contestant's side of the same contract, and webapp/ the reference apps.
package leagues

import (
	"embed"

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
	Langs:       []string{"go", "python", "rust", "node"},
	Tuned:       "go",
	Stores:      []string{kit.StoreSQLite, kit.StoreMariaDB},
	Manual:      "problems/leagues/MANUAL.md",
	Files:       files,
	NewScenario: kit.EnvConstructor(NewScenario),
	DataDir:     func(dir string) (bool, error) { return data.Ensure(dir, data.Default()) },
}

// files holds MANUAL.md, for the portal, and assets.sha256, the asset
// manifest (see kit.AssetSumsFile).
//
//go:embed MANUAL.md assets.sha256
var files embed.FS

// Manifest maps each static file's URL path to its SHA-256; index.html is also
// served at /.
func Manifest() engine.Manifest { return kit.AssetManifest(files) }
