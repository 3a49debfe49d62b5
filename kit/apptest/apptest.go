// Package apptest is what the problems' end-to-end tests share: reference
// apps started once per test binary (on SQLite or on a private MariaDB),
// nginx in front of an app, a proxy that adds one defect to a correct app, a
// benchmark run that logs its summary, and the checks every problem's tests
// make: the conformance matrix, "this defect must FAIL naming X", and the
// asset manifest against the public files.
package apptest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/kit/apptest/servers"
)

// ServeInProcess serves a problem whose app runs in process (one with a
// Handler, such as the example problem) on a free loopback port until the
// test ends, and returns its URL with a trailing slash.
func ServeInProcess(t *testing.T, p kit.Problem) string {
	t.Helper()
	app, err := p.Serve(context.Background(), kit.ServeConfig{Addr: "127.0.0.1:0", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Stop(context.Background()) })
	return app.URL + "/"
}

// Apps starts a problem's apps on demand and stops them all at the end of
// the test binary: call Run from TestMain.
type Apps struct {
	Problem kit.Problem
	// Root is the repository's root.
	Root string
	// Env, if set, gives each app started more variables for its
	// environment, given the app's scratch directory (removed when the app
	// stops): for an app that keeps files of its own beside a database
	// server, which would otherwise outlive the test.
	Env func(dir string) []string

	// ConformanceWidth is how many of Conformance's runs go side by side;
	// 0 is loadTurns, as many as go test runs side by side on two cores.
	// Only loadTurns of them load at a time: more suit a problem whose
	// runs mostly wait (for the manual's freshness promises to pass, say),
	// not one whose apps' start or slowest pages take the machine.
	ConformanceWidth int
	// ServerWidth is how many of Conformance's runs on the test binary's
	// one MariaDB go at once; 0 is as many as ConformanceWidth. 1 suits a
	// problem whose pre-check must not wait inside that server behind
	// another run's load: bank's reference scans its whole log for every
	// login, and its Python app's /report, a scan of that log in one
	// request, took over 10 s beside such a load.
	ServerWidth int

	// turns holds a token for each run in its load phase (LoadTurn).
	turns chan struct{}

	mu       sync.Mutex
	started  map[string]startedApp
	stops    []func() // apps, stopped first
	last     []func() // the servers they use
	maria    *servers.MariaDB
	mariaErr error
}

// New returns Apps for a problem whose tests run in problems/NAME.
func New(p kit.Problem) *Apps {
	root, _ := filepath.Abs("../..")
	return &Apps{Problem: p, Root: root, started: map[string]startedApp{}, turns: make(chan struct{}, loadTurns)}
}

// loadTurns is how many runs of a test binary that take LoadTurn load at
// once: as many as go test runs side by side by default, on two cores.
const loadTurns = 2

// LoadTurn is a run option that holds the run, after its pre-check, while
// loadTurns other runs of the test binary that took it are in their load
// phase: runs side by side wait out their checks together and only a few
// load at once.
func (a *Apps) LoadTurn() engine.Option {
	return engine.WithLoadTurn(func(ctx context.Context) func() {
		select {
		case a.turns <- struct{}{}:
			return func() { <-a.turns }
		case <-ctx.Done():
			return nil
		}
	})
}

// Run runs the tests and then stops everything started.
func (a *Apps) Run(m *testing.M) int {
	code := m.Run()
	for _, stop := range append(a.stops, a.last...) {
		stop()
	}
	return code
}

// startedApp is an app Start started: its base URL and the app.
type startedApp struct {
	url *url.URL
	app *kit.App
}

// Start starts the app of lang on store (kit.StoreSQLite, StoreMariaDB or
// StoreMemory) once, and returns its base URL; src, if not empty, is a source
// directory to use instead of the app's own (a patched copy).
func (a *Apps) Start(t *testing.T, lang, store, src string) *url.URL {
	t.Helper()
	return a.start(t, lang, store, src).url
}

// start is Start, returning the app too.
func (a *Apps) start(t *testing.T, lang, store, src string) startedApp {
	t.Helper()
	key := lang + "/" + store + "/" + src
	a.mu.Lock()
	s, ok := a.started[key]
	a.mu.Unlock()
	if ok {
		return s
	}
	u, app := a.serve(t, key, lang, store, src)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started[key] = startedApp{u, app}
	return a.started[key]
}

// StartRestartable starts an app of its own as Start does, and returns its
// base URL and the run option that restarts it between the load and the
// final check (kit.RestartBetween). No other test shares the app.
func (a *Apps) StartRestartable(t *testing.T, lang, store, src string) (*url.URL, engine.Option) {
	t.Helper()
	u, app := a.serve(t, lang+"/"+store+"/"+src+" (restartable)", lang, store, src)
	return u, kit.RestartBetween(app)
}

// serve starts the app of lang on store from src, stopped when the tests
// end, and returns its base URL and the app.
func (a *Apps) serve(t *testing.T, key, lang, store, src string) (*url.URL, *kit.App) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a reference app: not in -short")
	}
	dir, err := os.MkdirTemp("", "apptest")
	if err != nil {
		t.Fatal(err)
	}
	var dsn string
	switch store {
	case kit.StoreSQLite:
		dsn = "sqlite:" + filepath.Join(dir, "app.db")
	case kit.StoreMariaDB:
		dsn = a.MariaDB(t, fmt.Sprintf("db%d", time.Now().UnixNano()))
	case kit.StoreMemory:
	default:
		t.Fatalf("unknown store %q", store)
	}
	var env []string
	if a.Env != nil {
		env = a.Env(dir)
	}
	var log Buffer
	app, err := a.Problem.Serve(context.Background(), kit.ServeConfig{
		Lang: lang, Addr: "127.0.0.1:0", Root: a.Root, Log: &log, DB: dsn, AppDir: src, Env: env,
	})
	if err != nil {
		os.RemoveAll(dir)
		var missing *kit.MissingToolchain
		if errors.As(err, &missing) && os.Getenv("CI") != "true" {
			t.Skipf("skipped: %v", err) // CI must have every toolchain
		}
		t.Fatalf("%v\n%s", err, log.String())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stops = append(a.stops, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the %s app: %v\n", key, err)
		}
		os.RemoveAll(dir)
	})
	u, _ := url.Parse(app.URL + "/")
	return u, app
}

// MariaDB starts the private MariaDB server on first use and creates an
// empty database on it. Without MariaDB the test skips, or fails under CI.
func (a *Apps) MariaDB(t *testing.T, name string) string {
	t.Helper()
	a.mu.Lock()
	if a.maria == nil && a.mariaErr == nil {
		dir, err := os.MkdirTemp("", "apptest-mariadb")
		if err == nil {
			var log Buffer
			a.maria, err = servers.StartMariaDB(context.Background(), dir, &log)
			if err != nil {
				err = fmt.Errorf("%w\n%s", err, log.String())
				os.RemoveAll(dir)
			} else {
				m := a.maria
				a.last = append(a.last, func() { m.Stop(); os.RemoveAll(dir) })
			}
		}
		a.mariaErr = err
	}
	m, err := a.maria, a.mariaErr
	a.mu.Unlock()
	servers.Require(t, err)
	dsn, err := m.CreateDatabase(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// Patched copies the app's source directory into a temporary one with each
// (old, new) replacement made, for a test build with a defect. Each old must
// occur exactly once in all the directory's Go, Rust or TypeScript files (an
// app may be one main.go or several files), and is replaced in the one that holds it;
// the replacements apply in order, so a later one may match what an earlier
// one wrote. A Rust app's copy gets a package name of its own.
func Patched(t *testing.T, src string, replacements ...[2]string) string {
	t.Helper()
	dst := t.TempDir()
	code := map[string]string{} // the code's text by its file's path in dst
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "node_modules" || rel == "dist" { // a Node app's packages and compiled code: the build remakes them
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // a link: SkipDir would skip the rest of its folder
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if slices.Contains([]string{".go", ".rs", ".ts"}, filepath.Ext(p)) {
			code[filepath.Join(dst, rel)] = string(data)
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string]bool{}
	for _, r := range replacements {
		var holders []string
		for file, text := range code {
			for range strings.Count(text, r[0]) {
				holders = append(holders, file)
			}
		}
		if len(holders) != 1 {
			t.Fatalf("the app's code under %s holds %q %d times, not once: update the defect", src, r[0], len(holders))
		}
		code[holders[0]] = strings.Replace(code[holders[0]], r[0], r[1], 1)
		changed[holders[0]] = true
	}
	for file := range changed {
		if err := os.WriteFile(file, []byte(code[file]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := renameCargoPackage(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// cargoName is the package's name in a Cargo.toml.
var cargoName = regexp.MustCompile(`(?m)^name = "([^"]+)"$`)

// renameCargoPackage gives the Rust package in dir, if it is one, a name of
// its own, in its Cargo.toml and its Cargo.lock. Every copy of an app would
// otherwise share its fingerprint in the one target directory the Rust apps
// build in (cargo hashes a local package by its path inside its own
// directory), and cargo would take a patched copy, older than the last
// build, for built already: its binary would be the last copy's.
func renameCargoPackage(dir string) error {
	manifest, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	m := cargoName.FindSubmatch(manifest)
	if m == nil {
		return fmt.Errorf("%s/Cargo.toml names no package", dir)
	}
	sum := sha256.Sum256([]byte(dir))
	from, to := string(m[0]), fmt.Sprintf(`name = "%s-%x"`, m[1], sum[:6])
	for _, name := range []string{"Cargo.toml", "Cargo.lock"} {
		path := filepath.Join(dir, name)
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Count(string(text), from) != 1 {
			return fmt.Errorf("%s holds %s %d times, not once", path, from, strings.Count(string(text), from))
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(text), from, to, 1)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Buffer is a bytes.Buffer that processes' output goroutines may write while a
// test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Seed is the seed of the tests' benchmark runs.
const Seed = 20261120

// Bench runs a fresh scenario of p against target and logs the summary (and
// the staff log if the test failed or TUNECON_STAFF is set).
func Bench(t *testing.T, p kit.Problem, target *url.URL, load time.Duration, opts ...engine.Option) *engine.Result {
	t.Helper()
	var staff Buffer
	opts = append([]engine.Option{engine.WithLoadDuration(load), engine.WithSeed(Seed),
		engine.WithStaffLog(&staff)}, opts...)
	res, err := kit.Bench(context.Background(), p, target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	_ = res.WriteSummary(&sum)
	t.Logf("result:\n%s", sum.String())
	if t.Failed() || os.Getenv("TUNECON_STAFF") != "" {
		t.Logf("staff log:\n%s", staff.String())
	}
	return res
}

// LoadGate tells a defect when the run's load phase has begun, so that a
// defect the pre-check would meet first starts with the load and has all of
// it to be caught. Pass Option to the run; Open reports the gate.
type LoadGate struct{ open atomic.Bool }

// Option closes the gate and returns the run option that opens it once the
// load phase (or a later one) is under way, within 20 ms.
func (g *LoadGate) Option() engine.Option {
	g.open.Store(false)
	return engine.WithProgress(20*time.Millisecond, func(p engine.Progress) {
		if p.Phase == engine.PhaseLoad || p.Phase == engine.PhaseRestart || p.Phase == engine.PhaseFinalCheck {
			g.open.Store(true)
		}
	})
}

// Open reports whether the run's load phase has begun.
func (g *LoadGate) Open() bool { return g.open.Load() }

// Proxy sits between the benchmarker and a correct app and adds one defect.
type Proxy struct {
	App      *url.URL
	requests atomic.Int64
	// Intercept may answer a request itself (n counts requests from 1).
	Intercept func(w http.ResponseWriter, r *http.Request, n int64) bool
	// Rewrite may change an answer from the app (its body and headers).
	Rewrite func(r *http.Request, n int64, status int, h http.Header, body []byte) []byte
	// StatusMap changes statuses of answers to StatusMethod requests.
	StatusMap    map[int]int
	StatusMethod string
	// PassHost sends the app the Host the benchmarker named rather than the
	// app's own address: for an app that reads its tenant from the host.
	PassHost bool
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.requests.Add(1)
	if p.Intercept != nil && p.Intercept(w, r, n) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, p.App.ResolveReference(&url.URL{Path: r.URL.Path, RawQuery: r.URL.RawQuery}).String(), bytes.NewReader(body))
	out.Header = r.Header.Clone()
	if p.PassHost {
		out.Host = r.Host
	}
	res, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if p.Rewrite != nil {
		data = p.Rewrite(r, n, res.StatusCode, res.Header, data)
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	st := res.StatusCode
	if to, ok := p.StatusMap[st]; ok && r.Method == p.StatusMethod {
		st = to
	}
	w.WriteHeader(st)
	_, _ = w.Write(data)
}

// Start serves the proxy on loopback until the test ends.
func (p *Proxy) Start(t *testing.T, app *url.URL) *url.URL {
	p.App = app
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/")
	return u
}

// BehindNginx starts nginx with a problem's sample configuration in front
// of app, after replacing each (old, new) pair, where new may use {{PORT}}
// (nginx's port) and {{APP}} (the app's host:port).
func BehindNginx(t *testing.T, confPath string, app *url.URL, replacements ...[2]string) *url.URL {
	t.Helper()
	sample, err := os.ReadFile(confPath)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(sample)
	for _, r := range replacements {
		if !strings.Contains(conf, r[0]) {
			t.Fatalf("%s no longer contains %q", confPath, r[0])
		}
		conf = strings.ReplaceAll(conf, r[0], strings.ReplaceAll(r[1], "{{APP}}", app.Host))
	}
	var log Buffer
	n, err := servers.StartNginx(context.Background(), t.TempDir(), conf, &log)
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, log.String())
	}
	servers.Require(t, err)
	t.Cleanup(func() {
		n.Stop()
		if t.Failed() {
			t.Logf("nginx's log:\n%s", log.String())
		}
	})
	u, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(n.Port) + "/")
	return u
}

// SkewedClock is the wall clock off by Off: a run on it sees the app's clock
// off by -Off, as when the app's host keeps another time.
type SkewedClock struct{ Off time.Duration }

func (c SkewedClock) Now() time.Time                         { return time.Now().Add(c.Off) }
func (c SkewedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
