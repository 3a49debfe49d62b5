package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/riverqueue/river/rivermigrate"

	"github.com/tunecon/tunecon/internal/portal"
)

//go:embed migrations
var migrations embed.FS

// Migration is one step of the portal's own schema: migrations/DIALECT/
// NNNN_name.sql, applied in the order of NNNN.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations lists the embedded schema steps of the store's database system.
func (s *Store) Migrations() ([]Migration, error) { return loadMigrations(s.dialect.migrations) }

func loadMigrations(dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sql")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration %s: want NNNN_name.sql", e.Name())
		}
		data, err := fs.ReadFile(migrations, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(data)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("store: two migrations numbered %d", out[i].Version)
		}
	}
	return out, nil
}

// Migrate brings the schema up to date: the portal's own steps newer than
// those schema_version records, then River's migrations. It runs in one
// transaction, on SQLite an immediate one, on PostgreSQL one that first
// takes an advisory lock, so two processes migrating at once take turns.
// (On PostgreSQL River's migrations commit one by one in transactions of
// their own while that one holds the lock: see riverOwnTxs.) It returns the
// versions it applied of the portal's schema.
func (s *Store) Migrate(ctx context.Context) ([]int, error) { return s.migrate(ctx, 0) }

// migrate is Migrate up to the portal's step upTo (0: every step).
func (s *Store) migrate(ctx context.Context, upTo int) ([]int, error) {
	steps, err := s.Migrations()
	if err != nil {
		return nil, err
	}
	migrator, err := rivermigrate.New(s.RiverDriver(), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("store: River's migrations: %w", err)
	}
	var applied []int
	err = s.InTx(ctx, func(tx *Tx) error {
		if lock := s.dialect.lockMigrations; lock != "" {
			if _, err := tx.exec(ctx, lock); err != nil {
				return fmt.Errorf("store: waiting for another process's migration: %w", err)
			}
		}
		if _, err := tx.exec(ctx, s.dialect.schemaVersion); err != nil {
			return fmt.Errorf("store: schema_version: %w", err)
		}
		current, err := tx.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		for _, m := range steps {
			if m.Version <= current || upTo > 0 && m.Version > upTo {
				continue
			}
			if _, err := tx.exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("store: migration %s: %w", m.Name, err)
			}
			if _, err := tx.exec(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, tx.stamp()); err != nil {
				return fmt.Errorf("store: recording migration %s: %w", m.Name, err)
			}
			applied = append(applied, m.Version)
		}
		if slices.Contains(applied, nameKeyVersion) {
			if err := tx.fillNameKeys(ctx); err != nil {
				return err
			}
		}
		if s.dialect.riverOwnTxs {
			_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
		} else {
			_, err = migrator.MigrateTx(ctx, tx.tx, rivermigrate.DirectionUp, nil)
		}
		if err != nil {
			return fmt.Errorf("store: River's migrations: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// nameKeyVersion is the migration that adds teams.name_key.
const nameKeyVersion = 11

// fillNameKeys gives the teams made before name keys theirs (portal.NameKey),
// oldest first; a team whose name looks like an older one's keeps none.
func (t *Tx) fillNameKeys(ctx context.Context) error {
	rows, err := t.query(ctx, `SELECT id, name FROM teams ORDER BY id`)
	if err != nil {
		return fmt.Errorf("store: reading team names: %w", err)
	}
	keys := map[string]int64{}
	for rows.Next() {
		var (
			id   int64
			name string
		)
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return fmt.Errorf("store: reading team names: %w", err)
		}
		if k := portal.NameKey(name); keys[k] == 0 {
			keys[k] = id
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: reading team names: %w", err)
	}
	for k, id := range keys {
		if _, err := t.exec(ctx, `UPDATE teams SET name_key = ? WHERE id = ?`, k, id); err != nil {
			return fmt.Errorf("store: team %d's name key: %w", id, err)
		}
	}
	return nil
}

// SchemaVersion is the newest version of the portal's schema applied (0 for
// none).
func (q *queries) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := q.queryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: reading the schema version: %w", err)
	}
	return v, nil
}

// CheckSchema reports whether the database's schema is the one this build
// of the portal knows: a worker refuses a database the portal has not
// migrated yet, or one a newer portal migrated past it.
func (s *Store) CheckSchema(ctx context.Context) error {
	steps, err := s.Migrations()
	if err != nil {
		return err
	}
	want := steps[len(steps)-1].Version
	var have int
	err = s.queryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&have)
	switch {
	case s.dialect.missingTable(err):
		have = 0
	case err != nil:
		return fmt.Errorf("store: reading the schema version: %w", err)
	}
	if have != want {
		return &SchemaError{Have: have, Want: want}
	}
	return nil
}

// SchemaError is CheckSchema's refusal: the database's schema is at version
// Have (0: never migrated), this build's at Want. Behind says which way;
// the layers above name the command that migrates.
type SchemaError struct {
	Have, Want int
}

// Behind reports whether the database needs migrating (rather than a newer
// tunecon).
func (e *SchemaError) Behind() bool { return e.Have < e.Want }

func (e *SchemaError) Error() string {
	if e.Behind() {
		return fmt.Sprintf("store: the database's schema is at version %d, this tunecon's at %d: start the portal first (it migrates)", e.Have, e.Want)
	}
	return fmt.Sprintf("store: the database's schema is at version %d, newer than this tunecon's %d: upgrade tunecon", e.Have, e.Want)
}

// ErrorCode is CodeInvalid.
func (e *SchemaError) ErrorCode() portal.Code { return portal.CodeInvalid }
