// Package dashboard is tunecon's fifth problem, after the ISUCON5 final (2015):
// a personal dashboard whose /data relays, for each user, the answers of the
// slow external services the user subscribes to. The bottleneck is waiting on
// those services, which the benchmarker hosts itself (package services) so that
// a contest needs no internet. This package holds the scenario; MANUAL.md is
// the contestant's side of the same contract, and webapp/ the reference apps.
package dashboard

import (
	"context"
	"embed"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// Name is the problem's name.
const Name = "dashboard"

// Problem describes the problem to the command, the tools and the portal.
var Problem = kit.Problem{
	Name:        Name,
	Title:       "Dashboard (after the ISUCON5 final, 2015)",
	Summary:     "a personal page over seven slow external services, relayed fresh and to the right user only",
	After:       "ISUCON5 final (2015)",
	Langs:       []string{"go", "python", "rust", "node"},
	Stores:      []string{kit.StoreSQLite, kit.StoreMariaDB},
	Tuned:       "go",
	Manual:      "problems/dashboard/MANUAL.md",
	Files:       files,
	NewScenario: kit.Constructor(NewScenario),
	Data:        func(path string) (bool, error) { return data.EnsureSQL(path, data.Default()) },
	Services:    serveServices,
}

// serveServices starts the external services for an app served by hand
// (`tunecon serve dashboard`): the app calls them until a benchmark's POST
// /initialize names others. They draw a secret of their own at each start, as
// a benchmark's do, so their answers change from one start to the next.
func serveServices(ctx context.Context) (env []string, stop func() error, err error) {
	svc, err := services.Start(ctx, services.Config{})
	if err != nil {
		return nil, nil, err
	}
	return []string{"DASHBOARD_SERVICES_HTTP=" + svc.HTTP(), "DASHBOARD_SERVICES_HTTPS=" + svc.HTTPS()}, svc.Close, nil
}

// files holds MANUAL.md, for the portal, and assets.sha256, the asset
// manifest (see kit.AssetSumsFile).
//
//go:embed MANUAL.md assets.sha256
var files embed.FS

// Manifest maps each static file's URL path to its SHA-256, and /user.js, which
// the dashboard references as a script but the app renders per user, to
// engine.Dynamic: the scenario checks it itself.
func Manifest() engine.Manifest {
	m := StaticManifest()
	m["/user.js"] = engine.Dynamic
	return m
}

// StaticManifest maps each static file's URL path to its SHA-256.
func StaticManifest() engine.Manifest { return kit.AssetManifest(files) }
