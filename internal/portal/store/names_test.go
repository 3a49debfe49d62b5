package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// TestLookAlikeTeamNamesRefused: a team name that differs from another's
// only by case, look-alike letters of another script or invisible
// characters is taken (CodeConflict), whether the team is made by an
// account, a tool or the import; a name that reads differently is not.
func TestLookAlikeTeamNamesRefused(t *testing.T) { systems.Run(t, testLookAlikeTeamNamesRefused) }

func testLookAlikeTeamNamesRefused(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	if _, err := s.CreateTeam(ctx, "Team Rocket", ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"team rocket", "T\u0435am R\u043ecket", "Team Rocke\u0301t", "Ｔｅａｍ Ｒｏｃｋｅｔ", "Team  Rocket"} {
		if _, err := s.CreateTeam(ctx, name, ""); portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("%q: %v, want a conflict", name, err)
		}
	}
	// Invisible characters are refused before they are compared.
	if _, err := s.CreateTeam(ctx, "Team Ro\u200bcket", ""); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a zero-width space: %v, want invalid", err)
	}
	if _, err := s.CreateTeam(ctx, "\u3164", ""); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a name of a Hangul filler: %v, want invalid", err)
	}
	a, err := s.CreateAccount(ctx, "carol", "x", portal.RoleContestant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTeamFor(ctx, a.ID, "TEAM ROCKET", ""); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("an account's look-alike team: %v, want a conflict", err)
	}
	if _, err := s.CreateTeamFor(ctx, a.ID, "Team Rockets", ""); err != nil {
		t.Errorf("a name that reads differently: %v", err)
	}
	importContest(t, s)
	imp := parse(t, "team,bracket,members,servers\nteam rocket,students,dave,10.1.0.11\n")
	if _, err := s.ImportTeams(ctx, root, imp, time.Hour); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("an import of a look-alike team: %v, want a conflict", err)
	}
}

// TestNameKeysFilledOnUpgrade: the teams of a database migrated before
// name keys get theirs, the oldest of two look-alikes the key; after it
// neither name can be taken again.
func TestNameKeysFilledOnUpgrade(t *testing.T) { systems.Run(t, testNameKeysFilledOnUpgrade) }

func testNameKeysFilledOnUpgrade(t *testing.T, db storetest.System) {
	ctx := context.Background()
	dsn := db.NewDSN(t)
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s, err := store.Open(ctx, dsn, store.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.MigrateTo(ctx, 10); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, dsn)
	for _, name := range []string{"Alpha", "ALPHA", "Beta"} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO teams (name, target, created_at)
			VALUES ('`+name+`', '', '2026-04-30 10:00:00+00:00')`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alpha", "BETA"} {
		if _, err := s.CreateTeam(ctx, name, ""); portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("%q after the upgrade: %v, want a conflict", name, err)
		}
	}
}
