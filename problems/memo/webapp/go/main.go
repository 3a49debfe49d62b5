// Command tunecon-memo is the Go reference app of the tunecon problem "memo": a Markdown memo service after the
// ISUCON3 qualifier, where people sign up, write memos, public or private, and read the newest public ones. It is
// slow on purpose, the way real apps are slow, and it is correct: keep it correct while you make it fast. The
// contract it keeps is in ../../MANUAL.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"
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

var (
	usernamePattern = regexp.MustCompile(`^[a-z0-9_]{3,24}$`)
	pageNumber      = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	memoID          = regexp.MustCompile(`^[1-9][0-9]*$`)
)

type User struct {
	ID           int64  `db:"id"`
	Username     string `db:"username"`
	Salt         string `db:"salt"`
	PasswordHash string `db:"password_hash"`
}

// Memo is a row of memos. CreatedAt is the text "YYYY-MM-DD HH:MM:SS" on both databases.
type Memo struct {
	ID        int64  `db:"id"`
	UserID    int64  `db:"user_id"`
	Content   string `db:"content"`
	IsPrivate bool   `db:"is_private"`
	CreatedAt string `db:"created_at"`
}

// Session is a signed-in session, with its user's name.
type Session struct {
	ID        string `db:"id"`
	UserID    int64  `db:"user_id"`
	CSRFToken string `db:"csrf_token"`
	Username  string `db:"username"`
}

// MemoItem is a memo as the pages show it.
type MemoItem struct {
	ID        int64
	Title     string
	Author    string
	CreatedAt string
	IsPrivate bool
}

// Page is what every template gets.
type Page struct {
	Title    string
	Session  *Session // nil when signed out
	Message  string
	Username string // what the sign-in or sign-up form was sent with
	Total    int
	Memos    []MemoItem
	More     string // the link to older memos, if any
	Memo     MemoItem
	Content  template.HTML
	Older    int64
	Newer    int64
}

type App struct {
	db        *sqlx.DB
	isMySQL   bool
	public    string
	templates map[string]*template.Template
	markdown  goldmark.Markdown
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("MEMO_ROOT", "..")
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
	if err := loadInitialData(db, isMySQL, root, initialSQL); err != nil {
		return err
	}
	templates, err := parseTemplates(filepath.Join(root, "go", "templates"))
	if err != nil {
		return err
	}
	app := &App{
		db:        db,
		isMySQL:   isMySQL,
		public:    filepath.Join(root, "public"),
		templates: templates,
		// Pure CommonMark: raw HTML in a memo is left out of the page.
		markdown: goldmark.New(),
	}

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
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, false, err
		}
		db, err := sqlx.Open("mysql", cfg.FormatDSN())
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "memo.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, false, err
		}
		// WAL lets readers run while someone writes; the busy timeout makes writers wait for each other.
		db, err := sqlx.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
		return db, false, err
	default:
		return nil, false, fmt.Errorf("MEMO_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
	}
}

// loadInitialData creates the tables and loads the initial data unless the users table exists.
func loadInitialData(db *sqlx.DB, isMySQL bool, root, dumpPath string) error {
	var n int
	query := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'users'"
	if isMySQL {
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'users'"
	}
	if err := db.Get(&n, query); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}

	dump, err := os.Open(dumpPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve memo`, which "+
			"writes it and then starts this app (or set MEMO_INITIAL_SQL to where it is)", dumpPath)
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
			db.Exec("DROP TABLE IF EXISTS users, memos, sessions")
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
	templates := map[string]*template.Template{}
	for _, name := range []string{"index", "memo", "mypage", "signin", "signup", "error"} {
		t, err := template.ParseFiles(
			filepath.Join(dir, "layout.html"),
			filepath.Join(dir, "item.html"),
			filepath.Join(dir, name+".html"),
		)
		if err != nil {
			return nil, err
		}
		templates[name] = t
	}
	return templates, nil
}

func (app *App) render(w http.ResponseWriter, status int, name string, page Page) {
	var buf bytes.Buffer
	if err := app.templates[name].ExecuteTemplate(&buf, "layout", page); err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderError writes an error page: the layout, with the header of sess, and a message.
func (app *App) renderError(w http.ResponseWriter, sess *Session, status int, message string) {
	app.render(w, status, "error", Page{Title: http.StatusText(status), Session: sess, Message: message})
}

// serverError writes the page of an error of the app's own, signed out: the session may be what failed.
func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	var buf bytes.Buffer
	page := Page{Title: "Internal Server Error", Message: "Something went wrong. Please try again."}
	if err := app.templates["error"].ExecuteTemplate(&buf, "layout", page); err != nil {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write(buf.Bytes())
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.renderError(w, sess, http.StatusNotFound, "There is no such page.")
}

// Sessions.

// session returns the request's session, or nil if it is signed out (a cookie naming no session counts as no
// cookie). A response to a signed-in session is for its user only: session marks it Cache-Control: private.
func (app *App) session(w http.ResponseWriter, r *http.Request) (*Session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, nil
	}
	var s Session
	err = app.db.Get(&s, "SELECT s.id, s.user_id, s.csrf_token, u.username FROM sessions s "+
		"JOIN users u ON u.id = s.user_id WHERE s.id = ?", c.Value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	w.Header().Set("Cache-Control", "private")
	return &s, nil
}

// signIn ends the session the request came with, if any, and starts a new one signed in to the user.
func (app *App) signIn(w http.ResponseWriter, r *http.Request, userID int64) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, err := app.db.Exec("DELETE FROM sessions WHERE id = ?", c.Value); err != nil {
			return err
		}
	}
	id := randomToken()
	_, err := app.db.Exec("INSERT INTO sessions (id, user_id, csrf_token, created_at) VALUES (?, ?, ?, ?)",
		id, userID, randomToken(), now())
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "private")
	return nil
}

// validCSRF reports whether the form carries the session's CSRF token.
func validCSRF(r *http.Request, sess *Session) bool {
	return subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf_token")), []byte(sess.CSRFToken)) == 1
}

func seeOther(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

// Memo lists.

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	app.renderList(w, r, 0, false)
}

func (app *App) getRecent(w http.ResponseWriter, r *http.Request) {
	s := r.PathValue("n")
	n, err := strconv.ParseInt(s, 10, 64)
	if !pageNumber.MatchString(s) || err != nil || n > math.MaxInt64/pageSize-1 {
		app.notFound(w, r)
		return
	}
	app.renderList(w, r, n, true)
}

// renderList writes page n of the public memos, newest first: / is page 0, and the only page that is there even
// without a memo on it (/recent/N, recent, is 404 when empty, /recent/0 too).
func (app *App) renderList(w http.ResponseWriter, r *http.Request, n int64, recent bool) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	// The count and the list come from one transaction, so that a memo posted in between cannot make them
	// disagree.
	tx, err := app.db.Beginx()
	if err != nil {
		app.serverError(w, err)
		return
	}
	defer tx.Rollback()
	var total int
	if err := tx.Get(&total, "SELECT COUNT(*) FROM memos WHERE is_private = 0"); err != nil {
		app.serverError(w, err)
		return
	}
	var memos []Memo
	err = tx.Select(&memos, "SELECT id, user_id, content, is_private, created_at FROM memos WHERE is_private = 0 "+
		"ORDER BY id DESC LIMIT ? OFFSET ?", pageSize, n*pageSize)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if recent && len(memos) == 0 {
		app.renderError(w, sess, http.StatusNotFound, "There is no such page.")
		return
	}
	items := make([]MemoItem, 0, len(memos))
	for _, m := range memos {
		var author string
		if err := tx.Get(&author, "SELECT username FROM users WHERE id = ?", m.UserID); err != nil {
			app.serverError(w, err)
			return
		}
		items = append(items, memoItem(m, author))
	}
	page := Page{Session: sess, Total: total, Memos: items}
	if n > 0 {
		page.Title = fmt.Sprintf("Public memos, page %d", n)
	}
	if int64(total) > (n+1)*pageSize {
		page.More = fmt.Sprintf("/recent/%d", n+1)
	}
	app.render(w, http.StatusOK, "index", page)
}

// A memo.

func (app *App) getMemo(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	s := r.PathValue("id")
	id, err := strconv.ParseInt(s, 10, 64)
	if !memoID.MatchString(s) || err != nil {
		app.renderError(w, sess, http.StatusNotFound, "There is no such memo.")
		return
	}
	var memo Memo
	err = app.db.Get(&memo, "SELECT id, user_id, content, is_private, created_at FROM memos WHERE id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		app.renderError(w, sess, http.StatusNotFound, "There is no such memo.")
		return
	} else if err != nil {
		app.serverError(w, err)
		return
	}
	isAuthor := sess != nil && sess.UserID == memo.UserID
	if memo.IsPrivate && !isAuthor {
		// To anyone but its author, a private memo does not exist.
		app.renderError(w, sess, http.StatusNotFound, "There is no such memo.")
		return
	}
	var author string
	if err := app.db.Get(&author, "SELECT username FROM users WHERE id = ?", memo.UserID); err != nil {
		app.serverError(w, err)
		return
	}
	var content bytes.Buffer
	if err := app.markdown.Convert([]byte(memo.Content), &content); err != nil {
		app.serverError(w, err)
		return
	}

	// The older and the newer memo of the author that the viewer may see.
	var memos []Memo
	err = app.db.Select(&memos, "SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? "+
		"ORDER BY id", memo.UserID)
	if err != nil {
		app.serverError(w, err)
		return
	}
	var older, newer int64
	for _, m := range memos {
		if m.IsPrivate && !isAuthor {
			continue
		}
		if m.ID < memo.ID {
			older = m.ID
		} else if m.ID > memo.ID && newer == 0 {
			newer = m.ID
		}
	}

	item := memoItem(memo, author)
	app.render(w, http.StatusOK, "memo", Page{
		Title:   item.Title,
		Session: sess,
		Memo:    item,
		Content: template.HTML(content.String()),
		Older:   older,
		Newer:   newer,
	})
}

// The user's own page, and writing.

func (app *App) getMypage(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if sess == nil {
		seeOther(w, "/signin")
		return
	}
	var memos []Memo
	err = app.db.Select(&memos, "SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? "+
		"ORDER BY id DESC", sess.UserID)
	if err != nil {
		app.serverError(w, err)
		return
	}
	items := make([]MemoItem, 0, len(memos))
	for _, m := range memos {
		items = append(items, memoItem(m, sess.Username))
	}
	app.render(w, http.StatusOK, "mypage", Page{Title: "My page", Session: sess, Memos: items})
}

func (app *App) postMemo(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if sess == nil {
		app.renderError(w, nil, http.StatusForbidden, "Sign in to write a memo.")
		return
	}
	if !validCSRF(r, sess) {
		app.renderError(w, sess, http.StatusBadRequest, "The form has expired: reload the page and try again.")
		return
	}
	content := r.PostFormValue("content")
	if !validText(content, 1, maxContent) || title(content) == "" {
		app.renderError(w, sess, http.StatusBadRequest,
			fmt.Sprintf("A memo is 1 to %d characters long, and its first line is its title.", maxContent))
		return
	}
	isPrivate := 0
	if r.PostFormValue("is_private") == "1" {
		isPrivate = 1
	}
	res, err := app.db.Exec("INSERT INTO memos (user_id, content, is_private, created_at) VALUES (?, ?, ?, ?)",
		sess.UserID, content, isPrivate, now())
	if err != nil {
		app.serverError(w, err)
		return
	}
	id, err := res.LastInsertId()
	if err != nil {
		app.serverError(w, err)
		return
	}
	seeOther(w, "/memos/"+strconv.FormatInt(id, 10))
}

// Signing in and out.

func (app *App) getSignin(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.render(w, http.StatusOK, "signin", Page{Title: "Sign in", Session: sess})
}

func (app *App) postSignin(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	username := r.PostFormValue("username")
	password := r.PostFormValue("password")
	var user User
	err = app.db.Get(&user, "SELECT id, username, salt, password_hash FROM users WHERE username = ?", username)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		app.serverError(w, err)
		return
	}
	if err != nil || hashPassword(user.Salt, password) != user.PasswordHash {
		app.render(w, http.StatusUnauthorized, "signin", Page{
			Title:    "Sign in",
			Session:  sess,
			Message:  "Wrong name or password.",
			Username: username,
		})
		return
	}
	if err := app.signIn(w, r, user.ID); err != nil {
		app.serverError(w, err)
		return
	}
	seeOther(w, "/mypage")
}

func (app *App) getSignup(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.render(w, http.StatusOK, "signup", Page{Title: "Sign up", Session: sess})
}

func (app *App) postSignup(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	username := r.PostFormValue("username")
	password := r.PostFormValue("password")
	page := Page{Title: "Sign up", Session: sess, Username: username}
	if !usernamePattern.MatchString(username) || !validText(password, minPassword, maxPassword) {
		page.Message = fmt.Sprintf("A name is 3 to 24 characters of a-z, 0-9 and _; a password is %d to %d "+
			"characters long.", minPassword, maxPassword)
		app.render(w, http.StatusBadRequest, "signup", page)
		return
	}
	// Look first: on MariaDB, an insert refused by the unique name still uses up an id. The unique name has the
	// last word when two people sign up with one name at once.
	var taken int
	if err := app.db.Get(&taken, "SELECT COUNT(*) FROM users WHERE username = ?", username); err != nil {
		app.serverError(w, err)
		return
	}
	if taken > 0 {
		page.Message = "This name is taken."
		app.render(w, http.StatusConflict, "signup", page)
		return
	}
	salt := randomHex(8)
	res, err := app.db.Exec("INSERT INTO users (username, salt, password_hash, created_at) VALUES (?, ?, ?, ?)",
		username, salt, hashPassword(salt, password), now())
	if isDuplicate(err) {
		page.Message = "This name is taken."
		app.render(w, http.StatusConflict, "signup", page)
		return
	} else if err != nil {
		app.serverError(w, err)
		return
	}
	id, err := res.LastInsertId()
	if err != nil {
		app.serverError(w, err)
		return
	}
	if err := app.signIn(w, r, id); err != nil {
		app.serverError(w, err)
		return
	}
	seeOther(w, "/mypage")
}

func (app *App) postSignout(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if sess != nil {
		if !validCSRF(r, sess) {
			app.renderError(w, sess, http.StatusBadRequest, "The form has expired: reload the page and try again.")
			return
		}
		if _, err := app.db.Exec("DELETE FROM sessions WHERE id = ?", sess.ID); err != nil {
			app.serverError(w, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteLaxMode})
	}
	seeOther(w, "/")
}

// The rest.

// postInitialize restores the initial data by deleting everything added since.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	statements := []string{
		fmt.Sprintf("DELETE FROM memos WHERE id > %d", initialMemos),
		fmt.Sprintf("DELETE FROM users WHERE id > %d", initialUsers),
		"DELETE FROM sessions",
	}
	if app.isMySQL {
		statements = append(statements,
			fmt.Sprintf("ALTER TABLE memos AUTO_INCREMENT = %d", initialMemos+1),
			fmt.Sprintf("ALTER TABLE users AUTO_INCREMENT = %d", initialUsers+1),
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

// getStatic serves the files under public/; anything else there (a directory, a missing file) is not found.
func (app *App) getStatic(w http.ResponseWriter, r *http.Request) {
	name := filepath.Join(app.public, filepath.FromSlash(path.Clean("/"+r.PathValue("file"))))
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		app.notFound(w, r)
		return
	}
	http.ServeFile(w, r, name)
}

// Helpers.

// title is a memo's title: the first line of its content without the '#' characters and spaces at its start and
// the spaces and tabs at its end.
func title(content string) string {
	line, _, _ := strings.Cut(content, "\n")
	return strings.TrimRight(strings.TrimLeft(line, "# "), " \t")
}

func memoItem(m Memo, author string) MemoItem {
	return MemoItem{ID: m.ID, Title: title(m.Content), Author: author, CreatedAt: m.CreatedAt, IsPrivate: m.IsPrivate}
}

// hashPassword is what the users table stores: the SHA-256 of salt + password, in lowercase hex.
func hashPassword(salt, password string) string {
	sum := sha256.Sum256([]byte(salt + password))
	return hex.EncodeToString(sum[:])
}

// isDuplicate reports whether err is an insert refused by a unique key.
func isDuplicate(err error) bool {
	var sqliteErr sqlite3.Error
	var mysqlErr *mysql.MySQLError
	return errors.As(err, &sqliteErr) && sqliteErr.ExtendedCode == sqlite3.ErrConstraintUnique ||
		errors.As(err, &mysqlErr) && mysqlErr.Number == 1062
}

// randomToken is a session id or a CSRF token: 32 random hex digits.
func randomToken() string {
	return randomHex(16)
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// validText reports whether s is valid UTF-8 of lo to hi characters.
func validText(s string, lo, hi int) bool {
	n := utf8.RuneCountInString(s)
	return utf8.ValidString(s) && n >= lo && n <= hi
}

// now is the current UTC time, in whole seconds.
func now() string {
	return time.Now().UTC().Format(timeFormat)
}
