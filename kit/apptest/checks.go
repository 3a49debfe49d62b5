package apptest

import (
	"bytes"
	"cmp"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
// each has an app of its own; those on the test binary's one MariaDB go
// ServerWidth at a time.
func (a *Apps) Conformance(t *testing.T, load time.Duration, tags ...string) {
	sc, err := a.Problem.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	limit := engine.WithMaxWorkload(conformanceGrowth * sc.Meta().Load.StartUsers)
	width := cmp.Or(a.ConformanceWidth, loadTurns)
	// t.Run from goroutines of the test's own: its subtests go side by side
	// without t.Parallel, which would hold them to go test's -parallel and
	// start them only after this test.
	sideBySide(a.conformanceRuns(), width, cmp.Or(a.ServerWidth, width), func(x conformanceRun) {
		t.Run(x.lang+"+"+x.store, func(t *testing.T) {
			s := a.start(t, x.lang, x.store, "")
			ExpectClean(t, Bench(t, a.Problem, s.url, load, limit, a.LoadTurn(), kit.RestartBetween(s.app)), tags...)
		})
	})
}

// sideBySide calls run for each of runs in goroutines of its own, width at a
// time and at most server of those on MariaDB, and returns when all have
// returned. When one returns, the first of the rest that may start starts.
func sideBySide(runs []conformanceRun, width, server int, run func(conformanceRun)) {
	var (
		mu                sync.Mutex
		done              = sync.NewCond(&mu)
		going, goingMaria int
		wg                sync.WaitGroup
	)
	mayStart := func(x conformanceRun) bool {
		return going < width && (x.store != kit.StoreMariaDB || goingMaria < server)
	}
	for len(runs) > 0 {
		mu.Lock()
		i := slices.IndexFunc(runs, mayStart)
		for ; i < 0; i = slices.IndexFunc(runs, mayStart) {
			done.Wait()
		}
		x := runs[i]
		runs = slices.Delete(runs, i, i+1)
		maria := x.store == kit.StoreMariaDB
		going++
		if maria {
			goingMaria++
		}
		mu.Unlock()
		wg.Go(func() {
			defer func() {
				mu.Lock()
				going--
				if maria {
					goingMaria--
				}
				done.Signal()
				mu.Unlock()
			}()
			run(x)
		})
	}
	wg.Wait()
}

// conformanceRun is one app of Conformance: a language on a store.
type conformanceRun struct{ lang, store string }

// conformanceRuns lists Conformance's runs, those on MariaDB and the others
// in turn, so that each kind has one going from the start when MariaDB's go
// one at a time.
func (a *Apps) conformanceRuns() []conformanceRun {
	var shared, own []conformanceRun
	for _, store := range a.Problem.Stores {
		for _, lang := range a.Problem.Langs {
			if store == kit.StoreMariaDB {
				shared = append(shared, conformanceRun{lang, store})
			} else {
				own = append(own, conformanceRun{lang, store})
			}
		}
	}
	if a.Problem.Tuned != "" {
		own = append(own, conformanceRun{kit.TunedLang, a.Problem.Stores[0]})
	}
	var all []conformanceRun
	for i := range max(len(shared), len(own)) {
		if i < len(shared) {
			all = append(all, shared[i])
		}
		if i < len(own) {
			all = append(all, own[i])
		}
	}
	return all
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
