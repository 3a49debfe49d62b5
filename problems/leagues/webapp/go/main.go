// Command tunecon-leagues is the Go reference app of the tunecon problem "leagues": a software-as-a-service for
// e-sports leagues after the ISUCON12 qualifier. Each tenant, chosen by the first label of the host name, runs
// competitions among its players; organizers upload score CSVs, players read rankings, and the service bills each
// tenant per finished competition. It is slow on purpose, the way real apps are slow, and it is correct: keep it
// correct while you make it fast. The contract it keeps is in ../../MANUAL.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rsa"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3"
)

// What POST /initialize restores: the initial tenants are ids 1 to initialTenants, every initial visit is before
// initialEnd (Unix seconds), and the id generator hands out initialNextID next. They must match the generated data
// (problems/leagues/data: a test there checks).
const (
	initialTenants = 100
	initialEnd     = 1767225600
	initialNextID  = 14769
)

const (
	tokenCookie    = "leagues_token"
	adminLabel     = "admin" // the host label, and the tokens' audience, of the service's admin
	rankingPage    = 100     // ranks in one ranking answer
	billingPage    = 10      // tenants in one page of the admin's billing
	maxNewPlayers  = 100     // names in one POST /api/organizer/players
	maxName        = 64      // characters of a display name
	maxTitle       = 128     // characters of a competition's title
	maxScore       = 999999999
	maxBody        = 1 << 20  // bytes of a JSON body
	maxUpload      = 16 << 20 // bytes of a CSV upload
	yenPerScored   = 100
	yenPerViewer   = 10
	roleAdmin      = "admin"
	roleOrganizer  = "organizer"
	rolePlayer     = "player"
	sqliteBusyWait = 5000 // milliseconds a SQLite connection waits for a lock
)

var (
	tenantNamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,61}[a-z0-9]$`)
	idPattern         = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)
	numberPattern     = regexp.MustCompile(`^[0-9]{1,18}$`)
	scorePattern      = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})$`)
)

// Rows of the admin data.

type Tenant struct {
	ID          int64  `db:"id"`
	Name        string `db:"name"`
	DisplayName string `db:"display_name"`
	CreatedAt   int64  `db:"created_at"`
	UpdatedAt   int64  `db:"updated_at"`
}

// Rows of a tenant's SQLite file.

type Player struct {
	ID             int64  `db:"id"`
	DisplayName    string `db:"display_name"`
	IsDisqualified bool   `db:"is_disqualified"`
	CreatedAt      int64  `db:"created_at"`
	UpdatedAt      int64  `db:"updated_at"`
}

type Competition struct {
	ID         int64         `db:"id"`
	Title      string        `db:"title"`
	FinishedAt sql.NullInt64 `db:"finished_at"`
	LastUpload int64         `db:"last_upload"`
	CreatedAt  int64         `db:"created_at"`
	UpdatedAt  int64         `db:"updated_at"`
}

type PlayerScore struct {
	ID            int64 `db:"id"`
	CompetitionID int64 `db:"competition_id"`
	Upload        int64 `db:"upload"`
	RowNum        int64 `db:"row_num"`
	PlayerID      int64 `db:"player_id"`
	Score         int64 `db:"score"`
	CreatedAt     int64 `db:"created_at"`
}

// What the API answers.

type PlayerJSON struct {
	ID             int64  `json:"id"`
	DisplayName    string `json:"display_name"`
	IsDisqualified bool   `json:"is_disqualified"`
}

type CompetitionJSON struct {
	ID         int64  `json:"id"`
	Title      string `json:"title"`
	IsFinished bool   `json:"is_finished"`
}

type TenantJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
}

type TenantBillingJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Billing     int64  `json:"billing"`
}

type CompetitionBillingJSON struct {
	CompetitionID int64  `json:"competition_id"`
	Title         string `json:"title"`
	IsFinished    bool   `json:"is_finished"`
	Scored        int64  `json:"scored"`
	Viewed        int64  `json:"viewed"`
	Billing       int64  `json:"billing"`
}

type RankJSON struct {
	Rank        int64  `json:"rank"`
	PlayerID    int64  `json:"player_id"`
	DisplayName string `json:"display_name"`
	Score       int64  `json:"score"`
}

type ScoreJSON struct {
	CompetitionID int64  `json:"competition_id"`
	Title         string `json:"title"`
	Score         int64  `json:"score"`
}

// Answers with more than one key are structs: their keys come in the manual's order.

type BillingJSON struct {
	Total        int64                    `json:"total"`
	Competitions []CompetitionBillingJSON `json:"competitions"`
}

type ProfileJSON struct {
	Player PlayerJSON  `json:"player"`
	Scores []ScoreJSON `json:"scores"`
}

type RankingJSON struct {
	Competition CompetitionJSON `json:"competition"`
	Ranks       []RankJSON      `json:"ranks"`
}

type MeJSON struct {
	Role    string      `json:"role"`
	Subject string      `json:"subject"`
	Tenant  *TenantJSON `json:"tenant"`
	Player  *PlayerJSON `json:"player"`
}

type App struct {
	db         *sqlx.DB // the admin data
	isMySQL    bool
	root       string // the webapp directory
	initialDir string
	tenantDir  string
	publicKey  *rsa.PublicKey
	lang       string
	initial    Initial
}

// Initial is what POST /initialize restores (see initialTenants).
type Initial struct {
	Tenants int64 // tenants 1 to Tenants
	End     int64 // every initial visit is before End
	NextID  int64 // the id generator's next id
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	root := getenv("LEAGUES_ROOT", "..")
	addr := getenv("LEAGUES_ADDR", "127.0.0.1:8080")
	app, err := newApp(root, os.Getenv("LEAGUES_DB"),
		getenv("LEAGUES_INITIAL_DIR", filepath.Join(root, "data", "initial")),
		os.Getenv("LEAGUES_TENANT_DIR"),
		getenv("LEAGUES_PUBLIC_KEY", filepath.Join(root, "..", "keys", "public.pem")))
	if err != nil {
		return err
	}
	defer app.db.Close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: app.routes(), ReadHeaderTimeout: 10 * time.Second}
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

// newApp opens the admin data named by dsn, makes the working data from the initial data if it is missing, and
// reads the public key. An empty tenantDir means the one beside the admin data.
func newApp(root, dsn, initialDir, tenantDir, publicKeyPath string) (*App, error) {
	app := &App{root: root, initialDir: initialDir, lang: "go",
		initial: Initial{Tenants: initialTenants, End: initialEnd, NextID: initialNextID}}
	key, err := os.ReadFile(publicKeyPath)
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	if app.publicKey, err = jwt.ParseRSAPublicKeyFromPEM(key); err != nil {
		return nil, fmt.Errorf("%s: %w", publicKeyPath, err)
	}
	switch {
	case strings.HasPrefix(dsn, "mysql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, fmt.Errorf("LEAGUES_DB: %w", err)
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
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, err
		}
		if app.db, err = sqlx.Open("mysql", cfg.FormatDSN()); err != nil {
			return nil, err
		}
		app.isMySQL = true
		if tenantDir == "" {
			tenantDir = filepath.Join(root, "data", "tenants-mysql-"+cfg.DBName)
		}
		if err := app.db.Ping(); err != nil {
			return nil, fmt.Errorf("connecting to the database: %w", err)
		}
		if err := app.loadMySQL(); err != nil {
			return nil, err
		}
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		file := strings.TrimPrefix(dsn, "sqlite:")
		if file == "" {
			file = filepath.Join(root, "data", "leagues.db")
		}
		if tenantDir == "" {
			tenantDir = strings.TrimSuffix(file, ".db") + "-tenants"
		}
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			log.Printf("copying the initial admin data to %s", file)
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(file + suffix)
			}
			if err := copyFile(filepath.Join(initialDir, "admin.db"), file); err != nil {
				return nil, initialDataError(err)
			}
		}
		// WAL lets readers run while someone writes; the busy timeout makes writers wait for each other.
		app.db, err = sqlx.Open("sqlite3", fmt.Sprintf("file:%s?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=%d", file, sqliteBusyWait))
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("LEAGUES_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
	}
	app.tenantDir = tenantDir
	if _, err := os.Stat(tenantDir); errors.Is(err, os.ErrNotExist) {
		log.Printf("copying the initial tenants to %s", tenantDir)
		if err := copyTenants(filepath.Join(initialDir, "tenants"), tenantDir); err != nil {
			return nil, initialDataError(err)
		}
	}
	return app, nil
}

func initialDataError(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: generate the initial data with `tunecon serve leagues`, which writes it and then "+
			"starts this app (or set LEAGUES_INITIAL_DIR to where it is)", err)
	}
	return err
}

// loadMySQL creates the admin tables and loads the initial admin data unless the tenant table exists.
func (app *App) loadMySQL() error {
	var n int
	if err := app.db.Get(&n, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'tenant'"); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	dumpPath := filepath.Join(app.initialDir, "admin.mysql.sql")
	dump, err := os.Open(dumpPath)
	if err != nil {
		return initialDataError(err)
	}
	defer dump.Close()
	schema, err := os.ReadFile(filepath.Join(app.root, "sql", "admin.mysql.sql"))
	if err != nil {
		return err
	}
	log.Printf("loading the initial admin data from %s", dumpPath)
	start := time.Now()
	// MariaDB commits on CREATE TABLE: the tables are made first and dropped again if the load fails.
	err = execStatements(app.db, bytes.NewReader(schema))
	if err == nil {
		var tx *sqlx.Tx
		if tx, err = app.db.Beginx(); err == nil {
			if err = execStatements(tx, dump); err == nil {
				err = tx.Commit()
			} else {
				tx.Rollback()
			}
		}
	}
	if err == nil {
		err = app.resetAdmin()
	}
	if err != nil {
		app.db.Exec("DROP TABLE IF EXISTS tenant, id_generator, visit_history")
		return fmt.Errorf("loading the initial data: %w", err)
	}
	log.Printf("loaded the initial admin data in %v", time.Since(start).Round(time.Millisecond))
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

// copyFile copies src to dst through a temporary file beside dst, so that dst is always whole.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// copyTenants copies every file of the initial tenant directory src into a new directory dst.
func copyTenants(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(tmp, e.Name())); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dst)
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

// Answers.

// writeJSON writes v as the answer: compact JSON, with "<", ">" and "&" as they are. Every API answer is for the
// one who asked: Cache-Control: private.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private")
	w.WriteHeader(status)
	w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"error": message})
}

func serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private")
	w.WriteHeader(http.StatusInternalServerError)
	io.WriteString(w, `{"error":"internal error"}`)
}

// Who is asking.

// Viewer is the one a request comes from, as its token and host say.
type Viewer struct {
	Role    string
	Subject string
	Tenant  *Tenant // nil on the admin host
	Player  *Player // for a player
}

type tokenClaims struct {
	Role string `json:"role"`
	jwt.RegisteredClaims
}

// hostLabel returns the first label of the request's host name, in lower case.
func hostLabel(r *http.Request) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	label, _, _ := strings.Cut(host, ".")
	return strings.ToLower(label)
}

// authorize finds the viewer of a request and checks that their role is one of roles, answering the request
// itself when not: 404 for a host that names no tenant, 401 for a missing or bad token, 403 for a role that may
// not ask, or for a disqualified player.
func (app *App) authorize(w http.ResponseWriter, r *http.Request, roles ...string) (*Viewer, bool) {
	label := hostLabel(r)
	v := &Viewer{}
	if label != adminLabel {
		var t Tenant
		err := app.db.Get(&t, "SELECT * FROM tenant WHERE name = ?", label)
		if errors.Is(err, sql.ErrNoRows) {
			writeError(w, http.StatusNotFound, "not found")
			return nil, false
		} else if err != nil {
			serverError(w, err)
			return nil, false
		}
		v.Tenant = &t
	}

	cookie, err := r.Cookie(tokenCookie)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "invalid token")
		return nil, false
	}
	var claims tokenClaims
	_, err = jwt.ParseWithClaims(cookie.Value, &claims, func(*jwt.Token) (any, error) { return app.publicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithAudience(label))
	if err != nil || claims.Subject == "" ||
		(claims.Role != roleAdmin && claims.Role != roleOrganizer && claims.Role != rolePlayer) {
		writeError(w, http.StatusUnauthorized, "invalid token")
		return nil, false
	}
	v.Role, v.Subject = claims.Role, claims.Subject

	if v.Role == rolePlayer {
		if v.Tenant == nil || !idPattern.MatchString(v.Subject) {
			writeError(w, http.StatusUnauthorized, "invalid token")
			return nil, false
		}
		id, _ := strconv.ParseInt(v.Subject, 10, 64)
		tdb, err := app.tenantDB(v.Tenant.ID)
		if err != nil {
			serverError(w, err)
			return nil, false
		}
		defer tdb.Close()
		var p Player
		err = tdb.Get(&p, "SELECT * FROM player WHERE id = ?", id)
		if errors.Is(err, sql.ErrNoRows) {
			writeError(w, http.StatusUnauthorized, "invalid token")
			return nil, false
		} else if err != nil {
			serverError(w, err)
			return nil, false
		}
		v.Player = &p
	}
	// A role goes with its host: the admin on the admin host, the others on a tenant's.
	if !slices.Contains(roles, v.Role) || (v.Role == roleAdmin) != (v.Tenant == nil) {
		writeError(w, http.StatusForbidden, "forbidden")
		return nil, false
	}
	if v.Player != nil && v.Player.IsDisqualified {
		writeError(w, http.StatusForbidden, "disqualified")
		return nil, false
	}
	return v, true
}

// Tenants' files.

func (app *App) tenantPath(id int64) string {
	return filepath.Join(app.tenantDir, strconv.FormatInt(id, 10)+".db")
}

// tenantDB opens a tenant's SQLite file. The caller closes it.
func (app *App) tenantDB(id int64) (*sqlx.DB, error) {
	p := app.tenantPath(id)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("the file of tenant %d: %w", id, err)
	}
	return sqlx.Open("sqlite3", fmt.Sprintf("file:%s?_busy_timeout=%d", p, sqliteBusyWait))
}

// lockTenant takes the tenant's exclusive file lock, which every write to the tenant holds, and every read of its
// scores; the returned function releases it.
func (app *App) lockTenant(id int64) (func(), error) {
	f, err := os.OpenFile(filepath.Join(app.tenantDir, strconv.FormatInt(id, 10)+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		// A signal (the Go runtime sends some of its own) interrupts the wait: wait again.
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// newID hands out the next id for a player or a competition.
func (app *App) newID() (int64, error) {
	res, err := app.db.Exec("REPLACE INTO id_generator (stub) VALUES ('a')")
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// Request bodies and parameters.

// readJSON decodes the request's JSON body into v, answering 400 when it is not valid UTF-8 or not JSON of v's
// shape.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil || !utf8.Valid(body) || json.Unmarshal(body, v) != nil {
		writeError(w, http.StatusBadRequest, "bad request")
		return false
	}
	return true
}

// validText reports whether s is a name or title of 1 to max characters without control characters.
func validText(s string, max int) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= max && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// pathID returns the {id} of the path, or false for one that cannot name anything.
func pathID(r *http.Request) (int64, bool) {
	s := r.PathValue("id")
	if !idPattern.MatchString(s) {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

func playerJSON(p Player) PlayerJSON {
	return PlayerJSON{ID: p.ID, DisplayName: p.DisplayName, IsDisqualified: p.IsDisqualified}
}

func competitionJSON(c Competition) CompetitionJSON {
	return CompetitionJSON{ID: c.ID, Title: c.Title, IsFinished: c.FinishedAt.Valid}
}

// Admin.

func (app *App) postAdminTenants(w http.ResponseWriter, r *http.Request) {
	if _, ok := app.authorize(w, r, roleAdmin); !ok {
		return
	}
	var req struct {
		Name        *string `json:"name"`
		DisplayName *string `json:"display_name"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Name == nil || req.DisplayName == nil || !tenantNamePattern.MatchString(*req.Name) || *req.Name == adminLabel ||
		!validText(*req.DisplayName, maxName) {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	var n int
	if err := app.db.Get(&n, "SELECT COUNT(*) FROM tenant WHERE name = ?", *req.Name); err != nil {
		serverError(w, err)
		return
	} else if n > 0 {
		writeError(w, http.StatusConflict, "name taken")
		return
	}
	now := time.Now().Unix()
	tx, err := app.db.Beginx()
	if err != nil {
		serverError(w, err)
		return
	}
	defer tx.Rollback()
	res, err := tx.Exec("INSERT INTO tenant (name, display_name, created_at, updated_at) VALUES (?, ?, ?, ?)",
		*req.Name, *req.DisplayName, now, now)
	if err != nil {
		if isDuplicate(err) {
			writeError(w, http.StatusConflict, "name taken")
			return
		}
		serverError(w, err)
		return
	}
	id, err := res.LastInsertId()
	if err != nil {
		serverError(w, err)
		return
	}
	// The tenant's file exists before its row is committed: its host works as soon as it is found.
	if err := app.createTenantDB(id); err != nil {
		serverError(w, err)
		return
	}
	if err := tx.Commit(); err != nil {
		os.Remove(app.tenantPath(id))
		serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tenant": TenantBillingJSON{
		ID: id, Name: *req.Name, DisplayName: *req.DisplayName, Billing: 0,
	}})
}

func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	return (errors.As(err, &me) && me.Number == 1062) || strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// createTenantDB makes a new tenant's file with the tenant schema.
func (app *App) createTenantDB(id int64) error {
	schema, err := os.ReadFile(filepath.Join(app.root, "sql", "tenant.sql"))
	if err != nil {
		return err
	}
	p := app.tenantPath(id)
	os.Remove(p)
	os.Remove(p + "-journal")
	db, err := sqlx.Open("sqlite3", "file:"+p)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(string(schema))
	return err
}

func (app *App) getAdminBilling(w http.ResponseWriter, r *http.Request) {
	if _, ok := app.authorize(w, r, roleAdmin); !ok {
		return
	}
	before := r.URL.Query().Get("before")
	var tenants []Tenant
	var err error
	if before == "" {
		err = app.db.Select(&tenants, "SELECT * FROM tenant ORDER BY id DESC LIMIT ?", billingPage)
	} else if !numberPattern.MatchString(before) {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	} else {
		b, _ := strconv.ParseInt(before, 10, 64)
		err = app.db.Select(&tenants, "SELECT * FROM tenant WHERE id < ? ORDER BY id DESC LIMIT ?", b, billingPage)
	}
	if err != nil {
		serverError(w, err)
		return
	}
	list := []TenantBillingJSON{}
	for _, t := range tenants {
		bills, err := app.tenantBilling(t.ID)
		if err != nil {
			serverError(w, err)
			return
		}
		var sum int64
		for _, b := range bills {
			sum += b.Billing
		}
		list = append(list, TenantBillingJSON{ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, Billing: sum})
	}
	writeJSON(w, http.StatusOK, map[string]any{"tenants": list})
}

// Billing.

// tenantBilling computes the bill of every competition of a tenant, the highest id first.
func (app *App) tenantBilling(tenantID int64) ([]CompetitionBillingJSON, error) {
	tdb, err := app.tenantDB(tenantID)
	if err != nil {
		return nil, err
	}
	defer tdb.Close()
	var competitions []Competition
	if err := tdb.Select(&competitions, "SELECT * FROM competition ORDER BY id DESC"); err != nil {
		return nil, err
	}
	bills := []CompetitionBillingJSON{}
	for _, c := range competitions {
		b, err := app.competitionBilling(tdb, tenantID, c)
		if err != nil {
			return nil, err
		}
		bills = append(bills, b)
	}
	return bills, nil
}

// competitionBilling computes a competition's bill from its score rows and the whole visit history: 100 for each
// player with a score, 10 for each other player who read the ranking by the second it finished. A competition
// still running is billed nothing.
func (app *App) competitionBilling(tdb *sqlx.DB, tenantID int64, c Competition) (CompetitionBillingJSON, error) {
	b := CompetitionBillingJSON{CompetitionID: c.ID, Title: c.Title, IsFinished: c.FinishedAt.Valid}
	if !c.FinishedAt.Valid {
		return b, nil
	}
	var visits []struct {
		PlayerID int64 `db:"player_id"`
		FirstAt  int64 `db:"first_at"`
	}
	if err := app.db.Select(&visits, "SELECT player_id, MIN(created_at) AS first_at FROM visit_history "+
		"WHERE tenant_id = ? AND competition_id = ? GROUP BY player_id", tenantID, c.ID); err != nil {
		return b, err
	}
	// The scores are read under the tenant's lock, lest an upload change them half way.
	unlock, err := app.lockTenant(tenantID)
	if err != nil {
		return b, err
	}
	defer unlock()
	var scores []PlayerScore
	if err := tdb.Select(&scores, "SELECT * FROM player_score WHERE competition_id = ? AND upload = ?", c.ID, c.LastUpload); err != nil {
		return b, err
	}
	scored := map[int64]bool{}
	for _, s := range scores {
		scored[s.PlayerID] = true
	}
	for _, v := range visits {
		if v.FirstAt <= c.FinishedAt.Int64 && !scored[v.PlayerID] {
			b.Viewed++
		}
	}
	b.Scored = int64(len(scored))
	b.Billing = yenPerScored*b.Scored + yenPerViewer*b.Viewed
	return b, nil
}

// Organizer.

func (app *App) getOrganizerPlayers(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	var players []Player
	if err := tdb.Select(&players, "SELECT * FROM player ORDER BY id"); err != nil {
		serverError(w, err)
		return
	}
	list := []PlayerJSON{}
	for _, p := range players {
		list = append(list, playerJSON(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"players": list})
}

func (app *App) postOrganizerPlayers(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	var req struct {
		DisplayNames []string `json:"display_names"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if len(req.DisplayNames) < 1 || len(req.DisplayNames) > maxNewPlayers {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	for _, name := range req.DisplayNames {
		if !validText(name, maxName) {
			writeError(w, http.StatusBadRequest, "bad request")
			return
		}
	}
	unlock, err := app.lockTenant(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer unlock()
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	list := []PlayerJSON{}
	for _, name := range req.DisplayNames {
		id, err := app.newID()
		if err != nil {
			serverError(w, err)
			return
		}
		now := time.Now().Unix()
		if _, err := tdb.Exec("INSERT INTO player (id, display_name, is_disqualified, created_at, updated_at) VALUES (?, ?, 0, ?, ?)",
			id, name, now, now); err != nil {
			serverError(w, err)
			return
		}
		var p Player
		if err := tdb.Get(&p, "SELECT * FROM player WHERE id = ?", id); err != nil {
			serverError(w, err)
			return
		}
		list = append(list, playerJSON(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"players": list})
}

func (app *App) postDisqualify(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	unlock, err := app.lockTenant(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer unlock()
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	res, err := tdb.Exec("UPDATE player SET is_disqualified = 1, updated_at = ? WHERE id = ?", time.Now().Unix(), id)
	if err != nil {
		serverError(w, err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	var p Player
	if err := tdb.Get(&p, "SELECT * FROM player WHERE id = ?", id); err != nil {
		serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"player": playerJSON(p)})
}

func (app *App) getOrganizerCompetitions(w http.ResponseWriter, r *http.Request) {
	app.listCompetitions(w, r, roleOrganizer)
}

func (app *App) getPlayerCompetitions(w http.ResponseWriter, r *http.Request) {
	app.listCompetitions(w, r, rolePlayer)
}

// listCompetitions answers a list of the tenant's competitions, the highest id first, to role.
func (app *App) listCompetitions(w http.ResponseWriter, r *http.Request, role string) {
	v, ok := app.authorize(w, r, role)
	if !ok {
		return
	}
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	var competitions []Competition
	if err := tdb.Select(&competitions, "SELECT * FROM competition ORDER BY id DESC"); err != nil {
		serverError(w, err)
		return
	}
	list := []CompetitionJSON{}
	for _, c := range competitions {
		list = append(list, competitionJSON(c))
	}
	writeJSON(w, http.StatusOK, map[string]any{"competitions": list})
}

func (app *App) postCompetitions(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	var req struct {
		Title *string `json:"title"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Title == nil || !validText(*req.Title, maxTitle) {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	unlock, err := app.lockTenant(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer unlock()
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	id, err := app.newID()
	if err != nil {
		serverError(w, err)
		return
	}
	now := time.Now().Unix()
	if _, err := tdb.Exec("INSERT INTO competition (id, title, finished_at, last_upload, created_at, updated_at) VALUES (?, ?, NULL, 0, ?, ?)",
		id, *req.Title, now, now); err != nil {
		serverError(w, err)
		return
	}
	var c Competition
	if err := tdb.Get(&c, "SELECT * FROM competition WHERE id = ?", id); err != nil {
		serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"competition": competitionJSON(c)})
}

func (app *App) postFinish(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	unlock, err := app.lockTenant(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer unlock()
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	var c Competition
	err = tdb.Get(&c, "SELECT * FROM competition WHERE id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		writeError(w, http.StatusNotFound, "not found")
		return
	} else if err != nil {
		serverError(w, err)
		return
	}
	if c.FinishedAt.Valid {
		writeError(w, http.StatusConflict, "competition finished")
		return
	}
	now := time.Now().Unix()
	if _, err := tdb.Exec("UPDATE competition SET finished_at = ?, updated_at = ? WHERE id = ?", now, now, id); err != nil {
		serverError(w, err)
		return
	}
	if err := tdb.Get(&c, "SELECT * FROM competition WHERE id = ?", id); err != nil {
		serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"competition": competitionJSON(c)})
}

// scoreRow is one data line of an uploaded CSV.
type scoreRow struct {
	playerID int64
	score    int64
}

// parseScores reads a score CSV as the manual defines it, or returns false.
func parseScores(body []byte) ([]scoreRow, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	lines := strings.Split(string(body), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the file's last "\n"
	}
	if len(lines) == 0 {
		return nil, false
	}
	for i, line := range lines {
		lines[i] = strings.TrimSuffix(line, "\r")
	}
	if lines[0] != "player_id,score" {
		return nil, false
	}
	rows := []scoreRow{}
	for _, line := range lines[1:] {
		id, score, ok := strings.Cut(line, ",")
		if !ok || !idPattern.MatchString(id) || !scorePattern.MatchString(score) {
			return nil, false
		}
		r := scoreRow{}
		r.playerID, _ = strconv.ParseInt(id, 10, 64)
		r.score, _ = strconv.ParseInt(score, 10, 64)
		rows = append(rows, r)
	}
	return rows, true
}

func (app *App) postScores(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	unlock, err := app.lockTenant(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer unlock()
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	var c Competition
	err = tdb.Get(&c, "SELECT * FROM competition WHERE id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		writeError(w, http.StatusNotFound, "not found")
		return
	} else if err != nil {
		serverError(w, err)
		return
	}
	if c.FinishedAt.Valid {
		writeError(w, http.StatusConflict, "competition finished")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	file, _, err := r.FormFile("scores")
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	defer file.Close()
	body, err := io.ReadAll(file)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	rows, ok := parseScores(body)
	if !ok {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	// Every player named must be the tenant's.
	for _, row := range rows {
		var n int
		if err := tdb.Get(&n, "SELECT COUNT(*) FROM player WHERE id = ?", row.playerID); err != nil {
			serverError(w, err)
			return
		}
		if n == 0 {
			writeError(w, http.StatusBadRequest, "bad request")
			return
		}
	}
	upload := c.LastUpload + 1
	now := time.Now().Unix()
	tx, err := tdb.Beginx()
	if err != nil {
		serverError(w, err)
		return
	}
	defer tx.Rollback()
	for i, row := range rows {
		if _, err := tx.Exec("INSERT INTO player_score (competition_id, upload, row_num, player_id, score, created_at) VALUES (?, ?, ?, ?, ?, ?)",
			id, upload, i+1, row.playerID, row.score, now); err != nil {
			serverError(w, err)
			return
		}
	}
	if _, err := tx.Exec("UPDATE competition SET last_upload = ?, updated_at = ? WHERE id = ?", upload, now, id); err != nil {
		serverError(w, err)
		return
	}
	if err := tx.Commit(); err != nil {
		serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": len(rows)})
}

func (app *App) getOrganizerBilling(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	bills, err := app.tenantBilling(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	var total int64
	for _, b := range bills {
		total += b.Billing
	}
	writeJSON(w, http.StatusOK, map[string]any{"billing": BillingJSON{Total: total, Competitions: bills}})
}

// Player.

func (app *App) getPlayer(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, rolePlayer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	var p Player
	err = tdb.Get(&p, "SELECT * FROM player WHERE id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		writeError(w, http.StatusNotFound, "not found")
		return
	} else if err != nil {
		serverError(w, err)
		return
	}
	// The scores are read under the tenant's lock, lest an upload change them half way.
	unlock, err := app.lockTenant(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer unlock()
	var competitions []Competition
	if err := tdb.Select(&competitions, "SELECT * FROM competition ORDER BY id"); err != nil {
		serverError(w, err)
		return
	}
	scores := []ScoreJSON{}
	for _, c := range competitions {
		// The player's last row in the competition's last upload.
		var s PlayerScore
		err := tdb.Get(&s, "SELECT * FROM player_score WHERE competition_id = ? AND upload = ? AND player_id = ? ORDER BY row_num DESC LIMIT 1",
			c.ID, c.LastUpload, p.ID)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			serverError(w, err)
			return
		}
		scores = append(scores, ScoreJSON{CompetitionID: c.ID, Title: c.Title, Score: s.Score})
	}
	writeJSON(w, http.StatusOK, ProfileJSON{Player: playerJSON(p), Scores: scores})
}

func (app *App) getRanking(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, rolePlayer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	var rankAfter int64
	if s := r.URL.Query().Get("rank_after"); s != "" {
		if !numberPattern.MatchString(s) {
			writeError(w, http.StatusBadRequest, "bad request")
			return
		}
		rankAfter, _ = strconv.ParseInt(s, 10, 64)
	}
	tdb, err := app.tenantDB(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer tdb.Close()
	var c Competition
	err = tdb.Get(&c, "SELECT * FROM competition WHERE id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		writeError(w, http.StatusNotFound, "not found")
		return
	} else if err != nil {
		serverError(w, err)
		return
	}
	if _, err := app.db.Exec("INSERT INTO visit_history (player_id, tenant_id, competition_id, created_at) VALUES (?, ?, ?, ?)",
		v.Player.ID, v.Tenant.ID, c.ID, time.Now().Unix()); err != nil {
		serverError(w, err)
		return
	}
	// The scores are read under the tenant's lock, lest an upload change them half way.
	unlock, err := app.lockTenant(v.Tenant.ID)
	if err != nil {
		serverError(w, err)
		return
	}
	defer unlock()
	// Every row of the last upload, the last first: a player's last row is the one that counts.
	var rows []PlayerScore
	if err := tdb.Select(&rows, "SELECT * FROM player_score WHERE competition_id = ? AND upload = ? ORDER BY row_num DESC", c.ID, c.LastUpload); err != nil {
		serverError(w, err)
		return
	}
	type entry struct {
		score  PlayerScore
		player Player
	}
	var entries []entry
	seen := map[int64]bool{}
	for _, s := range rows {
		if seen[s.PlayerID] {
			continue
		}
		seen[s.PlayerID] = true
		var p Player
		if err := tdb.Get(&p, "SELECT * FROM player WHERE id = ?", s.PlayerID); err != nil {
			serverError(w, err)
			return
		}
		entries = append(entries, entry{s, p})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if a.score.Score != b.score.Score {
			if a.score.Score > b.score.Score {
				return -1
			}
			return 1
		}
		return int(a.score.RowNum - b.score.RowNum)
	})
	ranks := []RankJSON{}
	for i, e := range entries {
		rank := int64(i + 1)
		if rank <= rankAfter {
			continue
		}
		ranks = append(ranks, RankJSON{Rank: rank, PlayerID: e.player.ID, DisplayName: e.player.DisplayName, Score: e.score.Score})
		if len(ranks) == rankingPage {
			break
		}
	}
	writeJSON(w, http.StatusOK, RankingJSON{Competition: competitionJSON(c), Ranks: ranks})
}

// Common.

func (app *App) getMe(w http.ResponseWriter, r *http.Request) {
	v, ok := app.authorize(w, r, roleAdmin, roleOrganizer, rolePlayer)
	if !ok {
		return
	}
	me := MeJSON{Role: v.Role, Subject: v.Subject}
	if v.Tenant != nil {
		me.Tenant = &TenantJSON{ID: v.Tenant.ID, Name: v.Tenant.Name, DisplayName: v.Tenant.DisplayName}
	}
	if v.Player != nil {
		p := playerJSON(*v.Player)
		me.Player = &p
	}
	writeJSON(w, http.StatusOK, me)
}

// postInitialize restores the initial data: it deletes what was added to the admin data, sets the id generator
// back, and puts the initial tenant files back in place.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	if err := app.resetAdmin(); err != nil {
		serverError(w, err)
		return
	}
	if err := app.resetTenants(); err != nil {
		serverError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"lang": app.lang})
}

func (app *App) resetAdmin() error {
	in := app.initial
	statements := []string{
		fmt.Sprintf("DELETE FROM tenant WHERE id > %d", in.Tenants),
		fmt.Sprintf("DELETE FROM visit_history WHERE created_at >= %d", in.End),
		"DELETE FROM id_generator",
	}
	if app.isMySQL {
		statements = append(statements,
			fmt.Sprintf("ALTER TABLE id_generator AUTO_INCREMENT = %d", in.NextID),
			fmt.Sprintf("ALTER TABLE tenant AUTO_INCREMENT = %d", in.Tenants+1))
	} else {
		statements = append(statements,
			"DELETE FROM sqlite_sequence WHERE name = 'id_generator'",
			fmt.Sprintf("INSERT INTO sqlite_sequence (name, seq) VALUES ('id_generator', %d)", in.NextID-1))
	}
	for _, s := range statements {
		if _, err := app.db.Exec(s); err != nil {
			return err
		}
	}
	return nil
}

// resetTenants removes the files of the tenants added since and copies every initial tenant's file back, each
// under its tenant's lock.
func (app *App) resetTenants() error {
	entries, err := os.ReadDir(app.tenantDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name, _, _ := strings.Cut(e.Name(), ".")
		if id, err := strconv.ParseInt(name, 10, 64); err == nil && id > app.initial.Tenants {
			os.Remove(filepath.Join(app.tenantDir, e.Name()))
		}
	}
	for id := int64(1); id <= app.initial.Tenants; id++ {
		unlock, err := app.lockTenant(id)
		if err != nil {
			return err
		}
		src := filepath.Join(app.initialDir, "tenants", strconv.FormatInt(id, 10)+".db")
		os.Remove(app.tenantPath(id) + "-journal")
		err = copyFile(src, app.tenantPath(id))
		unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// The single-page app.

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	http.ServeFile(w, r, filepath.Join(app.root, "public", "index.html"))
}

// getStatic serves the files under public/; anything else there (a directory, a missing file) is not found.
func (app *App) getStatic(w http.ResponseWriter, r *http.Request) {
	name := filepath.Join(app.root, "public", filepath.FromSlash(path.Clean("/"+r.PathValue("file"))))
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	http.ServeFile(w, r, name)
}
