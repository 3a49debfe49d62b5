// Package store keeps the portal's state in a database: the contest, the
// teams, the benchmark jobs with their attempts and live progress, and the
// workers' heartbeats. It owns every SQL statement of the portal, its own
// versioned schema (embedded, applied by Migrate with River's), and the
// queries over River's tables the portal needs (a job's queue position, the
// River state behind each active job).
//
// A DSN names the database: "sqlite:PATH" opens (or creates) a SQLite file
// in WAL mode with a busy timeout; PostgreSQL comes in a later slice.
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
	"os"
	"strings"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tunecon/tunecon/internal/portal"
)

// BusyTimeout is how long a SQLite connection waits for another writer (of
// this process or another) before it gives up with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// Options configure a Store.
type Options struct {
	// Now is the clock of every time the store writes; nil means time.Now.
	Now func() time.Time
	// MustExist opens only a database that exists (CodeNotFound otherwise):
	// a worker's, which never creates one. Without it a SQLite file is
	// created when missing.
	MustExist bool
}

// Store is the portal's database. Its methods run outside any transaction;
// InTx runs several in one.
type Store struct {
	*queries
	db      *sql.DB
	dialect dialect
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
}

// exec, query and queryRow run a statement written with ? placeholders in
// the dialect's own.
func (q *queries) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.x.ExecContext(ctx, q.dialect.rebind(query), args...)
}

func (q *queries) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.x.QueryContext(ctx, q.dialect.rebind(query), args...)
}

func (q *queries) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return q.x.QueryRowContext(ctx, q.dialect.rebind(query), args...)
}

// dialect is what differs between database systems.
type dialect struct {
	name string
	// rebind turns the ? placeholders the statements are written with into
	// the system's own (PostgreSQL's are $1, $2, ...).
	rebind func(query string) string
	// uniqueViolation reports whether err broke a unique constraint.
	uniqueViolation func(err error) bool
	// river is River's driver for the pool.
	river func(db *sql.DB) riverdriver.Driver[*sql.Tx]
	// migrations is the directory of the embedded schema files.
	migrations string
}

var sqliteDialect = dialect{
	name:   "sqlite",
	rebind: func(query string) string { return query },
	uniqueViolation: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
	river:      func(db *sql.DB) riverdriver.Driver[*sql.Tx] { return riversqlite.New(db) },
	migrations: "migrations/sqlite",
}

// Open opens the database a DSN names. It does not change the schema: the
// portal calls Migrate once at start; workers open a migrated database.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	driver, source, file, d, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if opts.MustExist && file != "" {
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			return nil, portal.Errorf(portal.CodeNotFound, "store: no database at %s", file)
		}
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", dsn, err)
	}
	// River's SQLite driver asks for one connection: SQLite has one writer,
	// and a pool of one never sees SQLITE_BUSY from itself.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: opening %s: %w", dsn, err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Store{queries: &queries{x: db, now: now, dialect: d}, db: db, dialect: d}, nil
}

// parseDSN turns a DSN into a database/sql driver name and source, and for
// SQLite the file's path.
func parseDSN(dsn string) (driver, source, file string, d dialect, err error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" || strings.ContainsAny(path, "?#") {
			return "", "", "", d, portal.Errorf(portal.CodeInvalid, "store: %q: want sqlite:PATH, a file path without ? or #", dsn)
		}
		// WAL lets readers run beside the writer; the busy timeout makes a
		// writer of another process wait instead of failing; IMMEDIATE
		// transactions take the write lock at BEGIN, so a transaction that
		// reads then writes never deadlocks with another.
		source = fmt.Sprintf("file:%s?_pragma=journal_mode(WAL)&_pragma=busy_timeout(%d)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate&_time_format=sqlite",
			path, BusyTimeout.Milliseconds())
		return "sqlite", source, path, sqliteDialect, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "", "", "", d, portal.Errorf(portal.CodeUnsupported, "store: PostgreSQL is not supported yet (it comes in a later version); use sqlite:PATH")
	}
	return "", "", "", d, portal.Errorf(portal.CodeInvalid, "store: unknown database %q: want sqlite:PATH", dsn)
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Dialect names the database system ("sqlite").
func (s *Store) Dialect() string { return s.dialect.name }

// RiverDriver is River's driver over the store's pool. River's clients use
// it, so its transactions and the store's are the same *sql.Tx.
func (s *Store) RiverDriver() riverdriver.Driver[*sql.Tx] { return s.dialect.river(s.db) }

// InTx runs f in a transaction, committed if f returns nil and rolled back
// otherwise.
func (s *Store) InTx(ctx context.Context, f func(*Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: beginning a transaction: %w", err)
	}
	if err := f(&Tx{queries: &queries{x: tx, now: s.now, dialect: s.dialect}, tx: tx}); err != nil {
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
