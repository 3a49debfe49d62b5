package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

func TestRecentJobsAndAnswers(t *testing.T) { systems.Run(t, testRecentJobsAndAnswers) }

// testRecentJobsAndAnswers: the portal's estimates read how long the last
// finished jobs took; a team's dashboard its last jobs, newest first; its
// badge how many of its questions are answered.
func testRecentJobsAndAnswers(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clk.Now)
	alice, bob := member(t, s, "alice", "team a"), member(t, s, "bob", "team b")
	run := func(teamID, riverID int64, took time.Duration) {
		t.Helper()
		err := s.InTx(ctx, func(tx *store.Tx) error {
			j, err := tx.InsertJob(ctx, store.NewJob{TeamID: teamID, Problem: "example", Target: "http://192.0.2.1/",
				MaxAttempts: 2, Deadline: time.Minute, RiverJobID: riverID})
			if err == nil {
				_, err = tx.BeginAttempt(ctx, j.ID, "w1")
			}
			clk.Add(took)
			if err == nil {
				_, err = tx.EndJob(ctx, j.ID, 1, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 7})
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	run(alice.TeamID, 1, 70*time.Second)
	run(bob.TeamID, 2, 80*time.Second)
	run(alice.TeamID, 3, 90*time.Second)
	times, err := s.RecentJobTimes(ctx, 2)
	if err != nil || len(times) != 2 || times[0] != 90*time.Second || times[1] != 80*time.Second {
		t.Errorf("the last two jobs' times: %v, %v; want 1m30s, 1m20s", times, err)
	}
	jobs, err := s.RecentTeamJobs(ctx, alice.TeamID, 5)
	if err != nil || len(jobs) != 2 || jobs[0].ID <= jobs[1].ID || jobs[0].State != portal.JobFinished ||
		jobs[0].Verdict != portal.VerdictPassed || jobs[0].Score != 7 || len(jobs[0].Result) != 0 {
		t.Errorf("alice's team's last jobs: %+v, %v", jobs, err)
	}

	q, err := s.Ask(ctx, alice, "may we?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(ctx, bob, "and we?"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.AnsweredFor(ctx, alice.TeamID); err != nil || n != 0 {
		t.Errorf("answered before any answer: %d, %v", n, err)
	}
	if _, err := s.AnswerClarification(ctx, root, q.ID, store.Answer{Answer: "Yes."}); err != nil {
		t.Fatal(err)
	}
	a, errA := s.AnsweredFor(ctx, alice.TeamID)
	b, errB := s.AnsweredFor(ctx, bob.TeamID)
	if a != 1 || b != 0 || errA != nil || errB != nil {
		t.Errorf("answered: team a %d (%v), team b %d (%v); want 1 and 0", a, errA, b, errB)
	}
}
