// Command tunecon-leagues-tuned is a tuned implementation of the tunecon problem "leagues". SPOILER: it shows how
// far tuning takes the reference app (../../webapp/go); read ../README.md for what it does and why.
//
// It keeps the reference's HTTP contract (../../MANUAL.md) and its environment variables, and differs inside:
//   - every tenant lives in one database (SQLite by default, MariaDB by DSN) instead of a SQLite file per tenant,
//     and in memory, built from the database at start and written through to it before every answer;
//   - the database keeps only what counts: each player's score in each competition's last upload (its last row),
//     and each player's first read of each ranking while it can still count (by the finish);
//   - rankings are sorted once per upload, and names come from memory: no N+1;
//   - a finished competition's bill is made once, at the finish, and never again;
//   - writes are serialised per tenant in the process (no file lock); reads never wait for the database;
//   - verified tokens are remembered (until they expire), and the hot answers are written straight into bytes.
//
// The app must be the only one writing to its database.
package main

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

type App struct {
	store      *store
	initialDir string
	publicKey  *rsa.PublicKey
	static     map[string]*staticFile

	// resetMu: every API request holds it for reading; POST /initialize for writing, so that no write started
	// on the old data reaches the store after the reset.
	resetMu sync.RWMutex
	st      atomic.Pointer[state]

	// initial is the initial data as the store keeps it, read once from the initial files.
	initialMu sync.Mutex
	initial   *snapshot

	tokens tokenCache
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("LEAGUES_ROOT", filepath.Join("..", "..", "webapp"))
	addr := getenv("LEAGUES_ADDR", "127.0.0.1:8080")
	app, err := newApp(root, os.Getenv("LEAGUES_DB"),
		getenv("LEAGUES_INITIAL_DIR", filepath.Join(root, "data", "initial")),
		getenv("LEAGUES_PUBLIC_KEY", filepath.Join(root, "..", "keys", "public.pem")))
	if err != nil {
		return err
	}
	defer app.store.close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: app.routes(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdownCtx)
	}()
	log.Printf("listening on http://%s", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newApp opens the store named by dsn (see openStore), fills it from the initial data in initialDir if it is new,
// builds the memory from it, and reads the public key and the static files.
func newApp(root, dsn, initialDir, keyPath string) (*App, error) {
	app := &App{initialDir: initialDir}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	if app.publicKey, err = jwt.ParseRSAPublicKeyFromPEM(key); err != nil {
		return nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	if app.static, err = loadStatic(filepath.Join(root, "public")); err != nil {
		return nil, err
	}
	if app.store, err = openStore(dsn, filepath.Join(root, "data", "leagues-tuned.db")); err != nil {
		return nil, err
	}
	if err := app.load(); err != nil {
		app.store.close()
		return nil, err
	}
	return app, nil
}

// load fills a new store with the initial data, and builds the memory from the store.
func (app *App) load() error {
	start := time.Now()
	src, err := app.store.source()
	if err != nil {
		return err
	}
	if src == "" {
		log.Printf("importing the initial data from %s", app.initialDir)
		snap, err := app.initialData()
		if err != nil {
			return err
		}
		if err := app.store.replace(snap); err != nil {
			return fmt.Errorf("writing the initial data: %w", err)
		}
		log.Printf("imported the initial data in %v: %d players, %d competitions, %d scores, %d visits",
			time.Since(start).Round(time.Millisecond), len(snap.players), len(snap.competitions), len(snap.scores), len(snap.visits))
		start = time.Now()
	} else {
		// The initial data is read in the background, for POST /initialize.
		go func() {
			if _, err := app.initialData(); err != nil {
				log.Printf("reading the initial data: %v", err)
			}
		}()
	}
	snap, err := app.store.load()
	if err != nil {
		return fmt.Errorf("loading the data: %w", err)
	}
	app.st.Store(newState(snap))
	log.Printf("loaded the data in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

func getenv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// initialData returns the initial data, reading it from the initial files the first time.
func (app *App) initialData() (*snapshot, error) {
	app.initialMu.Lock()
	defer app.initialMu.Unlock()
	if app.initial == nil {
		snap, err := importInitial(app.initialDir)
		if err != nil {
			return nil, err
		}
		app.initial = snap
	}
	return app.initial, nil
}

func (app *App) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/admin/tenants", app.postAdminTenants)
	mux.HandleFunc("GET /api/admin/billing", app.getAdminBilling)
	mux.HandleFunc("GET /api/organizer/players", app.getOrganizerPlayers)
	mux.HandleFunc("POST /api/organizer/players", app.postOrganizerPlayers)
	mux.HandleFunc("POST /api/organizer/players/{id}/disqualify", app.postDisqualify)
	mux.HandleFunc("GET /api/organizer/competitions", app.getOrganizerCompetitions)
	mux.HandleFunc("POST /api/organizer/competitions", app.postCompetitions)
	mux.HandleFunc("POST /api/organizer/competitions/{id}/finish", app.postFinish)
	mux.HandleFunc("POST /api/organizer/competitions/{id}/scores", app.postScores)
	mux.HandleFunc("GET /api/organizer/billing", app.getOrganizerBilling)
	mux.HandleFunc("GET /api/player/competitions", app.getPlayerCompetitions)
	mux.HandleFunc("GET /api/player/players/{id}", app.getPlayer)
	mux.HandleFunc("GET /api/player/competitions/{id}/ranking", app.getRanking)
	mux.HandleFunc("GET /api/me", app.getMe)
	mux.HandleFunc("POST /initialize", app.postInitialize)
	mux.HandleFunc("GET /{$}", app.getIndex)
	mux.HandleFunc("GET /static/{file...}", app.getStatic)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { writeError(w, http.StatusNotFound, "not found") })
	return mux
}

// postInitialize restores the initial data: the store gets the initial rows back in one transaction, and the memory
// is built again from them. Requests wait meanwhile.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	snap, err := app.initialData()
	if err != nil {
		serverError(w, err)
		return
	}
	app.resetMu.Lock()
	defer app.resetMu.Unlock()
	start := time.Now()
	if err := app.store.replace(snap); err != nil {
		// The store's transaction rolled back: the data is as it was, and so is the memory.
		serverError(w, err)
		return
	}
	app.st.Store(newState(snap))
	app.tokens.reset()
	log.Printf("POST /initialize: the initial data restored in %v", time.Since(start).Round(time.Millisecond))
	writeRaw(w, http.StatusOK, []byte(`{"lang":"go"}`))
}
