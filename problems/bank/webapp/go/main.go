// Command tunecon-bank is the Go reference app of the tunecon problem "bank": the login page of an online bank
// that locks users and bans addresses after too many failed attempts. It is slow on purpose, the way real apps are
// slow, and it is correct: keep it correct while you make it fast. The contract it keeps is in ../../MANUAL.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
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
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
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

// notices are the messages the login page shows once, by reason.
var notices = map[string]string{
	"wrong":          "Wrong login or password.",
	"locked":         "This account is locked after too many failed attempts.",
	"banned":         "Too many failed attempts from your address: it is banned.",
	"login-required": "Please log in first.",
}

type User struct {
	ID           int64  `db:"id"`
	Login        string `db:"login"`
	PasswordHash string `db:"password_hash"`
	Salt         string `db:"salt"`
}

type Session struct {
	ID         string         `db:"id"`
	UserID     sql.NullInt64  `db:"user_id"`
	LoginLogID sql.NullInt64  `db:"login_log_id"`
	Notice     sql.NullString `db:"notice"`
}

// LoginRecord is a successful login, as /mypage shows it.
type LoginRecord struct {
	CreatedAt time.Time `db:"created_at"`
	IP        string    `db:"ip"`
}

// Page is what every template gets.
type Page struct {
	Title      string
	Message    string
	Notice     string
	NoticeText string
	Login      string
	LastAt     string
	LastIP     string
}

type App struct {
	db        *sqlx.DB
	isMySQL   bool
	public    string
	templates map[string]*template.Template
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("BANK_ROOT", "..")
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
	templates, err := parseTemplates(filepath.Join(root, "go", "templates"))
	if err != nil {
		return err
	}
	app := &App{db: db, isMySQL: isMySQL, public: filepath.Join(root, "public"), templates: templates}

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
		db, err := sqlx.Open("mysql", cfg.FormatDSN())
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "bank.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, false, err
		}
		// WAL lets readers run while someone writes; the busy timeout makes writers wait for each other.
		db, err := sqlx.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
		return db, false, err
	default:
		return nil, false, fmt.Errorf("BANK_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
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
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve bank`, which "+
			"writes it and then starts this app (or set BANK_INITIAL_SQL to where it is)", dumpPath)
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
			db.Exec("DROP TABLE IF EXISTS users, login_log, sessions")
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
	for _, name := range []string{"index", "mypage", "error"} {
		t, err := template.ParseFiles(filepath.Join(dir, "layout.html"), filepath.Join(dir, name+".html"))
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

func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	http.Error(w, "Internal Server Error", http.StatusInternalServerError)
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	app.render(w, http.StatusNotFound, "error", Page{Title: "Not found", Message: "There is no such page."})
}

// Sessions.

// session returns the request's session, or nil if it has none (or one the database does not know).
func (app *App) session(r *http.Request) (*Session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, nil
	}
	var s Session
	err = app.db.Get(&s, "SELECT id, user_id, login_log_id, notice FROM sessions WHERE id = ?", c.Value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &s, nil
}

// newSession stores a new session and sends its cookie. userID and loginLogID are nil for a session nobody is
// logged in to, notice is nil when there is nothing to show.
func (app *App) newSession(w http.ResponseWriter, userID, loginLogID, notice any) error {
	token := make([]byte, 32)
	rand.Read(token)
	id := hex.EncodeToString(token)
	_, err := app.db.Exec("INSERT INTO sessions (id, user_id, login_log_id, notice, created_at) VALUES (?, ?, ?, ?, ?)",
		id, userID, loginLogID, notice, now())
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return nil
}

func seeOther(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

// Handlers.

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	page := Page{Title: "Log in"}
	if sess != nil && sess.Notice.Valid {
		page.Notice = sess.Notice.String
		page.NoticeText = notices[page.Notice]
		// Shown once.
		if _, err := app.db.Exec("UPDATE sessions SET notice = NULL WHERE id = ?", sess.ID); err != nil {
			app.serverError(w, err)
			return
		}
	}
	w.Header().Set("Cache-Control", "private")
	app.render(w, http.StatusOK, "index", page)
}

func (app *App) postLogin(w http.ResponseWriter, r *http.Request) {
	login := r.PostFormValue("login")
	password := r.PostFormValue("password")
	ip := clientIP(r)

	var user User
	found := true
	err := app.db.Get(&user, "SELECT id, login, password_hash, salt FROM users WHERE login = ?", login)
	if errors.Is(err, sql.ErrNoRows) {
		found = false
	} else if err != nil {
		app.serverError(w, err)
		return
	}

	// The checks, in order: the address, the user, the password.
	reason := ""
	var ipFailures int
	err = app.db.Get(&ipFailures, "SELECT COUNT(*) FROM login_log WHERE ip = ? AND "+
		"id > IFNULL((SELECT MAX(id) FROM login_log WHERE ip = ? AND succeeded = 1), 0)", ip, ip)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if ipFailures >= banThreshold {
		reason = "banned"
	} else if found {
		var userFailures int
		err = app.db.Get(&userFailures, "SELECT COUNT(*) FROM login_log WHERE user_id = ? AND "+
			"id > IFNULL((SELECT MAX(id) FROM login_log WHERE user_id = ? AND succeeded = 1), 0)", user.ID, user.ID)
		if err != nil {
			app.serverError(w, err)
			return
		}
		if userFailures >= lockThreshold {
			reason = "locked"
		}
	}
	if reason == "" && (!found || hashPassword(password, user.Salt) != user.PasswordHash) {
		reason = "wrong"
	}

	// Every attempt goes into the log.
	var userID any
	if found {
		userID = user.ID
	}
	succeeded := 0
	if reason == "" {
		succeeded = 1
	}
	res, err := app.db.Exec("INSERT INTO login_log (created_at, user_id, login, ip, succeeded) VALUES (?, ?, ?, ?, ?)",
		now(), userID, login, ip, succeeded)
	if err != nil {
		app.serverError(w, err)
		return
	}
	logID, err := res.LastInsertId()
	if err != nil {
		app.serverError(w, err)
		return
	}

	// The attempt ends the session it came with and starts a new one.
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, err := app.db.Exec("DELETE FROM sessions WHERE id = ?", c.Value); err != nil {
			app.serverError(w, err)
			return
		}
	}
	if reason != "" {
		if err := app.newSession(w, nil, nil, reason); err != nil {
			app.serverError(w, err)
			return
		}
		seeOther(w, "/")
		return
	}
	if err := app.newSession(w, user.ID, logID, nil); err != nil {
		app.serverError(w, err)
		return
	}
	seeOther(w, "/mypage")
}

func (app *App) getMypage(w http.ResponseWriter, r *http.Request) {
	sess, err := app.session(r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if sess == nil || !sess.UserID.Valid {
		// Back to the login page, with a notice in the session (a new one if it has none).
		if sess != nil {
			_, err = app.db.Exec("UPDATE sessions SET notice = ? WHERE id = ?", "login-required", sess.ID)
		} else {
			err = app.newSession(w, nil, nil, "login-required")
		}
		if err != nil {
			app.serverError(w, err)
			return
		}
		seeOther(w, "/")
		return
	}
	var login string
	if err := app.db.Get(&login, "SELECT login FROM users WHERE id = ?", sess.UserID.Int64); err != nil {
		app.serverError(w, err)
		return
	}
	// The login before the one that started this session; on a first login ever, that one.
	var last LoginRecord
	err = app.db.Get(&last, "SELECT created_at, ip FROM login_log WHERE user_id = ? AND succeeded = 1 AND id < ? "+
		"ORDER BY id DESC LIMIT 1", sess.UserID.Int64, sess.LoginLogID.Int64)
	if errors.Is(err, sql.ErrNoRows) {
		err = app.db.Get(&last, "SELECT created_at, ip FROM login_log WHERE id = ?", sess.LoginLogID.Int64)
	}
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "private")
	app.render(w, http.StatusOK, "mypage", Page{
		Title:  "My page",
		Login:  login,
		LastAt: last.CreatedAt.UTC().Format(timeFormat),
		LastIP: last.IP,
	})
}

// getReport lists every banned address and every locked user, from the whole log.
func (app *App) getReport(w http.ResponseWriter, r *http.Request) {
	// Replay the whole log in id order, as the rules read it.
	rows, err := app.db.Query("SELECT user_id, ip, succeeded FROM login_log ORDER BY id")
	if err != nil {
		app.serverError(w, err)
		return
	}
	defer rows.Close()
	userFailures := map[int64]int{}
	ipFailures := map[string]int{}
	for rows.Next() {
		var userID sql.NullInt64
		var ip string
		var succeeded bool
		if err := rows.Scan(&userID, &ip, &succeeded); err != nil {
			app.serverError(w, err)
			return
		}
		if succeeded {
			ipFailures[ip] = 0
			if userID.Valid {
				userFailures[userID.Int64] = 0
			}
			continue
		}
		ipFailures[ip]++
		if userID.Valid {
			userFailures[userID.Int64]++
		}
	}
	if err := rows.Err(); err != nil {
		app.serverError(w, err)
		return
	}
	banned := []string{}
	for ip, n := range ipFailures {
		if n >= banThreshold {
			banned = append(banned, ip)
		}
	}
	locked := []string{}
	for id, n := range userFailures {
		if n < lockThreshold {
			continue
		}
		var login string
		if err := app.db.Get(&login, "SELECT login FROM users WHERE id = ?", id); err != nil {
			app.serverError(w, err)
			return
		}
		locked = append(locked, login)
	}
	sort.Strings(banned)
	sort.Strings(locked)
	body, err := json.Marshal(struct {
		BannedIPs   []string `json:"banned_ips"`
		LockedUsers []string `json:"locked_users"`
	}{banned, locked})
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// postInitialize restores the initial data by deleting everything added since.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	statements := []string{
		fmt.Sprintf("DELETE FROM login_log WHERE id > %d", initialLogRows),
		"DELETE FROM sessions",
	}
	if app.isMySQL {
		statements = append(statements, fmt.Sprintf("ALTER TABLE login_log AUTO_INCREMENT = %d", initialLogRows+1))
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

// clientIP is the first address in X-Forwarded-For (the app is meant to sit behind a proxy), or the address of
// the connection's other end when the header is absent or its first entry empty.
func clientIP(r *http.Request) string {
	first, _, _ := strings.Cut(r.Header.Get("X-Forwarded-For"), ",")
	if ip := strings.Trim(first, " \t"); ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// hashPassword is what the users table stores: the SHA-256 of password + ":" + salt, in lowercase hex.
func hashPassword(password, salt string) string {
	sum := sha256.Sum256([]byte(password + ":" + salt))
	return hex.EncodeToString(sum[:])
}

// now is the current UTC time, in whole seconds.
func now() string {
	return time.Now().UTC().Format(timeFormat)
}
