package data

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the SQLite files are written in pure Go: generating needs no C compiler

	"github.com/tunecon/tunecon/kit/datagen"
)

// The files of the initial data directory that Write fills.
const (
	AdminDB   = "admin.db"        // the admin data, SQLite
	AdminDump = "admin.mysql.sql" // the same rows as a dump for MariaDB
	TenantDir = "tenants"         // ID.db: each tenant's SQLite file
)

// TenantFile returns the path of tenant id's file in the initial data directory
// dir.
func TenantFile(dir string, id int64) string {
	return filepath.Join(dir, TenantDir, strconv.FormatInt(id, 10)+".db")
}

// Ensure writes c's data into dir unless dir already holds data of the same
// version, seed and sizes (its VERSION file says), and reports whether it
// wrote. Other files in dir are removed when it writes.
func Ensure(dir string, c Config) (bool, error) {
	if err := c.validate(); err != nil {
		return false, err
	}
	return datagen.EnsureDir(dir, c.header(), c.Write)
}

// Write writes the initial data into the existing directory dir: AdminDB,
// AdminDump and TenantDir/ID.db for every tenant. The admin data and the
// tenants are written side by side.
func (c Config) Write(dir string) error {
	if err := c.validate(); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, TenantDir), 0o755); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var adminErr, tenantsErr error
	wg.Go(func() { adminErr = c.writeAdmin(dir) })
	wg.Go(func() {
		tenants, _ := c.skeletons()
		for i := range tenants {
			if tenantsErr = c.writeTenant(TenantFile(dir, tenants[i].ID), &tenants[i]); tenantsErr != nil {
				return
			}
		}
	})
	wg.Wait()
	return errors.Join(adminErr, tenantsErr)
}

// writeAdmin writes AdminDB and AdminDump.
func (c Config) writeAdmin(dir string) error {
	tenants, next := c.skeletons()
	db, err := newSQLiteSink(filepath.Join(dir, AdminDB), adminSQLiteSchema)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, AdminDump))
	if err != nil {
		db.close()
		return err
	}
	dump := newDumpSink(f, "-- "+c.header())
	err = c.emitAdmin(sinks{db, dump}, tenants)
	if err == nil {
		// The id generator's AUTOINCREMENT counter: the next REPLACE INTO gets
		// next.
		err = db.table("sqlite_sequence", []string{"name", "seq"}, 1)
	}
	if err == nil {
		err = db.row("id_generator", next-1)
	}
	err = errors.Join(err, db.close(), dump.close(), f.Close())
	return err
}

// writeTenant writes tenant t's SQLite file at path.
func (c Config) writeTenant(path string, t *Tenant) error {
	s, err := newSQLiteSink(path, tenantSchema)
	if err != nil {
		return err
	}
	return errors.Join(c.emitTenant(s, t), s.close())
}

// emitAdmin writes the admin rows: the tenants, then every tenant's visits.
func (c Config) emitAdmin(s sink, tenants []Tenant) error {
	var visits []visit
	for i := range tenants {
		visits = append(visits, c.visits(&tenants[i], false)...)
	}
	if err := s.table("tenant", []string{"id", "name", "display_name", "created_at", "updated_at"}, int64(len(tenants))); err != nil {
		return err
	}
	for _, t := range tenants {
		if err := s.row(t.ID, t.Name, t.DisplayName, t.CreatedAt, t.CreatedAt); err != nil {
			return err
		}
	}
	if err := s.table("visit_history", []string{"player_id", "tenant_id", "competition_id", "created_at"}, int64(len(visits))); err != nil {
		return err
	}
	for _, v := range visits {
		if err := s.row(v.player, v.tenant, v.competition, v.at); err != nil {
			return err
		}
	}
	return nil
}

// emitTenant writes tenant t's rows: players, competitions, then every upload's
// score rows.
func (c Config) emitTenant(s sink, t *Tenant) error {
	scores := c.scores(t)
	if err := s.table("player", []string{"id", "display_name", "is_disqualified", "created_at", "updated_at"}, int64(len(t.Players))); err != nil {
		return err
	}
	for _, p := range t.Players {
		if err := s.row(p.ID, p.DisplayName, btoi(p.Disqualified), p.CreatedAt, p.CreatedAt); err != nil {
			return err
		}
	}
	if err := s.table("competition", []string{"id", "title", "finished_at", "last_upload", "created_at", "updated_at"}, int64(len(t.Competitions))); err != nil {
		return err
	}
	for _, comp := range t.Competitions {
		var finished any // NULL while it runs
		updated := comp.CreatedAt
		if comp.Finished() {
			finished, updated = comp.FinishedAt, comp.FinishedAt
		}
		if err := s.row(comp.ID, comp.Title, finished, int64(comp.Uploads), comp.CreatedAt, updated); err != nil {
			return err
		}
	}
	if err := s.table("player_score", []string{"id", "competition_id", "upload", "row_num", "player_id", "score", "created_at"}, int64(len(scores))); err != nil {
		return err
	}
	for i, r := range scores {
		if err := s.row(int64(i+1), r.competition, int64(r.upload), int64(r.row), r.player, r.score, r.at); err != nil {
			return err
		}
	}
	return nil
}

// Digest returns the SHA-256 of the initial data's rows, in hex: of the admin
// dump followed by each tenant's rows written as a dump. It changes exactly
// when the rows Write writes change, whatever SQLite's file format does.
func (c Config) Digest() (string, error) {
	if err := c.validate(); err != nil {
		return "", err
	}
	h := sha256.New()
	tenants, _ := c.skeletons()
	admin := newDumpSink(h, "-- "+c.header())
	if err := errors.Join(c.emitAdmin(admin, tenants), admin.close()); err != nil {
		return "", err
	}
	for i := range tenants {
		s := newDumpSink(h, "-- tenant "+strconv.FormatInt(tenants[i].ID, 10))
		if err := errors.Join(c.emitTenant(s, &tenants[i]), s.close()); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// A sink takes a database's rows, table by table. A row's values are int64,
// string or nil (NULL).
type sink interface {
	table(name string, cols []string, rows int64) error
	row(vals ...any) error
	close() error
}

// sinks writes the same rows to several sinks.
type sinks []sink

func (ss sinks) table(name string, cols []string, rows int64) error {
	for _, s := range ss {
		if err := s.table(name, cols, rows); err != nil {
			return err
		}
	}
	return nil
}

func (ss sinks) row(vals ...any) error {
	for _, s := range ss {
		if err := s.row(vals...); err != nil {
			return err
		}
	}
	return nil
}

func (ss sinks) close() error {
	var errs []error
	for _, s := range ss {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// dumpSink writes rows as a dump (see datagen.SQLWriter): valid SQL for MariaDB
// and SQLite.
type dumpSink struct{ sw *datagen.SQLWriter }

func newDumpSink(w io.Writer, header string) *dumpSink {
	return &dumpSink{datagen.NewSQLWriter(w, header)}
}

func (d *dumpSink) table(name string, cols []string, rows int64) error {
	d.sw.Table("INSERT INTO "+name+" ("+strings.Join(cols, ", ")+") VALUES", rows)
	return nil
}

func (d *dumpSink) row(vals ...any) error {
	b := append(d.sw.Buf(), '(')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		switch v := v.(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case string:
			b = datagen.AppendQuoted(b, v)
		case nil:
			b = append(b, "NULL"...)
		default:
			return fmt.Errorf("leagues data: a value of type %T", v)
		}
	}
	return d.sw.Row(append(b, ')'))
}

func (d *dumpSink) close() error { return d.sw.Close() }

// rowsPerStatement is how many rows one prepared INSERT of a sqliteSink holds.
const rowsPerStatement = 100

// sqliteSink writes rows into a new SQLite file, in one transaction, without a
// journal: a file that fails half way is thrown away with its directory.
type sqliteSink struct {
	db     *sql.DB
	tx     *sql.Tx
	insert string // "INSERT INTO name (cols) VALUES "
	cols   int
	batch  *sql.Stmt // the statement of rowsPerStatement rows
	args   []any
}

// newSQLiteSink creates the SQLite file path with schema.
func newSQLiteSink(path, schema string) (*sqliteSink, error) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	s := &sqliteSink{db: db}
	for _, q := range []string{"PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF", schema} {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if s.tx, err = db.Begin(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *sqliteSink) table(name string, cols []string, _ int64) error {
	if err := s.flush(); err != nil {
		return err
	}
	s.insert = "INSERT INTO " + name + " (" + strings.Join(cols, ", ") + ") VALUES "
	s.cols = len(cols)
	var err error
	s.batch, err = s.tx.Prepare(s.insert + placeholders(s.cols, rowsPerStatement))
	return err
}

func (s *sqliteSink) row(vals ...any) error {
	if len(vals) != s.cols {
		return fmt.Errorf("leagues data: %d values for %d columns", len(vals), s.cols)
	}
	s.args = append(s.args, vals...)
	if len(s.args) < s.cols*rowsPerStatement {
		return nil
	}
	_, err := s.batch.Exec(s.args...)
	s.args = s.args[:0]
	return err
}

// flush writes the rows left of the current table and closes its statement.
func (s *sqliteSink) flush() error {
	var err error
	if len(s.args) > 0 {
		_, err = s.tx.Exec(s.insert+placeholders(s.cols, len(s.args)/s.cols), s.args...)
		s.args = s.args[:0]
	}
	if s.batch != nil {
		err = errors.Join(err, s.batch.Close())
		s.batch = nil
	}
	return err
}

func (s *sqliteSink) close() error {
	err := s.flush()
	if err == nil {
		err = s.tx.Commit()
	} else {
		_ = s.tx.Rollback()
	}
	return errors.Join(err, s.db.Close())
}

// placeholders returns rows groups of cols question marks: "(?,?),(?,?)".
func placeholders(cols, rows int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	return strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
