package main

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func flock(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// TestSteps measures, on copies of the initial data (../../webapp/data/initial, which `tunecon serve leagues`
// writes), what each optimisation of ../README.md buys on its own, with the SQL a contestant would write: set
// LEAGUES_STEPS=1 to run it. Each figure is the median of several runs of the work of one request.
func TestSteps(t *testing.T) {
	if os.Getenv("LEAGUES_STEPS") == "" {
		t.Skip("set LEAGUES_STEPS=1 to measure")
	}
	initial := "../../webapp/data/initial"
	dir := t.TempDir()
	for _, f := range []string{"admin.db", "tenants/1.db"} {
		if err := copyTo(filepath.Join(initial, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	open := func(name string) *sql.DB {
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, name)+"?_busy_timeout=5000")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	admin, tenant := open("admin.db"), open("tenants/1.db")
	report := &strings.Builder{}
	measure := func(what string, n int, f func() error) time.Duration {
		var ds []time.Duration
		for i := range n + 1 {
			start := time.Now()
			if err := f(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if i > 0 { // the first warms the cache
				ds = append(ds, time.Since(start))
			}
		}
		slices.Sort(ds)
		fmt.Fprintf(report, "| %s | %s |\n", what, dur(ds[len(ds)/2]))
		return ds[len(ds)/2]
	}
	exec := func(db *sql.DB, q string) {
		start := time.Now()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintf(report, "| (once) `%s` | %s |\n", q, dur(time.Since(start)))
	}
	count := func(db *sql.DB, q string, args ...any) int {
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}

	// 1. A finished competition's bill: the huge tenant's 3010 (the reference's query), then every finished
	// competition of the huge tenant (its organizer's bill).
	const finished = 3010
	var finishedAt, lastUpload int64
	tenant.QueryRow("SELECT finished_at, last_upload FROM competition WHERE id = ?", finished).Scan(&finishedAt, &lastUpload)
	scored := map[int64]bool{}
	scores := func() error {
		rows, err := tenant.Query("SELECT player_id FROM player_score WHERE competition_id = ? AND upload = ?", finished, lastUpload)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p int64
			rows.Scan(&p)
			scored[p] = true
		}
		return rows.Err()
	}
	bill := func(visits string) func() error {
		return func() error {
			rows, err := admin.Query(visits, finished)
			if err != nil {
				return err
			}
			defer rows.Close()
			viewed := 0
			for rows.Next() {
				var p, first int64
				rows.Scan(&p, &first)
				if first <= finishedAt && !scored[p] {
					viewed++
				}
			}
			return rows.Err()
		}
	}
	fmt.Fprintf(report, "visit_history: %d rows\n\n| work of one request | median |\n|---|---|\n", count(admin, "SELECT COUNT(*) FROM visit_history"))
	measure("bill of one finished competition (huge tenant): its scored players, the reference's query (every row of the last upload, no index)", 9, scores)
	full := "SELECT player_id, MIN(created_at) FROM visit_history WHERE tenant_id = 1 AND competition_id = ? GROUP BY player_id"
	measure("… and its viewers, the reference's query (the whole visit history, no index)", 5, bill(full))
	exec(admin, "CREATE INDEX visit_by_competition ON visit_history (tenant_id, competition_id, player_id, created_at)")
	measure("… its viewers, with an index on visit_history (tenant_id, competition_id, player_id, created_at)", 21, bill(full))
	exec(admin, "DROP INDEX visit_by_competition")
	exec(admin, "CREATE TABLE first_visit (competition_id INTEGER, player_id INTEGER, created_at INTEGER, PRIMARY KEY (competition_id, player_id)) WITHOUT ROWID")
	exec(admin, "INSERT INTO first_visit SELECT competition_id, player_id, MIN(created_at) FROM visit_history GROUP BY competition_id, player_id")
	fmt.Fprintf(report, "| (first visits only: %d rows) | |\n", count(admin, "SELECT COUNT(*) FROM first_visit"))
	measure("… its viewers, from the first visits only (primary key (competition_id, player_id))", 21,
		bill("SELECT player_id, created_at FROM first_visit WHERE competition_id = ?"))

	// 2. The ranking of 3003, the running competition with the most uploads (5: 12,724 rows, 3,707 in the last).
	const running = 3003
	tenant.QueryRow("SELECT last_upload FROM competition WHERE id = ?", running).Scan(&lastUpload)
	type entry struct {
		player, score, row int64
		name               string
	}
	rankingN1 := func() error {
		rows, err := tenant.Query("SELECT player_id, score, row_num FROM player_score WHERE competition_id = ? AND upload = ? ORDER BY row_num DESC", running, lastUpload)
		if err != nil {
			return err
		}
		var all []entry
		seen := map[int64]bool{}
		for rows.Next() {
			var e entry
			rows.Scan(&e.player, &e.score, &e.row)
			if !seen[e.player] {
				seen[e.player] = true
				all = append(all, e)
			}
		}
		rows.Close()
		for i := range all {
			if err := tenant.QueryRow("SELECT display_name FROM player WHERE id = ?", all[i].player).Scan(&all[i].name); err != nil {
				return err
			}
		}
		return nil
	}
	joined := func(q string) func() error {
		return func() error {
			rows, err := tenant.Query(q, running, lastUpload)
			if err != nil {
				return err
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var e entry
				rows.Scan(&e.player, &e.score, &e.row, &e.name)
				n++
			}
			return rows.Err()
		}
	}
	fmt.Fprintf(report, "| (player_score of the huge tenant: %d rows) | |\n", count(tenant, "SELECT COUNT(*) FROM player_score"))
	measure("ranking of the biggest running competition (huge tenant), the reference's way: all rows of the last upload, then one query per player", 9, rankingN1)
	lastRows := "SELECT s.player_id, s.score, s.row_num, p.display_name FROM player_score s JOIN player p ON p.id = s.player_id " +
		"WHERE s.competition_id = ? AND s.upload = ? ORDER BY s.row_num DESC"
	measure("the same rows with the names in one join: no N+1", 9, joined(lastRows))
	exec(tenant, "CREATE INDEX score_by_upload ON player_score (competition_id, upload, row_num)")
	measure("the same join, with an index on player_score (competition_id, upload, row_num)", 21, joined(lastRows))
	exec(tenant, "CREATE TABLE latest_score (competition_id INTEGER, player_id INTEGER, row_num INTEGER, score INTEGER, PRIMARY KEY (competition_id, player_id)) WITHOUT ROWID")
	exec(tenant, "INSERT INTO latest_score SELECT s.competition_id, s.player_id, MAX(s.row_num), 0 FROM player_score s JOIN competition c "+
		"ON c.id = s.competition_id AND s.upload = c.last_upload GROUP BY s.competition_id, s.player_id")
	exec(tenant, "UPDATE latest_score SET score = (SELECT s.score FROM player_score s JOIN competition c ON c.id = s.competition_id "+
		"WHERE s.competition_id = latest_score.competition_id AND s.upload = c.last_upload AND s.row_num = latest_score.row_num)")
	fmt.Fprintf(report, "| (latest scores only: %d rows) | |\n", count(tenant, "SELECT COUNT(*) FROM latest_score"))
	latest := "SELECT s.player_id, s.score, s.row_num, p.display_name FROM latest_score s JOIN player p ON p.id = s.player_id " +
		"WHERE s.competition_id = ? AND ? > 0 ORDER BY s.score DESC, s.row_num LIMIT 100"
	measure("the first page from the latest score per player, sorted by SQL (ORDER BY score DESC, row_num LIMIT 100)", 21, joined(latest))

	// The tuned app: the latest scores in memory, sorted once per upload; a read writes one page.
	var mem []rankEntry
	rows, err := tenant.Query("SELECT s.player_id, s.score, s.row_num, p.display_name FROM latest_score s JOIN player p ON p.id = s.player_id WHERE s.competition_id = ?", running)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, score, row int64
		var name string
		rows.Scan(&id, &score, &row, &name)
		mem = append(mem, rankEntry{player: newPlayer(playerRow{id: id, displayName: name}), score: score, row: row})
	}
	rows.Close()
	var r *ranking
	measure(fmt.Sprintf("the tuned app, once per upload: sort the %d latest scores in memory", len(mem)), 101, func() error {
		r = newRanking(slices.Clone(mem))
		return nil
	})
	buf := make([]byte, 0, 16<<10)
	measure("the tuned app, per read: write the first page of the sorted ranking", 1001, func() error {
		buf = appendRanks(buf[:0], r, 0)
		return nil
	})
	c := newCompetition(competitionRow{id: running, tenantID: 1, title: "x"})
	c.ranking.Store(r)
	for i := range int64(3000) { // 80% of the huge tenant's players read a competition's ranking in the initial data
		if i%5 != 0 {
			c.visits[mem[0].player.id+i] = 1
		}
	}
	measure(fmt.Sprintf("the tuned app, once per finish: the bill from %d first visits in memory", len(c.visits)), 101, func() error {
		c.bill(2)
		return nil
	})

	// 3. What the reference does on every request to a tenant: open its file (the first query reads the schema).
	measure("open a tenant's SQLite file and read one player (the reference, every request)", 21, func() error {
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "tenants/1.db")+"?_busy_timeout=5000")
		if err != nil {
			return err
		}
		defer db.Close()
		var name string
		return db.QueryRow("SELECT display_name FROM player WHERE id = 1").Scan(&name)
	})
	measure("read one player on a connection kept open", 101, func() error {
		var name string
		return tenant.QueryRow("SELECT display_name FROM player WHERE id = 1").Scan(&name)
	})
	lock := filepath.Join(dir, "1.lock")
	measure("take and release the tenant's file lock, uncontended (the reference, every write)", 101, func() error {
		f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		return flock(f)
	})
	t.Logf("on the initial data:\n%s", report.String())
}

func copyTo(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3f ms", float64(d)/1e6)
}
