package apptest

import (
	"bytes"
	"cmp"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
)

// ExpectFail checks that a run against an app with a defect FAILed for the
// right reason: want is a regular expression that must match one of its fail
// reasons or contestant messages. A defect must never cause an internal
// error: that would blame the benchmarker for the app's fault.
func ExpectFail(t *testing.T, res *engine.Result, want string) {
	t.Helper()
	all := strings.Join(append(append([]string{}, res.FailReasons...), res.Messages...), "\n")
	if res.Passed || !regexp.MustCompile(want).MatchString(all) {
		t.Errorf("want a FAIL mentioning %q; passed=%v\n%s", want, res.Passed, all)
	}
	if res.Internal {
		t.Errorf("the defect caused an internal error: %s", all)
	}
}

// ExpectClean checks that a run passed with no charged error and that every
// score tag in tags was scored at least once.
func ExpectClean(t *testing.T, res *engine.Result, tags ...string) {
	t.Helper()
	missing := false
	for _, tag := range tags {
		missing = missing || res.Breakdown[tag] == 0
	}
	if !res.Passed || res.Errors.Charged() != 0 || res.Internal || missing {
		t.Fatalf("want a clean pass scoring %q: passed=%v errors=%+v breakdown=%v reasons=%q messages=%q",
			tags, res.Passed, res.Errors, res.Breakdown, res.FailReasons, res.Messages)
	}
}

// conformanceGrowth is how far a conformance load may grow, in multiples of
// the scenario's starting users: far enough for every kind of user to play
// side by side, not so far that a fast app's load takes the machine from
// the runs beside it (a Rust app's timed out a Python app's bank report).
const conformanceGrowth = 4

// Conformance runs the pre-check and a load of the given length against
// every reference app of the problem on every store (the descriptor's Langs
// × Stores), and the tuned solution on the first store: each must pass with
// 0 fails and score every tag in tags. Between its load and its final check
// each app is stopped and started again (kit.RestartBetween), and the final
// check reads what it kept. The runs go ConformanceWidth at a time, at most
// two of them loading (LoadTurn), and before the package's parallel tests:
// each has an app of its own.
func (a *Apps) Conformance(t *testing.T, load time.Duration, tags ...string) {
	sc, err := a.Problem.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	limit := engine.WithMaxWorkload(conformanceGrowth * sc.Meta().Load.StartUsers)
	width := make(chan struct{}, cmp.Or(a.ConformanceWidth, loadTurns))
	type app struct{ lang, store string }
	var all []app
	for _, store := range a.Problem.Stores {
		for _, lang := range a.Problem.Langs {
			all = append(all, app{lang, store})
		}
	}
	if a.Problem.Tuned != "" {
		all = append(all, app{kit.TunedLang, a.Problem.Stores[0]})
	}
	var wg sync.WaitGroup
	for _, x := range all {
		width <- struct{}{}
		// t.Run from goroutines of the test's own: its subtests go side by
		// side without t.Parallel, which would hold them to go test's
		// -parallel and start them only after this test.
		wg.Go(func() {
			defer func() { <-width }()
			t.Run(x.lang+"+"+x.store, func(t *testing.T) {
				s := a.start(t, x.lang, x.store, "")
				ExpectClean(t, Bench(t, a.Problem, s.url, load, limit, a.LoadTurn(), kit.RestartBetween(s.app)), tags...)
			})
		})
	}
	wg.Wait()
}

// CheckManifest checks that the manifest the benchmarker embeds is exactly
// the files under dir (the app's public files) served below prefix: a change
// to either must be made to both on purpose.
func CheckManifest(t *testing.T, manifest engine.Manifest, dir, prefix string) {
	t.Helper()
	got, err := engine.ManifestFromFS(os.DirFS(dir), ".", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, manifest) {
		t.Errorf("%s hashes to %v, the embedded manifest says %v", dir, got, manifest)
	}
}

// CheckEnsureSQL checks a data generator's EnsureSQL: it writes exactly what
// WriteSQL writes for config c, only once, rewrites the file for another
// config, and leaves no temporary file beside it.
func CheckEnsureSQL[C any](t *testing.T, ensure func(path string, c C) (bool, error), write func(c C, w io.Writer) error, c, other C) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "initial.sql")
	for i, want := range []bool{true, false} {
		wrote, err := ensure(path, c)
		if err != nil || wrote != want {
			t.Fatalf("EnsureSQL call %d = %v, %v; want %v", i+1, wrote, err, want)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := write(c, &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Error("the file differs from what WriteSQL writes")
	}
	if wrote, err := ensure(path, other); err != nil || !wrote {
		t.Fatalf("EnsureSQL with another config = %v, %v; want a rewrite", wrote, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files left next to the dump: %v", entries)
	}
}
