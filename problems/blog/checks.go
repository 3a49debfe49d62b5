package blog

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/blog/data"
)

// checkSidebarLinks checks the links a page's sidebar lists, in its order:
// ten distinct articles. complete is false when the parse stopped at a link
// it could not read: a repeat above that link still comes first, and the
// count is not checked.
func checkSidebarLinks(res *engine.Response, sidebar []link, complete bool) error {
	seen := make(map[int64]bool, len(sidebar))
	for _, l := range sidebar {
		if seen[l.id] {
			return res.Criticalf("sidebar", "the sidebar lists article %d twice", l.id)
		}
		seen[l.id] = true
	}
	if complete && len(sidebar) != 10 {
		return res.Criticalf("sidebar", "the sidebar lists %d articles, expected 10", len(sidebar))
	}
	return nil
}

// checkSidebar checks p's sidebar against the model: it must be the ten
// most recently commented articles as of some moment the request could have
// seen, counting every comment acknowledged at least Freshness before the
// request and allowing those that were not.
func (m *model) checkSidebar(p *page) error {
	res := p.res
	ids := make([]int64, len(p.sidebar))
	for i, l := range p.sidebar {
		ids[i] = l.id
	}
	if err := checkSidebarRanks(res, ids, m.sidebar(res.Sent, res.Received, ids)); err != nil {
		return err
	}
	for _, l := range p.sidebar {
		a, ok, maybe := m.lookupArticle(l.id, false, res.Received)
		if ok && l.title != a.title {
			return res.Criticalf("content", "the sidebar shows article %d as %q, expected %q", l.id, abbreviate(l.title), abbreviate(a.title))
		}
		if !ok && !maybe {
			return res.Criticalf("content", "the sidebar lists article %d, which does not exist", l.id)
		}
	}
	return nil
}

// checkSidebarRanks checks the articles a sidebar lists, in its order,
// against the model's view v of it: each may rank among the ten newest, none
// above one it cannot outrank, and none missing that must show.
func checkSidebarRanks(res *engine.Response, ids []int64, v sidebarView) error {
	tenth := v.top[len(v.top)-1].last
	for i, id := range ids {
		if v.lastMax[i] < tenth {
			return res.Criticalf("sidebar", "the sidebar lists article %d, but at least 10 articles have newer comments", id)
		}
		for j, above := range ids[:i] {
			if v.lastMin[i] > v.lastMax[j] {
				return res.Criticalf("sidebar", "the sidebar lists article %d above article %d, whose newest comment is newer", above, id)
			}
		}
	}
	listed := map[int64]bool{}
	for _, id := range ids {
		listed[id] = true
	}
	for i, c := range v.top {
		if !listed[c.article] && v.outrankers[i] < 10 {
			return res.Criticalf("stale", "the sidebar lacks article %d, whose comment %d should show by now", c.article, c.last)
		}
	}
	return nil
}

// checkIndex checks / : the ten newest articles, newest first, none skipped.
func (m *model) checkIndex(p *page, full bool) error {
	res := p.res
	entries, err := parseIndex(p)
	if err != nil {
		return err
	}
	if len(entries) != 10 {
		return res.Criticalf("content", "/ shows %d articles, expected 10", len(entries))
	}
	lo, hi := m.newestArticleBounds(res.Sent, res.Received)
	if entries[0].id < lo {
		return res.Criticalf("stale", "the newest article shown is %d, but article %d should show by now", entries[0].id, lo)
	}
	for i, e := range entries {
		if e.id > hi {
			return res.Criticalf("content", "/ shows article %d, which does not exist", e.id)
		}
		if i > 0 {
			prev := entries[i-1].id
			if e.id >= prev {
				return res.Criticalf("order", "/ shows article %d after article %d: expected newest first", e.id, prev)
			}
			if prev <= m.in.articles() && e.id != prev-1 {
				return res.Criticalf("content", "/ skips from article %d to %d", prev, e.id)
			}
			if skipped := m.definiteArticlesBetween(e.id, prev, res.Sent); len(skipped) > 0 {
				return res.Criticalf("stale", "/ skips article %d, which should show by now", skipped[0])
			}
		}
		if err := m.checkEntry(res, e, full); err != nil {
			return err
		}
	}
	return nil
}

// checkEntry compares an article block with the model; full adds the body.
func (m *model) checkEntry(res *engine.Response, e entry, full bool) error {
	what := fmt.Sprintf("article %d", e.id)
	if e.titleHref != fmt.Sprintf("/articles/%d", e.id) {
		return res.Applicationf("html", "%s's title links to %q", what, e.titleHref)
	}
	a, ok, maybe := m.lookupArticle(e.id, full, res.Received)
	if !ok {
		if maybe {
			return nil // perhaps an article whose post is unsure: its text cannot be known
		}
		return res.Criticalf("content", "%s does not exist", what)
	}
	if e.title != a.title {
		return res.Criticalf("content", "%s has title %q, expected %q", what, abbreviate(e.title), abbreviate(a.title))
	}
	sent, received := m.appTimes(a.sent, a.received)
	if err := checkTime(res, what, e.created, a.created, sent, received); err != nil {
		return err
	}
	if full && e.body != normalize(a.body) {
		return res.Criticalf("content", "%s's body differs from what was posted (%q...)", what, abbreviate(e.body))
	}
	return nil
}

// checkArticle checks an article page: the article, and every comment that
// must show, in id order, each one known, none twice.
func (m *model) checkArticle(p *page, id int64, full bool) error {
	res := p.res
	e, err := parseArticle(p, id)
	if err != nil {
		return err
	}
	if err := m.checkEntry(res, e, full); err != nil {
		return err
	}
	shown, count, err := parseComments(p, id)
	if err != nil {
		return err
	}
	if count != strconv.Itoa(len(shown)) {
		return res.Criticalf("content", "the comment count reads %q but the page shows %d comments", count, len(shown))
	}
	for i := 1; i < len(shown); i++ {
		if shown[i].id <= shown[i-1].id {
			return res.Criticalf("order", "comment %d is shown after comment %d: expected increasing ids", shown[i].id, shown[i-1].id)
		}
	}
	initial, err := m.checkInitialComments(res, id, shown, full)
	if err != nil {
		return err
	}
	return m.checkRunComments(res, id, shown[initial:])
}

// checkShownArticle checks that the page for article id shows that article:
// e is its block, read when ok (a block without its id article-ID shows
// some other article), and block the block's id attribute.
func checkShownArticle(res *engine.Response, id int64, e entry, ok bool, block string) error {
	if !ok || e.id != id {
		return res.Criticalf("content", "the page for article %d shows article %q", id, block)
	}
	return nil
}

// checkInitialComments checks that article id's page shows the article's
// initial comments first, all of them, exactly; full compares every text.
// It returns how many there are.
func (m *model) checkInitialComments(res *engine.Response, id int64, shown []shownComment, full bool) (int, error) {
	var initialIDs []int32
	if id <= m.in.articles() {
		initialIDs = m.in.byArticle[id]
	}
	if len(shown) < len(initialIDs) {
		return 0, res.Criticalf("content", "the page shows %d comments, but the article has %d from the initial data alone", len(shown), len(initialIDs))
	}
	for i, k := range initialIDs {
		if shown[i].id != int64(k) {
			return 0, res.Criticalf("content", "comment %d is missing (found comment %d in its place)", k, shown[i].id)
		}
		if full {
			c := m.in.cfg.Comment(int64(k))
			if err := checkComment(res, shown[i], c.Name, c.Body, c.CreatedAt, time.Time{}, time.Time{}); err != nil {
				return 0, err
			}
		}
	}
	return len(initialIDs), nil
}

// checkRunComments checks the comments article id's page shows after the
// initial ones against the comments of the run: those acknowledged long
// enough ago must show; those in flight may; nothing else may.
func (m *model) checkRunComments(res *engine.Response, id int64, shown []shownComment) error {
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
	for _, s := range shown {
		present[s.id] = true
		c, ok := byID[s.id]
		if !ok {
			if s.id <= m.in.comments() || unsure == 0 {
				return res.Criticalf("content", "the page shows comment %d, which is not a comment of article %d", s.id, id)
			}
			unsure--
			continue
		}
		if !c.sent.Before(res.Received) {
			return res.Criticalf("content", "the page shows comment %d before it was posted", s.id)
		}
		sent, received := m.appTimes(c.sent, c.received)
		if err := checkComment(res, s, c.name, c.body, time.Time{}, sent, received); err != nil {
			return err
		}
	}
	for _, c := range run {
		if c.definite(res.Sent) && !present[c.id] {
			return res.Criticalf("stale", "comment %d (acknowledged %.1fs before this request) is missing", c.id, res.Sent.Sub(c.received).Seconds())
		}
	}
	return nil
}

// checkComment compares a shown comment with what it must be: its name (or
// the anonymous label), its body, and its time (exact when created is known,
// else within [sent, received]).
func checkComment(res *engine.Response, s shownComment, name, body string, created, sent, received time.Time) error {
	what := fmt.Sprintf("comment %d", s.id)
	if name = displayName(name); s.name != name {
		return res.Criticalf("content", "%s shows name %q, expected %q", what, abbreviate(s.name), abbreviate(name))
	}
	if s.body != normalize(body) {
		return res.Criticalf("content", "%s's body differs from what was posted (%q...)", what, abbreviate(s.body))
	}
	return checkTime(res, what, s.created, created, sent, received)
}

// displayName is how a comment's name shows: the anonymous label for none.
func displayName(name string) string {
	if name == "" {
		return data.AnonymousName
	}
	return name
}

// checkTime checks a shown time: exactly want for known data, or within the
// post's round trip (with a second of slack) for a post of the run.
func checkTime(res *engine.Response, what, shown string, want time.Time, sent, received time.Time) error {
	if !want.IsZero() {
		if shown != want.UTC().Format(data.TimeFormat) {
			return res.Criticalf("content", "%s shows time %q, expected %q", what, shown, want.UTC().Format(data.TimeFormat))
		}
		return nil
	}
	t, err := time.ParseInLocation(data.TimeFormat, shown, time.UTC)
	if err != nil {
		return res.Criticalf("content", "%s shows time %q, not YYYY-MM-DD HH:MM:SS", what, shown)
	}
	if t.Before(sent.Add(-time.Second).Truncate(time.Second)) || t.After(received.Add(time.Second)) {
		return res.Criticalf("content", "%s shows time %s, outside the post's request (%s to %s UTC on the app's clock)", what, shown,
			sent.UTC().Format(data.TimeFormat), received.UTC().Format(data.TimeFormat))
	}
	return nil
}

// normalize is how the manual says bodies are stored and shown.
func normalize(body string) string {
	return strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))
}

// abbreviate shortens a text to 30 runes for a message.
func abbreviate(s string) string {
	r := []rune(s)
	if len(r) > 30 {
		return string(r[:30]) + "…"
	}
	return s
}
