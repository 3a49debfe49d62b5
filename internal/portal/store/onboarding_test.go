package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// TestChangePassword: the new hash is the account's, its other sessions
// end and the one it was changed from stays, and the log records it by
// the account itself.
func TestChangePassword(t *testing.T) { systems.Run(t, testChangePassword) }

func testChangePassword(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	a, err := s.CreateAccount(ctx, "alice", "old-hash", portal.RoleContestant)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"here", "there"} {
		if err := s.CreateSession(ctx, h, a.ID, clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ChangePassword(ctx, a, "new-hash", "here"); err != nil {
		t.Fatal(err)
	}
	if _, hash, err := s.AccountByLogin(ctx, "alice"); err != nil || hash != "new-hash" {
		t.Errorf("the hash after the change: %q, %v", hash, err)
	}
	if _, err := s.SessionAccount(ctx, "here"); err != nil {
		t.Errorf("the session it was changed from: %v", err)
	}
	if _, err := s.SessionAccount(ctx, "there"); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("another session: %v, want ended", err)
	}
	log, err := s.AuditLog(ctx)
	if err != nil || len(log) != 1 || log[0].Action != portal.AuditPassword || log[0].By.Login != "alice" {
		t.Errorf("the audit log: %+v, %v", log, err)
	}
}

// TestRenameAndRemoveTeam: a team is renamed unless the name looks like
// another team's; an empty team is removed with its servers, one with a
// member is not; each change is audited once.
func TestRenameAndRemoveTeam(t *testing.T) { systems.Run(t, testRenameAndRemoveTeam) }

func testRenameAndRemoveTeam(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	if err := s.SetContest(ctx, portal.Contest{Problem: "example"}); err != nil {
		t.Fatal(err)
	}
	a, err := s.CreateAccount(ctx, "alice", "x", portal.RoleContestant)
	if err != nil {
		t.Fatal(err)
	}
	cats, err := s.CreateTeamFor(ctx, a.ID, "Fast Cats", "")
	if err != nil {
		t.Fatal(err)
	}
	empty, err := s.CreateTeam(ctx, "Nobody", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddServer(ctx, root, empty.ID, portal.Server{URL: "http://10.1.0.9/", Host: "10.1.0.9"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameTeam(ctx, root, empty.ID, "FAST CATS"); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a rename to a look-alike: %v, want a conflict", err)
	}
	if err := s.RenameTeam(ctx, root, cats.ID, "fast cats"); err != nil {
		t.Errorf("a rename to its own name in lower case: %v", err)
	}
	if err := s.RenameTeam(ctx, root, cats.ID, "Quick Cats"); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameTeam(ctx, root, empty.ID, "Fast Cats"); err != nil {
		t.Errorf("the name given up: %v", err)
	}
	if team, err := s.Team(ctx, cats.ID); err != nil || team.Name != "Quick Cats" {
		t.Errorf("the renamed team: %q, %v", team.Name, err)
	}
	if err := s.RemoveTeam(ctx, root, cats.ID); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("removing a team with a member: %v, want a conflict", err)
	}
	if err := s.RemoveTeam(ctx, root, empty.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Team(ctx, empty.ID); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("the removed team: %v", err)
	}
	if servers, err := s.Servers(ctx); err != nil || len(servers) != 0 {
		t.Errorf("the removed team's servers: %v, %v", servers, err)
	}
	if _, err := s.CreateTeam(ctx, "fast cats", ""); err != nil {
		t.Errorf("the removed team's name: %v", err)
	}
	if n := countAudit(t, s, portal.AuditTeamRename); n != 3 {
		t.Errorf("%d renames audited, want 3", n)
	}
	if n := countAudit(t, s, portal.AuditTeamRemove); n != 1 {
		t.Errorf("%d removals audited, want 1", n)
	}
}
