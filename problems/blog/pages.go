package blog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/tunecon/tunecon/engine"
)

// requiredAssets are the tags every page must carry (MANUAL: "Every HTML
// page").
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
			return nil, res.Applicationf("asset-tag", "the page lacks %s (%s)", a.what, a.selector)
		}
	}
	if href, _ := doc.Find("#header a#post-link").Attr("href"); href != "/post" {
		return nil, res.Applicationf("html", `the header lacks the link a#post-link to /post`)
	}
	sidebar, err := parseSidebar(res, doc)
	if cerr := checkSidebarLinks(res, sidebar, err == nil); cerr != nil {
		return nil, cerr // a repeat above a link it cannot read comes first
	}
	if err != nil {
		return nil, err
	}
	return &page{res: res, doc: doc, sidebar: sidebar}, nil
}

// parseSidebar reads the sidebar's links, in the order shown. On a link it
// cannot read, it returns the links above it with the error.
func parseSidebar(res *engine.Response, doc *goquery.Document) ([]link, error) {
	items := doc.Find("#sidebar ol#recent-commented li.recent-item a.recent-link")
	if doc.Find("#sidebar ol#recent-commented").Length() != 1 {
		return nil, res.Applicationf("html", "the page has no sidebar (#sidebar ol#recent-commented)")
	}
	var sidebar []link
	var perr error
	items.EachWithBreak(func(_ int, s *goquery.Selection) bool {
		id, ok := articleHref(s.AttrOr("href", ""))
		if !ok {
			perr = res.Applicationf("html", "sidebar link %q is not /articles/ID", s.AttrOr("href", ""))
			return false
		}
		sidebar = append(sidebar, link{id, strings.TrimSpace(s.Text())})
		return true
	})
	return sidebar, perr
}

// articleHref reads the id of a link to /articles/ID.
func articleHref(href string) (int64, bool) {
	s, ok := strings.CutPrefix(href, "/articles/")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

var dropLineBreaks = strings.NewReplacer("\r", "", "\n", "")

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

// entry is an article block as shown on / and on its page.
type entry struct {
	id                   int64
	title, created, body string
	titleHref            string
}

// parseEntry reads an article block; false if it has no id article-ID.
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

// listed returns the article blocks a page lists in its section#articles
// (/'s list; none elsewhere), for a user to pick a link from.
func (p *page) listed() *goquery.Selection { return p.doc.Find("section#articles article.article") }

// parseIndex reads the article blocks / lists, in the order shown.
func parseIndex(p *page) ([]entry, error) {
	var entries []entry
	var perr error
	p.doc.Find("main#main section#articles > article.article").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		e, ok := parseEntry(s)
		if !ok {
			perr = p.res.Applicationf("html", "an article block has no id article-ID")
			return false
		}
		entries = append(entries, e)
		return true
	})
	return entries, perr
}

// parseArticle reads the article block of article id's page, which must be
// that article's (checkShownArticle).
func parseArticle(p *page, id int64) (entry, error) {
	blocks := p.doc.Find("main#main > article.article")
	if blocks.Length() != 1 {
		return entry{}, p.res.Applicationf("html", "the page has %d article blocks, expected 1", blocks.Length())
	}
	e, ok := parseEntry(blocks)
	if err := checkShownArticle(p.res, id, e, ok, blocks.AttrOr("id", "")); err != nil {
		return entry{}, err
	}
	return e, nil
}

// shownComment is a comment as an article page shows it.
type shownComment struct {
	id                  int64
	name, body, created string
}

// parseComments reads article id's page below the article: its comment
// form, its comments in the order shown, and the comment count it states.
func parseComments(p *page, id int64) (shown []shownComment, count string, err error) {
	res := p.res
	if p.doc.Find(fmt.Sprintf(`form#comment-form[method="post"][action="/articles/%d/comments"]`, id)).Length() != 1 {
		return nil, "", res.Applicationf("html", "the page lacks the comment form posting to /articles/%d/comments", id)
	}
	p.doc.Find("section#comments ol#comment-list > li.comment").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		idAttr := s.AttrOr("id", "")
		cid, perr := strconv.ParseInt(strings.TrimPrefix(idAttr, "comment-"), 10, 64)
		if perr != nil || !strings.HasPrefix(idAttr, "comment-") {
			err = res.Applicationf("html", "a comment has no id comment-ID")
			return false
		}
		shown = append(shown, shownComment{cid, strings.TrimSpace(s.Find("p.comment-name").Text()),
			multiline(s.Find("div.comment-body")), strings.TrimSpace(s.Find("p.comment-created").Text())})
		return true
	})
	if err != nil {
		return nil, "", err
	}
	return shown, strings.TrimSpace(p.doc.Find("section#comments span#comment-count").Text()), nil
}

// parsePostForm reports a /post page that lacks the form to post an article.
func parsePostForm(p *page) error {
	if p.doc.Find(`main#main form#post-form[method="post"][action="/articles"] input[name="title"]`).Length() != 1 ||
		p.doc.Find(`main#main form#post-form textarea[name="body"]`).Length() != 1 {
		return p.res.Applicationf("html", "the page lacks form#post-form with a title input and a body textarea posting to /articles")
	}
	return nil
}
