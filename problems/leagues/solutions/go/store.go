package main

// The store: every tenant in one database (SQLite by default, MariaDB by DSN), holding only what the answers and
// the bills need. The memory (state.go) is built from it at start and written through to it before any answer.

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/mattn/go-sqlite3"
)

var (
	//go:embed sql/schema.sqlite.sql
	sqliteSchema string
	//go:embed sql/schema.mysql.sql
	mysqlSchema string
)

// The rows of the store, as the memory is built from them and as POST /initialize writes them back.

type tenantRow struct {
	id          int64
	name        string
	displayName string
	createdAt   int64
}

type playerRow struct {
	id, tenantID int64
	displayName  string
	disqualified bool
	createdAt    int64
}

type competitionRow struct {
	id, tenantID int64
	title        string
	finishedAt   int64 // 0 while it runs (NULL in the store)
	createdAt    int64
}

// scoreRow is the score that counts: a player's last row in a competition's last upload.
type scoreRow struct {
	competitionID, playerID int64
	row                     int64 // the row's line in the CSV, from 1 after the header
	score                   int64
}

// visitRow is a player's first read of a competition's ranking.
type visitRow struct {
	competitionID, playerID int64
	at                      int64
}

// snapshot is a whole store's rows.
type snapshot struct {
	nextID       int64
	source       string // the VERSION of the initial data
	tenants      []tenantRow
	players      []playerRow
	competitions []competitionRow
	scores       []scoreRow
	visits       []visitRow
}

// store is the database.
type store struct {
	db      *sql.DB
	isMySQL bool
}

// openStore opens the database named by dsn: "" or "sqlite:PATH" for SQLite (PATH defaults to def), or
// "mysql://user:pass@host:port/dbname".
func openStore(dsn, def string) (*store, error) {
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
		cfg.InterpolateParams = true // one round trip per statement instead of prepare, execute and close
		cfg.MaxAllowedPacket = 0     // ask the server
		if err := cfg.Apply(mysql.Charset("utf8mb4", "")); err != nil {
			return nil, err
		}
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(32)
		db.SetMaxIdleConns(32)
		db.SetConnMaxLifetime(time.Hour)
		if err := db.Ping(); err != nil {
			db.Close()
			return nil, fmt.Errorf("connecting to the database: %w", err)
		}
		s := &store{db: db, isMySQL: true}
		return s, s.execAll(mysqlSchema)
	case dsn == "" || strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			path = def
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		// WAL: a commit appends to the log; synchronous=NORMAL: without an fsync, so a crash of the process loses
		// nothing and a power cut at most the last commits, never the file (the reference's admin data is kept so
		// too). One connection: SQLite has one writer at a time anyway, and the app never waits in SQLite's busy
		// handler; reads happen only at start.
		db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_txlock=immediate")
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		s := &store{db: db}
		return s, s.execAll(sqliteSchema)
	}
	return nil, fmt.Errorf("LEAGUES_DB %q: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname", dsn)
}

// execAll runs the statements of a schema, each ending with ";" at the end of a line.
func (s *store) execAll(schema string) error {
	var stmt strings.Builder
	for line := range strings.Lines(schema) {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		stmt.WriteString(line)
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			if _, err := s.db.Exec(stmt.String()); err != nil {
				return fmt.Errorf("creating the tables: %w", err)
			}
			stmt.Reset()
		}
	}
	return nil
}

// source returns the VERSION of the initial data the store was made from, or "" for an empty store.
func (s *store) source() (string, error) {
	var src string
	err := s.db.QueryRow("SELECT source FROM meta WHERE id = 1").Scan(&src)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return src, err
}

// load reads every row of the store.
func (s *store) load() (*snapshot, error) {
	snap := &snapshot{}
	if err := s.db.QueryRow("SELECT next_id, source FROM meta WHERE id = 1").Scan(&snap.nextID, &snap.source); err != nil {
		return nil, err
	}
	rows, err := s.db.Query("SELECT id, name, display_name, created_at FROM tenants ORDER BY id")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t tenantRow
		if err := rows.Scan(&t.id, &t.name, &t.displayName, &t.createdAt); err != nil {
			rows.Close()
			return nil, err
		}
		snap.tenants = append(snap.tenants, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if rows, err = s.db.Query("SELECT id, tenant_id, display_name, is_disqualified, created_at FROM players ORDER BY id"); err != nil {
		return nil, err
	}
	for rows.Next() {
		var p playerRow
		if err := rows.Scan(&p.id, &p.tenantID, &p.displayName, &p.disqualified, &p.createdAt); err != nil {
			rows.Close()
			return nil, err
		}
		snap.players = append(snap.players, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if rows, err = s.db.Query("SELECT id, tenant_id, title, finished_at, created_at FROM competitions ORDER BY id"); err != nil {
		return nil, err
	}
	for rows.Next() {
		var c competitionRow
		var finished sql.NullInt64
		if err := rows.Scan(&c.id, &c.tenantID, &c.title, &finished, &c.createdAt); err != nil {
			rows.Close()
			return nil, err
		}
		c.finishedAt = finished.Int64
		snap.competitions = append(snap.competitions, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if rows, err = s.db.Query("SELECT competition_id, player_id, row_num, score FROM scores"); err != nil {
		return nil, err
	}
	for rows.Next() {
		var r scoreRow
		if err := rows.Scan(&r.competitionID, &r.playerID, &r.row, &r.score); err != nil {
			rows.Close()
			return nil, err
		}
		snap.scores = append(snap.scores, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if rows, err = s.db.Query("SELECT competition_id, player_id, created_at FROM visits"); err != nil {
		return nil, err
	}
	for rows.Next() {
		var v visitRow
		if err := rows.Scan(&v.competitionID, &v.playerID, &v.at); err != nil {
			rows.Close()
			return nil, err
		}
		snap.visits = append(snap.visits, v)
	}
	return snap, rows.Err()
}

// replace deletes every row of the store and writes the snapshot's, in one transaction.
func (s *store) replace(snap *snapshot) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, table := range []string{"meta", "tenants", "players", "competitions", "scores", "visits"} {
		if _, err := tx.Exec("DELETE FROM " + table); err != nil {
			return err
		}
	}
	if _, err := tx.Exec("INSERT INTO meta (id, next_id, source) VALUES (1, ?, ?)", snap.nextID, snap.source); err != nil {
		return err
	}
	if err := insertRows(tx, "tenants (id, name, display_name, created_at)", 4, len(snap.tenants), func(i int, a []any) []any {
		t := &snap.tenants[i]
		return append(a, t.id, t.name, t.displayName, t.createdAt)
	}); err != nil {
		return err
	}
	if err := insertPlayers(tx, snap.players); err != nil {
		return err
	}
	if err := insertRows(tx, "competitions (id, tenant_id, title, finished_at, created_at)", 5, len(snap.competitions), func(i int, a []any) []any {
		c := &snap.competitions[i]
		var finished any
		if c.finishedAt != 0 {
			finished = c.finishedAt
		}
		return append(a, c.id, c.tenantID, c.title, finished, c.createdAt)
	}); err != nil {
		return err
	}
	if err := insertScores(tx, snap.scores); err != nil {
		return err
	}
	if err := insertRows(tx, "visits (competition_id, player_id, created_at)", 3, len(snap.visits), func(i int, a []any) []any {
		v := &snap.visits[i]
		return append(a, v.competitionID, v.playerID, v.at)
	}); err != nil {
		return err
	}
	return tx.Commit()
}

// rowsPerInsert is how many rows one INSERT writes.
const rowsPerInsert = 500

// insertRows inserts n rows of cols values into into ("table (col, ...)"), rowsPerInsert at a time; row appends the
// values of row i to a.
func insertRows(tx *sql.Tx, into string, cols, n int, row func(i int, a []any) []any) error {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	full := ""
	args := make([]any, 0, cols*min(n, rowsPerInsert))
	for start := 0; start < n; start += rowsPerInsert {
		end := min(n, start+rowsPerInsert)
		args = args[:0]
		for i := start; i < end; i++ {
			args = row(i, args)
		}
		q := full
		if end-start < rowsPerInsert || q == "" {
			q = "INSERT INTO " + into + " VALUES " + strings.TrimSuffix(strings.Repeat(one+",", end-start), ",")
			if end-start == rowsPerInsert {
				full = q
			}
		}
		if _, err := tx.Exec(q, args...); err != nil {
			return err
		}
	}
	return nil
}

func insertPlayers(tx *sql.Tx, players []playerRow) error {
	return insertRows(tx, "players (id, tenant_id, display_name, is_disqualified, created_at)", 5, len(players), func(i int, a []any) []any {
		p := &players[i]
		return append(a, p.id, p.tenantID, p.displayName, p.disqualified, p.createdAt)
	})
}

func insertScores(tx *sql.Tx, scores []scoreRow) error {
	return insertRows(tx, "scores (competition_id, player_id, row_num, score)", 4, len(scores), func(i int, a []any) []any {
		r := &scores[i]
		return append(a, r.competitionID, r.playerID, r.row, r.score)
	})
}

// raiseNextID moves the stored id generator up to next, never down: transactions of several tenants may commit in
// another order than they took their ids.
func raiseNextID(tx *sql.Tx, next int64) error {
	_, err := tx.Exec("UPDATE meta SET next_id = ? WHERE id = 1 AND next_id < ?", next, next)
	return err
}

// Writes, each one transaction or one statement.

func (s *store) addTenant(t tenantRow) error {
	_, err := s.db.Exec("INSERT INTO tenants (id, name, display_name, created_at) VALUES (?, ?, ?, ?)",
		t.id, t.name, t.displayName, t.createdAt)
	return err
}

func (s *store) addPlayers(players []playerRow, next int64) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insertPlayers(tx, players); err != nil {
		return err
	}
	if err := raiseNextID(tx, next); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *store) disqualify(id int64) error {
	_, err := s.db.Exec("UPDATE players SET is_disqualified = 1 WHERE id = ?", id)
	return err
}

func (s *store) addCompetition(c competitionRow, next int64) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec("INSERT INTO competitions (id, tenant_id, title, finished_at, created_at) VALUES (?, ?, ?, NULL, ?)",
		c.id, c.tenantID, c.title, c.createdAt); err != nil {
		return err
	}
	if err := raiseNextID(tx, next); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *store) finish(id, at int64) error {
	_, err := s.db.Exec("UPDATE competitions SET finished_at = ? WHERE id = ?", at, id)
	return err
}

// setScores replaces a competition's scores: only the last upload counts.
func (s *store) setScores(competitionID int64, scores []scoreRow) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec("DELETE FROM scores WHERE competition_id = ?", competitionID); err != nil {
		return err
	}
	if err := insertScores(tx, scores); err != nil {
		return err
	}
	return tx.Commit()
}

// visit records a player's first read of a ranking, or moves it earlier (only if the clock went back).
func (s *store) visit(v visitRow, earlier bool) error {
	q := "INSERT INTO visits (competition_id, player_id, created_at) VALUES (?, ?, ?)"
	args := []any{v.competitionID, v.playerID, v.at}
	if earlier {
		q = "UPDATE visits SET created_at = ? WHERE competition_id = ? AND player_id = ?"
		args = []any{v.at, v.competitionID, v.playerID}
	}
	_, err := s.db.Exec(q, args...)
	return err
}

func (s *store) close() error { return s.db.Close() }

// importInitial reads the initial data (problems/leagues/data writes it: the admin data as a SQLite database, one
// SQLite file per tenant) and keeps of it only what counts: the last row of each player in each competition's last
// upload, and each player's first read of each competition's ranking, if it came by the finish.
func importInitial(dir string) (*snapshot, error) {
	version, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil {
		return nil, initialDataError(err)
	}
	snap := &snapshot{source: strings.TrimSpace(string(version))}
	admin, err := openInitial(filepath.Join(dir, "admin.db"))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	// The tenants and the id generator first; the visits are read while the tenants' files are.
	rows, err := admin.Query("SELECT id, name, display_name, created_at FROM tenant ORDER BY id")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t tenantRow
		if err := rows.Scan(&t.id, &t.name, &t.displayName, &t.createdAt); err != nil {
			rows.Close()
			return nil, err
		}
		snap.tenants = append(snap.tenants, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var seq sql.NullInt64
	if err := admin.QueryRow("SELECT MAX(seq) FROM sqlite_sequence WHERE name = 'id_generator'").Scan(&seq); err != nil {
		return nil, err
	}
	snap.nextID = seq.Int64 + 1

	type firstVisits = map[[2]int64]int64 // competition, player: the first visit's time
	visitsDone := make(chan error, 1)
	first := firstVisits{}
	go func() {
		rows, err := admin.Query("SELECT competition_id, player_id, created_at FROM visit_history")
		if err != nil {
			visitsDone <- err
			return
		}
		defer rows.Close()
		for rows.Next() {
			var c, p, at int64
			if err := rows.Scan(&c, &p, &at); err != nil {
				visitsDone <- err
				return
			}
			k := [2]int64{c, p}
			if t, ok := first[k]; !ok || at < t {
				first[k] = at
			}
		}
		visitsDone <- rows.Err()
	}()
	for _, t := range snap.tenants {
		if err := importTenant(filepath.Join(dir, "tenants", fmt.Sprintf("%d.db", t.id)), t.id, snap); err != nil {
			<-visitsDone
			return nil, err
		}
	}
	if err := <-visitsDone; err != nil {
		return nil, err
	}
	finished := make(map[int64]int64, len(snap.competitions))
	for _, c := range snap.competitions {
		finished[c.id] = c.finishedAt
		snap.nextID = max(snap.nextID, c.id+1)
	}
	for _, p := range snap.players {
		snap.nextID = max(snap.nextID, p.id+1)
	}
	for k, at := range first {
		f, ok := finished[k[0]]
		if !ok || (f != 0 && at > f) {
			continue // a competition that is not there, or a read after the finish: it never counts
		}
		snap.visits = append(snap.visits, visitRow{competitionID: k[0], playerID: k[1], at: at})
	}
	slices.SortFunc(snap.visits, func(a, b visitRow) int {
		if a.competitionID != b.competitionID {
			return int(a.competitionID - b.competitionID)
		}
		return int(a.playerID - b.playerID)
	})
	return snap, nil
}

// importTenant adds the rows of one tenant's initial file to snap.
func importTenant(path string, tenantID int64, snap *snapshot) error {
	db, err := openInitial(path)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query("SELECT id, display_name, is_disqualified, created_at FROM player ORDER BY id")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for rows.Next() {
		p := playerRow{tenantID: tenantID}
		if err := rows.Scan(&p.id, &p.displayName, &p.disqualified, &p.createdAt); err != nil {
			rows.Close()
			return err
		}
		snap.players = append(snap.players, p)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if rows, err = db.Query("SELECT id, title, finished_at, created_at FROM competition ORDER BY id"); err != nil {
		return err
	}
	for rows.Next() {
		c := competitionRow{tenantID: tenantID}
		var finished sql.NullInt64
		if err := rows.Scan(&c.id, &c.title, &finished, &c.createdAt); err != nil {
			rows.Close()
			return err
		}
		c.finishedAt = finished.Int64
		snap.competitions = append(snap.competitions, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// The rows of each competition's last upload, each player's last row first.
	if rows, err = db.Query("SELECT s.competition_id, s.player_id, s.row_num, s.score FROM player_score s " +
		"JOIN competition c ON c.id = s.competition_id AND s.upload = c.last_upload ORDER BY s.competition_id, s.row_num DESC"); err != nil {
		return err
	}
	defer rows.Close()
	seen := map[[2]int64]bool{}
	for rows.Next() {
		var r scoreRow
		if err := rows.Scan(&r.competitionID, &r.playerID, &r.row, &r.score); err != nil {
			return err
		}
		if k := [2]int64{r.competitionID, r.playerID}; !seen[k] {
			seen[k] = true
			snap.scores = append(snap.scores, r)
		}
	}
	return rows.Err()
}

// openInitial opens a file of the initial data, which nobody writes, for reading.
func openInitial(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, initialDataError(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return nil, err
	}
	return db, db.PingContext(context.Background())
}

func initialDataError(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: generate the initial data with `tunecon serve leagues`, which writes it and then "+
			"starts the reference app (or set LEAGUES_INITIAL_DIR to where it is)", err)
	}
	return err
}
