package blog

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// Version of the scenario: bump it when a check, a number or the user mix
// changes, so results say which rules they were scored by.
const Version = "4"

// Score tags and their weights (MANUAL: "Scoring").
const (
	tagPage    = "page"
	tagComment = "comment"
	tagArticle = "article"
)

// The rules' numbers, stated in the manual.
const (
	weightPage    = 1
	weightComment = 5
	weightArticle = 10
	// penaltyError and penaltyTimeout are deducted per error.
	penaltyError   = 5
	penaltyTimeout = 1
	// maxErrorRate fails a run whose errors exceed this share of its requests.
	maxErrorRate = 0.01
	// fullCheckShare is the share of pages, drawn at random, whose every
	// article and comment text is compared with the model.
	fullCheckShare = 0.25
	// startUsers and growth drive the load controller.
	startUsers = 4
	growth     = 1.0
	// maxUsers caps the load: high enough that a tuned app, not the cap, sets
	// the score.
	maxUsers = 10000
	// slowRequest is the latency above which a request counts as slow for
	// the load controller: twice what the reference app's pages take once it
	// is busy, so that the users settle where it is busy. At 1 s they settled
	// at 4 to 8 users, below and above that point by turns, and the score
	// followed where the steps fell (a CV of 4 to 6% over five runs).
	slowRequest = 2 * time.Second
	// finalCheckArticles is how many commented articles the final check reads.
	finalCheckArticles = 20
)

// Freshness is the manual's promise: a new article or comment shows
// everywhere it belongs within this long after its 303.
const Freshness = time.Second

// settleAfter is how long after giving up on a comment's answer the
// benchmarker reads whether it was stored (MANUAL: "Posts whose answer never
// came"): long enough for an overloaded app to finish a write it had queued.
const settleAfter = 5 * time.Second

// Think times of the users (MANUAL: "The users").
var (
	thinkMin = 500 * time.Millisecond
	thinkMax = 1500 * time.Millisecond
	// checkDelayMin and checkDelayMax bound when a writer checks its post.
	checkDelayMin = Freshness
	checkDelayMax = 3 * time.Second
)

// Scenario is the blog benchmark.
type Scenario struct {
	m   *model
	mix *engine.Mix
}

var _ engine.Scenario = (*Scenario)(nil)

// NewScenario returns a scenario for one run.
func NewScenario() (*Scenario, error) {
	return &Scenario{m: newModel(loadInitial()), mix: newMix()}, nil
}

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: Name,
		Version: Version,
		Rules: engine.Rules{
			Weights: map[string]float64{tagPage: weightPage, tagComment: weightComment, tagArticle: weightArticle},
			Deduction: engine.PerError(map[engine.Class]float64{
				engine.ClassApplication: penaltyError, engine.ClassTimeout: penaltyTimeout}),
			Pass: []engine.PassRule{engine.MaxErrorRate(maxErrorRate)},
		},
		Assets: Manifest(),
		Load:   engine.LoadPolicy{StartUsers: startUsers, Growth: growth, SlowRequest: slowRequest, MaxUsers: maxUsers},
	}
}

// PreCheck checks the initialized app exactly, one request at a time,
// negative cases included; any error fails the run.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	s.m.ahead = r.TargetClockBounds
	a := r.NewAgent()
	defer a.Close()
	rnd := r.Rand(0)
	if _, err := s.index(ctx, a, true, engine.NoScore); err != nil {
		return err
	}
	for range 2 {
		if _, err := s.articlePage(ctx, a, 1+rnd.Int64N(s.m.in.articles()), true, engine.NoScore); err != nil {
			return err
		}
	}
	for _, path := range []string{"/articles/0", "/articles/abc", "/articles/99999999", "/no-such-page"} {
		endpoint := "GET /articles/{id}"
		if !strings.HasPrefix(path, "/articles/") {
			endpoint = "GET (unknown path)"
		}
		if err := a.Expect(ctx, endpoint, path, nil, http.StatusNotFound); err != nil {
			return err
		}
	}
	if err := s.postPage(ctx, a, engine.NoScore); err != nil {
		return err
	}
	if err := preCheckInvalidPosts(ctx, a); err != nil {
		return err
	}
	return s.preCheckPosts(ctx, r, a, 1+rnd.Int64N(s.m.in.articles()/2))
}

// preCheckInvalidPosts posts what the manual says the app must refuse.
func preCheckInvalidPosts(ctx context.Context, a *engine.Agent) error {
	bad := []struct {
		path   string
		form   url.Values
		status int
	}{
		{"/articles", url.Values{"title": {""}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles", url.Values{"title": {"two\nlines"}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles", url.Values{"title": {"title"}, "body": {""}}, http.StatusBadRequest},
		{"/articles", url.Values{"title": {strings.Repeat("長", 129)}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles/1/comments", url.Values{"name": {"x"}, "body": {""}}, http.StatusBadRequest},
		{"/articles/1/comments", url.Values{"name": {strings.Repeat("名", 65)}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles/99999999/comments", url.Values{"body": {"body"}}, http.StatusNotFound},
	}
	for _, b := range bad {
		endpoint := "POST /articles"
		if b.path != "/articles" {
			endpoint = "POST /articles/{id}/comments"
		}
		if err := a.Expect(ctx, endpoint, b.path, b.form, b.status); err != nil {
			return err
		}
	}
	return nil
}

// preCheckPosts posts a comment with an empty name and markup-like text on
// the old article old, then an article and a named comment on it: each must
// show exactly, and each must get the next id after the initial data's.
func (s *Scenario) preCheckPosts(ctx context.Context, r *engine.Run, a *engine.Agent, old int64) error {
	c, _, err := s.postComment(ctx, r, a, old, "", "pre-check <b>bold?</b> & \"quotes\"\nsecond line 二行目")
	if err != nil {
		return err
	}
	if err := nextID("comment", c.id, s.m.in.comments()+1); err != nil {
		return err
	}
	if !r.SleepUntil(ctx, c.received.Add(Freshness)) {
		return ctx.Err()
	}
	if _, err := s.articlePage(ctx, a, old, true, engine.NoScore); err != nil {
		return err
	}
	art, _, err := s.postArticle(ctx, r, a, "pre-check 記事 <title> & more", "first line\n二行目 <br> is text\nthird")
	if err != nil {
		return err
	}
	if err := nextID("article", art.id, s.m.in.articles()+1); err != nil {
		return err
	}
	c, _, err = s.postComment(ctx, r, a, art.id, "checker 検査", "a named comment")
	if err != nil {
		return err
	}
	if err := nextID("comment", c.id, s.m.in.comments()+2); err != nil {
		return err
	}
	if !r.Sleep(ctx, Freshness) {
		return ctx.Err()
	}
	if _, err := s.index(ctx, a, true, engine.NoScore); err != nil {
		return err
	}
	_, err = s.articlePage(ctx, a, art.id, true, engine.NoScore)
	return err
}

// settleAll settles every post whose answer never came: the load is
// over, so one wait of settleAfter makes every settling read due.
func (s *Scenario) settleAll(ctx context.Context, r *engine.Run, a *engine.Agent) error {
	if !s.m.anyFailed() {
		return nil
	}
	if !r.Sleep(ctx, settleAfter) {
		return ctx.Err()
	}
	for p := s.m.dueComment(r.Now()); p != nil; p = s.m.dueComment(r.Now()) {
		if err := s.settle(ctx, a, p, engine.NoScore); err != nil {
			return err
		}
	}
	for p := s.m.dueArticle(r.Now()); p != nil; p = s.m.dueArticle(r.Now()) {
		if err := s.settleArticle(ctx, a, p, engine.NoScore); err != nil {
			return err
		}
	}
	return nil
}

// nextID checks a pre-check post's id against the one the manual promises
// after /initialize.
func nextID(kind string, got, want int64) error {
	if got != want {
		return engine.Criticalf("id-next", "the %s posted got id %d; after /initialize the next %s id is %d", kind, got, kind, want)
	}
	return nil
}

// FinalCheck checks the end state: /, the newest articles, and a sample of
// the articles commented during the run, every text compared.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	if err := s.settleAll(ctx, r, a); err != nil {
		return err
	}
	if _, err := s.index(ctx, a, true, engine.NoScore); err != nil {
		return err
	}
	ids := s.m.commentedArticles()
	rnd := r.Rand(1)
	rnd.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	ids = append(ids[:min(len(ids), finalCheckArticles)], s.m.newestKnownArticles(5)...)
	for _, id := range ids {
		if _, err := s.articlePage(ctx, a, id, true, engine.NoScore); err != nil {
			return err
		}
	}
	return nil
}
