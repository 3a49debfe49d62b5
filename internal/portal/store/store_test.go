package store_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for rawDB

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// systems are the database systems the tests run on (storetest.Systems.Run):
// TestMain makes them, and stops PostgreSQL's private server at the end.
var systems *storetest.Systems

func TestMain(m *testing.M) {
	systems = storetest.New()
	code := m.Run()
	systems.Close()
	os.Exit(code)
}

// open opens the database at dsn and migrates it.
func open(t *testing.T, dsn string, now func() time.Time) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// openStores opens n stores on one database, not migrated: as n processes
// would.
func openStores(t *testing.T, dsn string, n int) []*store.Store {
	t.Helper()
	stores := make([]*store.Store, n)
	for i := range stores {
		s, err := store.Open(context.Background(), dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	return stores
}

func TestOpenRefusesOtherDatabases(t *testing.T) {
	ctx := context.Background()
	t.Setenv("PGDATABASE", "") // pgx would take the missing database's name from it
	for dsn, code := range map[string]portal.Code{
		"postgres://u@localhost:notaport/contest": portal.CodeInvalid,
		"postgresql://u@localhost":                portal.CodeInvalid, // no database
		"mysql://u@localhost/contest":             portal.CodeInvalid,
		"sqlite:":                                 portal.CodeInvalid,
		"sqlite:x.db?mode=memory":                 portal.CodeInvalid,
		"portal.db":                               portal.CodeInvalid,
	} {
		_, err := store.Open(ctx, dsn, store.Options{})
		if portal.ErrorCode(err) != code {
			t.Errorf("%s: %v (code %q), want code %q", dsn, err, portal.ErrorCode(err), code)
		}
	}
	_, err := store.Open(ctx, "mysql://u@localhost/contest", store.Options{})
	if err == nil || !strings.Contains(err.Error(), "want sqlite:PATH or postgres://USER@HOST/DB") {
		t.Errorf("the error does not say which databases there are: %v", err)
	}
	// A password in a DSN stays out of the messages.
	_, err = store.Open(ctx, "postgres://u:secret@localhost:notaport/contest", store.Options{})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("a bad DSN with a password: %v", err)
	}
}

func TestMigrateIsVersionedAndIdempotent(t *testing.T) {
	systems.Run(t, testMigrateIsVersionedAndIdempotent)
}

func testMigrateIsVersionedAndIdempotent(t *testing.T, db storetest.System) {
	ctx := context.Background()
	dsn := db.NewDSN(t)
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckSchema(ctx); portal.ErrorCode(err) != portal.CodeInvalid || !strings.Contains(err.Error(), "start the portal first") {
		t.Errorf("an unmigrated database: %v", err)
	}
	steps, err := s.Migrations()
	if err != nil || len(steps) == 0 {
		t.Fatalf("migrations %v, %v", steps, err)
	}
	applied, err := s.Migrate(ctx)
	if err != nil || len(applied) != len(steps) || applied[0] != 1 {
		t.Fatalf("first migrate applied %v, %v", applied, err)
	}
	applied, err = s.Migrate(ctx)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate applied %v, %v", applied, err)
	}
	if err := s.CheckSchema(ctx); err != nil {
		t.Errorf("a migrated database: %v", err)
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != steps[len(steps)-1].Version {
		t.Errorf("schema version %d, %v", v, err)
	}
	// A database a newer portal migrated is refused too.
	raw := rawDB(t, dsn)
	if _, err := raw.Exec(`INSERT INTO schema_version (version, name, applied_at) VALUES (9999, 'future', '2030-01-01 00:00:00')`); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckSchema(ctx); err == nil || !strings.Contains(err.Error(), "upgrade tunecon") {
		t.Errorf("a newer schema: %v", err)
	}
	// River's tables are there: a position query runs.
	if pos, err := s.Position(ctx, 1); err != nil || pos != 0 {
		t.Errorf("position of a missing River job: %d, %v", pos, err)
	}
}

func TestContestAndTeams(t *testing.T) { systems.Run(t, testContestAndTeams) }

func testContestAndTeams(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	if _, err := s.Contest(ctx); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("no contest yet: %v", err)
	}
	want := portal.Contest{
		Problem: "example", LoadDuration: 3 * time.Second,
		Timeline: portal.Timeline{StartsAt: clock.Now(), EndsAt: clock.Now().Add(8 * time.Hour)},
		Settings: portal.Settings{InitializeTimeout: time.Second, Grace: 500 * time.Millisecond, MaxAttempts: 3, Seed: 7,
			LocalTargets: true, TargetNetworks: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("2001:db8::/32")},
			AssignedServers: true},
	}
	if err := s.SetContest(ctx, want); err != nil {
		t.Fatal(err)
	}
	want.LoadDuration = 2 * time.Second
	if err := s.SetContest(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Contest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Problem != want.Problem || got.LoadDuration != want.LoadDuration || !got.StartsAt.Equal(want.StartsAt) ||
		!got.EndsAt.Equal(want.EndsAt) || !got.Settings.Equal(want.Settings) {
		t.Errorf("contest %+v, want %+v", got, want)
	}

	a, err := s.CreateTeam(ctx, "alpha", "http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	if !a.CreatedAt.Equal(clock.Now()) {
		t.Errorf("created at %v, want the injected clock's %v", a.CreatedAt, clock.Now())
	}
	if _, err := s.CreateTeam(ctx, "alpha", ""); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a second alpha: %v", err)
	}
	if err := s.SetTarget(ctx, a.ID, "http://127.0.0.1:2/", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Team(ctx, a.ID); err != nil || got.Target != "http://127.0.0.1:2/" || got.Name != "alpha" {
		t.Errorf("team %+v, %v", got, err)
	}
	if _, err := s.Team(ctx, 99); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("team 99: %v", err)
	}
}

// TestJobTransitions drives a job row through the store's compare-and-set
// updates and checks that every illegal move is refused with a
// *portal.TransitionError and changes nothing.
// TestOneTeamPerHost: a target's host, when kept, is one team's: a second
// team's target on it is a conflict, whatever its port; the team itself may
// change port or path; a target without a host (a contest on one machine)
// is under no such rule.
func TestOneTeamPerHost(t *testing.T) { systems.Run(t, testOneTeamPerHost) }

func testOneTeamPerHost(t *testing.T, db storetest.System) {
	ctx := context.Background()
	s := open(t, db.NewDSN(t), time.Now)
	a, err := s.CreateTeam(ctx, "alpha", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateTeam(ctx, "beta", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTarget(ctx, a.ID, "http://10.0.0.1:8080/", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTarget(ctx, b.ID, "http://10.0.0.1:9090/", "10.0.0.1"); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a second team on 10.0.0.1: %v", err)
	}
	if got, err := s.Team(ctx, b.ID); err != nil || got.Target != "" {
		t.Errorf("the refused target was kept: %+v, %v", got, err)
	}
	if err := s.SetTarget(ctx, a.ID, "http://10.0.0.1:9090/app/", "10.0.0.1"); err != nil {
		t.Errorf("the same team on another port: %v", err)
	}
	for _, id := range []int64{a.ID, b.ID} {
		if err := s.SetTarget(ctx, id, "http://127.0.0.1:8080/", ""); err != nil {
			t.Errorf("team %d on one machine: %v", id, err)
		}
	}
	if err := s.SetTarget(ctx, b.ID, "http://10.0.0.1/", "10.0.0.1"); err != nil {
		t.Errorf("a host its team left: %v", err)
	}
}

func TestJobTransitions(t *testing.T) { systems.Run(t, testJobTransitions) }

func testJobTransitions(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	team, err := s.CreateTeam(ctx, "alpha", "http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	insert := func(riverID int64) portal.Job {
		t.Helper()
		j, err := s.InsertJob(ctx, store.NewJob{TeamID: team.ID, Problem: "example", Target: team.Target, MaxAttempts: 2,
			Deadline: time.Minute, RiverJobID: riverID})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	tx := func(f func(*store.Tx) error) error { return s.InTx(ctx, f) }
	end := func(id int64, attempt int, e portal.Ending) error {
		return tx(func(tx *store.Tx) error { _, err := tx.EndJob(ctx, id, attempt, e); return err })
	}
	begin := func(id int64, worker string) error {
		return tx(func(tx *store.Tx) error { _, err := tx.BeginAttempt(ctx, id, worker); return err })
	}
	refused := func(what string, err error, from, to portal.JobState) {
		t.Helper()
		var te *portal.TransitionError
		if !errors.As(err, &te) || te.From != from || te.To != to || portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("%s: %v, want a refused %s -> %s", what, err, from, to)
		}
	}
	finished := portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 42, Result: []byte(`{"score":42}`)}
	errored := portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonInternal, Error: "boom"}
	cancelled := portal.Ending{State: portal.JobCancelled, ErrorCode: portal.ReasonCancelled}

	// queued -> running -> finished, with progress in between.
	j := insert(1)
	if j.State != portal.JobQueued || j.Attempts != 0 || !j.CreatedAt.Equal(clock.Now()) {
		t.Fatalf("new job %+v", j)
	}
	// A second active job of the team is refused by the database.
	if _, err := s.InsertJob(ctx, store.NewJob{TeamID: team.ID, Problem: "example", Target: team.Target, MaxAttempts: 2, RiverJobID: 2}); err == nil {
		t.Error("a second active job for one team was inserted")
	} else if _, ok := errors.AsType[*portal.TeamHasJobError](err); !ok {
		t.Errorf("a second active job: %v", err)
	}
	refused("queued -> finished", end(j.ID, 0, finished), portal.JobQueued, portal.JobFinished)
	clock.Add(time.Second)
	if err := begin(j.ID, "w1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.UpdateProgress(ctx, j.ID, 1, portal.Progress{Phase: "load", Score: 10, Requests: 100, Errors: 1, Users: 3}); !ok || err != nil {
		t.Fatalf("progress: %v, %v", ok, err)
	}
	if ok, _ := s.UpdateProgress(ctx, j.ID, 2, portal.Progress{Phase: "load"}); ok {
		t.Error("progress of another attempt was written")
	}
	got, _ := s.Job(ctx, j.ID)
	if got.State != portal.JobRunning || got.Worker != "w1" || got.Attempts != 1 || got.Progress.Requests != 100 ||
		!got.Progress.UpdatedAt.Equal(clock.Now()) || !got.StartedAt.Equal(clock.Now()) {
		t.Errorf("running job %+v", got)
	}
	if err := end(j.ID, 2, finished); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("ending another attempt: %v", err)
	}
	if err := end(j.ID, 1, finished); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Job(ctx, j.ID)
	if got.State != portal.JobFinished || got.Verdict != portal.VerdictPassed || got.Score != 42 || string(got.Result) != `{"score":42}` {
		t.Errorf("finished job %+v", got)
	}
	// Nothing leaves a final state.
	for _, to := range []portal.JobState{portal.JobRunning, portal.JobQueued} {
		var err error
		if to == portal.JobRunning {
			err = begin(j.ID, "w2")
		} else {
			err = tx(func(tx *store.Tx) error { return tx.RequeueJob(ctx, j.ID, 0, portal.ReasonLost, "", "") })
		}
		refused("finished -> "+string(to), err, portal.JobFinished, to)
	}
	refused("finished -> errored", end(j.ID, 0, errored), portal.JobFinished, portal.JobErrored)
	refused("finished -> cancelled", end(j.ID, 0, cancelled), portal.JobFinished, portal.JobCancelled)
	if got2, _ := s.Job(ctx, j.ID); got2.State != portal.JobFinished || got2.Score != 42 {
		t.Errorf("a refused change changed the job: %+v", got2)
	}

	// queued -> cancelled; queued -> errored.
	j2 := insert(3)
	if err := end(j2.ID, 0, cancelled); err != nil {
		t.Fatal(err)
	}
	refused("cancelled -> running", begin(j2.ID, "w1"), portal.JobCancelled, portal.JobRunning)
	j3 := insert(4)
	if err := end(j3.ID, 0, errored); err != nil {
		t.Fatal(err)
	}
	refused("errored -> finished", end(j3.ID, 0, finished), portal.JobErrored, portal.JobFinished)

	// running -> queued (a lost attempt) -> running -> running (a lost attempt
	// unnoticed) -> errored; the attempts record each start.
	j4 := insert(5)
	if err := begin(j4.ID, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := tx(func(tx *store.Tx) error { return tx.RequeueJob(ctx, j4.ID, 1, portal.ReasonLost, "rescued", "log 1\n") }); err != nil {
		t.Fatal(err)
	}
	if err := begin(j4.ID, "w2"); err != nil {
		t.Fatal(err)
	}
	if err := begin(j4.ID, "w3"); err != nil {
		t.Fatal(err)
	}
	if err := end(j4.ID, 3, portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonDeadline, StaffLog: "log 3\n"}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Job(ctx, j4.ID)
	if got.State != portal.JobErrored || got.Attempts != 3 || got.Worker != "w3" || got.StaffLog != "log 1\nlog 3\n" {
		t.Errorf("errored job %+v", got)
	}
	attempts, err := s.JobAttempts(ctx, j4.ID)
	if err != nil || len(attempts) != 3 {
		t.Fatalf("attempts %+v, %v", attempts, err)
	}
	for i, want := range []string{portal.ReasonLost, portal.ReasonLost, string(portal.JobErrored)} {
		if attempts[i].Outcome != want || attempts[i].EndedAt.IsZero() {
			t.Errorf("attempt %d: %+v, want outcome %s", i+1, attempts[i], want)
		}
	}

	// Incoherent endings are refused before the database sees them.
	if err := end(insert(6).ID, 0, portal.Ending{State: portal.JobErrored}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("an errored ending without a reason: %v", err)
	}
	jobs, err := s.TeamJobs(ctx, team.ID)
	if err != nil || len(jobs) != 5 || jobs[0].ID < jobs[4].ID {
		t.Errorf("team jobs: %d, %v", len(jobs), err)
	}
}

func TestWorkers(t *testing.T) { systems.Run(t, testWorkers) }

func testWorkers(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	if err := s.StartWorker(ctx, "w1", []string{"example"}); err != nil {
		t.Fatal(err)
	}
	clock.Add(3 * time.Second)
	if err := s.Heartbeat(ctx, "w1", "job 1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CountJob(ctx, "w1", true); err != nil {
		t.Fatal(err)
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 1 {
		t.Fatalf("workers %+v, %v", ws, err)
	}
	w := ws[0]
	if w.Doing != "job 1" || !w.HeartbeatAt.Equal(clock.Now()) || w.HeartbeatAt.Sub(w.StartedAt) != 3*time.Second ||
		w.JobsDone != 1 || w.InternalErrors != 1 || len(w.Problems) != 1 {
		t.Errorf("worker %+v", w)
	}
}

// TestWorkersOpenOnlyWhatExists: with MustExist a missing SQLite file is
// refused and not created (a missing PostgreSQL database is refused with or
// without it: the store never creates one); an unmigrated one gives a
// *store.SchemaError that says which way it is off.
func TestWorkersOpenOnlyWhatExists(t *testing.T) { systems.Run(t, testWorkersOpenOnlyWhatExists) }

func testWorkersOpenOnlyWhatExists(t *testing.T, db storetest.System) {
	ctx := context.Background()
	dsn := db.NewDSN(t)
	missing := dsn
	if db.Name == "postgres" {
		missing = otherDatabase(t, dsn, "nosuch")
	}
	if _, err := store.Open(ctx, missing, store.Options{MustExist: true}); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("a missing database: %v", err)
	}
	switch db.Name {
	case "sqlite":
		if _, err := os.Stat(strings.TrimPrefix(dsn, "sqlite:")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the refused open left a file: %v", err)
		}
	case "postgres":
		if _, err := store.Open(ctx, missing, store.Options{}); portal.ErrorCode(err) != portal.CodeNotFound {
			t.Errorf("a missing database without MustExist: %v", err)
		}
	}
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := store.Open(ctx, dsn, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	se, ok := errors.AsType[*store.SchemaError](w.CheckSchema(ctx))
	if !ok || !se.Behind() || se.Have != 0 || se.Want < 1 {
		t.Errorf("an unmigrated database: %v", se)
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckSchema(ctx); err != nil {
		t.Errorf("after migrating: %v", err)
	}
	if id, _, err := w.RiverLeader(ctx); id != "" || err != nil {
		t.Errorf("a leader %q with no River client started, %v", id, err)
	}
}

func TestContestWrapUp(t *testing.T) { systems.Run(t, testContestWrapUp) }

func testContestWrapUp(t *testing.T, db storetest.System) {
	ctx := context.Background()
	s := open(t, db.NewDSN(t), nil)
	c := portal.Contest{Problem: "example", Settings: portal.Settings{WrapUp: 3 * time.Second, MaxAttempts: 1}}
	if err := s.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Contest(ctx); err != nil || !got.Settings.Equal(c.Settings) || got.Timing().WrapUp != 3*time.Second {
		t.Errorf("contest %+v, %v", got, err)
	}
	c.Settings.WrapUp = time.Second
	if err := s.SetContest(ctx, c); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a wrap-up under the minimum: %v", err)
	}
}

// rawDB opens the database at dsn without the store, as another program
// would.
func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	driver, source := "pgx", dsn
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		driver, source = "sqlite", "file:"+path+"?_pragma=busy_timeout(10000)"
	}
	raw, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// otherDatabase is a PostgreSQL DSN with another database's name.
func otherDatabase(t *testing.T, dsn, name string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestMigrationsTakeTurns: two processes' stores migrating one database at
// once both succeed, one applying every step of the portal's schema and the
// other none, and leave one schema.
func TestMigrationsTakeTurns(t *testing.T) { systems.Run(t, testMigrationsTakeTurns) }

func testMigrationsTakeTurns(t *testing.T, db storetest.System) {
	ctx := context.Background()
	for round := range 3 {
		dsn := db.NewDSN(t)
		stores := openStores(t, dsn, 2)
		steps, err := stores[0].Migrations()
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg      sync.WaitGroup
			applied [2][]int
			errs    [2]error
		)
		ready := make(chan struct{})
		for i, s := range stores {
			wg.Go(func() {
				<-ready
				applied[i], errs[i] = s.Migrate(ctx)
			})
		}
		close(ready)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: migrating at once: %v; %v", round, errs[0], errs[1])
		}
		if n0, n1 := len(applied[0]), len(applied[1]); n0+n1 != len(steps) || n0 != 0 && n1 != 0 {
			t.Errorf("round %d: applied %v and %v; want all %d steps by one", round, applied[0], applied[1], len(steps))
		}
		var rows, versions int
		err = rawDB(t, dsn).QueryRowContext(ctx, `SELECT count(*), count(DISTINCT version) FROM schema_version`).Scan(&rows, &versions)
		if err != nil || rows != len(steps) || versions != len(steps) {
			t.Errorf("round %d: schema_version has %d rows of %d versions, %v; want %d", round, rows, versions, err, len(steps))
		}
		for i, s := range stores {
			if err := s.CheckSchema(ctx); err != nil {
				t.Errorf("round %d: store %d: %v", round, i, err)
			}
			// River's tables are there too.
			if _, err := s.Position(ctx, 1); err != nil {
				t.Errorf("round %d: store %d: %v", round, i, err)
			}
		}
	}
}

func TestLeaderboard(t *testing.T) { systems.Run(t, testLeaderboard) }

// testLeaderboard: a team's score is its latest passed one; it reached it
// when it first scored it after scoring otherwise, so a team that runs the
// same app again keeps a tie it won, and a team that dropped and came back
// reached its score when it came back. Failed jobs count as runs only.
func testLeaderboard(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	var riverID int64
	finish := func(team portal.Team, verdict portal.Verdict, score float64) time.Time {
		t.Helper()
		clock.Add(time.Minute)
		riverID++
		err := s.InTx(ctx, func(tx *store.Tx) error {
			j, err := tx.InsertJob(ctx, store.NewJob{TeamID: team.ID, Problem: "example", Target: team.Target, MaxAttempts: 2,
				Deadline: time.Minute, RiverJobID: riverID})
			if err != nil {
				return err
			}
			if _, err := tx.BeginAttempt(ctx, j.ID, "w1"); err != nil {
				return err
			}
			_, err = tx.EndJob(ctx, j.ID, 1, portal.Ending{State: portal.JobFinished, Verdict: verdict, Score: score})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return clock.Now()
	}
	team := func(name string) portal.Team {
		tm, err := s.CreateTeam(ctx, name, "http://192.0.2.1/")
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	steady, back, idle := team("steady"), team("back"), team("idle")
	steadyAt := finish(steady, portal.VerdictPassed, 500)
	finish(back, portal.VerdictPassed, 500)
	finish(steady, portal.VerdictPassed, 500)
	finish(steady, portal.VerdictFailed, 0)
	finish(back, portal.VerdictPassed, 300)
	backAt := finish(back, portal.VerdictPassed, 500)
	finish(back, portal.VerdictPassed, 500)

	board, err := s.Leaderboard(ctx, store.BoardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []portal.Standing{
		{Rank: 1, TeamID: steady.ID, Team: "steady", Passed: true, Score: 500, ReachedAt: steadyAt, Runs: 3},
		{Rank: 2, TeamID: back.ID, Team: "back", Passed: true, Score: 500, ReachedAt: backAt, Runs: 4},
		{Rank: 0, TeamID: idle.ID, Team: "idle"},
	}
	if len(board) != len(want) {
		t.Fatalf("%d lines: %+v", len(board), board)
	}
	for i, w := range want {
		g := board[i]
		if g.Rank != w.Rank || g.TeamID != w.TeamID || g.Passed != w.Passed || g.Score != w.Score || !g.ReachedAt.Equal(w.ReachedAt) || g.Runs != w.Runs {
			t.Errorf("line %d: %+v, want %+v", i+1, g, w)
		}
	}
}
