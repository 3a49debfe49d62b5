// Package store keeps the portal's state in a database: the contest, the
// teams, the benchmark jobs with their attempts and live progress, and the
// workers' heartbeats. It owns every SQL statement of the portal, its own
// versioned schema (embedded, applied by Migrate with River's), and the
// queries over River's tables the portal needs (a job's queue position, the
// River state behind each active job).
//
// A DSN names the database: "sqlite:PATH" opens (or creates) a SQLite file
// in WAL mode with a busy timeout; "postgres://USER@HOST/DB" (or
// "postgresql://...", any URL pgx takes) connects to a PostgreSQL database,
// which must exist: the server creates databases, not the store. The
// statements are written once, with ? placeholders, in the SQL both systems
// speak; what differs (placeholders, errors, River's driver, the schema
// files, the migration lock) is in a dialect.
//
// Every state change of a job is a compare-and-set on its current state, from
// the states portal.FromStates allows: two writers can never both move a job,
// and a refused change is a *portal.TransitionError.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tunecon/tunecon/internal/portal"
)

// BusyTimeout is how long a SQLite connection waits for another writer (of
// this process or another) before it gives up with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// PostgresConns caps a PostgreSQL store's pool: the pages, the queue's
// settler and heartbeats, and River's producers and maintenance share it.
// (SQLite's pool has one connection.)
const PostgresConns = 20

// Options configure a Store.
type Options struct {
	// Now is the clock of every time the store writes; nil means time.Now.
	Now func() time.Time
	// MustExist opens only a database that exists (CodeNotFound otherwise):
	// a worker's, which never creates one. Without it a SQLite file is
	// created when missing. A PostgreSQL database must always exist (the
	// store never creates one), so this changes nothing there.
	MustExist bool
}

// Store is the portal's database. Its methods run outside any transaction;
// InTx runs several in one.
type Store struct {
	*queries
	db      *sql.DB
	dialect dialect
	// listen is the pgx pool River's listener takes its connections from
	// (PostgreSQL only; nil for SQLite).
	listen *pgxpool.Pool
}

// Tx is a transaction: the same queries as the Store, plus those that take
// several statements. Inside InTx use only the Tx: the SQLite pool has one
// connection, which the Tx holds.
type Tx struct {
	*queries
	tx *sql.Tx
}

// SQL is the transaction itself, for River's InsertTx, JobCancelTx and
// JobCompleteTx, which then commit or roll back with the portal's rows.
func (t *Tx) SQL() *sql.Tx { return t.tx }

// dbtx is what both *sql.DB and *sql.Tx do.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries are the statements, over the database or a transaction.
type queries struct {
	x       dbtx
	now     func() time.Time
	dialect dialect
	// stmts are the statements kept prepared (nil: none kept), and tx the
	// transaction x is, if it is one.
	stmts *stmts
	tx    *sql.Tx
}

// exec, query and queryRow run a statement written with ? placeholders in
// the dialect's own, prepared if it can be.
func (q *queries) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	query = q.dialect.rebind(query)
	if s := q.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return q.x.ExecContext(ctx, query, args...)
}

func (q *queries) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	query = q.dialect.rebind(query)
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return q.x.QueryContext(ctx, query, args...)
}

func (q *queries) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	query = q.dialect.rebind(query)
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return q.x.QueryRowContext(ctx, query, args...)
}

// stmt is query's kept statement, for the database or for the transaction;
// nil to run it unprepared. A transaction prepares nothing itself: it holds
// SQLite's one connection, which preparing on the database would wait for.
// What was prepared outside runs on the transaction's connection as it is.
func (q *queries) stmt(ctx context.Context, query string) *sql.Stmt {
	switch {
	case q.stmts == nil:
		return nil
	case q.tx != nil:
		if s := q.stmts.lookup(query); s != nil {
			return q.tx.StmtContext(ctx, s)
		}
		return nil
	}
	return q.stmts.prepared(ctx, query)
}

// dialect is what differs between database systems.
type dialect struct {
	name string
	// rebind turns the ? placeholders the statements are written with into
	// the system's own (PostgreSQL's are $1, $2, ...).
	rebind func(query string) string
	// uniqueViolation reports whether err broke a unique constraint.
	uniqueViolation func(err error) bool
	// missingTable reports whether err is a statement's on a table that
	// does not exist (a database never migrated).
	missingTable func(err error) bool
	// river is River's driver for the pool (and, on PostgreSQL, the pgx
	// pool its listener takes its connections from).
	river func(db *sql.DB, listen *pgxpool.Pool) riverdriver.Driver[*sql.Tx]
	// migrations is the directory of the embedded schema files.
	migrations string
	// schemaVersion creates the table of the portal's applied schema steps.
	schemaVersion string
	// lockMigrations, when not empty, is the statement that makes Migrate's
	// transaction wait for any other process's to end (on SQLite the
	// immediate transaction does it already).
	lockMigrations string
	// riverOwnTxs runs River's migrations each in a transaction of its own,
	// on other connections of the pool, rather than in Migrate's. PostgreSQL
	// needs it: one of River's migrations adds a value to an enum and a
	// later one uses it, which one transaction cannot do (River deprecates
	// its MigrateTx for this reason). Migrate's transaction still holds the
	// lock meanwhile, and River's steps are versioned: one that fails leaves
	// those before it applied, and the next Migrate goes on from there.
	// SQLite's pool has one connection, which Migrate's transaction holds.
	riverOwnTxs bool
	// forShare and forUpdate end a SELECT that locks the rows it reads until
	// the transaction ends, shared or not (PostgreSQL); empty on SQLite,
	// whose immediate transactions take its one write lock at BEGIN.
	forShare, forUpdate string
}

var sqliteDialect = dialect{
	name:   "sqlite",
	rebind: func(query string) string { return query },
	uniqueViolation: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
	missingTable: func(err error) bool { return err != nil && strings.Contains(err.Error(), "no such table") },
	river:        func(db *sql.DB, _ *pgxpool.Pool) riverdriver.Driver[*sql.Tx] { return riversqlite.New(db) },
	migrations:   "migrations/sqlite",
	schemaVersion: `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT      NOT NULL,
		applied_at TIMESTAMP NOT NULL)`,
}

// migrateLockKey is the PostgreSQL advisory lock Migrate takes: "tunecon"
// in ASCII.
const migrateLockKey int64 = 0x74756e65636f6e

var postgresDialect = dialect{
	name:            "postgres",
	rebind:          rebindDollar,
	uniqueViolation: func(err error) bool { return pgCode(err) == "23505" }, // unique_violation
	missingTable:    func(err error) bool { return pgCode(err) == "42P01" }, // undefined_table
	// River's database/sql driver keeps the store's *sql.Tx for InsertTx
	// and the like; database/sql cannot LISTEN, so River's listener takes
	// a connection of a pgx pool instead (without one River would only
	// poll for new jobs and cancellations).
	river: func(db *sql.DB, listen *pgxpool.Pool) riverdriver.Driver[*sql.Tx] {
		return riverdatabasesql.NewWithPgxListener(db, listen)
	},
	migrations: "migrations/postgres",
	schemaVersion: `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT        NOT NULL,
		applied_at TIMESTAMPTZ NOT NULL)`,
	// Held until the transaction ends: a second process's Migrate waits
	// here, then finds the schema up to date. (Without it both would
	// create the same tables, and one would fail.)
	lockMigrations: fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, migrateLockKey),
	riverOwnTxs:    true,
	forShare:       " FOR SHARE",
	forUpdate:      " FOR UPDATE",
}

// pgCode is a PostgreSQL error's SQLSTATE, "" for any other error.
func pgCode(err error) string {
	if e, ok := errors.AsType[*pgconn.PgError](err); ok {
		return e.Code
	}
	return ""
}

// rebindDollar numbers the ? placeholders of a statement $1, $2, ... in
// order. A ? in a '...' string, a "..." name or a -- or /* */ comment is
// left alone. (A doubled quote inside a string reads as two strings back to
// back, which comes out the same.)
func rebindDollar(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		// end is where the quoted string or comment starting at i ends
		// (the whole rest when it never does).
		end := -1
		switch c := query[i]; {
		case c == '\'' || c == '"':
			if j := strings.IndexByte(query[i+1:], c); j >= 0 {
				end = i + 1 + j + 1
			}
		case strings.HasPrefix(query[i:], "--"):
			if j := strings.IndexByte(query[i:], '\n'); j >= 0 {
				end = i + j + 1
			}
		case strings.HasPrefix(query[i:], "/*"):
			if j := strings.Index(query[i+2:], "*/"); j >= 0 {
				end = i + 2 + j + 2
			}
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		default:
			b.WriteByte(c)
			continue
		}
		if end < 0 {
			end = len(query)
		}
		b.WriteString(query[i:end])
		i = end - 1
	}
	return b.String()
}

// Open opens the database a DSN names. It does not change the schema: the
// portal calls Migrate once at start; workers open a migrated database.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	tg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	s := &Store{dialect: tg.dialect}
	if tg.pg != nil {
		s.db, s.listen, err = openPostgres(ctx, tg.pg, tg.shown)
	} else {
		s.db, err = openSQLite(ctx, tg, opts)
	}
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s.queries = &queries{x: s.db, now: now, dialect: tg.dialect}
	if tg.pg == nil {
		s.stmts = newStmts(s.db)
	}
	return s, nil
}

func openSQLite(ctx context.Context, tg target, opts Options) (*sql.DB, error) {
	if opts.MustExist {
		if _, err := os.Stat(tg.file); errors.Is(err, fs.ErrNotExist) {
			return nil, portal.Errorf(portal.CodeNotFound, "store: no database at %s", tg.file)
		}
	}
	db, err := sql.Open("sqlite", tg.source)
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", tg.shown, err)
	}
	// River's SQLite driver asks for one connection: SQLite has one writer,
	// and a pool of one never sees SQLITE_BUSY from itself.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: opening %s: %w", tg.shown, err)
	}
	return db, nil
}

func openPostgres(ctx context.Context, cfg *pgxpool.Config, shown string) (*sql.DB, *pgxpool.Pool, error) {
	// pgx gives timestamptz values in the machine's time zone; the store's
	// times are in UTC, as they are on SQLite.
	utc := func(_ context.Context, c *pgx.Conn) error {
		c.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}
	db := stdlib.OpenDB(*cfg.ConnConfig.Copy(), stdlib.OptionAfterConnect(utc))
	db.SetMaxOpenConns(PostgresConns)
	db.SetMaxIdleConns(PostgresConns)
	db.SetConnMaxIdleTime(time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		if pgCode(err) == "3D000" { // invalid_catalog_name
			return nil, nil, portal.Errorf(portal.CodeNotFound, "store: no database %q on the PostgreSQL server at %s (create it first, e.g. with createdb)",
				cfg.ConnConfig.Database, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
		}
		return nil, nil, fmt.Errorf("store: connecting to %s: %w", shown, err)
	}
	// Each started River client takes one connection of this pool for good
	// to LISTEN on (River's doc: a pool of at most one, none kept idle);
	// taken connections leave the pool, so several clients on one store
	// each get theirs.
	cfg = cfg.Copy()
	cfg.MaxConns, cfg.MinConns = 1, 0
	listen, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("store: connecting to %s: %w", shown, err)
	}
	return db, listen, nil
}

// target is what a DSN names.
type target struct {
	dialect dialect
	// file and source are a SQLite file's path and its modernc DSN.
	file, source string
	// pg is a PostgreSQL database's connection settings.
	pg *pgxpool.Config
	// shown is the DSN without its password, for messages.
	shown string
}

// parseDSN reads a DSN.
func parseDSN(dsn string) (target, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" || strings.ContainsAny(path, "?#") {
			return target{}, portal.Errorf(portal.CodeInvalid, "store: %q: want sqlite:PATH, a file path without ? or #", dsn)
		}
		// WAL lets readers run beside the writer; the busy timeout makes a
		// writer of another process wait instead of failing; IMMEDIATE
		// transactions take the write lock at BEGIN, so a transaction that
		// reads then writes never deadlocks with another.
		source := fmt.Sprintf("file:%s?_pragma=journal_mode(WAL)&_pragma=busy_timeout(%d)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate&_time_format=sqlite",
			path, BusyTimeout.Milliseconds())
		return target{dialect: sqliteDialect, file: path, source: source, shown: dsn}, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		shown := dsn
		if u, err := url.Parse(dsn); err == nil {
			shown = u.Redacted()
		}
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			// pgx's message shows the DSN without its password.
			return target{}, portal.Errorf(portal.CodeInvalid, "store: want postgres://USER@HOST/DB: %v", err)
		}
		if cfg.ConnConfig.Database == "" {
			return target{}, portal.Errorf(portal.CodeInvalid, "store: %s names no database: want postgres://USER@HOST/DB", shown)
		}
		return target{dialect: postgresDialect, pg: cfg, shown: shown}, nil
	}
	return target{}, portal.Errorf(portal.CodeInvalid, "store: unknown database %q: want sqlite:PATH or postgres://USER@HOST/DB", dsn)
}

// Close closes the database. Stop the River clients on the store first.
func (s *Store) Close() error {
	if s.stmts != nil {
		s.stmts.close()
	}
	if s.listen != nil {
		s.listen.Close()
	}
	return s.db.Close()
}

// Dialect names the database system ("sqlite" or "postgres").
func (s *Store) Dialect() string { return s.dialect.name }

// RiverDriver is River's driver over the store's pool. River's clients use
// it, so its transactions and the store's are the same *sql.Tx.
func (s *Store) RiverDriver() riverdriver.Driver[*sql.Tx] { return s.dialect.river(s.db, s.listen) }

// InTx runs f in a transaction, committed if f returns nil and rolled back
// otherwise.
func (s *Store) InTx(ctx context.Context, f func(*Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: beginning a transaction: %w", err)
	}
	q := &queries{x: tx, now: s.now, dialect: s.dialect, stmts: s.stmts, tx: tx}
	if err := f(&Tx{queries: q, tx: tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: committing: %w", err)
	}
	return nil
}

// stamp is the clock's time in UTC.
func (q *queries) stamp() time.Time { return q.now().UTC() }

// Now is the store's clock (Options.Now), in UTC: the time every check of
// the contest's timeline inside a transaction uses.
func (q *queries) Now() time.Time { return q.stamp() }

// nullTime is t for a column, NULL for the zero time.
func nullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: t.UTC(), Valid: !t.IsZero()} }

// notFound classifies an error reading what format names: sql.ErrNoRows is
// "... not found", anything else the store's fault.
func notFound(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return portal.Errorf(portal.CodeNotFound, "%s not found", what)
	}
	return fmt.Errorf("store: reading %s: %w", what, err)
}
