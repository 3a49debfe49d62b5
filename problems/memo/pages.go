package memo

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"github.com/tunecon/tunecon/engine"
)

// The asset tags every page carries (MANUAL: "Every HTML page"), in the
// page's head or in its header#header.
var assetTags = []struct {
	inHeader bool
	tag      string
}{
	{false, `link[rel="stylesheet"][href="/static/css/memo.css"]`},
	{false, `script[src="/static/js/memo.js"]`},
	{true, `img#logo[src="/static/img/logo.png"]`},
}

// The selectors of the pages, compiled once: every page a user loads is
// parsed with them.
var (
	assetMatchers   = compileAssetTags()
	selHead         = cascadia.MustCompile("head")
	selHeader       = cascadia.MustCompile("header#header")
	selUsername     = cascadia.MustCompile("span#username")
	selSignoutToken = cascadia.MustCompile(`form#signout input[name="csrf_token"]`)
	selTotal        = cascadia.MustCompile("p#total span#total-count")
	selMore         = cascadia.MustCompile("a#more")
	selList         = cascadia.MustCompile("ol#memos")
	selItem         = cascadia.MustCompile("li.memo")
	selTitle        = cascadia.MustCompile("a.memo-title")
	selAuthor       = cascadia.MustCompile("span.memo-author")
	selCreated      = cascadia.MustCompile("span.memo-created")
	selPrivate      = cascadia.MustCompile("span.memo-private")
	selFormToken    = cascadia.MustCompile(`form#new-memo input[name="csrf_token"]`)
	selFormContent  = cascadia.MustCompile(`form#new-memo textarea[name="content"]`)
	selArticle      = cascadia.MustCompile("article#memo")
	selMeta         = cascadia.MustCompile("p.memo-meta")
	selVisibility   = cascadia.MustCompile("span.memo-visibility")
	selContent      = cascadia.MustCompile("div#memo-content")
	selOlder        = cascadia.MustCompile("nav#memo-pager a#older")
	selNewer        = cascadia.MustCompile("nav#memo-pager a#newer")
	selDiv          = cascadia.MustCompile("div")
)

func compileAssetTags() []goquery.Matcher {
	out := make([]goquery.Matcher, len(assetTags))
	for i, a := range assetTags {
		out[i] = cascadia.MustCompile(a.tag)
	}
	return out
}

// first returns the first element under doc that sel matches (none: an
// empty selection): a walk that stops there, for elements a page has once.
func first(doc *goquery.Document, sel cascadia.Selector) *goquery.Selection {
	if n := sel.MatchFirst(doc.Nodes[0]); n != nil {
		return doc.FindNodes(n)
	}
	return doc.FindNodes()
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
	if err := checkPageHeaders(res, name); err != nil {
		return nil, "", err
	}
	doc, err := res.Document()
	if err != nil {
		return nil, "", err
	}
	head, header := first(doc, selHead), first(doc, selHeader)
	for i, a := range assetTags {
		in, where := head, "head"
		if a.inHeader {
			in, where = header, "header#header"
		}
		if in.FindMatcher(assetMatchers[i]).Length() != 1 {
			return nil, "", res.Applicationf("asset-tag", "the page lacks the asset tag %s %s", where, a.tag)
		}
	}
	shown := header.FindMatcher(selUsername).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	if err := checkPageUser(res, shown, name); err != nil {
		return nil, "", err
	}
	token := ""
	if name != "" {
		token = header.FindMatcher(selSignoutToken).AttrOr("value", "")
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
		n, err := strconv.ParseInt(strings.TrimSpace(first(doc, selTotal).Text()), 10, 64)
		if err != nil || n < 0 {
			return nil, res.Applicationf("html", "the page has no total (p#total span#total-count)")
		}
		p.total = n
		p.more = doc.FindMatcher(selMore).AttrOr("href", "")
	}
	list := first(doc, selList)
	if list.Length() != 1 {
		return nil, res.Applicationf("html", "the page has no list of memos (ol#memos)")
	}
	for _, li := range list.FindMatcher(selItem).Nodes {
		id, ok := idAfter(attr(li, "id"), "memo-")
		parts, counts := itemParts(li)
		title, author, created, mark := parts[0], parts[1], parts[2], parts[3]
		if !ok || counts[0] != 1 || counts[1] != 1 || counts[2] != 1 {
			return nil, res.Applicationf("html", "a memo (li#%s) lacks its id memo-ID, a.memo-title, span.memo-author or span.memo-created", attr(li, "id"))
		}
		if href := attr(title, "href"); href != "/memos/"+strconv.FormatInt(id, 10) {
			return nil, res.Applicationf("html", "memo %d links to %q", id, href)
		}
		e := entry{id: id, title: engine.NodeText(title), author: engine.NodeText(author), created: engine.NodeText(created)}
		if mine && mark != nil {
			e.private = true
			if t := engine.NodeText(mark); t != "private" {
				return nil, res.Applicationf("html", "memo %d's mark reads %q, not private", id, t)
			}
		}
		p.entries = append(p.entries, e)
	}
	if mine {
		p.csrf = doc.FindMatcher(selFormToken).AttrOr("value", "")
		if p.csrf == "" || doc.FindMatcher(selFormContent).Length() != 1 {
			return nil, res.Applicationf("html", "/mypage has no form#new-memo with its csrf_token and content")
		}
	}
	return p, nil
}

// itemMatchers are the parts of a listed memo, in itemParts' order.
var itemMatchers = [...]cascadia.Selector{selTitle, selAuthor, selCreated, selPrivate}

// itemParts finds the parts of a listed memo in one walk of its li: the
// first of each kind, and how many there are.
func itemParts(li *html.Node) (parts [len(itemMatchers)]*html.Node, counts [len(itemMatchers)]int) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			for k, m := range itemMatchers {
				if m.Match(c) {
					counts[k]++
					if parts[k] == nil {
						parts[k] = c
					}
				}
			}
			walk(c)
		}
	}
	walk(li)
	return parts, counts
}

// attr returns n's attribute key, "" without one.
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// parseMemo parses /memos/ID.
func parseMemo(res *engine.Response, doc *goquery.Document) (*memoPage, error) {
	art := first(doc, selArticle)
	id, ok := strconv.ParseInt(art.AttrOr("data-id", ""), 10, 64)
	meta := art.FindMatcher(selMeta)
	author, created, vis := meta.FindMatcher(selAuthor), meta.FindMatcher(selCreated), meta.FindMatcher(selVisibility)
	content := art.FindMatcher(selContent)
	if art.Length() != 1 || ok != nil || author.Length() != 1 || created.Length() != 1 || vis.Length() != 1 || content.Length() != 1 {
		return nil, res.Applicationf("html", "the memo page lacks article#memo[data-id] with its p.memo-meta spans and div#memo-content")
	}
	p := &memoPage{id: id, author: author.Text(), created: created.Text(), visibility: vis.Text(), content: content}
	for _, l := range []struct {
		name string
		sel  goquery.Matcher
		to   *int64
	}{{"a#older", selOlder, &p.older}, {"a#newer", selNewer, &p.newer}} {
		a := doc.FindMatcher(l.sel)
		if a.Length() == 0 {
			continue
		}
		n, ok := idAfter(a.AttrOr("href", ""), "/memos/")
		if !ok {
			return nil, res.Applicationf("html", "the link nav#memo-pager %s points to %q", l.name, a.AttrOr("href", ""))
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
