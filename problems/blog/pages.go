package blog

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/blog/data"
)

// requiredAssets are the tags every page must carry (MANUAL: "Every HTML page").
var requiredAssets = []struct{ selector, what string }{
	{`head link[rel="stylesheet"][href="/static/css/blog.css"]`, "the stylesheet link"},
	{`head script[src="/static/js/blog.js"]`, "the script tag"},
	{`#header img#logo[src="/static/img/logo.png"]`, "the logo"},
	{`#footer img#badge[src="/static/img/badge.png"]`, "the badge"},
	{`#footer img#banner[src="/static/img/banner.jpg"]`, "the banner"},
}

// link is a sidebar or index entry: an article id and the title shown.
type link struct {
	id    int64
	title string
}

// page is a parsed HTML page of the blog.
type page struct {
	res     *engine.Response
	doc     *goquery.Document
	sidebar []link
}

func critical(res *engine.Response, code, format string, args ...any) error {
	e := engine.Criticalf(code, format, args...)
	e.Request, e.URL = res.Endpoint, res.URL.String()
	return e
}

func wrong(res *engine.Response, code, format string, args ...any) error {
	e := engine.Applicationf(code, format, args...)
	e.Request, e.URL = res.Endpoint, res.URL.String()
	return e
}

// parsePage checks what every page has in common: status 200, HTML, the
// asset tags, the post link and a sidebar of ten distinct articles.
func parsePage(res *engine.Response) (*page, error) {
	if err := res.Check(engine.Status(200), engine.ContentType("text/html")); err != nil {
		return nil, err
	}
	doc, err := res.Document()
	if err != nil {
		return nil, err
	}
	for _, a := range requiredAssets {
		if doc.Find(a.selector).Length() != 1 {
			return nil, wrong(res, "asset-tag", "the page lacks %s (%s)", a.what, a.selector)
		}
	}
	if href, _ := doc.Find("#header a#post-link").Attr("href"); href != "/post" {
		return nil, wrong(res, "html", `the header lacks the link a#post-link to /post`)
	}
	items := doc.Find("#sidebar ol#recent-commented li.recent-item a.recent-link")
	if doc.Find("#sidebar ol#recent-commented").Length() != 1 {
		return nil, wrong(res, "html", "the page has no sidebar (#sidebar ol#recent-commented)")
	}
	p := &page{res: res, doc: doc}
	seen := map[int64]bool{}
	var perr error
	items.EachWithBreak(func(_ int, s *goquery.Selection) bool {
		id, ok := articleHref(s.AttrOr("href", ""))
		if !ok {
			perr = wrong(res, "html", "sidebar link %q is not /articles/ID", s.AttrOr("href", ""))
			return false
		}
		if seen[id] {
			perr = critical(res, "sidebar", "the sidebar lists article %d twice", id)
			return false
		}
		seen[id] = true
		p.sidebar = append(p.sidebar, link{id, strings.TrimSpace(s.Text())})
		return true
	})
	if perr != nil {
		return nil, perr
	}
	if len(p.sidebar) != 10 {
		return nil, critical(res, "sidebar", "the sidebar lists %d articles, expected 10", len(p.sidebar))
	}
	return p, nil
}

func articleHref(href string) (int64, bool) {
	s, ok := strings.CutPrefix(href, "/articles/")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// multiline reads an element's text with each <br> as a line break. Raw
// line breaks in the markup are layout, not text (the manual renders every
// line break of a body as <br>), so they are dropped.
func multiline(s *goquery.Selection) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(dropLineBreaks.Replace(n.Data))
		case html.ElementNode:
			if n.Data == "br" {
				b.WriteByte('\n')
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range s.Nodes {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// normalize is how the manual says bodies are stored and shown.
func normalize(body string) string {
	return strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))
}

// checkTime checks a shown time: exactly want for known data, or within the
// post's round trip (with a second of slack) for a post of the run.
func checkTime(res *engine.Response, what, shown string, want time.Time, sent, received time.Time) error {
	if !want.IsZero() {
		if shown != want.UTC().Format(data.TimeFormat) {
			return critical(res, "content", "%s shows time %q, expected %q", what, shown, want.UTC().Format(data.TimeFormat))
		}
		return nil
	}
	t, err := time.ParseInLocation(data.TimeFormat, shown, time.UTC)
	if err != nil {
		return critical(res, "content", "%s shows time %q, not YYYY-MM-DD HH:MM:SS", what, shown)
	}
	if t.Before(sent.Add(-time.Second).Truncate(time.Second)) || t.After(received.Add(time.Second)) {
		return critical(res, "content", "%s shows time %s, outside the post's request (%s to %s UTC)", what, shown,
			sent.UTC().Format(data.TimeFormat), received.UTC().Format(data.TimeFormat))
	}
	return nil
}

// entry is an article block as shown on / and on its page.
type entry struct {
	id                   int64
	title, created, body string
	titleHref            string
}

func parseEntry(s *goquery.Selection) (entry, bool) {
	idAttr := s.AttrOr("id", "")
	id, err := strconv.ParseInt(strings.TrimPrefix(idAttr, "article-"), 10, 64)
	if err != nil || !strings.HasPrefix(idAttr, "article-") {
		return entry{}, false
	}
	return entry{
		id:        id,
		title:     strings.TrimSpace(s.Find("h2.article-title a.article-link").Text()),
		titleHref: s.Find("h2.article-title a.article-link").AttrOr("href", ""),
		created:   strings.TrimSpace(s.Find("p.article-created").Text()),
		body:      multiline(s.Find("div.article-body")),
	}, true
}

// checkEntry compares an article block with the model; full adds the body.
func (m *model) checkEntry(res *engine.Response, e entry, full bool) error {
	what := fmt.Sprintf("article %d", e.id)
	if e.titleHref != fmt.Sprintf("/articles/%d", e.id) {
		return wrong(res, "html", "%s's title links to %q", what, e.titleHref)
	}
	a, ok, maybe := m.lookupArticle(e.id, full, res.Received)
	if !ok {
		if maybe {
			return nil // perhaps an article whose post is unsure: its text cannot be known
		}
		return critical(res, "content", "%s does not exist", what)
	}
	if e.title != a.title {
		return critical(res, "content", "%s has title %q, expected %q", what, abbreviate(e.title), abbreviate(a.title))
	}
	if err := checkTime(res, what, e.created, a.created, a.sent, a.received); err != nil {
		return err
	}
	if full && e.body != normalize(a.body) {
		return critical(res, "content", "%s's body differs from what was posted (%q...)", what, abbreviate(e.body))
	}
	return nil
}

func abbreviate(s string) string {
	r := []rune(s)
	if len(r) > 30 {
		return string(r[:30]) + "…"
	}
	return s
}

// checkSidebar checks p's sidebar against the model: it must be the ten
// most recently commented articles as of some moment the request could have
// seen, counting every comment acknowledged at least Freshness before the
// request and allowing those that were not.
func (m *model) checkSidebar(p *page) error {
	res := p.res
	m.mu.Lock()
	top, outrankers := m.sidebarBoundsLocked(res.Sent, res.Received)
	listed := map[int64]int{}
	for i, l := range p.sidebar {
		listed[l.id] = i
	}
	var err error
	tenth := top[len(top)-1].last
	for i, l := range p.sidebar {
		if mx := m.lastMaxLocked(l.id, res.Received); mx < tenth {
			err = critical(res, "sidebar", "the sidebar lists article %d, but at least 10 articles have newer comments", l.id)
			break
		}
		for _, above := range p.sidebar[:i] {
			if m.lastMinLocked(l.id, res.Sent) > m.lastMaxLocked(above.id, res.Received) {
				err = critical(res, "sidebar", "the sidebar lists article %d above article %d, whose newest comment is newer", above.id, l.id)
				break
			}
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		for i, c := range top {
			if _, ok := listed[c.article]; !ok && outrankers[i] < 10 {
				err = critical(res, "stale", "the sidebar lacks article %d, whose comment %d should show by now", c.article, c.last)
				break
			}
		}
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	for _, l := range p.sidebar {
		a, ok, maybe := m.lookupArticle(l.id, false, res.Received)
		if ok && l.title != a.title {
			return critical(res, "content", "the sidebar shows article %d as %q, expected %q", l.id, abbreviate(l.title), abbreviate(a.title))
		}
		if !ok && !maybe {
			return critical(res, "content", "the sidebar lists article %d, which does not exist", l.id)
		}
	}
	return nil
}

// checkIndex checks / : the ten newest articles, newest first, none skipped.
func (m *model) checkIndex(p *page, full bool) error {
	res := p.res
	var entries []entry
	var perr error
	p.doc.Find("main#main section#articles > article.article").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		e, ok := parseEntry(s)
		if !ok {
			perr = wrong(res, "html", "an article block has no id article-ID")
			return false
		}
		entries = append(entries, e)
		return true
	})
	if perr != nil {
		return perr
	}
	if len(entries) != 10 {
		return critical(res, "content", "/ shows %d articles, expected 10", len(entries))
	}
	lo, hi := m.newestArticleBounds(res.Sent, res.Received)
	if entries[0].id < lo {
		return critical(res, "stale", "the newest article shown is %d, but article %d should show by now", entries[0].id, lo)
	}
	for i, e := range entries {
		if e.id > hi {
			return critical(res, "content", "/ shows article %d, which does not exist", e.id)
		}
		if i > 0 {
			prev := entries[i-1].id
			if e.id >= prev {
				return critical(res, "order", "/ shows article %d after article %d: expected newest first", e.id, prev)
			}
			if prev <= m.in.articles() && e.id != prev-1 {
				return critical(res, "content", "/ skips from article %d to %d", prev, e.id)
			}
			if skipped := m.definiteArticlesBetween(e.id, prev, res.Sent); len(skipped) > 0 {
				return critical(res, "stale", "/ skips article %d, which should show by now", skipped[0])
			}
		}
		if err := m.checkEntry(res, e, full); err != nil {
			return err
		}
	}
	return nil
}

// shownComment is a comment as an article page shows it.
type shownComment struct {
	id                  int64
	name, body, created string
}

// checkArticle checks an article page: the article, and every comment that
// must show, in id order, each one known, none twice.
func (m *model) checkArticle(p *page, id int64, full bool) error {
	res := p.res
	blocks := p.doc.Find("main#main > article.article")
	if blocks.Length() != 1 {
		return wrong(res, "html", "the page has %d article blocks, expected 1", blocks.Length())
	}
	e, ok := parseEntry(blocks)
	if !ok || e.id != id {
		return critical(res, "content", "the page for article %d shows article %q", id, blocks.AttrOr("id", ""))
	}
	if err := m.checkEntry(res, e, full); err != nil {
		return err
	}
	if p.doc.Find(fmt.Sprintf(`form#comment-form[method="post"][action="/articles/%d/comments"]`, id)).Length() != 1 {
		return wrong(res, "html", "the page lacks the comment form posting to /articles/%d/comments", id)
	}
	var shown []shownComment
	var perr error
	p.doc.Find("section#comments ol#comment-list > li.comment").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		idAttr := s.AttrOr("id", "")
		cid, err := strconv.ParseInt(strings.TrimPrefix(idAttr, "comment-"), 10, 64)
		if err != nil || !strings.HasPrefix(idAttr, "comment-") {
			perr = wrong(res, "html", "a comment has no id comment-ID")
			return false
		}
		shown = append(shown, shownComment{cid, strings.TrimSpace(s.Find("p.comment-name").Text()),
			multiline(s.Find("div.comment-body")), strings.TrimSpace(s.Find("p.comment-created").Text())})
		return true
	})
	if perr != nil {
		return perr
	}
	if n := strings.TrimSpace(p.doc.Find("section#comments span#comment-count").Text()); n != strconv.Itoa(len(shown)) {
		return critical(res, "content", "the comment count reads %q but the page shows %d comments", n, len(shown))
	}
	for i := 1; i < len(shown); i++ {
		if shown[i].id <= shown[i-1].id {
			return critical(res, "order", "comment %d is shown after comment %d: expected increasing ids", shown[i].id, shown[i-1].id)
		}
	}
	// The initial comments come first, all of them, exactly.
	var initialIDs []int32
	if id <= m.in.articles() {
		initialIDs = m.in.byArticle[id]
	}
	if len(shown) < len(initialIDs) {
		return critical(res, "content", "the page shows %d comments, but the article has %d from the initial data alone", len(shown), len(initialIDs))
	}
	for i, k := range initialIDs {
		if shown[i].id != int64(k) {
			return critical(res, "content", "comment %d is missing (found comment %d in its place)", k, shown[i].id)
		}
		if full {
			c := m.in.cfg.Comment(int64(k))
			if err := checkComment(res, shown[i], c.Name, c.Body, c.CreatedAt, time.Time{}, time.Time{}); err != nil {
				return err
			}
		}
	}
	// Then the comments of the run: those acknowledged long enough ago must
	// show; those in flight may; nothing else may.
	run := m.runComments(id)
	byID := map[int64]post{}
	unsure := 0
	for _, c := range run {
		if c.done() {
			byID[c.id] = c
		} else if c.sent.Before(res.Received) {
			unsure++
		}
	}
	present := map[int64]bool{}
	for _, s := range shown[len(initialIDs):] {
		present[s.id] = true
		c, ok := byID[s.id]
		if !ok {
			if s.id <= m.in.comments() || unsure == 0 {
				return critical(res, "content", "the page shows comment %d, which is not a comment of article %d", s.id, id)
			}
			unsure--
			continue
		}
		if !c.sent.Before(res.Received) {
			return critical(res, "content", "the page shows comment %d before it was posted", s.id)
		}
		if err := checkComment(res, s, c.name, c.body, time.Time{}, c.sent, c.received); err != nil {
			return err
		}
	}
	for _, c := range run {
		if c.definite(res.Sent) && !present[c.id] {
			return critical(res, "stale", "comment %d (acknowledged %.1fs before this request) is missing", c.id, res.Sent.Sub(c.received).Seconds())
		}
	}
	return nil
}

func checkComment(res *engine.Response, s shownComment, name, body string, created, sent, received time.Time) error {
	what := fmt.Sprintf("comment %d", s.id)
	if name == "" {
		name = data.AnonymousName
	}
	if s.name != name {
		return critical(res, "content", "%s shows name %q, expected %q", what, abbreviate(s.name), abbreviate(name))
	}
	if s.body != normalize(body) {
		return critical(res, "content", "%s's body differs from what was posted (%q...)", what, abbreviate(s.body))
	}
	return checkTime(res, what, s.created, created, sent, received)
}

var dropLineBreaks = strings.NewReplacer("\r", "", "\n", "")
