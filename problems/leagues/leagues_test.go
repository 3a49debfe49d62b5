package leagues_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems/leagues"
)

var apps = newApps()

// newApps keeps each app's tenant files in its scratch directory: on MariaDB
// they would otherwise stay in webapp/data after the test.
func newApps() *apptest.Apps {
	a := apptest.New(leagues.Problem)
	a.Env = func(dir string) []string { return []string{"LEAGUES_TENANT_DIR=" + filepath.Join(dir, "tenants")} }
	return a
}

func TestMain(m *testing.M) { os.Exit(apps.Run(m)) }

// TestConformance runs the pre-check and a short load against every language
// and store: each must pass with 0 fails and score the organizers' writes and
// the players' and organizers' reads. (The admin's pages, seconds each on
// MariaDB, are read in the pre-check and the final check, and not always in ten
// seconds of load.)
func TestConformance(t *testing.T) {
	apps.Conformance(t, 10*time.Second, "add-players", "add-competition", "upload", "finish", "ranking", "profile",
		"competitions", "players", "billing")
}

// TestManifest: the benchmarker's manifest is exactly the public files.
func TestManifest(t *testing.T) {
	apptest.CheckManifest(t, leagues.Manifest(), "webapp/public", "/static")
}
