// Command tunecon-dashboard is the Go reference app of the tunecon problem "dashboard", after the ISUCON5 final: a
// personal dashboard. People sign up with a grade, sign in and subscribe on /modify to external services, each
// with its own parameters; the dashboard page polls /data, which asks every service the user subscribes to and
// relays their answers. It is slow on purpose, the way real apps are slow: /data calls the services one after
// another, on a new HTTP/1.1 connection each time, and caches nothing. It is also correct: keep it correct while
// you make it fast. The contract it keeps is in ../../MANUAL.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	texttemplate "text/template"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"
)

// initialUsers is the size of the initial data: POST /initialize deletes every user added after it.
const initialUsers = 10000

const (
	timeFormat     = "2006-01-02 15:04:05" // every time, in UTC
	sessionCookie  = "dashboard_session"
	serviceTimeout = 10 * time.Second // for each call of a service
)

// The rules for what people type at sign-up, in characters.
const (
	maxEmail    = 64
	minPassword = 8
	maxPassword = 64
)

// grades lists the grades from the least to the most.
var grades = []string{"micro", "small", "standard", "premium"}

// allowed lists the services each grade may subscribe to, in the manual's order, which is also the order /data
// calls them in.
var allowed = map[string][]string{
	"micro":    {"postal", "postal2", "surname"},
	"small":    {"postal", "postal2", "surname", "givenname"},
	"standard": {"postal", "postal2", "surname", "givenname", "weather"},
	"premium":  {"postal", "postal2", "surname", "givenname", "weather", "security", "attacked"},
}

// refreshMS is the dashboard's refresh interval of each grade, in milliseconds (/user.js).
var refreshMS = map[string]int{"micro": 30000, "small": 30000, "standard": 20000, "premium": 10000}

// params lists each service's parameters, the form fields of /modify.
var params = map[string][]string{
	"postal":    {"code"},
	"postal2":   {"code"},
	"surname":   {"q"},
	"givenname": {"q"},
	"weather":   {"location"},
	"security":  {"req", "token"},
	"attacked":  {"token"},
}

// paramPatterns is what each parameter may hold, as the pattern attribute of its input: always matched whole.
var paramPatterns = map[string]string{
	"code":     `[0-9]{7}`,
	"q":        `[a-z]{1,8}`,
	"location": `L[0-9]{4}`,
	"req":      `[a-z0-9]{1,16}`,
	"token":    `[0-9a-f]{32}`,
}

var paramRegexps = func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for name, p := range paramPatterns {
		m[name] = regexp.MustCompile(`^(?:` + p + `)$`)
	}
	return m
}()

// User is the signed-in user, as a session names it.
type User struct {
	ID    int64  `db:"id"`
	Email string `db:"email"`
	Grade string `db:"grade"`
}

// Subscriptions is a user's row of subscriptions, the JSON object arg: service name -> parameter -> value.
type Subscriptions map[string]map[string]string

// Field is an input of a form of /modify.
type Field struct {
	Name, Value, Pattern string
}

// ServiceForm is the form of /modify for one service.
type ServiceForm struct {
	Service    string
	Subscribed bool
	Fields     []Field
}

// Page is what every page template gets.
type Page struct {
	Title   string
	User    *User // nil when signed out
	Message string
	Email   string // what the sign-in or sign-up form was sent with
	Grade   string
	Grades  []string
	Forms   []ServiceForm
}

// item is one element of /data's answer: a service's answer, relayed as it came.
type item struct {
	Service string          `json:"service"`
	Data    json.RawMessage `json:"data"`
}

type App struct {
	db         *sqlx.DB
	isMySQL    bool
	public     string
	initialSQL string
	templates  map[string]*template.Template
	userJS     *texttemplate.Template
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("DASHBOARD_ROOT", "..")
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
	if err := loadInitialData(db, isMySQL, root, initialSQL); err != nil {
		return err
	}
	if err := storeEndpointsFromEnv(db); err != nil {
		return err
	}
	templates, userJS, err := parseTemplates(filepath.Join(root, "go", "templates"))
	if err != nil {
		return err
	}
	app := &App{
		db:         db,
		isMySQL:    isMySQL,
		public:     filepath.Join(root, "public"),
		initialSQL: initialSQL,
		templates:  templates,
		userJS:     userJS,
	}

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
	mux.Handle("GET /static/", http.StripPrefix("/static", http.FileServerFS(filesOnly{os.DirFS(app.public)})))
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

// The database.

// openDB opens the database named by dsn: "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname"
// for MariaDB or MySQL.
func openDB(dsn, root string) (*sqlx.DB, bool, error) {
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
		// No ParseTime: a DATETIME comes back as its text, "YYYY-MM-DD HH:MM:SS", as a TEXT does from SQLite.
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, false, err
		}
		db, err := sqlx.Open("mysql", cfg.FormatDSN())
		return db, true, err
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = filepath.Join(root, "data", "dashboard.db")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, false, err
		}
		// WAL lets readers run while someone writes; the busy timeout makes writers wait for each other. Every
		// transaction here writes, and one that read first could not take the write lock once another writer
		// came in between (SQLITE_BUSY at once, whatever the timeout): _txlock=immediate takes it at BEGIN.
		db, err := sqlx.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000&_txlock=immediate")
		return db, false, err
	default:
		return nil, false, fmt.Errorf("DASHBOARD_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
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
		return fmt.Errorf("the initial data %s does not exist: generate it with `tunecon serve dashboard`, which "+
			"writes it and then starts this app (or set DASHBOARD_INITIAL_SQL to where it is)", dumpPath)
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
			db.Exec("DROP TABLE IF EXISTS users, subscriptions, sessions, endpoints")
		}
		return fmt.Errorf("loading the initial data: %w", err)
	}
	log.Printf("loaded the initial data in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// storeEndpointsFromEnv stores DASHBOARD_SERVICES_HTTP and DASHBOARD_SERVICES_HTTPS, when set: they say where the
// services are until a POST /initialize says otherwise. One left unset keeps what the database has.
func storeEndpointsFromEnv(db *sqlx.DB) error {
	httpURL, httpsURL := os.Getenv("DASHBOARD_SERVICES_HTTP"), os.Getenv("DASHBOARD_SERVICES_HTTPS")
	if httpURL == "" && httpsURL == "" {
		return nil
	}
	var old struct{ HTTP, HTTPS string }
	err := db.QueryRow("SELECT http, https FROM endpoints WHERE id = 1").Scan(&old.HTTP, &old.HTTPS)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if httpURL == "" {
		httpURL = old.HTTP
	}
	if httpsURL == "" {
		httpsURL = old.HTTPS
	}
	log.Printf("the services: %s and %s", httpURL, httpsURL)
	return storeEndpoints(db, httpURL, httpsURL)
}

// storeEndpoints keeps the services' base URLs in the database rather than in a variable, so that every process
// of the app (the Python one runs several) calls the same services. REPLACE is understood by SQLite and MariaDB
// alike.
func storeEndpoints(db sqlx.Execer, httpURL, httpsURL string) error {
	_, err := db.Exec("REPLACE INTO endpoints (id, http, https) VALUES (1, ?, ?)",
		strings.TrimRight(httpURL, "/"), strings.TrimRight(httpsURL, "/"))
	return err
}

// execStatements runs the statements of an SQL file.
func execStatements(db sqlx.Execer, r io.Reader) error {
	return eachStatement(r, func(s string) error {
		_, err := db.Exec(s)
		return err
	})
}

// eachStatement calls fn with each statement of an SQL file, each ending with ";" at the end of a line, without
// its "--" comment lines.
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

// Pages.

func parseTemplates(dir string) (map[string]*template.Template, *texttemplate.Template, error) {
	templates := map[string]*template.Template{}
	for _, name := range []string{"index", "signup", "login", "modify", "error"} {
		t, err := template.ParseFiles(filepath.Join(dir, "layout.html"), filepath.Join(dir, name+".html"))
		if err != nil {
			return nil, nil, err
		}
		templates[name] = t
	}
	// /user.js is JavaScript, not HTML: text/template, which escapes nothing; all it gets is a number.
	userJS, err := texttemplate.ParseFiles(filepath.Join(dir, "user.js"))
	return templates, userJS, err
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

// renderError writes an error page, with the header of user (nil: signed out).
func (app *App) renderError(w http.ResponseWriter, user *User, status int, message string) {
	app.render(w, status, "error", Page{Title: fmt.Sprint(status), User: user, Message: message})
}

// serverError writes the page of an error of the app's own, signed out: the session may be what failed.
func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	var buf bytes.Buffer
	page := Page{Title: "500", Message: "Something went wrong."}
	if err := app.templates["error"].ExecuteTemplate(&buf, "layout", page); err != nil {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write(buf.Bytes())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // relay the services' strings as they came, without \u003c for "<"
	if err := enc.Encode(v); err != nil {
		log.Printf("error: %v", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func seeOther(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.renderError(w, user, http.StatusNotFound, "There is no such page.")
}

// filesOnly serves the files of a directory tree and nothing else: a directory is not found, rather than listed.
type filesOnly struct{ fsys fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
		file.Close()
		return nil, fs.ErrNotExist
	}
	return file, nil
}

// Sessions.

// currentUser returns the request's signed-in user, or nil when its cookie names no session (or it has none).
// An answer to a request that carries a session cookie is for that browser only: currentUser marks it
// Cache-Control: private, before the lookup, so that even an answer that fails has it.
func (app *App) currentUser(w http.ResponseWriter, r *http.Request) (*User, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, nil
	}
	w.Header().Set("Cache-Control", "private")
	var u User
	err = app.db.Get(&u, "SELECT u.id, u.email, u.grade FROM sessions s JOIN users u ON u.id = s.user_id "+
		"WHERE s.token = ?", c.Value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &u, nil
}

func (app *App) getSignup(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.render(w, http.StatusOK, "signup", Page{Title: "Sign up", User: user, Grades: grades})
}

func (app *App) postSignup(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	email := r.PostFormValue("email")
	password := r.PostFormValue("password")
	grade := r.PostFormValue("grade")
	page := Page{Title: "Sign up", User: user, Grades: grades, Email: email, Grade: grade}
	// An email that is not UTF-8 is refused too: MariaDB's utf8mb4 column could not store it.
	if !utf8.ValidString(email) || strings.Count(email, "@") != 1 || utf8.RuneCountInString(email) > maxEmail ||
		!between(utf8.RuneCountInString(password), minPassword, maxPassword) || !slices.Contains(grades, grade) {
		page.Message = fmt.Sprintf("An email has one @ and at most %d characters; a password is %d to %d "+
			"characters long; the grade is one of %s.", maxEmail, minPassword, maxPassword, strings.Join(grades, ", "))
		app.render(w, http.StatusBadRequest, "signup", page)
		return
	}
	taken := func() {
		page.Message = "This email is taken."
		app.render(w, http.StatusConflict, "signup", page)
	}
	// Look first: on MariaDB, an insert refused by the unique email still uses up an id. The unique email has the
	// last word when two people sign up with one email at once.
	var n int
	if err := app.db.Get(&n, "SELECT COUNT(*) FROM users WHERE email = ?", email); err != nil {
		app.serverError(w, err)
		return
	}
	if n > 0 {
		taken()
		return
	}
	salt := randomHex(8)
	err = app.transaction(func(tx *sqlx.Tx) error {
		res, err := tx.Exec("INSERT INTO users (email, salt, passhash, grade, created_at) VALUES (?, ?, ?, ?, ?)",
			email, salt, hashPassword(salt, password), grade, now())
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		// Every user has a row of subscriptions, as in the initial data: none yet.
		_, err = tx.Exec("INSERT INTO subscriptions (user_id, arg) VALUES (?, ?)", id, "{}")
		return err
	})
	if isDuplicate(err) {
		taken()
		return
	} else if err != nil {
		app.serverError(w, err)
		return
	}
	seeOther(w, "/login")
}

func (app *App) getLogin(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	app.render(w, http.StatusOK, "login", Page{Title: "Log in", User: user})
}

func (app *App) postLogin(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	email := r.PostFormValue("email")
	password := r.PostFormValue("password")
	var row struct {
		ID       int64  `db:"id"`
		Salt     string `db:"salt"`
		Passhash string `db:"passhash"`
	}
	err = app.db.Get(&row, "SELECT id, salt, passhash FROM users WHERE email = ?", email)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		app.serverError(w, err)
		return
	}
	if err != nil || subtle.ConstantTimeCompare([]byte(hashPassword(row.Salt, password)), []byte(row.Passhash)) != 1 {
		app.render(w, http.StatusForbidden, "login", Page{Title: "Log in", User: user,
			Message: "Wrong email or password.", Email: email})
		return
	}
	// A new session replaces the browser's old one.
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, err := app.db.Exec("DELETE FROM sessions WHERE token = ?", c.Value); err != nil {
			app.serverError(w, err)
			return
		}
	}
	token := randomHex(32)
	_, err = app.db.Exec("INSERT INTO sessions (token, user_id, created_at) VALUES (?, ?, ?)", token, row.ID, now())
	if err != nil {
		app.serverError(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "private")
	seeOther(w, "/")
}

func (app *App) postLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		w.Header().Set("Cache-Control", "private")
		if _, err := app.db.Exec("DELETE FROM sessions WHERE token = ?", c.Value); err != nil {
			app.serverError(w, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteLaxMode})
	}
	seeOther(w, "/login")
}

// The dashboard.

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if user == nil {
		seeOther(w, "/login")
		return
	}
	app.render(w, http.StatusOK, "index", Page{Title: "Dashboard", User: user})
}

func (app *App) getUserJS(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if user == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "sign in first\n")
		return
	}
	var buf bytes.Buffer
	if err := app.userJS.Execute(&buf, refreshMS[user.Grade]); err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/javascript")
	w.Write(buf.Bytes())
}

func (app *App) getModify(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if user == nil {
		seeOther(w, "/login")
		return
	}
	subs, err := loadSubscriptions(app.db, user.ID, "")
	if err != nil {
		app.serverError(w, err)
		return
	}
	var forms []ServiceForm
	for _, service := range allowed[user.Grade] {
		current, subscribed := subs[service]
		form := ServiceForm{Service: service, Subscribed: subscribed}
		for _, name := range params[service] {
			form.Fields = append(form.Fields, Field{Name: name, Value: current[name], Pattern: paramPatterns[name]})
		}
		forms = append(forms, form)
	}
	app.render(w, http.StatusOK, "modify", Page{Title: "Services", User: user, Forms: forms})
}

func (app *App) postModify(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if user == nil {
		app.renderError(w, nil, http.StatusForbidden, "Sign in to change your services.")
		return
	}
	service := r.PostFormValue("service")
	if _, ok := params[service]; !ok {
		app.renderError(w, user, http.StatusBadRequest, "There is no such service.")
		return
	}
	if !slices.Contains(allowed[user.Grade], service) {
		app.renderError(w, user, http.StatusForbidden,
			fmt.Sprintf("The %s grade cannot subscribe to %s.", user.Grade, service))
		return
	}
	var values map[string]string // nil: a removal
	if r.PostFormValue("remove") != "1" {
		// Only the service's own fields: anything else the form carries is left out.
		values = map[string]string{}
		for _, name := range params[service] {
			v := r.PostFormValue(name)
			if !paramRegexps[name].MatchString(v) {
				app.renderError(w, user, http.StatusBadRequest, fmt.Sprintf("%s: %s %q is not valid.", service, name, v))
				return
			}
			values[name] = v
		}
	}
	// Read, change and write the user's subscriptions in one transaction, so that two changes at once do not undo
	// each other. SQLite's transactions hold the write lock from BEGIN (openDB); MariaDB locks the row.
	forUpdate := ""
	if app.isMySQL {
		forUpdate = " FOR UPDATE"
	}
	err = app.transaction(func(tx *sqlx.Tx) error {
		subs, err := loadSubscriptions(tx, user.ID, forUpdate)
		if err != nil {
			return err
		}
		if values == nil {
			delete(subs, service)
		} else {
			subs[service] = values
		}
		arg, err := json.Marshal(subs) // keys sorted, no spaces: as the dump writes it
		if err != nil {
			return err
		}
		_, err = tx.Exec("REPLACE INTO subscriptions (user_id, arg) VALUES (?, ?)", user.ID, string(arg))
		return err
	})
	if err != nil {
		app.serverError(w, err)
		return
	}
	seeOther(w, "/modify")
}

// getData asks every service the user subscribes to, one after another in the manual's order, and relays their
// answers.
func (app *App) getData(w http.ResponseWriter, r *http.Request) {
	user, err := app.currentUser(w, r)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if user == nil {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "sign in first"})
		return
	}
	subs, err := loadSubscriptions(app.db, user.ID, "")
	if err != nil {
		app.serverError(w, err)
		return
	}
	// Where the services are is read on every request: POST /initialize may have changed it.
	var endpoints struct{ HTTP, HTTPS string }
	err = app.db.QueryRow("SELECT http, https FROM endpoints WHERE id = 1").Scan(&endpoints.HTTP, &endpoints.HTTPS)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		app.serverError(w, err)
		return
	}
	items := []item{}
	for _, service := range allowed[user.Grade] {
		p, ok := subs[service]
		if !ok {
			continue
		}
		var answer json.RawMessage
		if endpoints.HTTP == "" && endpoints.HTTPS == "" {
			err = errors.New("no one said where the services are (POST /initialize)")
		} else {
			answer, err = callService(r.Context(), service, p, endpoints.HTTP, endpoints.HTTPS)
		}
		if err != nil {
			log.Printf("/data of user %d: %s: %v", user.ID, service, err)
			writeJSON(w, http.StatusBadGateway, map[string]string{"error": service + ": " + err.Error()})
			return
		}
		items = append(items, item{Service: service, Data: answer})
	}
	writeJSON(w, http.StatusOK, items)
}

// callService asks one service with the user's parameters and returns its JSON answer as it came. Like a naive
// client, each call makes a client of its own: a new connection every time, HTTP/1.1 only, nothing cached, no
// conditional request. A status other than 200, or an answer that is not JSON, is an error.
func callService(ctx context.Context, service string, p map[string]string, httpBase, httpsBase string) (json.RawMessage, error) {
	var u string
	query := url.Values{}
	header := http.Header{}
	switch service {
	case "postal":
		u = httpBase + "/postal/" + url.PathEscape(p["code"])
	case "postal2":
		u = httpBase + "/postal"
		query.Set("code", p["code"])
	case "surname", "givenname":
		u = httpBase + "/" + service
		query.Set("q", p["q"])
	case "weather":
		u = httpBase + "/weather"
		query.Set("location", p["location"])
	case "security":
		u = httpsBase + "/tokens"
		query.Set("req", p["req"])
		header.Set("X-Security-Token", p["token"])
	case "attacked":
		u = httpsBase + "/attacked"
		header.Set("X-Security-Token", p["token"])
	default:
		return nil, fmt.Errorf("unknown service %q", service)
	}
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header = header

	transport := &http.Transport{
		DisableKeepAlives: true,
		// A non-nil empty map turns HTTP/2 off: the TLS handshake offers HTTP/1.1 only.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
		// The HTTPS services' certificate is made for each run and no one can verify it (MANUAL.md).
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: serviceTimeout}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", u, res.Status)
	}
	var answer json.RawMessage
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return answer, nil
}

// postInitialize restores the initial data (the users and their subscriptions as the dump has them, no sessions)
// and takes the services' base URLs.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	var body struct {
		HTTP  *string `json:"http"`
		HTTPS *string `json:"https"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.HTTP == nil || body.HTTPS == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want a JSON body {"http": "URL", "https": "URL"}`})
		return
	}
	// The run changes the initial users' subscriptions in place, so they are loaded again from the dump, whose
	// INSERT INTO subscriptions statements hold them all.
	dump, err := os.Open(app.initialSQL)
	if err != nil {
		app.serverError(w, err)
		return
	}
	defer dump.Close()
	err = app.transaction(func(tx *sqlx.Tx) error {
		statements := []string{
			"DELETE FROM sessions",
			"DELETE FROM subscriptions",
			fmt.Sprintf("DELETE FROM users WHERE id > %d", initialUsers),
		}
		if !app.isMySQL {
			// New users get ids from initialUsers + 1 on again, as after the first load.
			statements = append(statements,
				fmt.Sprintf("UPDATE sqlite_sequence SET seq = %d WHERE name = 'users'", initialUsers))
		}
		for _, s := range statements {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		err := eachStatement(dump, func(s string) error {
			if !strings.HasPrefix(s, "INSERT INTO subscriptions") {
				return nil
			}
			_, err := tx.Exec(s)
			return err
		})
		if err != nil {
			return err
		}
		return storeEndpoints(tx, *body.HTTP, *body.HTTPS)
	})
	if err != nil {
		app.serverError(w, err)
		return
	}
	if app.isMySQL {
		// ALTER TABLE commits on MariaDB: it runs after the transaction.
		if _, err := app.db.Exec(fmt.Sprintf("ALTER TABLE users AUTO_INCREMENT = %d", initialUsers+1)); err != nil {
			app.serverError(w, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// Helpers.

// transaction runs fn in a transaction, committed if fn succeeds and rolled back otherwise.
func (app *App) transaction(fn func(tx *sqlx.Tx) error) error {
	tx, err := app.db.Beginx()
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// loadSubscriptions returns the user's subscriptions ({} if it has no row); suffix ends the query (" FOR UPDATE").
func loadSubscriptions(q sqlx.Queryer, userID int64, suffix string) (Subscriptions, error) {
	var arg string
	err := sqlx.Get(q, &arg, "SELECT arg FROM subscriptions WHERE user_id = ?"+suffix, userID)
	if errors.Is(err, sql.ErrNoRows) {
		return Subscriptions{}, nil
	} else if err != nil {
		return nil, err
	}
	subs := Subscriptions{}
	if err := json.Unmarshal([]byte(arg), &subs); err != nil {
		return nil, fmt.Errorf("the subscriptions of user %d: %w", userID, err)
	}
	return subs, nil
}

// hashPassword is what the users table stores: the SHA-512 of salt + password, in lowercase hex.
func hashPassword(salt, password string) string {
	sum := sha512.Sum512([]byte(salt + password))
	return hex.EncodeToString(sum[:])
}

// isDuplicate reports whether err is an insert refused by a unique key.
func isDuplicate(err error) bool {
	var sqliteErr sqlite3.Error
	var mysqlErr *mysql.MySQLError
	return errors.As(err, &sqliteErr) && sqliteErr.ExtendedCode == sqlite3.ErrConstraintUnique ||
		errors.As(err, &mysqlErr) && mysqlErr.Number == 1062
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func between(n, lo, hi int) bool { return lo <= n && n <= hi }

// now is the current UTC time, in whole seconds.
func now() string {
	return time.Now().UTC().Format(timeFormat)
}
