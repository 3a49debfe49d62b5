package queue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// TestAssignedServersOnly: with assigned servers a job's target is one of
// its team's servers, checked in the transaction that adds the job: no
// target, another team's server, or a server the organiser took from the
// team since it was picked is refused and leaves no job; a validation run
// of a team whose last scored server is no longer its own is left out.
func TestAssignedServersOnly(t *testing.T) { systems.Run(t, testAssignedServersOnly) }

func testAssignedServersOnly(t *testing.T, db storetest.System) {
	ctx := context.Background()
	c := contest(time.Second)
	c.Settings.AssignedServers = true
	c.EndsAt = time.Now().Add(time.Hour)
	e := newEnvAt(t, db.NewDSN(t), c)
	e.worker("w1", queue.Config{Runner: &fakeRunner{calls: map[string]int{}}})
	alpha, beta := e.team("alpha", ""), e.team("beta", "")
	server := func(teamID int64, address string) portal.Server {
		t.Helper()
		srv, err := portal.ParseServer(address, 0, "", c.Settings.Targets())
		if err == nil {
			srv, err = e.store.AddServer(ctx, root, teamID, srv)
		}
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	own, theirs := server(alpha.ID, "pass"), server(beta.ID, "beta-app")
	refused := func(what string) {
		t.Helper()
		_, err := e.portal.Enqueue(ctx, alpha.ID)
		var nts *portal.NotTeamServerError
		if !errors.As(err, &nts) || portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("%s: %v; want it refused", what, err)
		}
	}
	refused("no server picked")
	if err := e.store.SetTarget(ctx, alpha.ID, theirs.URL, theirs.Host); err != nil {
		t.Fatal(err)
	}
	refused("another team's server")
	if jobs, err := e.store.Jobs(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("refused enqueues left jobs %+v, %v", jobs, err)
	}
	if err := e.store.SetTarget(ctx, alpha.ID, own.URL, own.Host); err != nil {
		t.Fatal(err)
	}
	if got := e.waitFinal(e.enqueue(alpha.ID).ID, 10*time.Second); got.Verdict != portal.VerdictPassed || got.Target != own.URL {
		t.Fatalf("alpha's job on its own server: %+v", got)
	}

	// The organiser takes the server back: the team's target goes, and
	// one that stays behind (set by hand) is refused all the same.
	if err := e.store.RemoveServer(ctx, root, own.ID); err != nil {
		t.Fatal(err)
	}
	if team, err := e.store.Team(ctx, alpha.ID); err != nil || team.Target != "" {
		t.Errorf("alpha's target after its server went: %q, %v", team.Target, err)
	}
	if err := e.store.SetTarget(ctx, alpha.ID, own.URL, own.Host); err != nil {
		t.Fatal(err)
	}
	refused("a server taken from the team")

	// An errored job of a team whose server was taken since is not run
	// again on it; another team's is.
	gamma, delta := e.team("gamma", ""), e.team("delta", "")
	errored := func(team portal.Team) portal.Server {
		t.Helper()
		srv := server(team.ID, "broken")
		if err := e.store.SetTarget(ctx, team.ID, srv.URL, srv.Host); err != nil {
			t.Fatal(err)
		}
		if got := e.waitFinal(e.enqueue(team.ID).ID, 10*time.Second); got.State != portal.JobErrored {
			t.Fatalf("%s's job %+v", team.Name, got)
		}
		return srv
	}
	broken := errored(gamma)
	if err := e.store.RemoveServer(ctx, root, broken.ID); err != nil {
		t.Fatal(err)
	}
	errored(delta) // on the host gamma had
	if err := e.store.SetTarget(ctx, gamma.ID, broken.URL, ""); err != nil {
		t.Fatal(err)
	}
	b, err := e.portal.RerunErrored(ctx, root)
	if err != nil || len(b.Queued) != 1 || b.Queued[0].TeamID != delta.ID ||
		!strings.Contains(b.Skipped[gamma.ID], "is not one of your team's servers") {
		t.Errorf("re-running the errored jobs: %+v, %v; want gamma's left out", b, err)
	}
	e.waitFinal(b.Queued[0].ID, 10*time.Second)

	// Validation: beta's and delta's targets are their own servers,
	// alpha's (its last scored) and gamma's no longer.
	// (w1 is quarantined now, after three errors of two teams.)
	e.worker("w2", queue.Config{Runner: &fakeRunner{calls: map[string]int{}}})
	if err := e.store.SetTarget(ctx, beta.ID, theirs.URL, theirs.Host); err != nil {
		t.Fatal(err)
	}
	if got := e.waitFinal(e.enqueue(beta.ID).ID, 10*time.Second); got.Verdict != portal.VerdictPassed {
		t.Fatalf("beta's job %+v", got)
	}
	c.EndsAt = time.Now().Add(-time.Second)
	if err := e.store.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	b, err = e.portal.Validate(ctx, root)
	if err != nil || len(b.Queued) != 2 || b.Queued[0].TeamID != beta.ID || b.Queued[1].TeamID != delta.ID ||
		!strings.Contains(b.Skipped[alpha.ID], "is not one of your team's servers") ||
		!strings.Contains(b.Skipped[gamma.ID], "is not one of your team's servers") {
		t.Errorf("validation: %+v, %v; want alpha's and gamma's left out", b, err)
	}
}
