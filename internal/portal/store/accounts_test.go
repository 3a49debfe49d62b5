package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// TestJoinsNeverPassTheTeamSize: accounts joining one team at once, from
// two processes' stores, fill it to its size and no further.
func TestJoinsNeverPassTheTeamSize(t *testing.T) { systems.Run(t, testJoinsNeverPassTheTeamSize) }

func testJoinsNeverPassTheTeamSize(t *testing.T, db storetest.System) {
	ctx := context.Background()
	stores := openStores(t, db.NewDSN(t), 2)
	if _, err := stores[0].Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	owner, err := stores[0].CreateAccount(ctx, "owner", "x", portal.RoleContestant)
	if err != nil {
		t.Fatal(err)
	}
	team, err := stores[0].CreateTeamFor(ctx, owner.ID, "full house", "")
	if err != nil {
		t.Fatal(err)
	}
	const size, joiners = 3, 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[portal.Code]int{}
	for i := range joiners {
		a, err := stores[0].CreateAccount(ctx, fmt.Sprintf("joiner%d", i), "x", portal.RoleContestant)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			_, err := stores[i%2].JoinTeam(ctx, a.ID, team.InviteCode, size)
			mu.Lock()
			codes[portal.ErrorCode(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	members, err := stores[0].TeamMembers(ctx, team.ID)
	if err != nil || len(members) != size {
		t.Errorf("%d members, %v; want %d", len(members), err, size)
	}
	if codes[""] != size-1 || codes[portal.CodeConflict] != joiners-size+1 {
		t.Errorf("outcomes %v: want %d joins and the rest refused as full", codes, size-1)
	}
}

// TestSessions: a session finds its account until it expires or is
// deleted; an account has one team at most; logins are unique in any case.
func TestSessions(t *testing.T) { systems.Run(t, testSessions) }

func testSessions(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clk.Now)
	a, err := s.CreateAccount(ctx, "Alice", "hash", portal.RoleContestant)
	if err != nil || a.Login != "alice" {
		t.Fatalf("%+v, %v", a, err)
	}
	if _, err := s.CreateAccount(ctx, "ALICE", "hash", portal.RoleContestant); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a second alice: %v", err)
	}
	_, hash := portal.NewToken()
	if err := s.CreateSession(ctx, hash, a.ID, clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.SessionAccount(ctx, hash); err != nil || got.ID != a.ID {
		t.Errorf("session: %+v, %v", got, err)
	}
	clk.Add(time.Hour)
	if _, err := s.SessionAccount(ctx, hash); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("an expired session: %v", err)
	}
	if n, err := s.DeleteExpiredSessions(ctx); n != 1 || err != nil {
		t.Errorf("deleted %d, %v", n, err)
	}
	if _, err := s.CreateTeamFor(ctx, a.ID, "one", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTeamFor(ctx, a.ID, "two", ""); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a second team: %v", err)
	}
	admin, err := s.CreateAccount(ctx, "root", "hash", portal.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTeamFor(ctx, admin.ID, "staff", ""); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("an admin's team: %v", err)
	}
}
