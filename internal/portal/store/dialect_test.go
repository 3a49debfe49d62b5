package store

import (
	"fmt"
	"slices"
	"testing"
)

func TestRebindDollar(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b IN (?, ?)`, `SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)`},
		{`UPDATE t SET a = ?, b = 'what?' WHERE c = ?`, `UPDATE t SET a = $1, b = 'what?' WHERE c = $2`},
		{`SELECT 'it''s?', ? FROM t`, `SELECT 'it''s?', $1 FROM t`},
		{`SELECT "odd?name" FROM t WHERE a = ?`, `SELECT "odd?name" FROM t WHERE a = $1`},
		{"SELECT ? -- why?\nFROM t WHERE a = ?", "SELECT $1 -- why?\nFROM t WHERE a = $2"},
		{`SELECT ? /* why? */ FROM t WHERE a = ?`, `SELECT $1 /* why? */ FROM t WHERE a = $2`},
		{`SELECT ?, 'unterminated ?`, `SELECT $1, 'unterminated ?`},
		{`SELECT ? -- to the end?`, `SELECT $1 -- to the end?`},
		{`SELECT ?/* open?`, `SELECT $1/* open?`},
		{`a=?&b=?`, `a=$1&b=$2`},
		{`?`, `$1`},
		{`???????????`, `$1$2$3$4$5$6$7$8$9$10$11`},
		{`SELECT 'é?', ?`, `SELECT 'é?', $1`},
	} {
		if got := rebindDollar(c.in); got != c.want {
			t.Errorf("rebindDollar(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDialectsHaveTheSameSteps: each step of the schema is written for
// every database system, under the same version and name.
func TestDialectsHaveTheSameSteps(t *testing.T) {
	sqlite, err := loadMigrations(sqliteDialect.migrations)
	if err != nil {
		t.Fatal(err)
	}
	postgres, err := loadMigrations(postgresDialect.migrations)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ms []Migration) []string {
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%04d %s", m.Version, m.Name))
		}
		return out
	}
	if a, b := names(sqlite), names(postgres); !slices.Equal(a, b) {
		t.Errorf("SQLite's steps %q, PostgreSQL's %q", a, b)
	}
}
