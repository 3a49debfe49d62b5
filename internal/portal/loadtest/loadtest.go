// Package loadtest benchmarks the contest portal with tunecon's own engine:
// a contest of many teams whose members keep the leaderboard and their job
// pages open, while workers report their jobs' progress every second and
// jobs finish one after another (each finish changes the leaderboard). It is
// not a problem for contestants; `make portal-perf` runs it.
package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/web"
)

// Config sizes the contest.
type Config struct {
	Teams   int // one browser per team
	Workers int // each reports one running job's progress every second
	// History is how many finished jobs each team has at the start.
	History int
	// JobLength is how long a worker's job runs before it finishes.
	JobLength time.Duration
	// Arrival spreads the browsers' first visits (Scenario.Arrival).
	Arrival time.Duration
	Problem string
	Seed    uint64
	// Wrap, when set, wraps the portal's handler: tests put faults in it
	// to see the scenario's checks fail.
	Wrap func(http.Handler) http.Handler
}

// Team is a seeded team with its member's session.
type Team struct {
	ID    int64
	Name  string
	Token string // the session cookie's value
	Job   int64  // a finished job of the team, for its job page
}

// Seed fills a migrated store with the contest: teams of one member each,
// signed in, with History finished jobs.
func Seed(ctx context.Context, s *store.Store, cfg Config) ([]Team, error) {
	if err := s.SetContest(ctx, portal.Contest{Problem: cfg.Problem}); err != nil {
		return nil, err
	}
	rnd := rand.New(rand.NewPCG(cfg.Seed, 1))
	teams := make([]Team, cfg.Teams)
	err := s.InTx(ctx, func(tx *store.Tx) error {
		for i := range teams {
			a, err := tx.CreateAccount(ctx, fmt.Sprintf("member%03d", i), "not a hash", portal.RoleContestant)
			if err != nil {
				return err
			}
			token, hash := portal.NewToken()
			if err := tx.CreateSession(ctx, hash, a.ID, time.Now().Add(24*time.Hour)); err != nil {
				return err
			}
			teams[i] = Team{Name: fmt.Sprintf("team %03d", i), Token: token}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	accounts, err := s.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	for i := range teams {
		t, err := s.CreateTeamFor(ctx, accounts[i].ID, teams[i].Name, "")
		if err != nil {
			return nil, err
		}
		teams[i].ID = t.ID
	}
	riverID := int64(0)
	err = s.InTx(ctx, func(tx *store.Tx) error {
		for i := range teams {
			if err := tx.SetTarget(ctx, teams[i].ID, fmt.Sprintf("http://192.0.2.%d/", i%250+1), ""); err != nil {
				return err
			}
			for range cfg.History {
				riverID++
				score := float64(rnd.IntN(50000))
				j, err := finishedJob(ctx, tx, teams[i].ID, riverID, cfg.Problem, score)
				if err != nil {
					return err
				}
				teams[i].Job = j
			}
		}
		return nil
	})
	return teams, err
}

// finishedJob adds a job that a worker ran and passed.
func finishedJob(ctx context.Context, tx *store.Tx, team, riverID int64, problem string, score float64) (int64, error) {
	j, err := runningJob(ctx, tx, team, riverID, problem)
	if err != nil {
		return 0, err
	}
	_, err = tx.EndJob(ctx, j, 1, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: score,
		Result: []byte(`{"passed":true}`)})
	return j, err
}

func runningJob(ctx context.Context, tx *store.Tx, team, riverID int64, problem string) (int64, error) {
	j, err := tx.InsertJob(ctx, store.NewJob{TeamID: team, Problem: problem, Target: "http://192.0.2.1/", MaxAttempts: 2,
		Deadline: time.Minute, RiverJobID: riverID})
	if err != nil {
		return 0, err
	}
	if _, err := tx.BeginAttempt(ctx, j.ID, "perf-worker"); err != nil {
		return 0, err
	}
	return j.ID, nil
}

// Workers plays the benchmark workers until ctx ends: each runs a job for
// a team in turn, reports its progress every second, and finishes it with
// a score after JobLength. It returns how many progress reports and
// finished jobs it wrote.
func Workers(ctx context.Context, s *store.Store, teams []Team, cfg Config) (reports, finished int64, err error) {
	var (
		mu       sync.Mutex
		next     int
		firstErr error
		wg       sync.WaitGroup
	)
	riverID := int64(1 << 40)
	take := func() (Team, int64) {
		mu.Lock()
		defer mu.Unlock()
		next++
		riverID++
		return teams[next%len(teams)], riverID
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil && ctx.Err() == nil {
			firstErr = err
		}
	}
	for w := range cfg.Workers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(cfg.Seed, uint64(w)+2))
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for ctx.Err() == nil {
				team, rid := take()
				var job int64
				err := s.InTx(ctx, func(tx *store.Tx) error {
					var err error
					job, err = runningJob(ctx, tx, team.ID, rid, cfg.Problem)
					return err
				})
				if portal.ErrorCode(err) == portal.CodeConflict {
					continue // the team has a job already (another worker's)
				}
				if err != nil {
					fail(err)
					return
				}
				end := time.Now().Add(cfg.JobLength)
				var p portal.Progress
				for time.Now().Before(end) && ctx.Err() == nil {
					select {
					case <-ctx.Done():
					case <-tick.C:
					}
					p.Phase, p.Users = "load", 10+rnd.IntN(100)
					p.Requests += int64(200 + rnd.IntN(500))
					p.Score += float64(rnd.IntN(800))
					if _, err := s.UpdateProgress(ctx, job, 1, p); err != nil {
						fail(err)
						return
					}
					mu.Lock()
					reports++
					mu.Unlock()
				}
				err = s.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.EndJob(ctx, job, 1, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed,
						Score: p.Score, Result: []byte(`{"passed":true}`)})
					return err
				})
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				finished++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return reports, finished, firstErr
}

const (
	tagPage = "page"
	version = "1"
)

// Scenario is a team member's browser: the contest page, the leaderboard,
// the team's job page and, now and then, the chart's data, with a person's
// pauses between them.
type Scenario struct {
	Teams              []Team
	ThinkMin, ThinkMax time.Duration
	// Arrival spreads the browsers' first visits over its length: people
	// open the portal over some seconds, never hundreds in one instant.
	Arrival time.Duration

	arrived sync.Map // user ids that have made their first visit
}

var _ engine.Scenario = (*Scenario)(nil)

// Meta: every team's browser from the start, and no more.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: "portal",
		Version: version,
		Rules: engine.Rules{
			Weights:   map[string]float64{tagPage: 1},
			Deduction: engine.PerError(map[engine.Class]float64{engine.ClassApplication: 1, engine.ClassTimeout: 1}),
			Pass:      []engine.PassRule{engine.MaxErrorRate(0.001)},
		},
		Load: engine.LoadPolicy{StartUsers: len(s.Teams), MaxUsers: len(s.Teams)},
	}
}

// Initialize does nothing: the portal has no /initialize; Seed prepared it.
func (s *Scenario) Initialize(context.Context, *engine.Run) error { return nil }

// PreCheck reads the leaderboard as nobody signed in: every team is on it.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	res, err := a.Get(ctx, "GET /leaderboard", "/leaderboard")
	if err != nil {
		return err
	}
	return res.Check(engine.Status(http.StatusOK), engine.HTML(func(doc *goquery.Document) error {
		if n := doc.Find("table.board tbody tr").Length(); n != len(s.Teams) {
			return engine.Criticalf("leaderboard", "the leaderboard has %d lines for %d teams", n, len(s.Teams))
		}
		return nil
	}))
}

// User is one visit of a team member.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	if _, seen := s.arrived.LoadOrStore(u.ID, true); !seen && s.Arrival > 0 {
		if !u.Think(ctx, 0, s.Arrival) {
			return nil
		}
	}
	t := s.Teams[u.ID%len(s.Teams)]
	cookie := http.Header{"Cookie": {web.SessionCookie + "=" + t.Token}}
	get := func(endpoint, path string, check engine.Check) error {
		res, err := u.Do(ctx, endpoint, http.MethodGet, path, cookie, nil)
		if err != nil {
			return err
		}
		if err := res.Check(engine.Status(http.StatusOK), check); err != nil {
			return err
		}
		u.Score(tagPage, res)
		u.Think(ctx, s.ThinkMin, s.ThinkMax)
		return nil
	}
	own := engine.HTML(func(doc *goquery.Document) error {
		if strings.TrimSpace(doc.Find("tr.own td").Eq(1).Text()) != t.Name {
			return engine.Criticalf("own-team", "the leaderboard does not mark the viewer's team")
		}
		return nil
	})
	if err := get("GET /leaderboard", "/leaderboard", own); err != nil {
		return err
	}
	job := strconv.FormatInt(t.Job, 10)
	if err := get("GET /jobs/{id}", "/jobs/"+job, engine.HTML(func(doc *goquery.Document) error {
		if !strings.Contains(doc.Find("h1").Text(), "#"+job) {
			return engine.Criticalf("job-page", "the job page is not job %s's", job)
		}
		return nil
	})); err != nil {
		return err
	}
	if err := get("GET /", "/", engine.HTML(func(*goquery.Document) error { return nil })); err != nil {
		return err
	}
	if u.Rand.IntN(4) == 0 {
		return get("GET /leaderboard/history", "/leaderboard/history", func(*engine.Response) error { return nil })
	}
	return nil
}

// FinalCheck: nothing is lost in the portal's pages; the load's own checks
// say what matters.
func (s *Scenario) FinalCheck(context.Context, *engine.Run) error { return nil }
