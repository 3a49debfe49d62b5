package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

var root = portal.Actor{ID: 1, Login: "root"}

// finishJob adds a job of team that ran and finished at the clock's time.
func finishJob(t *testing.T, s *store.Store, teamID, riverID int64, verdict portal.Verdict, score float64) portal.Job {
	t.Helper()
	ctx := context.Background()
	var j portal.Job
	err := s.InTx(ctx, func(tx *store.Tx) error {
		var err error
		j, err = tx.InsertJob(ctx, store.NewJob{TeamID: teamID, Problem: "example", Target: "http://192.0.2.1/",
			MaxAttempts: 2, Deadline: time.Minute, RiverJobID: riverID})
		if err != nil {
			return err
		}
		if _, err := tx.BeginAttempt(ctx, j.ID, "w1"); err != nil {
			return err
		}
		j, err = tx.EndJob(ctx, j.ID, 1, portal.Ending{State: portal.JobFinished, Verdict: verdict, Score: score})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// sameTimeline reports whether two timelines hold the same instants.
func sameTimeline(a, b portal.Timeline) bool {
	for _, e := range portal.Events() {
		x, _ := a.At(e)
		y, _ := b.At(e)
		if !x.Equal(*y) {
			return false
		}
	}
	return true
}

// auditActions lists the audit log's actions in order.
func auditActions(t *testing.T, s *store.Store) []string {
	t.Helper()
	entries, err := s.AuditLog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Action)
	}
	return out
}

// TestUpgradeToContestDay: a database as the portal before the contest day
// left it (schema version 3, with a contest, a team and a passed job) is
// brought up to date by Migrate: the data stays, the new columns take
// their defaults, and the new parts work on it.
func TestUpgradeToContestDay(t *testing.T) { systems.Run(t, testUpgradeToContestDay) }

func testUpgradeToContestDay(t *testing.T, db storetest.System) {
	ctx := context.Background()
	dsn := db.NewDSN(t)
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s, err := store.Open(ctx, dsn, store.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if applied, err := s.MigrateTo(ctx, 3); err != nil || len(applied) != 3 {
		t.Fatalf("migrating to version 3: %v, %v", applied, err)
	}
	raw := rawDB(t, dsn)
	for _, stmt := range []string{
		`INSERT INTO contest (id, problem, load_duration_ms, starts_at, ends_at, settings)
			VALUES (1, 'example', 3000, '2026-05-01 09:00:00+00:00', '2026-05-01 17:00:00+00:00', '{"max_team_size":2}')`,
		`INSERT INTO teams (name, target, created_at) VALUES ('old team', 'http://192.0.2.1/', '2026-04-30 10:00:00+00:00')`,
		`INSERT INTO jobs (team_id, problem, target, state, verdict, score, created_at, started_at, finished_at, max_attempts, deadline_ms)
			VALUES (1, 'example', 'http://192.0.2.1/', 'finished', 'passed', 777, '2026-05-01 10:00:00+00:00',
				'2026-05-01 10:00:01+00:00', '2026-05-01 10:01:00+00:00', 2, 60000)`,
	} {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	applied, err := s.Migrate(ctx)
	if err != nil || len(applied) == 0 || applied[0] != 4 {
		t.Fatalf("upgrading: applied %v, %v", applied, err)
	}
	if err := s.CheckSchema(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := s.Contest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	if c.Problem != "example" || c.LoadDuration != 3*time.Second || !c.StartsAt.Equal(start) || !c.EndsAt.Equal(start.Add(8*time.Hour)) ||
		!c.RegistrationAt.IsZero() || !c.FreezesAt.IsZero() || !c.RevealsAt.IsZero() || c.Settings.MaxTeamSize != 2 ||
		c.Settings.Rule() != portal.RankLatest || len(c.Settings.Brackets) != 0 {
		t.Errorf("the contest after the upgrade: %+v", c)
	}
	team, err := s.Team(ctx, 1)
	if err != nil || team.Name != "old team" || team.Bracket != "" || team.Hidden || team.ExtraTime != 0 {
		t.Errorf("the team after the upgrade: %+v, %v", team, err)
	}
	board, err := s.Leaderboard(ctx, store.BoardOptions{})
	if err != nil || len(board) != 1 || board[0].Rank != 1 || board[0].Score != 777 || board[0].Runs != 1 {
		t.Errorf("the board after the upgrade: %+v, %v", board, err)
	}
	// The new parts work on the old rows.
	if _, err := s.SetNow(ctx, root, portal.EventFreeze); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTeamPlace(ctx, root, team.ID, store.TeamPlace{Hidden: true}); err != nil {
		t.Fatal(err)
	}
	if got := auditActions(t, s); strings.Join(got, " ") != "contest.now.freeze team.update" {
		t.Errorf("audit log %v", got)
	}
}

// TestTimeline: the times are set together or one at a time to now; times
// out of order are refused and change nothing; each change is one entry of
// the audit log, with what it changed; a save that changes nothing is none.
func TestTimeline(t *testing.T) { systems.Run(t, testTimeline) }

func testTimeline(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	if _, err := s.SetNow(ctx, root, portal.EventStart); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("start now before the contest is set up: %v", err)
	}
	if err := s.SetContest(ctx, portal.Contest{Problem: "example"}); err != nil {
		t.Fatal(err)
	}
	rev := func() int64 {
		c, err := s.Contest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.Revision
	}
	r0 := rev()
	t0 := clock.Now()
	tl := portal.Timeline{RegistrationAt: t0, StartsAt: t0.Add(time.Hour), FreezesAt: t0.Add(6 * time.Hour),
		EndsAt: t0.Add(8 * time.Hour), RevealsAt: t0.Add(9 * time.Hour)}
	for name, bad := range map[string]portal.Timeline{
		"freeze after end":   {StartsAt: t0, FreezesAt: t0.Add(2 * time.Hour), EndsAt: t0.Add(time.Hour)},
		"end at start":       {StartsAt: t0, EndsAt: t0},
		"reveal before end":  {StartsAt: t0, EndsAt: t0.Add(time.Hour), RevealsAt: t0.Add(time.Minute)},
		"registration later": {RegistrationAt: t0.Add(time.Hour), StartsAt: t0},
	} {
		if err := s.SetTimeline(ctx, root, bad); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := auditActions(t, s); len(got) != 0 || rev() != r0 {
		t.Errorf("refused changes left %v, revision %d -> %d", got, r0, rev())
	}
	if err := s.SetTimeline(ctx, root, tl); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTimeline(ctx, root, tl); err != nil { // the same again: no action
		t.Fatal(err)
	}
	c, err := s.Contest(ctx)
	if err != nil || !sameTimeline(c.Timeline, tl) || c.Revision != r0+1 {
		t.Fatalf("timeline %+v (revision %d), %v; want %+v", c.Timeline, c.Revision, err, tl)
	}
	entries, err := s.AuditLog(ctx)
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit log %+v, %v", entries, err)
	}
	e := entries[0]
	var detail map[string]portal.Change
	if err := json.Unmarshal(e.Detail, &detail); err != nil {
		t.Fatal(err)
	}
	if e.Action != portal.AuditTimeline || e.By != root || !e.At.Equal(t0) || len(detail) != 5 ||
		detail["freeze"].Before != nil || detail["freeze"].After != t0.Add(6*time.Hour).Format(time.RFC3339Nano) {
		t.Errorf("entry %+v, detail %v", e, detail)
	}

	// The buttons: the start now (before its time), the freeze now; an end
	// now that would come before the freeze is refused.
	clock.Add(30 * time.Minute)
	at, err := s.SetNow(ctx, root, portal.EventStart)
	if err != nil || !at.Equal(clock.Now()) {
		t.Fatalf("start now: %v, %v", at, err)
	}
	clock.Add(time.Hour)
	if _, err := s.SetNow(ctx, root, portal.EventFreeze); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetNow(ctx, root, "lunch"); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("no such event: %v", err)
	}
	c, _ = s.Contest(ctx)
	if !c.StartsAt.Equal(t0.Add(30*time.Minute)) || !c.FreezesAt.Equal(clock.Now()) || !c.Frozen(clock.Now()) || c.Revealed(clock.Now()) {
		t.Errorf("after the buttons: %+v", c.Timeline)
	}
	c.Timeline.FreezesAt = clock.Now().Add(time.Hour)
	if err := s.SetTimeline(ctx, root, c.Timeline); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetNow(ctx, root, portal.EventEnd); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("end now before the freeze: %v", err)
	}
	want := []string{portal.AuditTimeline, portal.AuditNow + "start", portal.AuditNow + "freeze", portal.AuditTimeline}
	if got := auditActions(t, s); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("audit log %v, want %v", got, want)
	}
}

// TestBoardRules: the ranking rule (latest or best), the board at a freeze
// (jobs finished before it only), brackets each with its own ranks, and
// hidden teams off the public board but ranked nowhere on the staff's.
func TestBoardRules(t *testing.T) { systems.Run(t, testBoardRules) }

func testBoardRules(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	if err := s.SetContest(ctx, portal.Contest{Problem: "example",
		Settings: portal.Settings{Brackets: []string{"students", "general"}}}); err != nil {
		t.Fatal(err)
	}
	team := func(name, bracket string) portal.Team {
		t.Helper()
		tm, err := s.CreateTeam(ctx, name, "http://192.0.2.1/")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetTeamPlace(ctx, root, tm.ID, store.TeamPlace{Bracket: bracket}); err != nil {
			t.Fatal(err)
		}
		return tm
	}
	up, down, staff := team("up", "students"), team("down", "general"), team("staff", "general")
	var riverID int64
	finish := func(tm portal.Team, score float64) time.Time {
		clock.Add(time.Minute)
		riverID++
		finishJob(t, s, tm.ID, riverID, portal.VerdictPassed, score)
		return clock.Now()
	}
	downBest := finish(down, 900)
	finish(up, 500)
	freeze := clock.Now().Add(30 * time.Second)
	upLater := finish(up, 800)
	downLatest := finish(down, 100)
	finish(staff, 2000)

	line := func(board []portal.Standing, name string) portal.Standing {
		for _, b := range board {
			if b.Team == name {
				return b
			}
		}
		return portal.Standing{}
	}
	latest, err := s.Leaderboard(ctx, store.BoardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := line(latest, "up"); l.Score != 800 || !l.ReachedAt.Equal(upLater) || l.Rank != 2 {
		t.Errorf("latest, up: %+v", l)
	}
	if l := line(latest, "down"); l.Score != 100 || !l.ReachedAt.Equal(downLatest) || l.Rank != 3 || l.Bracket != "general" {
		t.Errorf("latest, down: %+v", l)
	}
	if l := line(latest, "staff"); l.Rank != 1 || l.Hidden {
		t.Errorf("latest, staff (not hidden yet): %+v", l)
	}
	best, err := s.Leaderboard(ctx, store.BoardOptions{Rule: portal.RankBest})
	if err != nil {
		t.Fatal(err)
	}
	if l := line(best, "down"); l.Score != 900 || !l.ReachedAt.Equal(downBest) {
		t.Errorf("best, down: %+v", l)
	}
	frozen, err := s.Leaderboard(ctx, store.BoardOptions{Before: freeze})
	if err != nil {
		t.Fatal(err)
	}
	if l := line(frozen, "up"); l.Score != 500 || l.Runs != 1 || l.Rank != 2 {
		t.Errorf("frozen, up: %+v", l)
	}
	if l := line(frozen, "down"); l.Score != 900 || l.Runs != 1 || l.Rank != 1 {
		t.Errorf("frozen, down: %+v", l)
	}
	if l := line(frozen, "staff"); l.Passed || l.Rank != 0 {
		t.Errorf("frozen, staff: %+v", l)
	}
	if _, err := s.Leaderboard(ctx, store.BoardOptions{Rule: "worst"}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("an unknown rule: %v", err)
	}

	// staff goes hidden: off the public board, on the staff's unranked.
	if err := s.SetTeamPlace(ctx, root, staff.ID, store.TeamPlace{Bracket: "general", Hidden: true}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Leaderboard(ctx, store.BoardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ranks := func(board []portal.Standing) string {
		var b strings.Builder
		for _, l := range board {
			fmt.Fprintf(&b, "%s:%d ", l.Team, l.Rank)
		}
		return strings.TrimSpace(b.String())
	}
	for _, c := range []struct {
		bracket string
		staff   bool
		want    string
	}{
		{"", false, "up:1 down:2"},
		{"", true, "staff:0 up:1 down:2"},
		{"general", false, "down:1"},
		{"general", true, "staff:0 down:1"},
		{"students", false, "up:1"},
	} {
		if got := ranks(portal.Board(all, c.bracket, c.staff)); got != c.want {
			t.Errorf("board %q (staff %t): %s, want %s", c.bracket, c.staff, got, c.want)
		}
	}
	// A bracket the contest does not have is refused; so is too much extra
	// time. Neither is recorded.
	before := len(auditActions(t, s))
	if err := s.SetTeamPlace(ctx, root, up.ID, store.TeamPlace{Bracket: "pros"}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("an unknown bracket: %v", err)
	}
	if err := s.SetTeamPlace(ctx, root, up.ID, store.TeamPlace{Bracket: "students", ExtraTime: 25 * time.Hour}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("25 hours' extra time: %v", err)
	}
	if err := s.SetTeamPlace(ctx, root, 999, store.TeamPlace{}); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("no such team: %v", err)
	}
	if after := len(auditActions(t, s)); after != before {
		t.Errorf("refused changes were recorded: %d entries, then %d", before, after)
	}
	if err := s.SetTeamPlace(ctx, root, up.ID, store.TeamPlace{Bracket: "students", ExtraTime: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if tm, err := s.Team(ctx, up.ID); err != nil || tm.ExtraTime != 10*time.Minute || tm.Bracket != "students" {
		t.Errorf("team %+v, %v", tm, err)
	}
}

// TestSettingsAreAudited: a change of the settings is one entry naming
// each field changed; a save that changes nothing is none; settings no job
// could run with are refused.
func TestSettingsAreAudited(t *testing.T) { systems.Run(t, testSettingsAreAudited) }

func testSettingsAreAudited(t *testing.T, db storetest.System) {
	ctx := context.Background()
	s := open(t, db.NewDSN(t), nil)
	set := portal.Settings{MaxTeamSize: 3}
	if err := s.SetSettings(ctx, root, "example", 0, set); err != nil {
		t.Fatal(err)
	}
	set.Ranking, set.Brackets = portal.RankBest, []string{"students", "general"}
	if err := s.SetSettings(ctx, root, "example", 5*time.Second, set); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSettings(ctx, root, "example", 5*time.Second, set); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []portal.Settings{
		{Ranking: "worst"}, {Brackets: []string{"a", "a"}}, {Brackets: []string{"a,b"}}, {Brackets: []string{""}},
	} {
		if err := s.SetSettings(ctx, root, "example", 0, bad); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("settings %+v: %v", bad, err)
		}
	}
	c, err := s.Contest(ctx)
	if err != nil || !c.Settings.Equal(set) || c.LoadDuration != 5*time.Second {
		t.Errorf("contest %+v, %v", c, err)
	}
	entries, err := s.AuditLog(ctx)
	if err != nil || len(entries) != 2 {
		t.Fatalf("audit log %+v, %v", entries, err)
	}
	var detail map[string]portal.Change
	if err := json.Unmarshal(entries[1].Detail, &detail); err != nil {
		t.Fatal(err)
	}
	if len(detail) != 3 || detail["ranking"].After != "best" || detail["load"].Before != "0s" || detail["brackets"].Before != nil {
		t.Errorf("the second entry's detail: %s", entries[1].Detail)
	}
	if entries[0].Action != portal.AuditSettings || entries[0].By != root || entries[0].Subject != "contest" {
		t.Errorf("the first entry: %+v", entries[0])
	}
}
