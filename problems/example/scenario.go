package example

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
)

// Scenario version: bump when a check or a number changes.
const version = "2"

// Score weights and rules, as the example's documentation states them.
const (
	tagPage = "page"
	tagNote = "note"
	// freshness is how soon a new note must lead the list on /.
	freshness = time.Second
)

// Scenario benchmarks the example app.
type Scenario struct {
	// Think is the pause range between a user's pages.
	ThinkMin, ThinkMax time.Duration

	mu    sync.Mutex
	posts int // notes acknowledged with a redirect
}

var _ engine.Scenario = (*Scenario)(nil)

// NewScenario returns the example scenario with its default pacing.
func NewScenario() *Scenario {
	return &Scenario{ThinkMin: 200 * time.Millisecond, ThinkMax: 600 * time.Millisecond}
}

// Manifest is the example's asset manifest.
func Manifest() engine.Manifest {
	sub, _ := fs.Sub(static, "static")
	m, err := engine.ManifestFromFS(sub, ".", "/static")
	if err != nil {
		panic(err) // embedded files are always readable
	}
	return m
}

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: Name,
		Version: version,
		Rules: engine.Rules{
			Weights:   map[string]float64{tagPage: 1, tagNote: 5},
			Deduction: engine.PerError(map[engine.Class]float64{engine.ClassApplication: 1, engine.ClassTimeout: 0.5}),
			Pass:      []engine.PassRule{engine.MaxErrorRate(0.01)},
		},
		Assets: Manifest(),
		Load:   engine.LoadPolicy{StartUsers: 2, SlowRequest: 200 * time.Millisecond},
	}
}

// PreCheck checks the empty list, a rejected empty note, and a posted note.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	if _, err := s.checkTop(ctx, a, 0); err != nil {
		return err
	}
	res, err := a.PostForm(ctx, "POST /notes", "/notes", url.Values{"text": {""}})
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusBadRequest)); err != nil {
		return err
	}
	if _, _, err := s.post(ctx, a, "pre-check note"); err != nil {
		return err
	}
	_, err = s.checkTop(ctx, a, 1)
	return err
}

// User reads the list and its assets; one session in four posts a note and,
// after the freshness deadline, checks that the list shows it.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	res, err := s.checkTop(ctx, u.Agent, -1)
	if err != nil {
		return err
	}
	u.Score(tagPage, res)
	if u.Rand.IntN(4) == 0 {
		text := fmt.Sprintf("note %d-%d", u.ID, u.Rand.Uint32())
		id, res, err := s.post(ctx, u.Agent, text)
		if err != nil {
			return err
		}
		u.Score(tagNote, res)
		if !r.Sleep(ctx, freshness) {
			return nil
		}
		if err := s.checkFresh(ctx, u.Agent, id, text); err != nil {
			return err
		}
	}
	u.Think(ctx, s.ThinkMin, s.ThinkMax)
	return nil
}

// FinalCheck checks that the total counts every acknowledged note.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	res, err := a.Get(ctx, "GET /", "/")
	if err != nil {
		return err
	}
	s.mu.Lock()
	posts := s.posts
	s.mu.Unlock()
	return res.Check(engine.Status(200), engine.HTML(func(doc *goquery.Document) error {
		total, _ := strconv.Atoi(strings.TrimSpace(doc.Find("#total").Text()))
		if total < posts {
			return engine.Criticalf("lost-note", "the total is %d but %d notes were acknowledged", total, posts)
		}
		return nil
	}))
}

func (s *Scenario) post(ctx context.Context, a *engine.Agent, text string) (int, *engine.Response, error) {
	res, err := a.PostForm(ctx, "POST /notes", "/notes", url.Values{"text": {text}})
	if err != nil {
		return 0, nil, err
	}
	var id int
	err = res.Check(engine.RedirectTo(func(loc string) string {
		n, ok := strings.CutPrefix(loc, "/notes/")
		if id, _ = strconv.Atoi(n); !ok || id <= 0 {
			return "expected /notes/{id}"
		}
		return ""
	}))
	if err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	s.posts++
	s.mu.Unlock()
	return id, res, nil
}

// checkTop checks / and verifies its stylesheet; total < 0 skips the exact
// total (other users post concurrently).
func (s *Scenario) checkTop(ctx context.Context, a *engine.Agent, total int) (*engine.Response, error) {
	res, err := a.Get(ctx, "GET /", "/")
	if err != nil {
		return nil, err
	}
	checks := []engine.Check{engine.Status(200), engine.ContentType("text/html"), engine.Exists("#notes"),
		engine.Count(`link[rel="stylesheet"][href="/static/example.css"]`, 1)}
	if total >= 0 {
		checks = append(checks, engine.Text("#total", strconv.Itoa(total)))
	}
	if err := res.Check(checks...); err != nil {
		return nil, err
	}
	return res, a.FetchAssets(ctx, res)
}

// checkFresh checks that note id is on / (unless newer notes pushed it off)
// and that /notes/{id} returns it as JSON.
func (s *Scenario) checkFresh(ctx context.Context, a *engine.Agent, id int, text string) error {
	res, err := a.Get(ctx, "GET /notes/{id}", "/notes/"+strconv.Itoa(id))
	if err != nil {
		return err
	}
	var got struct {
		ID   int    `json:"id"`
		Text string `json:"text"`
	}
	if err := res.Check(engine.Status(200), engine.JSON(&got)); err != nil {
		return err
	}
	if got.ID != id || got.Text != text {
		return res.Criticalf("stale", "note %d reads %q, expected %q", id, got.Text, text)
	}
	return nil
}
