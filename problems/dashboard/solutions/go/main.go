// Command tunecon-dashboard-tuned is a tuned implementation of the tunecon problem "dashboard". SPOILER: it shows
// how far tuning takes the reference app (../../webapp/go); read ../README.md for what it does and why.
//
// It keeps the reference's HTTP contract (../../MANUAL.md) and its environment variables, and differs inside:
//   - /data asks the services it needs all at once, not one after the other, over kept-alive connections: one
//     pool for the plain HTTP services, one HTTP/2 connection for the HTTPS ones (so no 429, ever);
//   - what never changes (postal addresses, name searches) is asked once; a forecast is kept while its period
//     lasts and fetched again just in time for the next one; the attacked list is revalidated with
//     If-Modified-Since, and a onetime token kept a few seconds, both well inside the manual's promises;
//   - users, sessions and subscriptions live in memory, loaded from the database at start and by
//     POST /initialize, and written through to it on every change;
//   - /user.js is rendered once per grade, the dashboard page once per user, and the static files are served
//     from memory with Cache-Control, ETag and Last-Modified.
//
// The app must be the only one writing to its database.
package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/mattn/go-sqlite3"
)

// initialUsers is the size of the initial data: POST /initialize deletes every user added after it.
const initialUsers = 10000

//go:embed sql/schema.sqlite.sql sql/schema.mysql.sql
var schemas embed.FS

type App struct {
	db         *sql.DB
	isMySQL    bool
	initialSQL string

	// wmu serialises every write: to the database and to the memory below. Readers never take it.
	wmu sync.Mutex
	// st is users, sessions and subscriptions: replaced as a whole by POST /initialize.
	st atomic.Pointer[state]
	// svc is the services' client and its caches: replaced as a whole by POST /initialize.
	svc atomic.Pointer[world]

	pages  *pages
	static map[string]*staticFile
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("DASHBOARD_ROOT", filepath.Join("..", "..", "webapp"))
	addr := getenv("DASHBOARD_ADDR", "127.0.0.1:8080")
	initialSQL := getenv("DASHBOARD_INITIAL_SQL", filepath.Join(root, "data", "initial.sql"))

	db, isMySQL, err := openDB(os.Getenv("DASHBOARD_DB"), root)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		return fmt.Errorf("connecting to the database: %w", err)
	}
	if err := loadInitialData(db, isMySQL, initialSQL); err != nil {
		return err
	}
	httpURL, httpsURL, err := endpointsAtStart(db)
	if err != nil {
		return err
	}
	pg, err := newPages()
	if err != nil {
		return err
	}
	static, err := loadStatic(filepath.Join(root, "public"))
	if err != nil {
		return err
	}
	app := &App{db: db, isMySQL: isMySQL, initialSQL: initialSQL, pages: pg, static: static}
	start := time.Now()
	st, err := app.load()
	if err != nil {
		return err
	}
	app.st.Store(st)
	log.Printf("loaded %d users and %d sessions in %v", len(st.byID), len(st.sessions), time.Since(start).Round(time.Millisecond))
	app.svc.Store(newWorld(httpURL, httpsURL))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", app.getIndex)
	mux.HandleFunc("GET /signup", app.getSignup)
	mux.HandleFunc("POST /signup", app.postSignup)
	mux.HandleFunc("GET /login", app.getLogin)
	mux.HandleFunc("POST /login", app.postLogin)
	mux.HandleFunc("POST /logout", app.postLogout)
	mux.HandleFunc("GET /user.js", app.getUserJS)
	mux.HandleFunc("GET /modify", app.getModify)
	mux.HandleFunc("POST /modify", app.postModify)
	mux.HandleFunc("GET /data", app.getData)
	mux.HandleFunc("POST /initialize", app.postInitialize)
	mux.HandleFunc("GET /static/{file...}", app.getStatic)
	mux.HandleFunc("/", app.notFound)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
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
	app.svc.Load().close()
	return nil
}

func getenv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// openDB opens the database named by dsn: "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname"
// for MariaDB or MySQL.
func openDB(dsn, root string) (*sql.DB, bool, error) {
	switch {
	case strings.HasPrefix(dsn, "mysql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, false, fmt.Errorf("DASHBOARD_DB: %w", err)
		}
		cfg := mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
		}
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		cfg.InterpolateParams = true // one round trip per statement instead of prepare, execute, close
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, false, err
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err == nil {
			db.SetMaxOpenConns(8)
			db.SetMaxIdleConns(8)
			db.SetConnMaxLifetime(time.Hour)
		}
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "dashboard-tuned.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, false, err
		}
		// WAL, and synchronous=NORMAL: a commit appends to the WAL without an fsync (a power cut can lose the last
		// commits, never corrupt the file). Writes are serialised in the app, so the busy timeout only matters if
		// something else opens the file.
		db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000")
		if err == nil {
			db.SetMaxOpenConns(4)
			db.SetMaxIdleConns(4)
			db.SetConnMaxLifetime(0)
		}
		return db, false, err
	default:
		return nil, false, fmt.Errorf("DASHBOARD_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
	}
}

type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

// loadInitialData creates the tables and loads the initial data unless the users table exists, as the reference
// does, with the schema compiled into the binary (sql/, the reference's).
func loadInitialData(db *sql.DB, isMySQL bool, dumpPath string) error {
	var n int
	query := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'users'"
	if isMySQL {
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'users'"
	}
	if err := db.QueryRow(query).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	dump, err := os.Open(dumpPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve dashboard`, which "+
			"writes it (or set DASHBOARD_INITIAL_SQL to where it is)", dumpPath)
	} else if err != nil {
		return err
	}
	defer dump.Close()
	schemaFile := "sql/schema.sqlite.sql"
	if isMySQL {
		schemaFile = "sql/schema.mysql.sql"
	}
	schema, err := schemas.ReadFile(schemaFile)
	if err != nil {
		return err
	}
	log.Printf("loading the initial data from %s", dumpPath)
	start := time.Now()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	// SQLite creates the tables inside the transaction, so an interrupted load leaves nothing behind. MariaDB
	// commits on CREATE TABLE, so it creates them first and drops them again if the load fails.
	var schemaExec execer = tx
	if isMySQL {
		schemaExec = db
	}
	err = execStatements(schemaExec, bytes.NewReader(schema), nil)
	if err == nil {
		err = execStatements(tx, dump, nil)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		tx.Rollback()
		if isMySQL {
			db.Exec("DROP TABLE IF EXISTS users, subscriptions, sessions, endpoints")
		}
		return fmt.Errorf("loading the initial data: %w", err)
	}
	log.Printf("loaded the initial data in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// endpointsAtStart returns where the services are: DASHBOARD_SERVICES_HTTP and DASHBOARD_SERVICES_HTTPS when set
// (and stores them, as the reference does), else what the database remembers from the last POST /initialize.
func endpointsAtStart(db *sql.DB) (httpURL, httpsURL string, err error) {
	err = db.QueryRow("SELECT http, https FROM endpoints WHERE id = 1").Scan(&httpURL, &httpsURL)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", "", err
	}
	envHTTP, envHTTPS := os.Getenv("DASHBOARD_SERVICES_HTTP"), os.Getenv("DASHBOARD_SERVICES_HTTPS")
	if envHTTP == "" && envHTTPS == "" {
		return httpURL, httpsURL, nil
	}
	if envHTTP != "" {
		httpURL = envHTTP
	}
	if envHTTPS != "" {
		httpsURL = envHTTPS
	}
	httpURL, httpsURL = strings.TrimRight(httpURL, "/"), strings.TrimRight(httpsURL, "/")
	log.Printf("the services: %s and %s", httpURL, httpsURL)
	return httpURL, httpsURL, storeEndpoints(db, httpURL, httpsURL)
}

// storeEndpoints keeps the services' base URLs in the database, so that a restarted app calls the same services.
func storeEndpoints(db execer, httpURL, httpsURL string) error {
	_, err := db.Exec("REPLACE INTO endpoints (id, http, https) VALUES (1, ?, ?)", httpURL, httpsURL)
	return err
}

// execStatements runs the statements of an SQL file, each ending with ";" at the end of a line, without their
// "--" comment lines; only those for which keep returns true, if keep is not nil.
func execStatements(db execer, r io.Reader, keep func(string) bool) error {
	return eachStatement(r, func(s string) error {
		if keep != nil && !keep(s) {
			return nil
		}
		_, err := db.Exec(s)
		return err
	})
}

// eachStatement calls fn with each statement of an SQL file.
func eachStatement(r io.Reader, fn func(string) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var stmt strings.Builder
	for {
		line, readErr := br.ReadString('\n')
		if !strings.HasPrefix(strings.TrimLeft(line, " \t"), "--") {
			stmt.WriteString(line)
		}
		if strings.HasSuffix(strings.TrimRight(line, " \t\r\n"), ";") || readErr == io.EOF {
			if s := strings.TrimSpace(stmt.String()); s != "" {
				if err := fn(s); err != nil {
					return err
				}
			}
			stmt.Reset()
		}
		if readErr == io.EOF {
			return nil
		} else if readErr != nil {
			return readErr
		}
	}
}
