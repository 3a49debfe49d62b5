package dashboard_test

import (
	"os"
	"testing"
	"time"

	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems/dashboard"
)

var apps = apptest.New(dashboard.Problem)

func TestMain(m *testing.M) { os.Exit(apps.Run(m)) }

// TestConformance runs the pre-check and a short load against every
// language and store: each must pass with 0 fails.
func TestConformance(t *testing.T) {
	apps.Conformance(t, 8*time.Second, "page", "data", "redirect")
}

// TestManifest: the benchmarker's manifest is exactly the public files.
func TestManifest(t *testing.T) {
	apptest.CheckManifest(t, dashboard.StaticManifest(), "webapp/public", "/static")
}
