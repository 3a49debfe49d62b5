package data

import (
	"bufio"
	"cmp"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite testdata/digest.golden with the digests of the data generated now")

// small has a huge tenant and a few others, with several INSERT statements'
// worth of visits.
var small = Config{Seed: 7, Tenants: 6, HugePlayers: 150, HugeCompetitions: 4,
	MinPlayers: 3, MaxPlayers: 30, MinCompetitions: 1, MaxCompetitions: 5}

func initial(t *testing.T, c Config) *Initial {
	t.Helper()
	in, err := c.Initial()
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestDeterministic(t *testing.T) {
	a, b := initial(t, small), initial(t, small)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two generations of the same config differ")
	}
	other := small
	other.Seed++
	if reflect.DeepEqual(a, initial(t, other)) {
		t.Error("another seed gives the same data")
	}
	// A tenant depends on the seed and its id alone, and its ids on the tenants
	// before it.
	more := small
	more.Tenants++
	m := initial(t, more)
	if !reflect.DeepEqual(a.Tenants, m.Tenants[:small.Tenants]) {
		t.Error("adding a tenant changed the others")
	}
	d1, err := small.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := small.Digest(); d1 != d2 {
		t.Error("two digests of the same config differ")
	}
	if d3, _ := other.Digest(); d1 == d3 {
		t.Error("another seed gives the same digest")
	}
}

var tenantName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,61}[a-z0-9]$`)

// forbidden are the characters no generated text may hold: the dump does not
// escape.
const forbidden = "'\\;\r\n\t"

// checkText checks a name or title against the manual's rules and the dump's.
func checkText(t *testing.T, what, s string, maxLen int) {
	t.Helper()
	n := utf8.RuneCountInString(s)
	if n < 1 || n > maxLen || strings.ContainsAny(s, forbidden) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		t.Errorf("%s %q breaks the rules (1 to %d characters, none of %q or control characters)", what, s, maxLen, forbidden)
	}
}

// TestShape checks the default data against what the manual says of it.
func TestShape(t *testing.T) {
	c := Default()
	in := initial(t, c)
	if len(in.Tenants) != 100 || len(in.Tenants[0].Players) != 3000 || len(in.Tenants[0].Competitions) != 12 {
		t.Fatalf("%d tenants, the first with %d players and %d competitions", len(in.Tenants),
			len(in.Tenants[0].Players), len(in.Tenants[0].Competitions))
	}
	if in.VisitRows < 1_000_000 {
		t.Errorf("%d visits, the manual says over a million", in.VisitRows)
	}
	ids := map[int64]bool{}
	names := map[string]bool{}
	var players, disqualified, competitions, finished, ranked int
	for i, tn := range in.Tenants {
		if tn.ID != int64(i+1) || in.Tenant(tn.ID) != &in.Tenants[i] {
			t.Fatalf("tenant %d has id %d", i+1, tn.ID)
		}
		if !tenantName.MatchString(tn.Name) || tn.Name == "admin" || names[tn.Name] {
			t.Errorf("tenant %d: name %q (unique, a host label, not admin)", tn.ID, tn.Name)
		}
		names[tn.Name] = true
		checkText(t, "display name", tn.DisplayName, 64)
		if i > 0 && (len(tn.Players) < c.MinPlayers || len(tn.Players) > c.MaxPlayers ||
			len(tn.Competitions) < c.MinCompetitions || len(tn.Competitions) > c.MaxCompetitions) {
			t.Errorf("tenant %d: %d players, %d competitions", tn.ID, len(tn.Players), len(tn.Competitions))
		}
		last := int64(0)
		for _, p := range tn.Players {
			if p.ID <= last || ids[p.ID] || p.ID >= in.NextID || p.CreatedAt < Start || p.CreatedAt >= End {
				t.Fatalf("tenant %d: player %+v", tn.ID, p)
			}
			last, ids[p.ID] = p.ID, true
			checkText(t, "player name", p.DisplayName, 64)
			players++
			if p.Disqualified {
				disqualified++
			}
		}
		billing := int64(0)
		for _, comp := range tn.Competitions {
			if comp.ID <= last || ids[comp.ID] || comp.ID >= in.NextID || comp.CreatedAt < Start || comp.FinishedAt >= End ||
				(comp.Finished() && comp.FinishedAt <= comp.CreatedAt) {
				t.Fatalf("tenant %d: competition %d created %d finished %d", tn.ID, comp.ID, comp.CreatedAt, comp.FinishedAt)
			}
			last, ids[comp.ID] = comp.ID, true
			checkText(t, "title", comp.Title, 128)
			competitions++
			ranked += len(comp.Ranking)
			if comp.Finished() {
				finished++
				if comp.Uploads < 1 {
					t.Errorf("competition %d finished without scores", comp.ID)
				}
			}
			b := comp.Billing
			if b.Yen != YenPerScored*int64(b.Scored)+YenPerViewer*int64(b.Viewed) ||
				(comp.Finished() && b.Scored != len(comp.Ranking)) || (!comp.Finished() && b != Billing{}) {
				t.Errorf("competition %d: billing %+v with %d ranked, finished %v", comp.ID, b, len(comp.Ranking), comp.Finished())
			}
			billing += b.Yen
			if !slices.IsSortedFunc(comp.Ranking, func(a, b Rank) int {
				return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Row, b.Row))
			}) {
				t.Errorf("competition %d: ranking out of order", comp.ID)
			}
		}
		if billing != tn.Billing() {
			t.Errorf("tenant %d: billing %d, its competitions' sum %d", tn.ID, tn.Billing(), billing)
		}
	}
	if len(ids) != int(in.NextID-1) {
		t.Errorf("%d ids below NextID %d", len(ids), in.NextID)
	}
	share := func(part, whole int) float64 { return float64(part) / float64(whole) }
	if s := share(disqualified, players); s < 0.08 || s > 0.12 {
		t.Errorf("%.1f%% of the players disqualified, want about 10%%", 100*s)
	}
	if s := share(finished, competitions); s < 0.42 || s > 0.58 {
		t.Errorf("%.1f%% of the competitions finished, want about half", 100*s)
	}
	if s := share(ranked, int(in.ScoreRows)); s > 0.5 {
		t.Errorf("%.1f%% of the score rows count, want most of them superseded", 100*s)
	}
	t.Logf("%d players (%d disqualified), %d competitions (%d finished), %d score rows (%d counting), %d visits, next id %d",
		players, disqualified, competitions, finished, in.ScoreRows, ranked, in.VisitRows, in.NextID)
}

// TestFilesAgreeWithInitial writes small's files and reads them back with SQL,
// the way an app does: every tenant, player and competition, each competition's
// ranking by the manual's rules, and each finished competition's bill from the
// score rows and the whole visit history.
func TestFilesAgreeWithInitial(t *testing.T) {
	dir := t.TempDir()
	if err := small.Write(dir); err != nil {
		t.Fatal(err)
	}
	in := initial(t, small)
	admin := open(t, filepath.Join(dir, AdminDB))
	var tenants, visits int64
	var seq int64
	if err := admin.QueryRow("SELECT (SELECT COUNT(*) FROM tenant), (SELECT COUNT(*) FROM visit_history), (SELECT seq FROM sqlite_sequence WHERE name = 'id_generator')").Scan(&tenants, &visits, &seq); err != nil {
		t.Fatal(err)
	}
	if tenants != int64(len(in.Tenants)) || visits != in.VisitRows || seq != in.NextID-1 {
		t.Errorf("admin.db: %d tenants, %d visits, id sequence %d; want %d, %d, %d", tenants, visits, seq, len(in.Tenants), in.VisitRows, in.NextID-1)
	}
	var scoreRows int64
	for _, tn := range in.Tenants {
		var name, display string
		if err := admin.QueryRow("SELECT name, display_name FROM tenant WHERE id = ?", tn.ID).Scan(&name, &display); err != nil || name != tn.Name || display != tn.DisplayName {
			t.Errorf("tenant %d: %q %q %v", tn.ID, name, display, err)
		}
		db := open(t, TenantFile(dir, tn.ID))
		var got []Player
		rows, err := db.Query("SELECT id, display_name, is_disqualified, created_at FROM player ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var p Player
			if err := rows.Scan(&p.ID, &p.DisplayName, &p.Disqualified, &p.CreatedAt); err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
		if !reflect.DeepEqual(got, tn.Players) {
			t.Errorf("tenant %d: the players differ", tn.ID)
		}
		var n int64
		if err := db.QueryRow("SELECT COUNT(*) FROM player_score").Scan(&n); err != nil {
			t.Fatal(err)
		}
		scoreRows += n
		for _, comp := range tn.Competitions {
			var title string
			var finished sql.NullInt64
			var last int
			if err := db.QueryRow("SELECT title, finished_at, last_upload FROM competition WHERE id = ?", comp.ID).Scan(&title, &finished, &last); err != nil {
				t.Fatal(err)
			}
			if title != comp.Title || finished.Int64 != comp.FinishedAt || finished.Valid != comp.Finished() || last != comp.Uploads {
				t.Errorf("competition %d: %q finished %v last upload %d", comp.ID, title, finished, last)
			}
			ranks := sqlRanking(t, db, comp.ID)
			if !slices.Equal(ranks, comp.Ranking) {
				t.Errorf("competition %d: the ranking from the file differs from Initial's", comp.ID)
			}
			if comp.Finished() {
				if b := sqlBilling(t, admin, tn.ID, comp.ID, comp.FinishedAt, ranks); b != comp.Billing {
					t.Errorf("competition %d: billing from the files %+v, Initial says %+v", comp.ID, b, comp.Billing)
				}
			}
		}
	}
	if scoreRows != in.ScoreRows {
		t.Errorf("%d score rows in the files, Initial says %d", scoreRows, in.ScoreRows)
	}
}

func open(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sqlRanking reads a competition's ranking from its tenant's file: the last
// upload, the last row of each player, higher scores first, then earlier rows.
func sqlRanking(t *testing.T, db *sql.DB, competition int64) []Rank {
	t.Helper()
	rows, err := db.Query(`SELECT player_id, score, row_num FROM player_score WHERE competition_id = ?1
		AND upload = (SELECT last_upload FROM competition WHERE id = ?1) ORDER BY row_num DESC`, competition)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[int64]bool{}
	var ranks []Rank
	for rows.Next() {
		var r Rank
		if err := rows.Scan(&r.PlayerID, &r.Score, &r.Row); err != nil {
			t.Fatal(err)
		}
		if !seen[r.PlayerID] {
			seen[r.PlayerID] = true
			ranks = append(ranks, r)
		}
	}
	slices.SortStableFunc(ranks, func(a, b Rank) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Row, b.Row)) })
	return ranks
}

func sqlBilling(t *testing.T, admin *sql.DB, tenant, competition, finishedAt int64, ranks []Rank) Billing {
	t.Helper()
	scored := map[int64]bool{}
	for _, r := range ranks {
		scored[r.PlayerID] = true
	}
	rows, err := admin.Query("SELECT player_id, MIN(created_at) FROM visit_history WHERE tenant_id = ? AND competition_id = ? GROUP BY player_id", tenant, competition)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	b := Billing{Scored: len(scored)}
	for rows.Next() {
		var player, first int64
		if err := rows.Scan(&player, &first); err != nil {
			t.Fatal(err)
		}
		if first <= finishedAt && !scored[player] {
			b.Viewed++
		}
	}
	b.Yen = YenPerScored*int64(b.Scored) + YenPerViewer*int64(b.Viewed)
	return b
}

// TestDumpIsTheAdminDB loads the MariaDB dump into an empty SQLite database and
// compares it with admin.db.
func TestDumpIsTheAdminDB(t *testing.T) {
	dir := t.TempDir()
	if err := small.Write(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, AdminDump))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, "loaded.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(adminSQLiteSchema); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	if header := sc.Text(); header != "-- "+small.header() {
		t.Errorf("the dump starts with %q", header)
	}
	var stmt strings.Builder
	statements := 0
	for sc.Scan() {
		stmt.WriteString(sc.Text() + "\n")
		if strings.HasSuffix(sc.Text(), ");") {
			if _, err := db.Exec(stmt.String()); err != nil {
				t.Fatalf("statement %d: %v", statements+1, err)
			}
			statements++
			stmt.Reset()
		}
	}
	if stmt.Len() != 0 || statements < 3 {
		t.Errorf("%d statements, %q left over", statements, stmt.String())
	}
	sum := func(db *sql.DB) string {
		var s string
		if err := db.QueryRow(`SELECT (SELECT group_concat(id || name || display_name || created_at, ',') FROM tenant) || ':' ||
			(SELECT COUNT(*) || '/' || SUM(player_id * 3 + tenant_id * 5 + competition_id * 7 + created_at) FROM visit_history)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got, want := sum(db), sum(open(t, filepath.Join(dir, AdminDB))); got != want {
		t.Errorf("the dump holds %.100s..., admin.db %.100s...", got, want)
	}
}

// TestSchemasAreTheApps checks that the SQLite files are made with the schemas
// the apps run.
func TestSchemasAreTheApps(t *testing.T) {
	for file, schema := range map[string]string{"admin.sqlite.sql": adminSQLiteSchema, "tenant.sql": tenantSchema} {
		b, err := os.ReadFile(filepath.Join("..", "webapp", "sql", file))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != schema {
			t.Errorf("webapp/sql/%s differs from the generator's copy in schema.go", file)
		}
	}
}

func TestEnsure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "initial")
	tiny := Config{Seed: 1, Tenants: 2, HugePlayers: 5, HugeCompetitions: 2, MinPlayers: 1, MaxPlayers: 3, MinCompetitions: 1, MaxCompetitions: 2}
	for i, want := range []bool{true, false} {
		if wrote, err := Ensure(dir, tiny); err != nil || wrote != want {
			t.Fatalf("Ensure call %d = %v, %v; want %v", i+1, wrote, err, want)
		}
	}
	for _, f := range []string{AdminDB, AdminDump, "VERSION", TenantFile(".", 1), TenantFile(".", 2)} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	other := tiny
	other.Tenants = 1
	if wrote, err := Ensure(dir, other); err != nil || !wrote {
		t.Fatalf("Ensure with another config = %v, %v; want a rewrite", wrote, err)
	}
	if _, err := os.Stat(TenantFile(dir, 2)); err == nil {
		t.Error("a rewrite kept a tenant of the old data")
	}
	if _, err := Ensure(dir, Config{}); err == nil {
		t.Error("an empty config was accepted")
	}
}

// TestGolden pins the digest of the rows of small's data and of the default
// data: a change to the generator that changes them must bump Version, and then
// refresh testdata/digest.golden with -update.
func TestGolden(t *testing.T) {
	configs := []struct {
		name string
		c    Config
	}{{"small", small}, {"default", Default()}}
	var b strings.Builder
	for _, x := range configs {
		d, err := x.c.Digest()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s v%d %s\n", x.name, Version, d)
	}
	path := filepath.Join("testdata", "digest.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("the data's digests are\n%s\ntestdata/digest.golden says\n%s\nIf the change is meant, bump Version and run go test -update.", b.String(), want)
	}
}

func TestRunNames(t *testing.T) {
	c := Default()
	for n := range uint64(200) {
		checkText(t, "name", c.Name(n), 64)
		checkText(t, "title", c.Title(n), 128)
	}
	if c.Name(3) != c.Name(3) || c.Title(3) != c.Title(3) || c.Title(3) == c.Title(4) {
		t.Error("run names are not a function of n")
	}
}

// ExampleConfig_Initial prints the huge tenant's host label, one of its players
// and a finished competition's bill: what to make tokens for when using the app
// by hand.
func ExampleConfig_Initial() {
	in, err := Default().Initial()
	if err != nil {
		panic(err)
	}
	t := in.Tenant(1)
	p := t.Players[0]
	fmt.Println(t.Name, len(t.Players), "players")
	fmt.Println("player", p.ID, p.DisplayName)
	for _, c := range t.Competitions {
		if c.Finished() {
			fmt.Println("competition", c.ID, c.Title, "billing", c.Billing.Yen)
			break
		}
	}
	fmt.Println("tenant billing", t.Billing(), "next id", in.NextID)
	// Output:
	// hidden-owls-1 3000 players
	// player 1 Wade Kim
	// competition 3001 Preseason Trials #1 billing 271230
	// tenant billing 813530 next id 14769
}

// TestAppsKnowTheData checks the constants by which the reference apps' POST
// /initialize restores the initial data: the number of tenants, End and NextID.
func TestAppsKnowTheData(t *testing.T) {
	in := initial(t, Default())
	want := map[string]int64{"tenants": int64(len(in.Tenants)), "end": End, "next id": in.NextID}
	for file, names := range map[string][3]string{
		"../webapp/go/main.go":    {"initialTenants", "initialEnd", "initialNextID"},
		"../webapp/python/app.py": {"INITIAL_TENANTS", "INITIAL_END", "INITIAL_NEXT_ID"},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, what := range []string{"tenants", "end", "next id"} {
			re := regexp.MustCompile(`(?m)^\s*` + names[i] + `\s*=\s*(\d+)\s*$`)
			m := re.FindSubmatch(b)
			if m == nil || string(m[1]) != fmt.Sprint(want[what]) {
				t.Errorf("%s: %s is %q, the data's %s is %d", file, names[i], m, what, want[what])
			}
		}
	}
}
