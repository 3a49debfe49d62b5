// Package bank is tunecon's second problem, after the ISUCON4 qualifier
// (2014): an online bank's login page that locks users and bans addresses
// after failed attempts. Its correctness is about state: every decision, the
// previous login shown on /mypage, and /report at the end must match the
// benchmarker's own model exactly. MANUAL.md is the contestant's side.
package bank

import (
	"embed"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// Name is the problem's name.
const Name = "bank"

// Problem describes the bank problem to the command, the tools and the portal.
var Problem = kit.Problem{
	Name:        Name,
	Title:       "Bank login (after the ISUCON4 qualifier, 2014)",
	Summary:     "logins that lock users after 3 failures and ban addresses after 10; /report must match exactly",
	After:       "ISUCON4 qualifier (2014)",
	Langs:       []string{"go", "python", "rust", "node"},
	Stores:      []string{kit.StoreSQLite, kit.StoreMariaDB},
	Tuned:       "go",
	Manual:      "problems/bank/MANUAL.md",
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
