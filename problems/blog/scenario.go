package blog

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// Version of the scenario: bump it when a check, a number or the user mix
// changes, so results say which rules they were scored by.
const Version = "1"

// Score tags and their weights (MANUAL: "Scoring").
const (
	tagPage    = "page"
	tagComment = "comment"
	tagArticle = "article"
	tagAsset   = "asset"
)

// The rules' numbers, stated in the manual.
const (
	weightPage    = 1
	weightComment = 5
	weightArticle = 10
	weightAsset   = 0.1
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
	// maxUsers caps the load: high enough that a tuned app, not the cap, sets the score.
	maxUsers = 10000
	// slowRequest is the latency above which a request counts as slow for
	// the load controller.
	slowRequest = time.Second
)

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
	m *model
}

var _ engine.Scenario = (*Scenario)(nil)

// NewScenario returns a scenario for one run.
func NewScenario() (*Scenario, error) { return &Scenario{m: newModel(loadInitial())}, nil }

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: Name,
		Version: Version,
		Rules: engine.Rules{
			Weights: map[string]float64{tagPage: weightPage, tagComment: weightComment, tagArticle: weightArticle, tagAsset: weightAsset},
			Deduction: engine.PerError(map[engine.Class]float64{
				engine.ClassApplication: penaltyError, engine.ClassTimeout: penaltyTimeout}),
			Pass: []engine.PassRule{engine.MaxErrorRate(maxErrorRate)},
		},
		Assets: Manifest(),
		Load:   engine.LoadPolicy{StartUsers: startUsers, Growth: growth, SlowRequest: slowRequest, MaxUsers: maxUsers},
	}
}

// fetch loads a page as a browser does: the HTML, its checks, its assets.
// It scores the page and the assets fetched.
func (s *Scenario) fetch(ctx context.Context, a *engine.Agent, endpoint, path string, score func(tag string, n int64)) (*page, error) {
	res, err := a.Get(ctx, endpoint, path)
	if err != nil {
		return nil, err
	}
	p, err := parsePage(res)
	if err != nil {
		return nil, err
	}
	if err := s.m.checkSidebar(p); err != nil {
		return nil, err
	}
	fetched, err := a.FetchAssets(ctx, res)
	if err != nil {
		return nil, err
	}
	score(tagAsset, int64(fetched))
	return p, nil
}

func (s *Scenario) index(ctx context.Context, a *engine.Agent, full bool, score func(string, int64)) (*page, error) {
	p, err := s.fetch(ctx, a, "GET /", "/", score)
	if err != nil {
		return nil, err
	}
	if err := s.m.checkIndex(p, full); err != nil {
		return nil, err
	}
	score(tagPage, 1)
	return p, nil
}

func (s *Scenario) articlePage(ctx context.Context, a *engine.Agent, id int64, full bool, score func(string, int64)) (*page, error) {
	p, err := s.fetch(ctx, a, "GET /articles/{id}", "/articles/"+strconv.FormatInt(id, 10), score)
	if err != nil {
		return nil, err
	}
	if err := s.m.checkArticle(p, id, full); err != nil {
		return nil, err
	}
	score(tagPage, 1)
	return p, nil
}

func (s *Scenario) postPage(ctx context.Context, a *engine.Agent, score func(string, int64)) error {
	p, err := s.fetch(ctx, a, "GET /post", "/post", score)
	if err != nil {
		return err
	}
	if p.doc.Find(`main#main form#post-form[method="post"][action="/articles"] input[name="title"]`).Length() != 1 ||
		p.doc.Find(`main#main form#post-form textarea[name="body"]`).Length() != 1 {
		return wrong(p.res, "html", "the page lacks form#post-form with a title input and a body textarea posting to /articles")
	}
	score(tagPage, 1)
	return nil
}

// postComment posts a comment and records it in the model.
func (s *Scenario) postComment(ctx context.Context, r *engine.Run, a *engine.Agent, article int64, name, body string) (*post, error) {
	p := s.m.beginComment(article, name, body, r.Now())
	path := fmt.Sprintf("/articles/%d/comments", article)
	res, err := a.PostForm(ctx, "POST /articles/{id}/comments", path, url.Values{"name": {name}, "body": {body}})
	if err != nil {
		s.m.endComment(p, 0, time.Time{})
		return nil, err
	}
	var cid int64
	err = res.Check(engine.Status(http.StatusSeeOther), engine.RedirectTo(func(loc string) string {
		rest, ok := strings.CutPrefix(loc, path[:len(path)-len("/comments")]+"#comment-")
		n, err := strconv.ParseInt(rest, 10, 64)
		if !ok || err != nil || n <= s.m.in.comments() {
			return fmt.Sprintf("expected /articles/%d#comment-NEWID with a new comment id", article)
		}
		cid = n
		return ""
	}))
	if err != nil {
		s.m.endComment(p, 0, time.Time{})
		return nil, err
	}
	s.m.endComment(p, cid, res.Received)
	return p, nil
}

// postArticle posts an article and records it in the model.
func (s *Scenario) postArticle(ctx context.Context, r *engine.Run, a *engine.Agent, title, body string) (*post, error) {
	p := s.m.beginArticle(title, body, r.Now())
	res, err := a.PostForm(ctx, "POST /articles", "/articles", url.Values{"title": {title}, "body": {body}})
	if err != nil {
		s.m.endArticle(p, 0, time.Time{})
		return nil, err
	}
	var id int64
	err = res.Check(engine.Status(http.StatusSeeOther), engine.RedirectTo(func(loc string) string {
		rest, ok := strings.CutPrefix(loc, "/articles/")
		n, err := strconv.ParseInt(rest, 10, 64)
		if !ok || err != nil || n <= s.m.in.articles() {
			return "expected /articles/NEWID with a new article id"
		}
		id = n
		return ""
	}))
	if err != nil {
		s.m.endArticle(p, 0, time.Time{})
		return nil, err
	}
	s.m.endArticle(p, id, res.Received)
	return p, nil
}
