package cli_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/problems/example"
)

// TestAdminImport: `tunecon portal admin import` imports a team file as the
// admin page does: the new accounts' sign-in links on stdout as CSV, what
// it did on stderr; the same file again changes nothing; a file with
// problems lists each by line, imports nothing and exits 1.
func TestAdminImport(t *testing.T) {
	t.Parallel()
	dsn, s := contestDB(t, portal.Contest{Problem: example.Name})
	dir := t.TempDir()
	file := filepath.Join(dir, "teams.csv")
	teams := "team,members,servers\nFast Cats,alice:Alice Liddell <alice@example.org>;bob,10.1.0.11;app2=10.1.0.12:8080\n"
	if err := os.WriteFile(file, []byte(teams), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"portal", "admin", "import", "--db", dsn, "--file", file, "--url", "https://portal.example/"}
	code, out, stderr := run(t, args...)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 3 || rows[1][0] != "Fast Cats" || rows[1][1] != "alice" || rows[1][3] != "alice@example.org" ||
		!strings.HasPrefix(rows[2][4], "https://portal.example/signin/") || !strings.Contains(stderr, "teams: 1 created") {
		t.Fatalf("the import: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	if servers, err := s.Servers(context.Background()); err != nil || len(servers) != 2 {
		t.Errorf("servers %+v, %v", servers, err)
	}
	code, out, stderr = run(t, args...)
	if code != 0 || out != "team,login,name,email,link,expires\n" || !strings.Contains(stderr, "teams: 0 created, 0 updated, 1 unchanged") {
		t.Errorf("the same file again: exit %d\n%s%s", code, out, stderr)
	}

	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("team,members,servers\nNew,alice,\nOther,Bad Login,10.1.0.30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = run(t, "portal", "admin", "import", "--db", dsn, "--file", bad)
	if code != cli.ExitFail || out != "" || !strings.Contains(stderr, "  line 2: ") || !strings.Contains(stderr, "  line 3: ") {
		t.Errorf("a bad file: exit %d\n%s%s", code, out, stderr)
	}
	if teams, err := s.Teams(context.Background()); err != nil || len(teams) != 1 {
		t.Errorf("after a bad file: teams %+v, %v", teams, err)
	}
}
