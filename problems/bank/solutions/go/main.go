// Command tunecon-bank-tuned is a tuned implementation of the tunecon problem "bank". SPOILER: it shows how far
// tuning takes the reference app (../../webapp/go); read ../README.md for what it does and why.
//
// It keeps the reference's HTTP contract (../../MANUAL.md) byte for byte and its environment variables, and
// differs inside:
//   - every user's and every address's failure count, and every user's last successful login, are kept in
//     memory, built from the login log in one pass at start; an attempt is decided from them in O(1) and costs
//     one INSERT into the log;
//   - the initial state (the log's first 400,000 rows) is kept as a snapshot, so POST /initialize restores the
//     memory by copying it instead of reading the log again;
//   - the sorted lists of banned addresses and locked users are kept up to date on every attempt, and /report's
//     JSON is cached until one of them changes;
//   - sessions live in memory (saved to the sessions table on a clean shutdown and read back on start);
//   - pages are written straight into a byte buffer, no template engine;
//   - static files are served from memory with Cache-Control, ETag and Last-Modified (css and js gzipped);
//   - every attempt is decided and written under one mutex, so attempts are decided one at a time in the order
//     of their log ids, and SQLite never makes a writer wait.
//
// The database stays the source of truth for the login log: every attempt is committed before its response is
// written. The app must be the only one writing to its database.
package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
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
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/mattn/go-sqlite3"
)

// initialLogRows is the size of the initial login log: POST /initialize deletes every row added after it.
const initialLogRows = 400000

// The rules: a user is locked after lockThreshold failed attempts since its last successful login, an address is
// banned after banThreshold failed attempts from it since the last successful login from it.
const (
	lockThreshold = 3
	banThreshold  = 10
)

const (
	timeFormat    = "2006-01-02 15:04:05" // every time, in UTC
	sessionCookie = "bank_session"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("BANK_ROOT", filepath.Join("..", "..", "webapp"))
	addr := getenv("BANK_ADDR", "127.0.0.1:8080")
	initialSQL := getenv("BANK_INITIAL_SQL", filepath.Join(root, "data", "initial.sql"))

	db, isMySQL, err := openDB(os.Getenv("BANK_DB"), root)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		return fmt.Errorf("connecting to the database: %w", err)
	}
	if err := loadInitialData(db, isMySQL, root, initialSQL); err != nil {
		return err
	}
	static, err := loadStatic(filepath.Join(root, "public"))
	if err != nil {
		return err
	}
	app := &App{db: db, isMySQL: isMySQL, static: static}
	start := time.Now()
	if err := app.load(); err != nil {
		return err
	}
	log.Printf("loaded the users, the login log and %d sessions into memory in %v",
		len(app.sessions.m), time.Since(start).Round(time.Millisecond))
	if app.insert, err = db.Prepare("INSERT INTO login_log (created_at, user_id, login, ip, succeeded) " +
		"VALUES (?, ?, ?, ?, ?)"); err != nil {
		return err
	}
	defer app.insert.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", app.getIndex)
	mux.HandleFunc("POST /login", app.postLogin)
	mux.HandleFunc("GET /mypage", app.getMypage)
	mux.HandleFunc("GET /report", app.getReport)
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
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		srv.Shutdown(shutdownCtx)
	}()
	log.Printf("listening on http://%s", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-stopped
	// The log is already in the database; the sessions are only in memory: keep them for the next start, within
	// a few seconds (tunecon kills an app that takes more than 10 s to stop).
	return app.saveSessions(time.Now().Add(4 * time.Second))
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
			return nil, false, fmt.Errorf("BANK_DB: %w", err)
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
		cfg.ParseTime = true
		cfg.Loc = time.UTC
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, false, err
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err == nil {
			db.SetMaxOpenConns(4)
			db.SetMaxIdleConns(4)
		}
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "bank-tuned.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, false, err
		}
		// WAL; synchronous=NORMAL makes a commit an append to the WAL without an fsync: a committed attempt
		// survives the process being killed (the WAL is in the OS's page cache), only a power cut can lose the
		// last commits, and it never corrupts the file. Writes are serialised in the app, so the busy timeout
		// only matters if something else opens the file.
		db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000")
		if err == nil {
			db.SetMaxOpenConns(4)
			db.SetMaxIdleConns(4)
			db.SetConnMaxLifetime(0)
		}
		return db, false, err
	default:
		return nil, false, fmt.Errorf("BANK_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
	}
}

// loadInitialData creates the tables and loads the initial data unless the users table exists, as the reference
// does (with the reference's schema, $BANK_ROOT/sql: the tuned app needs no index).
func loadInitialData(db *sql.DB, isMySQL bool, root, dumpPath string) error {
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
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve bank`, which "+
			"writes it (or set BANK_INITIAL_SQL to where it is)", dumpPath)
	} else if err != nil {
		return err
	}
	defer dump.Close()
	schemaFile := "schema.sqlite.sql"
	if isMySQL {
		schemaFile = "schema.mysql.sql"
	}
	schema, err := os.ReadFile(filepath.Join(root, "sql", schemaFile))
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
	err = execStatements(schemaExec, bytes.NewReader(schema))
	if err == nil {
		err = execStatements(tx, dump)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		tx.Rollback()
		if isMySQL {
			db.Exec("DROP TABLE IF EXISTS users, login_log, sessions")
		}
		return fmt.Errorf("loading the initial data: %w", err)
	}
	log.Printf("loaded the initial data in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

// execStatements runs the statements of an SQL file, each ending with ";" at the end of a line.
func execStatements(db execer, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var stmt strings.Builder
	for {
		line, readErr := br.ReadString('\n')
		stmt.WriteString(line)
		if strings.HasSuffix(strings.TrimRight(line, " \r\n"), ";") || readErr == io.EOF {
			if s := stmt.String(); !isBlankSQL(s) {
				if _, err := db.Exec(s); err != nil {
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

// isBlankSQL reports whether s holds nothing but whitespace and "--" comments.
func isBlankSQL(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "--") {
			return false
		}
	}
	return true
}
