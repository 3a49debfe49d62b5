package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/example"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestExampleScenarioPassesAgainstExampleApp(t *testing.T) {
	t.Parallel()
	target := serve(t, (&example.App{}).Handler())
	b := engine.New(example.NewScenario(), target, fastRun(2*time.Second)...)
	res := b.Run(context.Background())
	if !res.Passed || res.Errors.Charged() != 0 || res.Score <= 0 {
		t.Fatalf("passed=%v score=%v errors=%+v reasons=%q messages=%q", res.Passed, res.Score, res.Errors, res.FailReasons, res.Messages)
	}
	if len(res.Phases) != 4 || res.Breakdown["page"] == 0 || res.AssetRequests == 0 {
		t.Errorf("phases %+v breakdown %v", res.Phases, res.Breakdown)
	}
	if p := b.Progress(); p.Phase != "done" || p.Score != res.RawScore {
		t.Errorf("progress after the run: %+v", p)
	}
	if res.Benchmarker.Cores == 0 || res.Benchmarker.CPUSeconds <= 0 {
		t.Errorf("no self-monitoring figures: %+v", res.Benchmarker)
	}
}

func TestCriticalErrorEndsTheLoadAndFails(t *testing.T) {
	t.Parallel()
	finalRan := false
	p := initializer{&probe{
		user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			return engine.Criticalf("stale", "a comment was missing after 1 s")
		},
		final: func(context.Context, *engine.Run) error { finalRan = true; return nil },
	}}
	start := time.Now()
	res := engine.New(p, mustURL(t, "http://127.0.0.1:1/"), fastRun(5*time.Second)...).Run(context.Background())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the load went on after a critical error: %s", took)
	}
	if res.Passed || res.Errors.Critical == 0 || finalRan || res.Score != 0 {
		t.Errorf("passed=%v errors=%+v finalRan=%v score=%v", res.Passed, res.Errors, finalRan, res.Score)
	}
}

func TestCutOffRequestsAreNotCharged(t *testing.T) {
	t.Parallel()
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	}))
	p := initializer{&probe{user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
		_, err := u.Get(ctx, "GET /slow", "/slow")
		return err
	}}}
	res := engine.New(p, target, fastRun(time.Second)...).Run(context.Background())
	if res.Errors.CutOff == 0 || res.Errors.Charged() != 0 || !res.Passed {
		t.Errorf("errors %+v passed=%v reasons=%q", res.Errors, res.Passed, res.FailReasons)
	}
}

func TestPanickingUserIsInternalNotCharged(t *testing.T) {
	t.Parallel()
	p := initializer{&probe{user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
		panic("scenario bug")
	}}}
	res := engine.New(p, mustURL(t, "http://127.0.0.1:1/"), fastRun(time.Second)...).Run(context.Background())
	if !res.Internal || res.Errors.Internal == 0 || res.Errors.Charged() != 0 {
		t.Errorf("internal=%v errors=%+v", res.Internal, res.Errors)
	}
	for _, m := range res.Messages {
		if strings.Contains(m, "scenario bug") {
			t.Errorf("internal details shown to contestants: %q", m)
		}
	}
}

func TestSeedDrivesEveryUsersRandomStream(t *testing.T) {
	t.Parallel()
	draws := func(seed uint64) map[int]uint64 {
		var mu sync.Mutex
		got := map[int]uint64{}
		p := initializer{&probe{user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			mu.Lock()
			if _, ok := got[u.ID]; !ok {
				got[u.ID] = u.Rand.Uint64()
			}
			mu.Unlock()
			r.Sleep(ctx, time.Second)
			return nil
		}}}
		opts := append(fastRun(300*time.Millisecond), engine.WithSeed(seed), engine.WithWorkload(3))
		engine.New(p, mustURL(t, "http://127.0.0.1:1/"), opts...).Run(context.Background())
		return got
	}
	a, b, c := draws(1), draws(1), draws(2)
	if len(a) != 3 || a[0] != b[0] || a[1] != b[1] || a[2] != b[2] {
		t.Errorf("same seed, different draws: %v %v", a, b)
	}
	if a[0] == a[1] || a[0] == c[0] {
		t.Errorf("users or seeds share a stream: %v %v", a, c)
	}
}

// TestResultGolden pins the summary text and the JSON schema.
func TestResultGolden(t *testing.T) {
	t.Parallel()
	res := &engine.Result{
		Problem: "blog", Target: "http://127.0.0.1:8080/", Passed: false, Score: 0, RawScore: 1234, Deduction: 34,
		FailReasons:  []string{"1 critical error(s)"},
		Errors:       engine.ErrorCounts{Critical: 1, Application: 2, Timeout: 3, CutOff: 4},
		ErrorsByCode: map[string]int64{"stale": 1, "status": 2, "timeout": 3},
		Requests:     5000, AssetRequests: 20000, CachedAnswers: 12, Breakdown: map[string]int64{"page": 1000, "comment": 20},
		Messages: []string{"[critical] GET /articles/{id}: comment 12 is missing", "[application] GET /: expected status 200, got 500 (x2)"},
		Points:   []engine.TagPoints{{Tag: "page", Count: 1000, Weight: 1, Points: 1000}, {Tag: "comment", Count: 20, Weight: 5, Points: 100}},
		Lost:     []engine.Loss{{Class: "application", Count: 2, Points: 10}, {Class: "timeout", Count: 3, Points: 3}},
		Endpoints: []engine.EndpointResult{
			{Name: "GET /", Count: 4000, Errors: 2, P50ms: 1.5, P90ms: 3, P99ms: 10.25, MaxMs: 40, MeanMs: 2, TimeShare: 0.8},
			{Name: "POST /comment", Count: 20, P50ms: 90, P90ms: 110, P99ms: 120, MaxMs: 130, MeanMs: 100, TimeShare: 0.2}},
		Timeline: []engine.TimelineSecond{{Second: 0, Requests: 80, Users: 2}},
		Phases:   []engine.PhaseResult{{Name: "initialize", Passed: true, Seconds: 0.5}},
		Workload: engine.Workload{Start: 2, Final: 5, Peak: 6, MaxReached: true},
		Load: []engine.LoadChange{{AtSeconds: 5, From: 2, To: 6, Kind: engine.Grow, Cause: "healthy"},
			{AtSeconds: 8, From: 6, To: 5, Kind: engine.Shrink, Cause: "falling behind", Reason: "slow"},
			{AtSeconds: 9, From: 5, To: 5, Kind: engine.Hold, Cause: "holding: at the maximum", Reason: "max", Times: 3, LastAtSeconds: 11}},
		LimitedBy: map[string]int{"slow": 1, "max": 3},
		Benchmarker: engine.BenchmarkerStats{CPUSeconds: 3.5, CPUShare: 0.03, Cores: 2, SchedLagP99: 1.2,
			GCCycles: 4, Saturated: true, Reason: "the benchmarker used 90% of its 2 core(s) (limit 85%)", ClockStepS: 24.5},
		TargetClock: engine.TargetClock{Known: true, OffsetMs: 1503.5, UncertaintyMs: 4.5, Responses: 27},
		Seed:        42, EngineVersion: "0.1.0", ScenarioVersion: "1", StartedAt: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC),
		DurationSeconds: 61.5,
	}
	var text strings.Builder
	if err := res.WriteSummary(&text); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.golden", text.String())
	golden(t, "result.json.golden", string(js)+"\n")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; run go test ./engine -update and review the diff.\ngot:\n%s", name, got)
	}
}

// TestMonitorMeasuresTheBenchmarker: users that burn CPU show up in the
// benchmarker's CPU figures, idle ones do not. (Whether a figure means
// saturation is TestJudgeSaturation's business: how much CPU a busy process
// gets depends on what else the machine runs.)
func TestMonitorMeasuresTheBenchmarker(t *testing.T) {
	busy := initializer{&probe{user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
		x := uint64(1)
		for ctx.Err() == nil {
			for range 100_000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		_ = x
		return nil
	}}}
	opts := append(fastRun(2*time.Second), engine.WithWorkload(32))
	res := engine.New(busy, mustURL(t, "http://127.0.0.1:1/"), opts...).Run(context.Background())
	if res.Benchmarker.CPUSeconds < 0.5 || res.Benchmarker.SchedLagP99 <= 0 {
		t.Errorf("a CPU-bound benchmarker's figures are too low: %+v", res.Benchmarker)
	}
	idle := initializer{&probe{}}
	res = engine.New(idle, mustURL(t, "http://127.0.0.1:1/"), fastRun(time.Second)...).Run(context.Background())
	if res.Benchmarker.Saturated || res.Benchmarker.CPUSeconds > 0.5 {
		t.Errorf("an idle benchmarker looked busy: %+v", res.Benchmarker)
	}
}

// TestAddedUsersArriveSpreadOut: users the controller adds start their first
// sessions one after another, MaxArrivalRate a second, not in one instant
// (a burst of new connections would overflow the target's listen queue).
// Not parallel: the benchmarker's CPU is its process's, and other tests
// running beside it made two users look costly enough to cut the step.
func TestAddedUsersArriveSpreadOut(t *testing.T) {
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var mu sync.Mutex
	first := map[int]time.Time{}
	p := initializer{&probe{
		meta: engine.Meta{Load: engine.LoadPolicy{StartUsers: 2, Interval: 400 * time.Millisecond, Evidence: 1, Growth: 4}},
		user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			mu.Lock()
			if _, ok := first[u.ID]; !ok {
				first[u.ID] = time.Now()
			}
			mu.Unlock()
			if _, err := u.Get(ctx, "GET /", "/"); err != nil {
				return err
			}
			u.Think(ctx, 20*time.Millisecond, 20*time.Millisecond)
			return nil
		},
	}}
	res := engine.New(p, target, fastRun(time.Second)...).Run(context.Background())
	// The step is 8 users unless the benchmarker's CPU cuts it short (two
	// users under -race on a busy machine may look costly): at least 4.
	if len(res.Load) == 0 || res.Load[0].From != 2 || res.Load[0].To < 6 {
		t.Fatalf("the controller did not add 4 to 8 users at its first look: %+v", res.Load)
	}
	to := res.Load[0].To
	mu.Lock()
	defer mu.Unlock()
	lo, hi := first[2], first[2]
	for id := 2; id < to; id++ {
		s, ok := first[id]
		if !ok {
			t.Fatalf("user %d never started", id)
		}
		if s.Before(lo) {
			lo = s
		}
		if s.After(hi) {
			hi = s
		}
	}
	// Users arriving 500 a second start 2 ms apart: 14 ms first to last for
	// eight, 6 ms for four; six sevenths of it (12 ms for eight, as before)
	// allows for the timer's rounding.
	want := time.Duration(to-3) * 2 * time.Millisecond * 6 / 7
	if spread := hi.Sub(lo); spread < want {
		t.Errorf("the added users started within %s of each other", spread)
	}
}

// TestAssetsNeitherScoreNorDiluteTheErrorRate: a page with twenty assets,
// one page in twenty failing. The error rate is taken over the pages alone
// (5%, a FAIL), not over every request (0.24%, which would pass), and the
// assets are counted apart.
func TestAssetsNeitherScoreNorDiluteTheErrorRate(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{}
	var imgs strings.Builder
	for i := range 20 {
		name := fmt.Sprintf("img/%d.png", i)
		files[name] = &fstest.MapFile{Data: []byte(name)}
		fmt.Fprintf(&imgs, `<img src="/static/%s">`, name)
	}
	manifest, err := engine.ManifestFromFS(files, ".", "/static")
	if err != nil {
		t.Fatal(err)
	}
	var pages atomic.Int64
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			w.Header().Set("Cache-Control", "no-store")
			http.StripPrefix("/static/", http.FileServerFS(files)).ServeHTTP(w, r)
			return
		}
		if pages.Add(1)%20 == 0 {
			http.Error(w, "oops", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "<html><body>%s</body></html>", imgs.String())
	}))
	p := initializer{&probe{
		meta: engine.Meta{Assets: manifest, Rules: engine.Rules{Weights: map[string]float64{"page": 1},
			Pass: []engine.PassRule{engine.MaxErrorRate(0.01)}}},
		user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			res, err := u.Get(ctx, "GET /", "/")
			if err != nil {
				return err
			}
			if err := res.Check(engine.Status(200)); err != nil {
				return err
			}
			if err := u.FetchAssets(ctx, res); err != nil {
				return err
			}
			u.Score("page", res)
			u.Think(ctx, 10*time.Millisecond, 10*time.Millisecond)
			return nil
		},
	}}
	res := engine.New(p, target, fastRun(2*time.Second)...).Run(context.Background())
	if res.Passed || !strings.Contains(strings.Join(res.FailReasons, "\n"), "error rate") {
		t.Errorf("5%% of the pages failed, yet passed=%v reasons=%q", res.Passed, res.FailReasons)
	}
	if res.AssetRequests < 10*res.Requests || res.Requests == 0 {
		t.Errorf("%d requests and %d asset requests: the assets are not counted apart", res.Requests, res.AssetRequests)
	}
	if res.RawScore != float64(res.Breakdown["page"]) {
		t.Errorf("raw score %.1f from %d pages: something else scored", res.RawScore, res.Breakdown["page"])
	}
}

// TestCachedAnswersEarnNothing: a page its answer lets browsers keep for a
// minute is asked of the app once per user; every later visit comes from
// the user's cache and scores nothing, while a page revalidated with a 304
// is the app's answer and scores each time.
func TestCachedAnswersEarnNothing(t *testing.T) {
	t.Parallel()
	var asked, revalidated atomic.Int64
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/kept":
			asked.Add(1)
			w.Header().Set("Cache-Control", "public, max-age=60")
		case "/checked":
			w.Header().Set("Cache-Control", "no-cache")
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				revalidated.Add(1)
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		fmt.Fprint(w, "<html><body>page</body></html>")
	}))
	p := initializer{&probe{
		meta: engine.Meta{Rules: engine.Rules{Weights: map[string]float64{"kept": 1, "checked": 1000}}},
		user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			for _, path := range []string{"/kept", "/checked"} {
				res, err := u.Get(ctx, "GET "+path, path)
				if err != nil {
					return err
				}
				u.Score(path[1:], res)
			}
			u.Think(ctx, 10*time.Millisecond, 10*time.Millisecond)
			return nil
		},
	}}
	res := engine.New(p, target, fastRun(time.Second)...).Run(context.Background())
	if !res.Passed {
		t.Fatalf("the run failed: %q", res.FailReasons)
	}
	kept, checked := res.Breakdown["kept"], res.Breakdown["checked"]
	if kept == 0 || kept > asked.Load() {
		t.Errorf("/kept scored %d times for %d answers the app gave", kept, asked.Load())
	}
	if res.CachedAnswers == 0 || checked < res.CachedAnswers || revalidated.Load() == 0 {
		t.Errorf("%d cached answers, /checked scored %d times with %d revalidations: a 304 did not score",
			res.CachedAnswers, checked, revalidated.Load())
	}
	var summary strings.Builder
	if err := res.WriteSummary(&summary); err != nil || !strings.Contains(summary.String(), "scored nothing") {
		t.Errorf("the summary does not say the cached answers scored nothing:\n%s", summary.String())
	}
}

// TestAScoreNeedsItsAnswer: a score added without the answer that earned it,
// or for a tag the rules do not weigh, is the scenario's own fault: an
// internal error, and it scores nothing.
func TestAScoreNeedsItsAnswer(t *testing.T) {
	t.Parallel()
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	for code, score := range map[string]func(u *engine.User, res *engine.Response){
		"score-answer": func(u *engine.User, _ *engine.Response) { u.Score("page", nil) },
		"score-tag":    func(u *engine.User, res *engine.Response) { u.Score("other", res) },
	} {
		p := initializer{&probe{
			meta: engine.Meta{Rules: engine.Rules{Weights: map[string]float64{"page": 1}}},
			user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
				res, err := u.Get(ctx, "GET /", "/")
				if err != nil {
					return err
				}
				score(u, res)
				u.Think(ctx, 50*time.Millisecond, 50*time.Millisecond)
				return nil
			},
		}}
		res := engine.New(p, target, fastRun(time.Second)...).Run(context.Background())
		if res.ErrorsByCode[code] == 0 || res.Errors.Internal == 0 || res.RawScore != 0 {
			t.Errorf("%s: errors by code %v, raw score %.1f; want internal %s errors and no score", code, res.ErrorsByCode, res.RawScore, code)
		}
	}
}

// TestDialControlRefusesConnections: a connection WithDialControl refuses is
// never made; the run fails on the target's account, naming the refusal.
func TestDialControlRefusesConnections(t *testing.T) {
	t.Parallel()
	var reached atomic.Int64
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	var asked atomic.Int64
	refuse := func(network, address string, _ syscall.RawConn) error {
		asked.Add(1)
		return fmt.Errorf("%s is not a contest target", address)
	}
	res := engine.New(example.NewScenario(), target, append(fastRun(time.Second), engine.WithDialControl(refuse))...).Run(context.Background())
	if res.Passed || res.Outcome() != engine.Failed || reached.Load() != 0 || asked.Load() == 0 {
		t.Fatalf("passed=%v outcome=%v reached=%d asked=%d", res.Passed, res.Outcome(), reached.Load(), asked.Load())
	}
	if !strings.Contains(strings.Join(res.Messages, "\n")+strings.Join(res.FailReasons, "\n"), "is not a contest target") {
		t.Errorf("the refusal is not named: messages %q reasons %q", res.Messages, res.FailReasons)
	}
}

// closing is a probe that counts its Close calls.
type closing struct {
	initializer
	closed atomic.Int64
}

func (c *closing) Close() error { c.closed.Add(1); return errors.New("closing failed") }

// TestScenarioClosedOnceWhateverHappens: a scenario that holds resources is
// closed once at the end of a run, passed or failed early, and its error
// reaches the staff log.
func TestScenarioClosedOnceWhateverHappens(t *testing.T) {
	t.Parallel()
	for name, pre := range map[string]func(context.Context, *engine.Run) error{
		"passed":           nil,
		"failed pre-check": func(context.Context, *engine.Run) error { return engine.Criticalf("x", "broken") },
	} {
		c := &closing{initializer: initializer{&probe{pre: pre}}}
		var staff strings.Builder
		engine.New(c, mustURL(t, "http://127.0.0.1:1/"), append(fastRun(200*time.Millisecond), engine.WithStaffLog(&staff))...).Run(context.Background())
		if n := c.closed.Load(); n != 1 {
			t.Errorf("%s: closed %d times", name, n)
		}
		if !strings.Contains(staff.String(), "closing failed") {
			t.Errorf("%s: the error of Close is not in the staff log", name)
		}
	}
}

// TestRulesSeeErrorsByRequest: the rules' tally splits the charged errors by
// the request each is about, so that a scenario can weigh a failed write
// more than a failed read; internal errors and cut-off requests are not in it.
func TestRulesSeeErrorsByRequest(t *testing.T) {
	t.Parallel()
	var seen atomic.Pointer[map[string]int64]
	var n atomic.Int64
	p := initializer{&probe{
		meta: engine.Meta{Rules: engine.Rules{Weights: map[string]float64{"ok": 1}, Deduction: func(t engine.Tally) float64 {
			by := t.ErrorsByRequest
			seen.Store(&by)
			return 0
		}}},
		user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
			switch n.Add(1) {
			case 1, 2:
				return &engine.Error{Class: engine.ClassApplication, Code: "status", Request: "POST /write", Message: "500"}
			case 3:
				return &engine.Error{Class: engine.ClassTimeout, Code: "timeout", Request: "GET /read", Message: "slow"}
			case 4:
				return engine.Internalf("bug", "the scenario's own fault")
			case 5:
				return &engine.Error{Code: "cut-off", Request: "GET /read", Detail: engine.ErrCutOff}
			}
			u.Think(ctx, time.Second, time.Second)
			return nil
		},
	}}
	engine.New(p, mustURL(t, "http://127.0.0.1:1/"), fastRun(time.Second)...).Run(context.Background())
	by := seen.Load()
	if by == nil || len(*by) != 2 || (*by)["POST /write"] != 2 || (*by)["GET /read"] != 1 {
		t.Errorf("the rules saw errors by request %v, want POST /write 2 and GET /read 1", by)
	}
}

// TestRestartComesBetweenTheLoadAndTheFinalCheck: WithRestart's function runs
// after the load, in a phase of its own, and before the final check; when
// the target does not come back, the run fails and the final check, which
// would only meet a dead target, does not run.
func TestRestartComesBetweenTheLoadAndTheFinalCheck(t *testing.T) {
	t.Parallel()
	for name, restartErr := range map[string]error{
		"back":     nil,
		"not back": engine.Criticalf("restart", "the app did not start again"),
	} {
		var order []string
		var mu sync.Mutex
		note := func(what string) {
			mu.Lock()
			defer mu.Unlock()
			if len(order) == 0 || order[len(order)-1] != what {
				order = append(order, what)
			}
		}
		p := initializer{&probe{
			user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
				note("user")
				return nil
			},
			final: func(context.Context, *engine.Run) error { note("final"); return nil },
		}}
		restart := func(context.Context) error { note("restart"); return restartErr }
		opts := append(fastRun(200*time.Millisecond), engine.WithRestart(restart, time.Second))
		res := engine.New(p, mustURL(t, "http://127.0.0.1:1/"), opts...).Run(context.Background())
		var phases []string
		for _, ph := range res.Phases {
			phases = append(phases, ph.Name)
		}
		want, wantOrder := "initialize pre-check load restart final-check", "user restart final"
		if restartErr != nil {
			want, wantOrder = "initialize pre-check load restart", "user restart"
		}
		if got := strings.Join(phases, " "); got != want {
			t.Errorf("%s: phases %q, want %q", name, got, want)
		}
		if got := strings.Join(order, " "); got != wantOrder {
			t.Errorf("%s: calls %q, want %q", name, got, wantOrder)
		}
		if res.Passed != (restartErr == nil) {
			t.Errorf("%s: passed=%v, reasons %q", name, res.Passed, res.FailReasons)
		}
	}
	p := initializer{&probe{final: func(context.Context, *engine.Run) error {
		return engine.Criticalf("lost", "memo 7 is gone")
	}}}
	opts := append(fastRun(200*time.Millisecond), engine.WithRestart(func(context.Context) error { return nil }, 0))
	res := engine.New(p, mustURL(t, "http://127.0.0.1:1/"), opts...).Run(context.Background())
	if want := "final-check (after the app was stopped and started again) failed: memo 7 is gone"; !slices.Contains(res.FailReasons, want) {
		t.Errorf("a final check failed after a restart: reasons %q, want %q among them", res.FailReasons, want)
	}
}

// TestRestartFailures: a load that raised a critical error is not followed by
// a restart; a restart still starting at its deadline keeps its own error's
// class (the app's, critical), not a timeout's; an internal error of a
// restart (a restart command that failed) is the benchmarker's.
func TestRestartFailures(t *testing.T) {
	t.Parallel()
	restarted := false
	p := initializer{&probe{user: func(context.Context, *engine.Run, *engine.User) error {
		return engine.Criticalf("stale", "a stale page")
	}}}
	opts := append(fastRun(200*time.Millisecond), engine.WithRestart(func(context.Context) error { restarted = true; return nil }, 0))
	if res := engine.New(p, mustURL(t, "http://127.0.0.1:1/"), opts...).Run(context.Background()); restarted || res.Passed {
		t.Errorf("after a critical load: restarted=%v passed=%v", restarted, res.Passed)
	}
	for name, c := range map[string]struct {
		err      error
		internal bool
	}{
		"not back by its deadline": {engine.Criticalf("restart", "the app did not start again"), false},
		"a command that failed":    {engine.Internalf("restart", "the restart command: exit status 7"), true},
	} {
		restart := func(ctx context.Context) error {
			if !c.internal {
				<-ctx.Done()
			}
			return c.err
		}
		opts := append(fastRun(200*time.Millisecond), engine.WithRestart(restart, 300*time.Millisecond))
		res := engine.New(initializer{&probe{}}, mustURL(t, "http://127.0.0.1:1/"), opts...).Run(context.Background())
		if res.Passed || res.Internal != c.internal || (!c.internal && res.Errors.Critical != 1) {
			t.Errorf("%s: passed=%v internal=%v errors %+v reasons %q", name, res.Passed, res.Internal, res.Errors, res.FailReasons)
		}
	}
}
