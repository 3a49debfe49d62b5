package store_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// TestAPITokens: a team's tokens are kept by hash, at most MaxAPITokens
// (made at once, too), named apart; revoked by their team only; their
// last use written at most once per APITokenTouch. The API's job pages
// hold the team's own jobs, newest first, without validation runs; the
// export's hold every job, oldest first.
func TestAPITokens(t *testing.T) { systems.Run(t, testAPITokens) }

func testAPITokens(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clk.Now)
	a, err := s.CreateTeam(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateTeam(ctx, "b", "")
	if err != nil {
		t.Fatal(err)
	}

	// Made at once, a team still gets no more than the limit.
	var wg sync.WaitGroup
	made := make(chan string, 2*portal.MaxAPITokens)
	for i := range 2 * portal.MaxAPITokens {
		wg.Go(func() {
			token, hash := portal.NewAPIToken()
			if _, err := s.CreateAPIToken(ctx, a.ID, "alice", "t"+strconv.Itoa(i), hash); err == nil {
				made <- token
			} else if portal.ErrorCode(err) != portal.CodeConflict {
				t.Errorf("token %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(made)
	if n := len(made); n != portal.MaxAPITokens {
		t.Errorf("%d tokens made at once, want %d", n, portal.MaxAPITokens)
	}
	token := <-made

	_, hash := portal.NewAPIToken()
	bt, err := s.CreateAPIToken(ctx, b.ID, "bob", " overlay ", hash)
	if err != nil || bt.Name != "overlay" {
		t.Fatalf("team b's token %+v, %v", bt, err)
	}
	if _, err := s.CreateAPIToken(ctx, b.ID, "bob", "overlay", "other"); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a second token named overlay: %v", err)
	}
	if _, err := s.CreateAPIToken(ctx, b.ID, "bob", "", "other2"); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a token without a name: %v", err)
	}
	if _, err := s.APITokenByHash(ctx, token); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("a token found by itself rather than its hash: %v", err)
	}
	at, err := s.APITokenByHash(ctx, portal.TokenHash(token))
	if err != nil || at.TeamID != a.ID || at.CreatedBy != "alice" || !at.LastUsedAt.IsZero() {
		t.Fatalf("team a's token %+v, %v", at, err)
	}

	// Its last use: written, then not again within APITokenTouch.
	used := func() time.Time {
		t.Helper()
		got, err := s.APITokenByHash(ctx, portal.TokenHash(token))
		if err != nil {
			t.Fatal(err)
		}
		return got.LastUsedAt
	}
	if err := s.TouchAPIToken(ctx, at.ID); err != nil || !used().Equal(clk.Now()) {
		t.Errorf("the first use: %v at %v", err, used())
	}
	first := clk.Now()
	clk.Add(portal.APITokenTouch / 2)
	if err := s.TouchAPIToken(ctx, at.ID); err != nil || !used().Equal(first) {
		t.Errorf("a use within %s: %v at %v", portal.APITokenTouch, err, used())
	}
	clk.Add(portal.APITokenTouch)
	if err := s.TouchAPIToken(ctx, at.ID); err != nil || !used().Equal(clk.Now()) {
		t.Errorf("a use after %s: %v at %v", portal.APITokenTouch, err, used())
	}

	if err := s.RevokeAPIToken(ctx, b.ID, at.ID); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("team b revokes team a's token: %v", err)
	}
	if err := s.RevokeAPIToken(ctx, a.ID, at.ID); err != nil {
		t.Errorf("revoking: %v", err)
	}
	if _, err := s.APITokenByHash(ctx, portal.TokenHash(token)); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("a revoked token: %v", err)
	}
	if list, err := s.APITokens(ctx, a.ID); err != nil || len(list) != portal.MaxAPITokens-1 {
		t.Errorf("team a's tokens: %d, %v", len(list), err)
	}
	if list, err := s.APITokens(ctx, 0); err != nil || len(list) != portal.MaxAPITokens {
		t.Errorf("every token: %d, %v", len(list), err)
	}

	// Jobs, a page at a time.
	var ids []int64
	for i := range 5 {
		clk.Add(time.Second)
		ids = append(ids, finishJob(t, s, a.ID, int64(100+i), portal.VerdictPassed, float64(i)).ID)
	}
	finishJob(t, s, b.ID, 200, portal.VerdictPassed, 1)
	if err := s.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertJob(ctx, store.NewJob{TeamID: a.ID, Kind: portal.KindValidation, Problem: "example",
			Target: "http://192.0.2.1/", MaxAttempts: 2, Deadline: time.Minute, RiverJobID: 300})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	page, err := s.TeamJobsPage(ctx, a.ID, 0, 3)
	if err != nil || len(page) != 3 || page[0].ID != ids[4] || page[2].ID != ids[2] {
		t.Fatalf("the first page: %v, %v", page, err)
	}
	page, err = s.TeamJobsPage(ctx, a.ID, page[2].ID, 3)
	if err != nil || len(page) != 2 || page[0].ID != ids[1] || page[1].ID != ids[0] {
		t.Errorf("the second page: %v, %v", page, err)
	}
	all, err := s.JobsAfter(ctx, ids[3], 10)
	if err != nil || len(all) != 3 || all[0].ID != ids[4] || all[2].Kind != portal.KindValidation {
		t.Errorf("the jobs after %d: %v, %v", ids[3], all, err)
	}
}
