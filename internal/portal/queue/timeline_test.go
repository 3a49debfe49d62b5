package queue_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

var root = portal.Actor{ID: 1, Login: "root"}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// tattler is the real clock, telling who asks when it is next read. A
// store's transaction reads its clock once it holds its locks.
type tattler struct {
	mu   sync.Mutex
	read chan struct{} // closed at the next reading; nil when nobody asked
}

func (c *tattler) Now() time.Time {
	c.mu.Lock()
	if c.read != nil {
		close(c.read)
		c.read = nil
	}
	c.mu.Unlock()
	return time.Now()
}

// next returns a channel closed at the clock's next reading.
func (c *tattler) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read = make(chan struct{})
	return c.read
}

// openAt opens and migrates the database at dsn on a clock, and starts a
// queue on it that only enqueues.
func openAt(t *testing.T, dsn string, now func() time.Time, migrate bool) (*store.Store, *queue.Queue) {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if migrate {
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	q, err := queue.New(s, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return s, q
}

// TestEnqueueFollowsTheTimeline: the queue itself refuses a benchmark
// before the start and from the end on, on the store's clock, and lets a
// team with extra time go on until its own end; refusals leave no job.
// Staff may still run an errored job again after the end. Each cancel and
// rerun is one entry of the audit log, by whom it names.
func TestEnqueueFollowsTheTimeline(t *testing.T) { systems.Run(t, testEnqueueFollowsTheTimeline) }

func testEnqueueFollowsTheTimeline(t *testing.T, db storetest.System) {
	ctx := context.Background()
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	at := func(h, m, s int) time.Time {
		return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
	}
	clk := &clock{t: at(9, 0, 0)}
	s, q := openAt(t, db.NewDSN(t), clk.Now, true)
	c := contest(time.Second)
	c.Timeline = portal.Timeline{StartsAt: at(10, 0, 0), EndsAt: at(18, 0, 0)}
	if err := s.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	team := func(name string) portal.Team {
		tm, err := s.CreateTeam(ctx, name, "http://192.0.2.1/")
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	a, b := team("a"), team("b")
	jobs := 0
	try := func(when time.Time, tm portal.Team, want string) {
		t.Helper()
		clk.set(when)
		j, err := q.Enqueue(ctx, tm.ID)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s at %s: %v", tm.Name, when.Format("15:04:05"), err)
		case want != "" && (portal.ErrorCode(err) != portal.CodeConflict || !strings.Contains(err.Error(), want)):
			t.Errorf("%s at %s: %v, want a refusal saying %q", tm.Name, when.Format("15:04:05"), err, want)
		case err == nil:
			jobs++
			if !j.CreatedAt.Equal(when) {
				t.Errorf("job created at %s, want the store's clock %s", j.CreatedAt, when)
			}
			if _, err := q.Cancel(ctx, j.ID, root); err != nil {
				t.Fatal(err)
			}
		}
	}
	try(at(9, 59, 59), a, "not started")
	try(at(10, 0, 0), a, "")
	try(at(17, 59, 59), b, "")
	try(at(18, 0, 0), a, "over")
	try(at(18, 0, 0), b, "over")
	if err := s.SetTeamPlace(ctx, root, a.ID, store.TeamPlace{ExtraTime: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	try(at(18, 0, 0), a, "")
	try(at(18, 9, 59), a, "")
	try(at(18, 9, 59), b, "over")
	try(at(18, 10, 0), a, "ended for your team at 2026-05-01 18:10:00 UTC")
	all, err := s.Jobs(ctx)
	if err != nil || len(all) != jobs || jobs != 4 {
		t.Errorf("%d jobs after %d enqueues let through, %v", len(all), jobs, err)
	}

	// An errored job of b, run again by staff after the end.
	clk.set(at(17, 0, 0))
	var errored portal.Job
	err = s.InTx(ctx, func(tx *store.Tx) error {
		j, err := tx.InsertJob(ctx, store.NewJob{TeamID: b.ID, Problem: c.Problem, Target: b.Target, MaxAttempts: 2,
			Deadline: time.Minute, RiverJobID: 1 << 40})
		if err != nil {
			return err
		}
		if _, err := tx.BeginAttempt(ctx, j.ID, "w1"); err != nil {
			return err
		}
		errored, err = tx.EndJob(ctx, j.ID, 1, portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonInternal})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.set(at(18, 30, 0))
	again, err := q.Rerun(ctx, errored.ID, root)
	if err != nil || again.RerunOf != errored.ID {
		t.Fatalf("a rerun after the end: %+v, %v", again, err)
	}
	entries, err := s.AuditLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.Action]++
		if e.By != root {
			t.Errorf("entry %+v is not root's", e)
		}
	}
	if count[portal.AuditCancel] != jobs || count[portal.AuditRerun] != 1 || count[portal.AuditTeam] != 1 || len(entries) != jobs+2 {
		t.Errorf("audit log %v; want %d cancels, a rerun and a team update", count, jobs)
	}
}

// TestEndNowRacesEnqueues: an admin pressing "end now" while a team
// enqueues, from two processes at the same instant, over and over. The
// check of the times is in the enqueue's transaction, under a lock the
// button's change waits for: every job let through was created before the
// end the button set. Each store's clock is a tattler: a round lets the
// second go the moment the first reads its clock, holding its locks.
func TestEndNowRacesEnqueues(t *testing.T) { systems.Run(t, testEndNowRacesEnqueues) }

func testEndNowRacesEnqueues(t *testing.T, db storetest.System) {
	ctx := context.Background()
	dsn := db.NewDSN(t)
	enqueuerClock, adminClock := &tattler{}, &tattler{}
	s, q := openAt(t, dsn, enqueuerClock.Now, true)
	admin, _ := openAt(t, dsn, adminClock.Now, false)
	c := contest(time.Second)
	if err := s.SetContest(ctx, c); err != nil {
		t.Fatal(err)
	}
	team, err := s.CreateTeam(ctx, "racer", "http://192.0.2.1/")
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 60
	var through, refused int
	for round := range rounds {
		if err := admin.SetTimeline(ctx, root, portal.Timeline{StartsAt: time.Now().Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		var (
			wg       sync.WaitGroup
			job      portal.Job
			jerr     error
			end      time.Time
			endErr   error
			go1, go2 = make(chan struct{}), make(chan struct{})
		)
		// Alternate who is let go first. Four rounds in five let the
		// second go once the first holds its locks (it reads its clock
		// then), to wait on them: each order comes up. The fifth lets
		// both go at once: the overlaps between.
		wg.Go(func() { <-go1; job, jerr = q.Enqueue(ctx, team.ID) })
		wg.Go(func() { <-go2; end, endErr = admin.SetNow(ctx, root, portal.EventEnd) })
		first, second, clock := go1, go2, enqueuerClock
		if round%2 == 1 {
			first, second, clock = go2, go1, adminClock
		}
		locked := clock.next()
		close(first)
		if round%5 != 0 {
			select {
			case <-locked:
			case <-time.After(10 * time.Second):
				t.Errorf("round %d: the first never read its clock", round)
			}
		}
		close(second)
		wg.Wait()
		if endErr != nil {
			t.Fatalf("round %d: end now: %v", round, endErr)
		}
		switch {
		case jerr == nil:
			through++
			if !job.CreatedAt.Before(end) {
				t.Errorf("round %d: job %d created at %s, at or after the end %s", round, job.ID,
					job.CreatedAt.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano))
			}
			if _, err := q.Cancel(ctx, job.ID, root); err != nil {
				t.Fatal(err)
			}
		case portal.ErrorCode(jerr) == portal.CodeConflict && strings.Contains(jerr.Error(), "over"):
			refused++
		default:
			t.Fatalf("round %d: enqueue: %v", round, jerr)
		}
	}
	t.Logf("%d rounds: %d enqueues before the end, %d refused", rounds, through, refused)
	if through == 0 || refused == 0 {
		t.Errorf("the race went one way only (%d through, %d refused): the test shows nothing", through, refused)
	}
}
