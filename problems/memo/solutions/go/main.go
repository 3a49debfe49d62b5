// Command tunecon-memo-tuned is a tuned implementation of the tunecon problem "memo". SPOILER: it shows how far
// tuning takes the reference app (../../webapp/go); read ../README.md for what it does and why.
//
// It keeps the reference's HTTP contract (../../MANUAL.md) byte for byte and its environment variables, and
// differs inside:
//   - users, sessions and every memo's metadata live in memory, rebuilt from the database at start and by
//     POST /initialize; the database is written through on every change and read again only for a memo's
//     content, the first time the memo is viewed;
//   - the public memos are a slice in id order: the total is its length and a page is a slice of it, so no
//     COUNT(*), no OFFSET, no author lookups;
//   - each memo's <li> is rendered once, and its Markdown once (on first view, or when it is posted);
//   - each user's memos are a slice in id order, for /mypage and for the older and newer links (a binary search);
//   - pages are written straight into a byte buffer, no template engine;
//   - static files are served from memory with Cache-Control, ETag and Last-Modified (css and js gzipped);
//   - every write is serialised by one mutex; readers never lock.
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
	"github.com/yuin/goldmark"
)

// The sizes of the initial data: POST /initialize deletes every row added after it.
const (
	initialUsers = 1000
	initialMemos = 50000
)

const (
	timeFormat    = "2006-01-02 15:04:05" // every time, in UTC
	sessionCookie = "memo_session"
	pageSize      = 100 // memos on / and on each /recent/N
)

// Limits of what users post, in characters (runes).
const (
	maxContent  = 10000
	minPassword = 8
	maxPassword = 64
)

//go:embed sql/schema.sqlite.sql sql/schema.mysql.sql
var schemas embed.FS

type App struct {
	db      *sql.DB
	isMySQL bool

	// wmu serialises every write: to the database and to the memory below. Readers never take it.
	wmu sync.Mutex
	// st is the memory: replaced as a whole by POST /initialize, added to by every write.
	st atomic.Pointer[state]

	// Pure CommonMark, as in the reference: raw HTML in a memo is left out of the page.
	markdown goldmark.Markdown
	static   map[string]*staticFile
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("MEMO_ROOT", filepath.Join("..", "..", "webapp"))
	addr := getenv("MEMO_ADDR", "127.0.0.1:8080")
	initialSQL := getenv("MEMO_INITIAL_SQL", filepath.Join(root, "data", "initial.sql"))

	db, isMySQL, err := openDB(os.Getenv("MEMO_DB"), root)
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
	if err := ensureIndexes(db, isMySQL); err != nil {
		return err
	}
	static, err := loadStatic(filepath.Join(root, "public"))
	if err != nil {
		return err
	}
	app := &App{db: db, isMySQL: isMySQL, markdown: goldmark.New(), static: static}
	start := time.Now()
	st, err := app.load(nil)
	if err != nil {
		return err
	}
	app.st.Store(st)
	log.Printf("loaded the memory in %v", time.Since(start).Round(time.Millisecond))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", app.getIndex)
	mux.HandleFunc("GET /recent/{n}", app.getRecent)
	mux.HandleFunc("GET /memos/{id}", app.getMemo)
	mux.HandleFunc("POST /memos", app.postMemo)
	mux.HandleFunc("GET /mypage", app.getMypage)
	mux.HandleFunc("GET /signin", app.getSignin)
	mux.HandleFunc("POST /signin", app.postSignin)
	mux.HandleFunc("GET /signup", app.getSignup)
	mux.HandleFunc("POST /signup", app.postSignup)
	mux.HandleFunc("POST /signout", app.postSignout)
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
			return nil, false, fmt.Errorf("MEMO_DB: %w", err)
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
		// No ParseTime: a DATETIME comes back as its text, "YYYY-MM-DD HH:MM:SS", as a TEXT does from SQLite.
		cfg.InterpolateParams = true // one round trip per statement instead of prepare, execute, close
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, false, err
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err == nil {
			db.SetMaxOpenConns(16)
			db.SetMaxIdleConns(16)
			db.SetConnMaxLifetime(time.Hour)
		}
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "memo-tuned.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, false, err
		}
		// WAL lets readers run while the one writer writes; synchronous=NORMAL skips the fsync on every commit (in
		// WAL mode a power cut can lose the last commits but never corrupts the file). Writes are serialised in
		// the app, so the busy timeout only matters if something else opens the file.
		db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000")
		if err == nil {
			db.SetMaxOpenConns(8)
			db.SetMaxIdleConns(8)
			db.SetConnMaxLifetime(0)
		}
		return db, false, err
	default:
		return nil, false, fmt.Errorf("MEMO_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
	}
}

// loadInitialData creates the tables and loads the initial data unless the users table exists, as the reference
// does, with this app's own schema (sql/, embedded).
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
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve memo`, which "+
			"writes it (or set MEMO_INITIAL_SQL to where it is)", dumpPath)
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
	// SQLite's indexes are built after the rows are in: one sort instead of 50,000 index insertions. (MariaDB's
	// are declared with their tables.)
	isTable := func(stmt string) bool { return !isIndex(stmt) }
	err = execStatements(schemaExec, bytes.NewReader(schema), isTable)
	if err == nil {
		err = execStatements(tx, dump, nil)
	}
	if err == nil {
		err = execStatements(schemaExec, bytes.NewReader(schema), isIndex)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		tx.Rollback()
		if isMySQL {
			db.Exec("DROP TABLE IF EXISTS users, memos, sessions")
		}
		return fmt.Errorf("loading the initial data: %w", err)
	}
	log.Printf("loaded the initial data in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// indexes are this app's indexes on memos, as in sql/.
var indexes = []struct{ name, columns string }{
	{"memos_is_private_id", "is_private, id"},
	{"memos_user_id_id", "user_id, id"},
}

// ensureIndexes adds this app's indexes to a database made by the reference app's schema, so the tuned app can
// also run on the reference's database.
func ensureIndexes(db *sql.DB, isMySQL bool) error {
	for _, ix := range indexes {
		var n int
		query := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?"
		if isMySQL {
			query = "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() " +
				"AND table_name = 'memos' AND index_name = ?"
		}
		if err := db.QueryRow(query, ix.name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		start := time.Now()
		stmt := "CREATE INDEX " + ix.name + " ON memos (" + ix.columns + ")"
		if isMySQL {
			stmt = "ALTER TABLE memos ADD INDEX " + ix.name + " (" + ix.columns + ")"
		}
		if _, err := db.Exec(stmt); err != nil {
			return err
		}
		log.Printf("added the index %s in %v", ix.name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

// execStatements runs the statements of an SQL file, each ending with ";" at the end of a line; only those for
// which keep returns true, if keep is not nil.
func execStatements(db execer, r io.Reader, keep func(string) bool) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var stmt strings.Builder
	for {
		line, readErr := br.ReadString('\n')
		stmt.WriteString(line)
		if strings.HasSuffix(strings.TrimRight(line, " \r\n"), ";") || readErr == io.EOF {
			if s := stmt.String(); !isBlankSQL(s) && (keep == nil || keep(s)) {
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

// isIndex reports whether the statement, comments aside, creates an index.
func isIndex(stmt string) bool {
	for _, line := range strings.Split(stmt, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			return strings.HasPrefix(line, "CREATE INDEX")
		}
	}
	return false
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
