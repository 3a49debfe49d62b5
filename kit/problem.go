// Package kit is what every problem shares above the engine: the problem
// descriptor, the conventions by which reference apps are built and started,
// and the in-process Bench and Try that the tunecon command, the tools and
// the portal's workers call. A problem is one exported Problem value; the
// registry in package problems is a list of them.
package kit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit/launch"
)

// Store names. The first of a problem's Stores is its embedded default.
const (
	StoreSQLite  = "sqlite"
	StoreMariaDB = "mariadb"
	// StoreMemory is for a problem whose app keeps its data in memory.
	StoreMemory = "memory"
)

// TunedLang is the --lang under which a problem's tuned solution is served.
const TunedLang = "tuned"

// Problem describes one contest problem: everything the command, the tools,
// the tests and the portal need to know of it. Its functions are nil only
// where the comment says so.
type Problem struct {
	// Name is the problem's name on the command line and in results.
	Name    string `json:"name"`
	Title   string `json:"title"`
	Summary string `json:"summary"`
	// After names the classic contest the problem follows ("" for none).
	After string `json:"after"`
	// Langs are the reference apps' languages, the default first; the app of
	// language L lives in problems/NAME/webapp/L.
	Langs []string `json:"langs"`
	// Stores are the databases the reference apps run on, the embedded
	// default first.
	Stores []string `json:"stores"`
	// Tuned is the language of the tuned solution (a spoiler) in
	// problems/NAME/solutions/Tuned, served as --lang tuned; "" for none.
	Tuned string `json:"tuned,omitempty"`
	// Manual is the contestant's manual, relative to the repository root.
	Manual string `json:"manual"`
	// Files holds the problem's ManualFile and, for a problem with static
	// files, its AssetSumsFile: an embed.FS of the problem's package, so that
	// both are in the binary.
	Files fs.FS `json:"-"`

	// NewScenario returns a fresh scenario for one run, given what the
	// machine offers it (env).
	NewScenario func(env Env) (engine.Scenario, error) `json:"-"`
	// Data writes the initial data's SQL dump at path unless it is current,
	// and reports whether it wrote. Nil for a problem without a dump.
	Data func(path string) (bool, error) `json:"-"`
	// DataDir, for a problem whose initial data is a set of files rather
	// than one dump (leagues: an admin database and a SQLite file per
	// tenant), writes them into the directory dir unless they are current,
	// and reports whether it wrote. The app finds dir in PREFIX_INITIAL_DIR.
	// Nil for most problems.
	DataDir func(dir string) (bool, error) `json:"-"`
	// Handler, for a problem whose reference app runs inside this process
	// (the worked example), replaces the launcher. Nil otherwise.
	Handler func() http.Handler `json:"-"`
	// Services, for a problem whose app calls services the benchmarker
	// hosts, starts them for an app served by hand: env tells the app where
	// they are, stop ends them. Nil otherwise.
	Services func(ctx context.Context) (env []string, stop func() error, err error) `json:"-"`
}

// Env is what a scenario may take from the machine it runs on. kit hands it
// in, so that no problem reads the environment or picks paths itself.
type Env struct {
	// CacheDir is a directory the scenario may keep files in from one run
	// to the next (made when first written); "" keeps nothing.
	CacheDir string
}

// CacheDirVar names the variable that chooses Env.CacheDir.
const CacheDirVar = "TUNECON_CACHE_DIR"

// MachineEnv returns the Env of this machine: CacheDir is $TUNECON_CACHE_DIR,
// else tunecon/ in the user's cache directory (~/.cache/tunecon on Linux),
// else "" when the user has none.
func MachineEnv(getenv func(string) string) Env {
	if dir := getenv(CacheDirVar); dir != "" {
		return Env{CacheDir: dir}
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return Env{}
	}
	return Env{CacheDir: filepath.Join(base, "tunecon")}
}

// The files a problem's Files holds.
const (
	// ManualFile is the contestant's manual, in Markdown.
	ManualFile = "MANUAL.md"
	// AssetSumsFile is `sha256sum` of webapp/public as the problem ships
	// it: the benchmarker's manifest, fixed in the binary so that a
	// contestant's edit of the public files is caught rather than adopted.
	AssetSumsFile = "assets.sha256"
)

// ManualText returns the manual's Markdown from Files, which the portal
// shows to contestants; "" for a problem without one.
func (p Problem) ManualText() string {
	if p.Files == nil {
		return ""
	}
	b, err := fs.ReadFile(p.Files, ManualFile)
	if err != nil {
		return ""
	}
	return string(b)
}

// AssetManifest maps each static file's URL path (/static/...) to its
// SHA-256, as AssetSumsFile in files lists them. A problem's files are
// embedded when it is built, so a missing or malformed list is a bug of the
// problem, which panics at its first scenario (every problem's tests make
// one).
func AssetManifest(files fs.FS) engine.Manifest {
	sums, err := fs.ReadFile(files, AssetSumsFile)
	if err != nil {
		panic(err)
	}
	return engine.MustManifestFromSums(string(sums), "/static")
}

// Constructor adapts a problem's own scenario constructor, which needs
// nothing of the machine, to the descriptor's NewScenario.
func Constructor[S engine.Scenario](f func() (S, error)) func(Env) (engine.Scenario, error) {
	return EnvConstructor(func(Env) (S, error) { return f() })
}

// EnvConstructor adapts a problem's own scenario constructor that takes the
// machine's Env to the descriptor's NewScenario.
func EnvConstructor[S engine.Scenario](f func(Env) (S, error)) func(Env) (engine.Scenario, error) {
	return func(env Env) (engine.Scenario, error) {
		s, err := f(env)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// ServeLangs are the languages Serve accepts: the reference apps' and, if
// the problem has one, TunedLang.
func (p Problem) ServeLangs() []string {
	out := slices.Clone(p.Langs)
	if p.Tuned != "" {
		out = append(out, TunedLang)
	}
	return out
}

// Scenario returns a fresh scenario on this machine's Env (MachineEnv), or
// an error naming the problem.
func (p Problem) Scenario() (engine.Scenario, error) {
	return p.ScenarioIn(MachineEnv(os.Getenv))
}

// ScenarioIn returns a fresh scenario given env, or an error naming the
// problem.
func (p Problem) ScenarioIn(env Env) (engine.Scenario, error) {
	s, err := p.NewScenario(env)
	if err != nil {
		return nil, fmt.Errorf("%s: preparing the scenario: %w", p.Name, err)
	}
	return s, nil
}

// ServeConfig says which reference app to start and where.
type ServeConfig = launch.Config

// App is a running reference app.
type App = launch.App

// MissingToolchain is the error of Serve when the compiler an app's
// language needs is missing or too old (it says what to install).
type MissingToolchain = launch.MissingToolchain

// Serve starts a reference app and returns once it answers. Every app of
// every problem follows one convention: it lives in problems/NAME/webapp/LANG
// (the tuned one in problems/NAME/solutions/LANG), reads PREFIX_ADDR,
// PREFIX_ROOT (the webapp directory), PREFIX_DB and PREFIX_INITIAL_SQL (and,
// for a problem with DataDir, PREFIX_INITIAL_DIR), where PREFIX is the
// problem's name in capitals, loads the initial data on its first start, and
// logs "listening on URL" when ready. Go apps are built into
// build/NAME-LANG; a directory with requirements.txt is a Python app, run
// under gunicorn from a virtualenv in build/venv-NAME-LANG; one with
// Cargo.toml is a Rust app, built by cargo into build/NAME-LANG through the
// one target directory all Rust apps share, build/rust-target; one with
// package.json is a Node app, compiled by its tsc into its dist/ and run by
// the pinned Node.js (launch.BuildNode).
func (p Problem) Serve(ctx context.Context, cfg ServeConfig) (*App, error) {
	if cfg.Lang == "" {
		cfg.Lang = p.Langs[0]
	}
	if err := p.hasApp(cfg.Lang); err != nil {
		return nil, err
	}
	if p.Handler != nil {
		return p.serveInProcess(cfg)
	}
	problem := filepath.Join(cfg.Root, "problems", p.Name)
	webapp := filepath.Join(problem, "webapp")
	dataEnv, err := p.ensureData(webapp, cfg.Log)
	if err != nil {
		return nil, err
	}
	release, err := p.lockWorkingData(webapp, cfg)
	if err != nil {
		return nil, err
	}
	app, err := p.serve(ctx, cfg, problem, webapp, dataEnv)
	if err != nil {
		release()
		return nil, err
	}
	return launch.NewApp(app.URL, func(ctx context.Context) error {
		defer release()
		return app.Stop(ctx)
	}).WithRestart(app.Restart), nil
}

// lockWorkingData locks the working data an app keeps in webapp/data on its
// embedded database, one lock per language; it locks nothing for an app
// given a database, one built from elsewhere (a test's patched copy, on a
// database of its own) or one without data files.
func (p Problem) lockWorkingData(webapp string, cfg ServeConfig) (func(), error) {
	if cfg.DB != "" || cfg.AppDir != "" || (p.Data == nil && p.DataDir == nil) {
		return func() {}, nil
	}
	dir := filepath.Join(webapp, "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return lockData(filepath.Join(dir, "serve-"+cfg.Lang+".lock"),
		fmt.Sprintf("the %s app's working data in %s", cfg.Lang, dir))
}

// hasApp says, as an error, when the problem has no app of language lang.
func (p Problem) hasApp(lang string) error {
	if !slices.Contains(p.ServeLangs(), lang) {
		return fmt.Errorf("problem %s has no %q app (languages: %s)", p.Name, lang, strings.Join(p.ServeLangs(), ", "))
	}
	return nil
}

// Build builds the app of cfg.Lang as Serve would before starting it (a Go
// or Rust binary, a Python virtualenv, a Node app's packages and
// JavaScript), so that a suite can build every app
// before any of its tests starts one.
func (p Problem) Build(ctx context.Context, cfg ServeConfig) error {
	if err := p.hasApp(cfg.Lang); err != nil {
		return err
	}
	if p.Handler != nil {
		return nil
	}
	_, err := p.build(ctx, cfg, filepath.Join(cfg.Root, "problems", p.Name))
	return err
}

// build builds the app of cfg.Lang in the problem's directory and returns
// the command that runs it, in the app's directory (its environment unset).
func (p Problem) build(ctx context.Context, cfg ServeConfig, problem string) (*exec.Cmd, error) {
	appDir := filepath.Join(problem, "webapp", cfg.Lang)
	if cfg.Lang == TunedLang {
		appDir = filepath.Join(problem, "solutions", p.Tuned)
	}
	name := p.Name + "-" + cfg.Lang
	bin := filepath.Join(cfg.Root, "build", name)
	if cfg.AppDir != "" {
		appDir, bin = cfg.AppDir, filepath.Join(cfg.AppDir, name)
	}
	switch {
	case launch.IsPython(appDir):
		venv := filepath.Join(cfg.Root, "build", "venv-"+name)
		if err := launch.EnsureVenv(ctx, venv, filepath.Join(appDir, "requirements.txt"), cfg.Log); err != nil {
			return nil, err
		}
		cmd := exec.Command(filepath.Join(venv, "bin", "gunicorn"), "--config", "gunicorn.conf.py")
		cmd.Dir = appDir
		return cmd, nil
	case launch.IsNode(appDir):
		return launch.BuildNode(ctx, appDir, filepath.Join(cfg.Root, "build"), cfg.Log)
	case launch.IsRust(appDir):
		if err := launch.BuildRust(ctx, appDir, bin, filepath.Join(cfg.Root, "build", "rust-target"), cfg.AppDir != "", cfg.Log); err != nil {
			return nil, err
		}
	default:
		if err := launch.BuildGo(ctx, appDir, bin, cfg.Log); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin)
	cmd.Dir = appDir
	return cmd, nil
}

// serve builds and starts the app of Serve, with the services it calls. The
// app is Restartable: a restart starts the same command again at its
// address, and leaves the services running.
func (p Problem) serve(ctx context.Context, cfg ServeConfig, problem, webapp string, dataEnv []string) (*App, error) {
	cmd, err := p.build(ctx, cfg, problem)
	if err != nil {
		return nil, err
	}
	appDir, name := cmd.Dir, p.Name+"-"+cfg.Lang
	if cfg.CPUs != "" {
		if cmd, err = launch.Pin(cmd, cfg.CPUs); err != nil {
			return nil, err
		}
	}
	e := strings.ToUpper(p.Name)
	env := append([]string{e + "_ROOT=" + webapp, e + "_DB=" + cfg.DB}, dataEnv...)
	env = append(env, cfg.Env...)
	stopServices := func() error { return nil }
	var services []string // where the app finds them until a POST /initialize says otherwise
	if p.Services != nil {
		more, stop, err := p.Services(ctx)
		if err != nil {
			return nil, fmt.Errorf("starting the services the app calls: %w", err)
		}
		fmt.Fprintf(cfg.Log, "%s: the services the app calls: %s\n", p.Name, strings.Join(more, " "))
		services, stopServices = more, stop
	}
	start := func(ctx context.Context, addr string, more ...string) (*App, error) {
		c := exec.Command(cmd.Path, cmd.Args[1:]...)
		c.Dir, c.Env = appDir, launch.Env(append(append([]string{e + "_ADDR=" + addr}, env...), more...)...)
		return launch.Start(ctx, c, name, cfg.Log)
	}
	fmt.Fprintf(cfg.Log, "%s: starting the app (a first start loads the initial data) ...\n", p.Name)
	app, err := start(ctx, cfg.Addr, services...)
	if err != nil {
		_ = stopServices()
		return nil, err
	}
	// A restart leaves the services out of the app's environment: the app
	// keeps calling those the last POST /initialize named, as on a team's
	// server, where nothing else names them.
	app = launch.Restartable(app, cfg.Log, func(ctx context.Context, addr string) (*App, error) {
		fmt.Fprintf(cfg.Log, "%s: starting the app again ...\n", p.Name)
		return start(ctx, addr)
	})
	return launch.NewApp(app.URL, func(ctx context.Context) error {
		return errors.Join(app.Stop(ctx), stopServices())
	}).WithRestart(app.Restart), nil
}

// ensureData writes the initial data of the app in webapp (its dump, its
// directory of files, or both) unless it is current, and returns the
// variables that tell the app where it is: PREFIX_INITIAL_SQL, and
// PREFIX_INITIAL_DIR for a problem with DataDir.
func (p Problem) ensureData(webapp string, log io.Writer) ([]string, error) {
	e := strings.ToUpper(p.Name)
	dump := filepath.Join(webapp, "data", "initial.sql")
	env := []string{e + "_INITIAL_SQL=" + dump}
	ensure := func(what string, f func(string) (bool, error), path string) error {
		fmt.Fprintf(log, "%s: checking the initial data in %s ...\n", p.Name, path)
		wrote, err := f(path)
		if err != nil {
			return fmt.Errorf("generating the initial data: %w", err)
		}
		if wrote {
			fmt.Fprintf(log, "%s: generated the initial %s\n", p.Name, what)
		}
		return nil
	}
	if p.Data != nil {
		if err := ensure("data", p.Data, dump); err != nil {
			return nil, err
		}
	}
	if p.DataDir != nil {
		dir := filepath.Join(webapp, "data", "initial")
		if err := ensure("data files", p.DataDir, dir); err != nil {
			return nil, err
		}
		env = append(env, e+"_INITIAL_DIR="+dir)
	}
	return env, nil
}

// serveInProcess serves the problem's in-process handler.
func (p Problem) serveInProcess(cfg ServeConfig) (*App, error) {
	if cfg.DB != "" {
		return nil, fmt.Errorf("problem %s keeps its data in memory and takes no database", p.Name)
	}
	if cfg.CPUs != "" {
		return nil, fmt.Errorf("problem %s serves its app inside this process, which cannot be pinned to other CPUs", p.Name)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return launch.NewApp("http://"+ln.Addr().String(), srv.Shutdown), nil
}
