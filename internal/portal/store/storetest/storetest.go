// Package storetest runs a test on each database system the store supports:
// SQLite always, and PostgreSQL on a private server (servers.StartPostgres)
// that a test package's TestMain owns, started when a test first needs it.
// Each test gets fresh, empty databases.
package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/kit/apptest/servers"
)

// System is a database system to test on.
type System struct {
	// Name is "sqlite" or "postgres", the subtest's name.
	Name string
	// NewDSN makes a fresh, empty database and returns its DSN.
	NewDSN func(t *testing.T) string
}

// Systems are a test package's database systems. TestMain makes them with
// New and closes them when the tests have run.
type Systems struct {
	once sync.Once
	dir  string
	pg   *servers.Postgres
	err  error
	// made counts the PostgreSQL databases made, for their names.
	made atomic.Int64
	// template is a SQLite database with the whole schema (MigratedSQLite).
	template     sync.Once
	templatePath string
	templateErr  error
}

// New makes a test package's systems; nothing starts yet.
func New() *Systems { return &Systems{} }

// Close stops the PostgreSQL server, if it started, and removes its files.
func (s *Systems) Close() {
	s.once.Do(func() { s.err = fmt.Errorf("storetest: closed") })
	if s.pg != nil {
		s.pg.Stop()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
	s.template.Do(func() { s.templateErr = fmt.Errorf("storetest: closed") })
	if s.templatePath != "" {
		os.RemoveAll(filepath.Dir(s.templatePath))
	}
}

// All are the systems every test runs on.
func (s *Systems) All() []System {
	return []System{{Name: "sqlite", NewDSN: SQLite}, {Name: "postgres", NewDSN: s.Postgres}}
}

// Run runs f as a subtest on each system, named after it.
func (s *Systems) Run(t *testing.T, f func(t *testing.T, db System)) {
	t.Helper()
	for _, db := range s.All() {
		t.Run(db.Name, func(t *testing.T) { f(t, db) })
	}
}

// SQLite is the DSN of a SQLite file (not made yet) in t's own directory.
func SQLite(t *testing.T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "portal.db")
}

// MigratedSQLite makes a SQLite file with the store's whole schema in t's
// own directory and returns its DSN. The schema is applied once, to a file
// the systems keep until Close, and copied for each test: parsing it is most
// of a small test's time under the race detector.
func (s *Systems) MigratedSQLite(t *testing.T) string {
	t.Helper()
	s.template.Do(s.migrateTemplate)
	if s.templateErr != nil {
		t.Fatal(s.templateErr)
	}
	data, err := os.ReadFile(s.templatePath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "portal.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}

func (s *Systems) migrateTemplate() {
	dir, err := os.MkdirTemp("", "storetest-sqlite")
	if err != nil {
		s.templateErr = err
		return
	}
	s.templatePath = filepath.Join(dir, "portal.db")
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite:"+s.templatePath, store.Options{})
	if err != nil {
		s.templateErr = err
		return
	}
	_, err = st.Migrate(ctx)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.templateErr = fmt.Errorf("storetest: migrating the SQLite template: %w", err)
		return
	}
	// Closed, the database is whole in its one file: a write-ahead log
	// left beside it would mean the copies miss part of the schema.
	if _, err := os.Stat(s.templatePath + "-wal"); err == nil {
		s.templateErr = fmt.Errorf("storetest: %s-wal left after Close", s.templatePath)
	}
}

// Postgres makes an empty database on the private PostgreSQL server,
// started on first use, and returns its DSN. Without PostgreSQL installed
// the test skips, or under CI (CI=true) fails.
func (s *Systems) Postgres(t *testing.T) string {
	t.Helper()
	s.once.Do(s.start)
	servers.Require(t, s.err)
	dsn, err := s.pg.CreateDatabase(context.Background(), s.name(t))
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

func (s *Systems) start() {
	// Not a test's directory: as root the server runs as nobody, who must
	// reach it, and it outlives every test.
	s.dir, s.err = os.MkdirTemp("", "storetest-postgres")
	if s.err != nil {
		return
	}
	path := filepath.Join(s.dir, "postgres.log")
	log, err := os.Create(path)
	if err != nil {
		s.err = err
		return
	}
	defer log.Close() // the server has its own copy
	s.pg, s.err = servers.StartPostgres(context.Background(), s.dir, log)
	if s.err != nil {
		out, _ := os.ReadFile(path)
		s.err = fmt.Errorf("%w\n%s", s.err, out)
	}
}

// name is a new database's name: a number, then the test's name as far as
// it fits (PostgreSQL keeps 63 bytes of a name).
func (s *Systems) name(t *testing.T) string {
	clean := strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return unicode.ToLower(r)
		}
		return '_'
	}, t.Name())
	name := fmt.Sprintf("t%d_%s", s.made.Add(1), clean)
	return name[:min(len(name), 63)]
}
