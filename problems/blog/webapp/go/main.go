// Command tunecon-blog is the Go reference app of the tunecon problem "blog": a small blog whose every page lists
// the articles commented on most recently. It is slow on purpose, the way real apps are slow, and it is correct:
// keep it correct while you make it fast. The contract it keeps is in ../../MANUAL.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
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

type Article struct {
	ID        int64     `db:"id"`
	Title     string    `db:"title"`
	Body      string    `db:"body"`
	CreatedAt time.Time `db:"created_at"`
}

type Comment struct {
	ID        int64     `db:"id"`
	ArticleID int64     `db:"article_id"`
	Name      string    `db:"name"`
	Body      string    `db:"body"`
	CreatedAt time.Time `db:"created_at"`
}

// RecentArticle is one entry of the sidebar.
type RecentArticle struct {
	ID    int64  `db:"id"`
	Title string `db:"title"`
}

// Page is what every template gets.
type Page struct {
	Title        string
	Message      string
	Recent       []RecentArticle
	Articles     []Article
	Article      Article
	Comments     []Comment
	CommentCount int
}

type App struct {
	db        *sqlx.DB
	isMySQL   bool
	templates map[string]*template.Template
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("BLOG_ROOT", "..")
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
	if err := loadInitialData(db, isMySQL, root, initialSQL); err != nil {
		return err
	}
	templates, err := parseTemplates(filepath.Join(root, "go", "templates"))
	if err != nil {
		return err
	}
	app := &App{db: db, isMySQL: isMySQL, templates: templates}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", app.getIndex)
	mux.HandleFunc("GET /articles/{id}", app.getArticle)
	mux.HandleFunc("GET /post", app.getPost)
	mux.HandleFunc("POST /articles", app.postArticle)
	mux.HandleFunc("POST /articles/{id}/comments", app.postComment)
	mux.HandleFunc("POST /initialize", app.postInitialize)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServer(http.Dir(filepath.Join(root, "public")))))
	mux.HandleFunc("/", app.notFound)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
func openDB(dsn, root string) (*sqlx.DB, bool, error) {
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
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, false, err
		}
		db, err := sqlx.Open("mysql", cfg.FormatDSN())
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "blog.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, false, err
		}
		// WAL lets readers run while someone writes; the busy timeout makes writers wait for each other.
		db, err := sqlx.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
		return db, false, err
	default:
		return nil, false, fmt.Errorf("BLOG_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
	}
}

// loadInitialData creates the tables and loads the initial data unless the article table exists.
func loadInitialData(db *sqlx.DB, isMySQL bool, root, dumpPath string) error {
	var n int
	query := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'article'"
	if isMySQL {
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'article'"
	}
	if err := db.Get(&n, query); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}

	dump, err := os.Open(dumpPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve blog`, which "+
			"writes it and then starts this app (or set BLOG_INITIAL_SQL to where it is)", dumpPath)
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
	tx, err := db.Beginx()
	if err != nil {
		return err
	}
	// SQLite creates the tables inside the transaction, so an interrupted load leaves nothing behind. MariaDB
	// commits on CREATE TABLE, so it creates them first and drops them again if the load fails.
	var schemaExec sqlx.Execer = tx
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
			db.Exec("DROP TABLE IF EXISTS article, comment")
		}
		return fmt.Errorf("loading the initial data: %w", err)
	}
	log.Printf("loaded the initial data in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// execStatements runs the statements of an SQL file, each ending with ";" at the end of a line.
func execStatements(db sqlx.Execer, r io.Reader) error {
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

func parseTemplates(dir string) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"datetime": func(t time.Time) string { return t.UTC().Format(timeFormat) },
		"multiline": func(s string) template.HTML {
			s = template.HTMLEscapeString(s)
			s = strings.ReplaceAll(s, "\r\n", "<br>")
			return template.HTML(strings.ReplaceAll(s, "\n", "<br>"))
		},
		"commenter": func(name string) string {
			if name == "" {
				return anonymousName
			}
			return name
		},
	}
	templates := map[string]*template.Template{}
	for _, name := range []string{"index", "article", "post", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFiles(
			filepath.Join(dir, "layout.html"),
			filepath.Join(dir, "entry.html"),
			filepath.Join(dir, name+".html"),
		)
		if err != nil {
			return nil, err
		}
		templates[name] = t
	}
	return templates, nil
}

// render writes a page with the sidebar, which every page has.
func (app *App) render(w http.ResponseWriter, status int, name string, page Page) {
	err := app.db.Select(&page.Recent, `SELECT a.id, a.title FROM comment c JOIN article a ON a.id = c.article_id `+
		`GROUP BY a.id, a.title ORDER BY MAX(c.id) DESC LIMIT 10`)
	if err != nil {
		app.serverError(w, err)
		return
	}
	var buf bytes.Buffer
	if err := app.templates[name].ExecuteTemplate(&buf, "layout", page); err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	http.Error(w, "Internal Server Error", http.StatusInternalServerError)
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	app.render(w, http.StatusNotFound, "error", Page{Title: "Not found", Message: "There is no such page."})
}

func (app *App) badRequest(w http.ResponseWriter, message string) {
	app.render(w, http.StatusBadRequest, "error", Page{Title: "Bad request", Message: message})
}

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	var articles []Article
	err := app.db.Select(&articles, "SELECT id, title, body, created_at FROM article ORDER BY id DESC LIMIT 10")
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.render(w, http.StatusOK, "index", Page{Articles: articles})
}

func (app *App) getArticle(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		app.notFound(w, r)
		return
	}
	var article Article
	err := app.db.Get(&article, "SELECT id, title, body, created_at FROM article WHERE id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		app.notFound(w, r)
		return
	} else if err != nil {
		app.serverError(w, err)
		return
	}
	// The count and the list come from one transaction, so that a comment
	// posted in between cannot make them disagree.
	tx, err := app.db.Beginx()
	if err != nil {
		app.serverError(w, err)
		return
	}
	defer tx.Rollback()
	var count int
	if err := tx.Get(&count, "SELECT COUNT(*) FROM comment WHERE article_id = ?", id); err != nil {
		app.serverError(w, err)
		return
	}
	var comments []Comment
	err = tx.Select(&comments,
		"SELECT id, article_id, name, body, created_at FROM comment WHERE article_id = ? ORDER BY id", id)
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.render(w, http.StatusOK, "article", Page{
		Title:        article.Title,
		Article:      article,
		Comments:     comments,
		CommentCount: count,
	})
}

func (app *App) getPost(w http.ResponseWriter, r *http.Request) {
	app.render(w, http.StatusOK, "post", Page{Title: "Write an article"})
}

func (app *App) postArticle(w http.ResponseWriter, r *http.Request) {
	title := r.PostFormValue("title")
	body := r.PostFormValue("body")
	if !validText(title, 1, maxTitle) || strings.ContainsAny(title, "\r\n") {
		app.badRequest(w, fmt.Sprintf("The title must be one line of 1 to %d characters.", maxTitle))
		return
	}
	if !validText(body, 1, maxArticleBody) {
		app.badRequest(w, fmt.Sprintf("The body must be 1 to %d characters long.", maxArticleBody))
		return
	}
	res, err := app.db.Exec("INSERT INTO article (title, body, created_at) VALUES (?, ?, ?)",
		title, body, time.Now().UTC().Format(timeFormat))
	if err != nil {
		app.serverError(w, err)
		return
	}
	id, err := res.LastInsertId()
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Location", "/articles/"+strconv.FormatInt(id, 10))
	w.WriteHeader(http.StatusSeeOther)
}

func (app *App) postComment(w http.ResponseWriter, r *http.Request) {
	articleID, ok := parseID(r.PathValue("id"))
	if !ok {
		app.notFound(w, r)
		return
	}
	var found int
	if err := app.db.Get(&found, "SELECT COUNT(*) FROM article WHERE id = ?", articleID); err != nil {
		app.serverError(w, err)
		return
	}
	if found == 0 {
		app.notFound(w, r)
		return
	}
	name := r.PostFormValue("name")
	body := r.PostFormValue("body")
	if !validText(name, 0, maxName) {
		app.badRequest(w, fmt.Sprintf("The name must be at most %d characters long.", maxName))
		return
	}
	if !validText(body, 1, maxCommentBody) {
		app.badRequest(w, fmt.Sprintf("The comment must be 1 to %d characters long.", maxCommentBody))
		return
	}
	res, err := app.db.Exec("INSERT INTO comment (article_id, name, body, created_at) VALUES (?, ?, ?, ?)",
		articleID, name, body, time.Now().UTC().Format(timeFormat))
	if err != nil {
		app.serverError(w, err)
		return
	}
	id, err := res.LastInsertId()
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/articles/%d#comment-%d", articleID, id))
	w.WriteHeader(http.StatusSeeOther)
}

// postInitialize restores the initial data by deleting everything added since.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	statements := []string{
		fmt.Sprintf("DELETE FROM comment WHERE id > %d", initialComments),
		fmt.Sprintf("DELETE FROM article WHERE id > %d", initialArticles),
	}
	if app.isMySQL {
		statements = append(statements,
			fmt.Sprintf("ALTER TABLE comment AUTO_INCREMENT = %d", initialComments+1),
			fmt.Sprintf("ALTER TABLE article AUTO_INCREMENT = %d", initialArticles+1),
		)
	}
	for _, s := range statements {
		if _, err := app.db.Exec(s); err != nil {
			app.serverError(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"language":"go"}`)
}

// parseID parses a positive decimal id, digits only.
func parseID(s string) (int64, bool) {
	if s == "" || len(s) > 18 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// validText reports whether s is valid UTF-8 of lo to hi characters.
func validText(s string, lo, hi int) bool {
	n := utf8.RuneCountInString(s)
	return utf8.ValidString(s) && n >= lo && n <= hi
}
