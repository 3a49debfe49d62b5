// Command tunecon-blog-tuned is a tuned implementation of the tunecon problem "blog". SPOILER: it shows how far
// tuning takes the reference app (../../webapp/go); read ../README.md for what it does and why.
//
// It keeps the reference's HTTP contract (../../MANUAL.md) byte for byte and its environment variables, and
// differs inside:
//   - the database gets an index on comment(article_id, id) (sql/, embedded in the binary);
//   - every article is rendered once, at start, into an HTML fragment kept in memory;
//   - each article's comments are rendered into one fragment the first time the article is viewed, and every
//     new comment is appended to it;
//   - the sidebar is kept in memory and updated on every new comment;
//   - pages are written straight into a byte buffer, no template engine;
//   - static files are served from memory with Cache-Control, ETag and Last-Modified (css and js gzipped);
//   - every write is serialised in the app, so SQLite never makes a writer wait.
//
// The database stays the source of truth: the memory is rebuilt from it at start and by POST /initialize. The
// app must be the only one writing to its database.
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
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/mattn/go-sqlite3"
)

// The sizes of the initial data: POST /initialize deletes every row added after it.
const (
	initialArticles = 10000
	initialComments = 300000
)

const (
	timeFormat    = "2006-01-02 15:04:05" // every time, in UTC
	anonymousName = "名無しさん"               // shown for a comment with an empty name
)

// Limits of posted text, in characters (runes).
const (
	maxTitle       = 128
	maxArticleBody = 4096
	maxName        = 64
	maxCommentBody = 1024
)

//go:embed sql/schema.sqlite.sql sql/schema.mysql.sql
var schemas embed.FS

type App struct {
	db      *sql.DB
	isMySQL bool

	// wmu serialises every write to the database and to the memory below (articles, comment lists, sidebar).
	// Readers never take it.
	wmu sync.Mutex
	mem memory

	static map[string]*staticFile
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("BLOG_ROOT", filepath.Join("..", "..", "webapp"))
	addr := getenv("BLOG_ADDR", "127.0.0.1:8080")
	initialSQL := getenv("BLOG_INITIAL_SQL", filepath.Join(root, "data", "initial.sql"))

	db, isMySQL, err := openDB(os.Getenv("BLOG_DB"), root)
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
	if err := ensureIndex(db, isMySQL); err != nil {
		return err
	}
	static, err := loadStatic(filepath.Join(root, "public"))
	if err != nil {
		return err
	}
	app := &App{db: db, isMySQL: isMySQL, static: static}
	start := time.Now()
	if err := app.reload(); err != nil {
		return err
	}
	log.Printf("loaded the articles and the sidebar into memory in %v", time.Since(start).Round(time.Millisecond))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", app.getIndex)
	mux.HandleFunc("GET /articles/{id}", app.getArticle)
	mux.HandleFunc("GET /post", app.getPost)
	mux.HandleFunc("POST /articles", app.postArticle)
	mux.HandleFunc("POST /articles/{id}/comments", app.postComment)
	mux.HandleFunc("POST /initialize", app.postInitialize)
	mux.HandleFunc("GET /static/", app.getStatic)
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
			return nil, false, fmt.Errorf("BLOG_DB: %w", err)
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
		cfg.InterpolateParams = true // one round trip per statement instead of prepare, execute, close
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, false, err
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err == nil {
			db.SetMaxOpenConns(16)
			db.SetMaxIdleConns(16)
		}
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "blog-tuned.db")
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
		return nil, false, fmt.Errorf("BLOG_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
	}
}

// loadInitialData creates the tables and loads the initial data unless the article table exists, as the reference
// does, with this app's own schema (sql/, embedded).
func loadInitialData(db *sql.DB, isMySQL bool, dumpPath string) error {
	var n int
	query := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'article'"
	if isMySQL {
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'article'"
	}
	if err := db.QueryRow(query).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}

	dump, err := os.Open(dumpPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve blog`, which "+
			"writes it (or set BLOG_INITIAL_SQL to where it is)", dumpPath)
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
	// Indexes are built after the rows are in: one sort instead of 300,000 index insertions.
	isIndex := func(stmt string) bool { return strings.Contains(stmt, "CREATE INDEX") }
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
			db.Exec("DROP TABLE IF EXISTS article, comment")
		}
		return fmt.Errorf("loading the initial data: %w", err)
	}
	log.Printf("loaded the initial data in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// ensureIndex adds the index on comment(article_id, id) to a database made by the reference app's schema, so the
// tuned app can also run on the reference's database.
func ensureIndex(db *sql.DB, isMySQL bool) error {
	if !isMySQL {
		_, err := db.Exec("CREATE INDEX IF NOT EXISTS comment_article_id ON comment (article_id, id)")
		return err
	}
	var n int
	err := db.QueryRow("SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() " +
		"AND table_name = 'comment' AND index_name = 'comment_article_id'").Scan(&n)
	if err != nil || n > 0 {
		return err
	}
	_, err = db.Exec("CREATE INDEX comment_article_id ON comment (article_id, id)")
	return err
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
