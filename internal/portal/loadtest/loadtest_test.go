package loadtest_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal/loadtest"
	"github.com/tunecon/tunecon/problems/example"
)

func small() loadtest.Config {
	return loadtest.Config{Teams: 30, Workers: 3, History: 3, JobLength: time.Second, Arrival: 500 * time.Millisecond,
		Problem: example.Name, Seed: 7}
}

func run(t *testing.T, cfg loadtest.Config) *loadtest.Report {
	t.Helper()
	rep, err := loadtest.Run(context.Background(), t.TempDir(), cfg, 3*time.Second,
		engine.WithPreCheckTimeout(10*time.Second), engine.WithFinalCheckTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestPortalLoad: a small contest under load passes, every page answered,
// while the workers report progress and finish jobs.
func TestPortalLoad(t *testing.T) {
	rep := run(t, small())
	res := rep.Result
	if !res.Passed || res.Errors.Charged() > 0 {
		var b strings.Builder
		_ = res.WriteSummary(&b)
		t.Fatalf("the load failed:\n%s", b.String())
	}
	if rep.Reports == 0 || rep.Finished == 0 {
		t.Errorf("workers: %d reports, %d finished", rep.Reports, rep.Finished)
	}
	pages := map[string]bool{}
	for _, e := range res.Endpoints {
		pages[e.Name] = e.Count > 0
	}
	for _, p := range []string{"GET /leaderboard", "GET /jobs/{id}", "GET /"} {
		if !pages[p] {
			t.Errorf("no %s in %v", p, pages)
		}
	}
}

// rewrite changes the bodies of the answers to paths with prefix.
func rewrite(prefix string, f func([]byte) []byte) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, prefix) || strings.HasSuffix(r.URL.Path, "/events") {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(f(rec.Body.Bytes()))
		})
	}
}

// TestScenarioChecksFail: each check of the scenario fails a portal that
// breaks it.
func TestScenarioChecksFail(t *testing.T) {
	cases := []struct {
		name, want string
		wrap       func(http.Handler) http.Handler
	}{
		{"a team missing from the leaderboard", "the leaderboard has 29 lines for 30 teams",
			rewrite("/leaderboard", func(b []byte) []byte {
				i := bytes.Index(b, []byte("<tr><td>"))
				j := bytes.Index(b[i:], []byte("</tr>"))
				return append(b[:i:i], b[i+j+len("</tr>"):]...)
			})},
		{"the viewer's team not marked", "the leaderboard does not mark the viewer's team",
			rewrite("/leaderboard", func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(` class="own"`), nil) })},
		{"another job's page", "is not job",
			rewrite("/jobs/", func(b []byte) []byte { return bytes.Replace(b, []byte("<h1>Job #"), []byte("<h1>Job #9"), 1) })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := small()
			cfg.Wrap = tc.wrap
			res := run(t, cfg).Result
			var b strings.Builder
			_ = res.WriteSummary(&b)
			if res.Passed && res.Errors.Critical == 0 || !strings.Contains(b.String(), tc.want) {
				t.Errorf("want a failure naming %q:\n%s", tc.want, b.String())
			}
		})
	}
}
