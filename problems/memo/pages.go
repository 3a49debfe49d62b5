package memo

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
)

// The asset tags every page carries (MANUAL: "Every HTML page").
var assetTags = []string{
	`head link[rel="stylesheet"][href="/static/css/memo.css"]`,
	`head script[src="/static/js/memo.js"]`,
	`header#header img#logo[src="/static/img/logo.png"]`,
}

// sessionCookie is the one cookie the app may set.
const sessionCookie = "memo_session"

// entry is a memo as a list shows it.
type entry struct {
	id                     int64
	title, author, created string
	private                bool // /mypage's mark
}

// listPage is /, /recent/N or /mypage parsed.
type listPage struct {
	total   int64 // -1 on /mypage
	entries []entry
	more    string // the href of a#more, "" without one
	csrf    string // /mypage's form token
}

// memoPage is /memos/ID parsed.
type memoPage struct {
	id                          int64
	author, created, visibility string
	content                     *goquery.Selection
	older, newer                int64 // 0: no link
}

// checkCookies: the app sets no cookie but the session's (critical: a
// second cookie can carry what a cache shares across users).
func checkCookies(res *engine.Response) error {
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name != sessionCookie {
			return res.Criticalf("cookie", "the app set the cookie %q; it may set %s only", c.Name, sessionCookie)
		}
	}
	return nil
}

// page checks what every page has: status 200, HTML, the asset tags, the
// cookie rule, and the header of the session it was served to: as user
// name (with Cache-Control: private), or signed out (name ""). It returns
// the parsed document and the header's CSRF token.
func page(res *engine.Response, name string) (*goquery.Document, string, error) {
	if err := res.Check(engine.Status(http.StatusOK), engine.ContentType("text/html")); err != nil {
		return nil, "", err
	}
	return pageBody(res, name)
}

// pageBody is page without the status check, for error pages.
func pageBody(res *engine.Response, name string) (*goquery.Document, string, error) {
	if err := checkCookies(res); err != nil {
		return nil, "", err
	}
	if name != "" {
		if err := res.Check(engine.Critical(engine.HeaderHasToken("Cache-Control", "private"))); err != nil {
			return nil, "", err
		}
	}
	doc, err := res.Document()
	if err != nil {
		return nil, "", err
	}
	for _, tag := range assetTags {
		if doc.Find(tag).Length() != 1 {
			return nil, "", res.Applicationf("asset-tag", "the page lacks the asset tag %s", tag)
		}
	}
	shown := doc.Find("header#header span#username")
	switch {
	case name == "" && shown.Length() > 0:
		return nil, "", res.Criticalf("other-user", "a signed-out visitor got a page for the user %q", shown.First().Text())
	case name != "" && (shown.Length() != 1 || shown.Text() != name):
		return nil, "", res.Criticalf("other-user", "the page shows the user %q to %q", shown.Text(), name)
	}
	token := ""
	if name != "" {
		token = doc.Find(`header#header form#signout input[name="csrf_token"]`).AttrOr("value", "")
		if token == "" {
			return nil, "", res.Applicationf("html", "the header has no sign-out form with its csrf_token")
		}
	}
	return doc, token, nil
}

// parseList parses the list of ol#memos (and, unless mine, #total-count and
// a#more).
func parseList(res *engine.Response, doc *goquery.Document, mine bool) (*listPage, error) {
	p := &listPage{total: -1}
	if !mine {
		n, err := strconv.ParseInt(strings.TrimSpace(doc.Find("p#total span#total-count").Text()), 10, 64)
		if err != nil || n < 0 {
			return nil, res.Applicationf("html", "the page has no total (p#total span#total-count)")
		}
		p.total = n
		p.more = doc.Find("a#more").AttrOr("href", "")
	}
	list := doc.Find("ol#memos")
	if list.Length() != 1 {
		return nil, res.Applicationf("html", "the page has no list of memos (ol#memos)")
	}
	var perr error
	list.Find("li.memo").EachWithBreak(func(_ int, li *goquery.Selection) bool {
		id, ok := idAfter(li.AttrOr("id", ""), "memo-")
		title, author, created := li.Find("a.memo-title"), li.Find("span.memo-author"), li.Find("span.memo-created")
		if !ok || title.Length() != 1 || author.Length() != 1 || created.Length() != 1 {
			perr = res.Applicationf("html", "a memo (li#%s) lacks its id memo-ID, a.memo-title, span.memo-author or span.memo-created", li.AttrOr("id", ""))
			return false
		}
		if href := title.AttrOr("href", ""); href != "/memos/"+strconv.FormatInt(id, 10) {
			perr = res.Applicationf("html", "memo %d links to %q", id, href)
			return false
		}
		e := entry{id: id, title: title.Text(), author: author.Text(), created: created.Text()}
		if mine {
			mark := li.Find("span.memo-private")
			e.private = mark.Length() > 0
			if e.private && mark.Text() != "private" {
				perr = res.Applicationf("html", "memo %d's mark reads %q, not private", id, mark.Text())
				return false
			}
		}
		p.entries = append(p.entries, e)
		return true
	})
	if perr != nil {
		return nil, perr
	}
	if mine {
		p.csrf = doc.Find(`form#new-memo input[name="csrf_token"]`).AttrOr("value", "")
		if p.csrf == "" || doc.Find(`form#new-memo textarea[name="content"]`).Length() != 1 {
			return nil, res.Applicationf("html", "/mypage has no form#new-memo with its csrf_token and content")
		}
	}
	return p, nil
}

// parseMemo parses /memos/ID.
func parseMemo(res *engine.Response, doc *goquery.Document) (*memoPage, error) {
	art := doc.Find("article#memo")
	id, ok := strconv.ParseInt(art.AttrOr("data-id", ""), 10, 64)
	meta := art.Find("p.memo-meta")
	author, created, vis := meta.Find("span.memo-author"), meta.Find("span.memo-created"), meta.Find("span.memo-visibility")
	content := art.Find("div#memo-content")
	if art.Length() != 1 || ok != nil || author.Length() != 1 || created.Length() != 1 || vis.Length() != 1 || content.Length() != 1 {
		return nil, res.Applicationf("html", "the memo page lacks article#memo[data-id] with its p.memo-meta spans and div#memo-content")
	}
	p := &memoPage{id: id, author: author.Text(), created: created.Text(), visibility: vis.Text(), content: content}
	for _, l := range []struct {
		sel string
		to  *int64
	}{{"nav#memo-pager a#older", &p.older}, {"nav#memo-pager a#newer", &p.newer}} {
		a := doc.Find(l.sel)
		if a.Length() == 0 {
			continue
		}
		n, ok := idAfter(a.AttrOr("href", ""), "/memos/")
		if !ok {
			return nil, res.Applicationf("html", "the link %s points to %q", l.sel, a.AttrOr("href", ""))
		}
		*l.to = n
	}
	return p, nil
}

// idAfter parses a positive id after prefix.
func idAfter(s, prefix string) (int64, bool) {
	n, ok := strings.CutPrefix(s, prefix)
	id, err := strconv.ParseInt(n, 10, 64)
	return id, ok && err == nil && id > 0
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
