package blog

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/blog/data"
)

// These tests drive the model's checks with hand-made pages and timings:
// each concurrency case a correct app may produce must pass, and each
// violation must fail.

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// initialTop returns the initial sidebar's article ids.
func initialTop(in *initial) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for k := in.comments(); len(out) < 10; k-- {
		if a := int64(in.commentOf[k]); !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// render makes a page with the given sidebar; main is the <main> content.
func render(m *model, sidebar []int64, main string, sent, received time.Time) *page {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="ja"><head><meta charset="utf-8"><link rel="stylesheet" href="/static/css/blog.css"><script src="/static/js/blog.js"></script></head><body>`)
	b.WriteString(`<header id="header"><a id="home-link" href="/"><img id="logo" src="/static/img/logo.png"></a><a id="post-link" href="/post">Write</a></header><main id="main">`)
	b.WriteString(main)
	b.WriteString(`</main><aside id="sidebar"><h2>Recently commented</h2><ol id="recent-commented">`)
	for _, id := range sidebar {
		a, _ := m.article(id, false)
		fmt.Fprintf(&b, `<li class="recent-item"><a class="recent-link" href="/articles/%d">%s</a></li>`, id, html.EscapeString(a.title))
	}
	b.WriteString(`</ol></aside><footer id="footer"><img id="badge" src="/static/img/badge.png"><img id="banner" src="/static/img/banner.jpg"></footer></body></html>`)
	u, _ := url.Parse("http://127.0.0.1/")
	res := &engine.Response{Endpoint: "GET /", Method: "GET", URL: u, StatusCode: 200,
		Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: []byte(b.String()), Sent: sent, Received: received}
	p, err := parsePage(res)
	if err != nil {
		panic(err)
	}
	return p
}

func moveToFront(ids []int64, id int64) []int64 {
	out := []int64{id}
	for _, x := range ids {
		if x != id && len(out) < 10 {
			out = append(out, x)
		}
	}
	return out
}

func TestSidebarCheckUnderConcurrency(t *testing.T) {
	in := loadInitial()
	top := initialTop(in)
	old := int64(17) // an article far from the sidebar
	cases := []struct {
		name    string
		setup   func(m *model)
		sidebar []int64
		wantErr string
	}{
		{"initial state, exact", nil, top, ""},
		{"initial state, swapped", nil, append([]int64{top[1], top[0]}, top[2:]...), "above article"},
		{"acknowledged 2 s before: must lead", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(-3)), 300001, at(-2))
		}, top, "lacks article 17|article 9958, but at least 10"},
		{"acknowledged 2 s before: leads", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(-3)), 300001, at(-2))
		}, moveToFront(top, old), ""},
		{"acknowledged 0.5 s before: may lead", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(-1)), 300001, at(-0.5))
		}, moveToFront(top, old), ""},
		{"acknowledged 0.5 s before: may not lead yet", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(-1)), 300001, at(-0.5))
		}, top, ""},
		{"in flight: may lead", func(m *model) { m.beginComment(old, "", "x", at(-0.1)) }, moveToFront(top, old), ""},
		{"failed post: may lead", func(m *model) { m.failComment(m.beginComment(old, "", "x", at(-5)), at(-4)) }, moveToFront(top, old), ""},
		{"failed post settled as not stored: may not lead", func(m *model) {
			p := m.beginComment(old, "", "x", at(-15))
			m.failComment(p, at(-14))
			_ = m.settleComment(m.dueComment(at(-8)), &engine.Response{Sent: at(-8), Received: at(-7.9)}, nil)
		}, moveToFront(top, old), "sidebar"},
		{"sent after the page came back: must not lead", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(0.5)), 300001, at(0.6))
		}, moveToFront(top, old), "at least 10 articles have newer comments"},
		{"two acknowledged: newest first", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(-5)), 300001, at(-4.9))
			m.endComment(m.beginComment(old+1, "", "x", at(-4)), 300002, at(-3.9))
		}, moveToFront(moveToFront(top, old), old+1), ""},
		{"two acknowledged: wrong order", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(-5)), 300001, at(-4.9))
			m.endComment(m.beginComment(old+1, "", "x", at(-4)), 300002, at(-3.9))
		}, moveToFront(moveToFront(top, old+1), old), "above article"},
		{"an older comment in flight cannot excuse a missing newer one", func(m *model) {
			m.beginComment(old+1, "", "x", at(-0.1))
			m.endComment(m.beginComment(old, "", "x", at(-5)), 300001, at(-4.9))
		}, moveToFront(top, old+1), "lacks article 17"},
		{"ten in flight may push an acknowledged one out", func(m *model) {
			m.endComment(m.beginComment(old, "", "x", at(-5)), 300001, at(-4.9))
			for i := range int64(10) {
				m.beginComment(100+i, "", "x", at(-0.2))
			}
		}, []int64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(in)
			if c.setup != nil {
				c.setup(m)
			}
			err := m.checkSidebar(render(m, c.sidebar, "", at(0), at(0.2)))
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("a correct sidebar failed: %v", err)
			case c.wantErr != "" && (err == nil || !regexp.MustCompile(c.wantErr).MatchString(err.Error())):
				t.Errorf("got %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

// articleMain renders the <main> of article id's page with the given comments.
func articleMain(m *model, id int64, comments []shownComment) string {
	a, _ := m.article(id, true)
	var b strings.Builder
	fmt.Fprintf(&b, `<article class="article" id="article-%d"><h2 class="article-title"><a class="article-link" href="/articles/%d">%s</a></h2><p class="article-created">%s</p><div class="article-body">%s</div></article>`,
		id, id, html.EscapeString(a.title), a.created.Format(data.TimeFormat), strings.ReplaceAll(html.EscapeString(a.body), "\n", "<br>"))
	fmt.Fprintf(&b, `<section id="comments"><h3>Comments (<span id="comment-count">%d</span>)</h3><ol id="comment-list">`, len(comments))
	for _, c := range comments {
		fmt.Fprintf(&b, `<li class="comment" id="comment-%d"><p class="comment-name">%s</p><div class="comment-body">%s</div><p class="comment-created">%s</p></li>`,
			c.id, html.EscapeString(c.name), strings.ReplaceAll(html.EscapeString(c.body), "\n", "<br>"), c.created)
	}
	fmt.Fprintf(&b, `</ol></section><form id="comment-form" method="post" action="/articles/%d/comments"></form>`, id)
	return b.String()
}

func TestArticleCheckUnderConcurrency(t *testing.T) {
	in := loadInitial()
	const id = 17
	var initialShown []shownComment
	for _, k := range in.byArticle[id] {
		c := in.cfg.Comment(int64(k))
		name := c.Name
		if name == "" {
			name = data.AnonymousName
		}
		initialShown = append(initialShown, shownComment{int64(k), name, c.Body, c.CreatedAt.Format(data.TimeFormat)})
	}
	mine := shownComment{300001, "me", "hello\nworld", at(-2).Format(data.TimeFormat)}
	with := append(append([]shownComment(nil), initialShown...), mine)
	cases := []struct {
		name     string
		setup    func(m *model)
		comments []shownComment
		wantErr  string
	}{
		{"initial", nil, initialShown, ""},
		{"acknowledged and shown", func(m *model) { m.endComment(m.beginComment(id, "me", "hello\nworld", at(-2.5)), 300001, at(-2)) }, with, ""},
		{"acknowledged 2 s before and missing", func(m *model) {
			m.endComment(m.beginComment(id, "me", "hello\nworld", at(-2.5)), 300001, at(-2))
		}, initialShown, "is missing"},
		{"acknowledged 0.5 s before and not yet shown", func(m *model) {
			m.endComment(m.beginComment(id, "me", "hello\nworld", at(-1)), 300001, at(-0.5))
		}, initialShown, ""},
		{"in flight and already shown", func(m *model) { m.beginComment(id, "me", "hello\nworld", at(-0.1)) }, with, ""},
		{"shown before it was sent", func(m *model) {
			m.endComment(m.beginComment(id, "me", "hello\nworld", at(1)), 300001, at(1.1))
		}, with, "before it was posted"},
		{"shown with another body", func(m *model) {
			m.endComment(m.beginComment(id, "me", "hello world", at(-2.5)), 300001, at(-2))
		}, with, "body differs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(in)
			if c.setup != nil {
				c.setup(m)
			}
			p := render(m, initialTop(in), articleMain(m, id, c.comments), at(0), at(0.2))
			err := m.checkArticle(p, id, true)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("a correct page failed: %v", err)
			case c.wantErr != "" && (err == nil || !regexp.MustCompile(c.wantErr).MatchString(err.Error())):
				t.Errorf("got %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

// TestNewIDsMustIncrease: ids given out of order by concurrent posts are
// fine; an id below one acknowledged before the post was sent, or an id
// given twice, is a critical error.
func TestNewIDsMustIncrease(t *testing.T) {
	in := loadInitial()
	post := func(m *model, id int64, sent, received float64) error {
		return m.endComment(m.beginComment(17, "", "x", at(sent)), id, at(received))
	}
	cases := []struct {
		name string
		ids  [][3]float64 // id, sent, received
		want string
	}{
		{"one after another", [][3]float64{{300001, 0, 0.1}, {300002, 0.2, 0.3}}, ""},
		{"concurrent, answered out of order", [][3]float64{{300002, 0, 0.3}, {300001, 0.1, 0.2}}, ""},
		{"counting down", [][3]float64{{300009, 0, 0.1}, {300008, 0.2, 0.3}}, "id-order"},
		{"given twice", [][3]float64{{300001, 0, 0.3}, {300001, 0.1, 0.2}}, "id-reused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(in)
			var err error
			for _, p := range c.ids {
				if err = post(m, int64(p[0]), p[1], p[2]); err != nil {
					break
				}
			}
			if got := codeOf(err); got != c.want {
				t.Errorf("got %q (%v), want %q", got, err, c.want)
			}
		})
	}
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return engine.AsError(err).Code
}

// TestFailedCommentsAreSettled: a comment whose answer never came is read
// back settleAfter later and counted as stored (under the id the page shows)
// or not, and stops excusing anything.
func TestFailedCommentsAreSettled(t *testing.T) {
	in := loadInitial()
	read := func(sent float64) *engine.Response {
		return &engine.Response{Sent: at(sent), Received: at(sent + 0.1)}
	}
	t.Run("not due before settleAfter", func(t *testing.T) {
		m := newModel(in)
		m.failComment(m.beginComment(17, "", "x", at(0)), at(1))
		if p := m.dueComment(at(1).Add(settleAfter - time.Millisecond)); p != nil {
			t.Fatal("due too early")
		}
		if p := m.dueComment(at(1).Add(settleAfter)); p == nil || m.dueComment(at(100)) != nil {
			t.Fatal("not due once, and only once, at settleAfter")
		}
	})
	t.Run("shown: stored under its id", func(t *testing.T) {
		m := newModel(in)
		m.failComment(m.beginComment(17, "me", "hello", at(0)), at(1))
		p := m.dueComment(at(10))
		if err := m.settleComment(p, read(10), []shownComment{{id: 300001, name: "me", body: "hello"}}); err != nil || p.id != 300001 || m.anyFailed() {
			t.Fatalf("err %v, id %d, still failed %v", err, p.id, m.anyFailed())
		}
		if !p.definite(at(11.2)) {
			t.Error("a settled comment is not required from then on")
		}
	})
	t.Run("not shown: never stored", func(t *testing.T) {
		m := newModel(in)
		m.failComment(m.beginComment(17, "me", "hello", at(0)), at(1))
		if err := m.settleComment(m.dueComment(at(10)), read(10), []shownComment{{id: 300001, name: "other", body: "hello"}}); err != nil {
			t.Fatal(err)
		}
		if m.anyFailed() || len(m.runComments(17)) != 0 {
			t.Errorf("still unsure: %v, comments of the article %d", m.anyFailed(), len(m.runComments(17)))
		}
	})
	t.Run("read failed: settled later", func(t *testing.T) {
		m := newModel(in)
		m.failComment(m.beginComment(17, "me", "hello", at(0)), at(1))
		_ = m.settleComment(m.dueComment(at(10)), nil, nil)
		if !m.anyFailed() || m.dueComment(at(11)) == nil {
			t.Error("a failed read settled the comment")
		}
	})
}

// TestFailedArticlesAreSettled: the ids a failed article may have are those
// above every article acknowledged before it was sent and no other's; once
// settled, it no longer lets / show an unknown article.
func TestFailedArticlesAreSettled(t *testing.T) {
	in := loadInitial()
	m := newModel(in)
	before := m.beginArticle("before", "b", at(0))
	if err := m.endArticle(before, 10001, at(0.1)); err != nil {
		t.Fatal(err)
	}
	lost := m.beginArticle("lost", "l", at(1))
	concurrent := m.beginArticle("concurrent", "c", at(1.1))
	m.failArticle(lost, at(2))
	if err := m.endArticle(concurrent, 10002, at(1.5)); err != nil {
		t.Fatal(err)
	}
	if p := m.dueArticle(at(2).Add(settleAfter - time.Millisecond)); p != nil {
		t.Fatal("due too early")
	}
	p := m.dueArticle(at(2).Add(settleAfter))
	if p != lost {
		t.Fatalf("due: %+v", p)
	}
	ids, ok := m.articleCandidates(p, 10004)
	if !ok || fmt.Sprint(ids) != "[10003 10004]" {
		t.Fatalf("candidates %v %v", ids, ok)
	}
	if _, known, maybe := m.lookupArticle(10003, false, at(10)); known || !maybe {
		t.Fatal("an unsettled failed article does not excuse an unknown one")
	}
	if err := m.settleArticle(p, 0, time.Time{}, true); err != nil {
		t.Fatal(err)
	}
	if _, known, maybe := m.lookupArticle(10003, false, at(10)); known || maybe || m.anyFailed() {
		t.Error("a settled article still excuses an unknown one")
	}
	m2 := newModel(in)
	far := m2.beginArticle("far", "f", at(0))
	m2.failArticle(far, at(1))
	if _, ok := m2.articleCandidates(m2.dueArticle(at(100)), 10000+maxArticleProbes+1); ok || m2.dueArticle(at(200)) != nil {
		t.Error("too many ids to try: tried, or tried again")
	}
}
