package memo

import (
	"bytes"
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/yuin/goldmark"
	"golang.org/x/net/html"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/memo/data"
)

// pageSize is how many memos / and /recent/N list.
const pageSize = 100

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

// refusal checks the answer to a request the app must refuse: status (a
// 303 to loc when loc is not ""), or else a critical error saying that what
// was sent got through.
func refusal(what string, status int, loc string) engine.Check {
	return func(res *engine.Response) error {
		ok := res.StatusCode == status
		got := itoa(int64(res.StatusCode))
		if l := res.Header.Get("Location"); l != "" {
			got += " to " + l
		}
		if ok && loc != "" {
			l, err := res.Location()
			ok = err == nil && l.Path == loc
		}
		if !ok {
			want := itoa(int64(status))
			if loc != "" {
				want += " to " + loc
			}
			return res.Criticalf("refusal", "%s answered %s; the manual's answer is %s", what, got, want)
		}
		return checkCookies(res)
	}
}

// signedOutPage checks the answer to a request whose cookie names no
// session for a page that is the same signed out: 200, for no user.
func signedOutPage(what string) engine.Check {
	return func(res *engine.Response) error {
		if err := refusal(what, http.StatusOK, "")(res); err != nil {
			return err
		}
		doc, err := res.Document()
		if err != nil {
			return err
		}
		if u := first(doc, selHeader).FindMatcher(selUsername); u.Length() > 0 {
			return res.Criticalf("refusal", "%s answered the page of the user %q; the manual's answer is the page signed out", what, u.First().Text())
		}
		return nil
	}
}

// checkPageHeaders checks the headers of a page served to the session of
// user name ("" signed out): the cookie rule, and Cache-Control: private for
// a user's page (critical: a shared cache would give it to others).
func checkPageHeaders(res *engine.Response, name string) error {
	if err := checkCookies(res); err != nil {
		return err
	}
	if name != "" {
		return res.Check(engine.Critical(engine.Private()))
	}
	return nil
}

// checkPageUser checks the user names a page's header shows (the text of
// each span#username) against the session it was served to: user name, or
// nobody when name is "". A page for another user is a leak.
func checkPageUser(res *engine.Response, shown []string, name string) error {
	switch {
	case name == "" && len(shown) > 0:
		return res.Criticalf("other-user", "a signed-out visitor got a page for the user %q", shown[0])
	case name != "" && (len(shown) != 1 || shown[0] != name):
		return res.Criticalf("other-user", "the page shows the user %q to %q", strings.Join(shown, ""), name)
	}
	return nil
}

// checkListTimes: a list page shows no time but its memos' (a time that
// is none of theirs may be a private memo's, which the scan cannot know
// for a memo of the run); its body is read as sent and with its character
// references undone.
func checkListTimes(res *engine.Response, p *listPage) error {
	shown := make(map[string]bool, len(p.entries))
	for _, e := range p.entries {
		shown[e.created] = true
	}
	var other string
	for _, text := range [][]byte{res.Body, []byte(html.UnescapeString(string(res.Body)))} {
		eachTime(text, func(t []byte) bool {
			if !shown[string(t)] {
				other = string(t)
			}
			return other == ""
		})
		if other != "" {
			return res.Criticalf("list-time", "the page shows the time %s, which is none of its memos': a list shows "+
				"no time but its memos' (it may be a private memo's)", other)
		}
	}
	return nil
}

// checkList compares /recent/N (N = offset/pageSize; / is 0) with the
// model as it was while the page was served. Memos whose 303 came at least
// Freshness before the request must be counted and listed in their place;
// memos in flight, or answered within Freshness, may be or not; anything
// else is wrong. A private memo anywhere is a leak.
func checkList(res *engine.Response, p *listPage, v *view, offset int64) error {
	c := countPublic(v, res.Sent)
	sureCount := int64(len(c.sure) + len(c.runSure))
	maybe := int64(len(c.unsure) + c.unknown)
	if p.total < sureCount || p.total > sureCount+maybe {
		return res.Criticalf("total", "the page counts %d public memos; %d had been written a second before the request, %d more were in flight", p.total, sureCount, maybe)
	}
	if len(p.entries) > pageSize {
		return res.Applicationf("page-size", "the page lists %d memos, more than %d", len(p.entries), pageSize)
	}
	for i, e := range p.entries {
		if i > 0 && e.id >= p.entries[i-1].id {
			return res.Criticalf("order", "memo %d is listed after memo %d: newest first", e.id, p.entries[i-1].id)
		}
		if err := checkEntry(res, v, e, ""); err != nil {
			return err
		}
	}
	if len(p.entries) == 0 {
		if sureCount > offset {
			return res.Criticalf("missing", "the page lists no memo; %d public memos were written a second before, so it starts at the %dth", sureCount, offset+1)
		}
		return nil
	}
	first := p.entries[0].id
	if lo, hi := c.aboveSure(first), c.aboveSure(first)+c.aboveMaybe(first); offset < lo || offset > hi {
		return res.Criticalf("place", "the page starts with memo %d, which has %d to %d public memos above it; the page should start at the %dth", first, lo, hi, offset+1)
	}
	if err := checkListGaps(res, p, c); err != nil {
		return err
	}
	return checkMore(res, p, c, offset)
}

// publicCount is what a list may count of the public memos, as of a request.
type publicCount struct {
	sure    []int64 // the initial public memos, ascending
	runSure []int64 // the run's, answered at least Freshness before, ascending
	unsure  []int64 // the run's others with an id, ascending
	// unknown counts the public posts without an id yet: each may be
	// anywhere above the known ids.
	unknown int
}

// countPublic counts the public memos of v for a request sent at sent.
func countPublic(v *view, sent time.Time) publicCount {
	c := publicCount{sure: v.m.in.public}
	for _, q := range v.run {
		if q.private {
			continue
		}
		if q.certain(sent) {
			c.runSure = append(c.runSure, q.id)
		} else {
			c.unsure = append(c.unsure, q.id)
		}
	}
	for _, q := range v.unsure {
		if !q.private {
			c.unknown++
		}
	}
	return c
}

// aboveSure counts the sure memos above id.
func (c publicCount) aboveSure(id int64) int64 {
	n := len(c.sure) - sort64(c.sure, id+1)
	return int64(n + len(c.runSure) - sort64(c.runSure, id+1))
}

// aboveMaybe counts the unsure memos that may be above id.
func (c publicCount) aboveMaybe(id int64) int64 {
	return int64(len(c.unsure)-sort64(c.unsure, id+1)) + int64(c.unknown)
}

// checkListGaps checks that no sure memo is missing between the first and
// the last memo p lists, nor, on a page that is not full, below the last.
func checkListGaps(res *engine.Response, p *listPage, c publicCount) error {
	first, last := p.entries[0].id, p.entries[len(p.entries)-1].id
	floor := last
	if len(p.entries) < pageSize {
		floor = 0
	}
	listed := make(map[int64]bool, len(p.entries))
	for _, e := range p.entries {
		listed[e.id] = true
	}
	// The newest missing one is named: the one a reader would miss first.
	var missing int64
	for _, ids := range [][]int64{c.sure, c.runSure} {
		for i := sort64(ids, first+1) - 1; i >= 0 && ids[i] >= floor && ids[i] > missing; i-- {
			if !listed[ids[i]] {
				missing = ids[i]
			}
		}
	}
	if missing > 0 {
		return res.Criticalf("missing", "public memo %d is missing from the page (which lists %d memos, %d down to %d), though written a second before",
			missing, len(p.entries), first, last)
	}
	return nil
}

// checkMore checks the link to older memos of p, the page at offset: there
// when a sure memo is below its last, absent when none is and the page is
// not full.
func checkMore(res *engine.Response, p *listPage, c publicCount, offset int64) error {
	last := p.entries[len(p.entries)-1].id
	below := sort64(c.sure, last) > 0 || sort64(c.runSure, last) > 0
	wantMore := "/recent/" + itoa(offset/pageSize+1)
	switch {
	case below && p.more != wantMore:
		return res.Applicationf("more", "the link to older memos is %q, expected %q", p.more, wantMore)
	case !below && len(p.entries) < pageSize && p.more != "":
		return res.Applicationf("more", "the page links to older memos (%q), though there are none", p.more)
	}
	return nil
}

// sort64 returns the index of the first id in ids (ascending) at or above x.
func sort64(ids []int64, x int64) int {
	i, _ := slices.BinarySearch(ids, x)
	return i
}

// checkEntry checks one listed memo against the model: a known memo must be
// shown as it is; an unknown id may only be a public post in flight. A
// private memo listed for anyone but its author (viewer: "" for a public
// list) is a leak.
func checkEntry(res *engine.Response, v *view, e entry, viewer string) error {
	q := v.find(e.id)
	if q == nil {
		for _, u := range v.unsure {
			if u.title == e.title && v.m.name(u.user) == e.author {
				if u.private && viewer != e.author {
					return res.Criticalf("private-leak", "the private memo %q of %s is listed as memo %d", e.title, e.author, e.id)
				}
				return nil
			}
		}
		return res.Criticalf("unknown-memo", "memo %d (%q) was never written", e.id, e.title)
	}
	author := v.m.name(q.user)
	if q.private && viewer != author {
		return res.Criticalf("private-leak", "memo %d is private to %s; it is listed for %s", e.id, author, who(viewer))
	}
	switch {
	case e.title != q.title:
		return res.Criticalf("memo", "memo %d is titled %q, expected %q", e.id, e.title, q.title)
	case e.author != author:
		return res.Criticalf("memo", "memo %d shows the author %q, expected %q", e.id, e.author, author)
	}
	return checkCreated(res, v.m, q, e.created)
}

// checkCreated checks the time a page shows for q.
func checkCreated(res *engine.Response, m *model, q *memo, shown string) error {
	if q.created != "" {
		if shown != q.created {
			return res.Criticalf("memo", "memo %d shows the time %q, expected %q", q.id, shown, q.created)
		}
		return nil
	}
	t, err := time.Parse(data.TimeFormat, shown)
	lo, hi := m.appTimes(q.sent, q.received)
	if err != nil || t.Before(lo) || t.After(hi) {
		return res.Criticalf("memo", "memo %d shows the time %q; it was written between %s and %s (app's clock)", q.id, shown,
			lo.UTC().Format(data.TimeFormat), hi.UTC().Format(data.TimeFormat))
	}
	return nil
}

func who(viewer string) string {
	if viewer == "" {
		return "anyone"
	}
	return viewer
}

// find returns the memo with id in the view, nil if unknown.
func (v *view) find(id int64) *memo {
	if id >= 1 && id <= v.m.in.lastMemo() {
		return v.m.initialMemo(id)
	}
	i, ok := slices.BinarySearchFunc(v.run, id, func(q *memo, id int64) int { return cmp.Compare(q.id, id) })
	if !ok {
		return nil
	}
	return v.run[i]
}

// authorMemos returns the ids of user's memos that viewer may see, sure
// ones and unsure ones apart, ascending; unknown counts posts without an id.
func (v *view) authorMemos(user int64, own bool) (sure, unsure []int64, unknown int) {
	if user <= v.m.in.lastUser() {
		for _, id := range v.m.in.byUser[user] {
			if own || !v.m.in.memos[id-1].Private {
				sure = append(sure, id)
			}
		}
	}
	for _, q := range v.run {
		if q.user != user || (q.private && !own) {
			continue
		}
		if q.certain(v.sent) {
			sure = append(sure, q.id)
		} else {
			unsure = append(unsure, q.id)
		}
	}
	for _, q := range v.unsure {
		if q.user == user && (own || !q.private) {
			unknown++
		}
	}
	return sure, unsure, unknown
}

// checkMemo compares /memos/ID with the model: the memo, its author, time
// and visibility, and the older and newer links among the author's memos
// the viewer may see. full compares the page content too.
func checkMemo(res *engine.Response, p *memoPage, v *view, id int64, viewer string, full bool) error {
	q := v.find(id)
	if q == nil || p.id != id {
		return res.Criticalf("memo", "the page of memo %d shows memo %d", id, p.id)
	}
	author := v.m.name(q.user)
	own := viewer == author
	if q.private && !own {
		return res.Criticalf("private-leak", "memo %d is private to %s; it was shown to %s", id, author, who(viewer))
	}
	vis := "public"
	if q.private {
		vis = "private"
	}
	switch {
	case p.author != author:
		return res.Criticalf("memo", "memo %d shows the author %q, expected %q", id, p.author, author)
	case p.visibility != vis:
		return res.Criticalf("memo", "memo %d is marked %q, expected %q", id, p.visibility, vis)
	}
	if err := checkCreated(res, v.m, q, p.created); err != nil {
		return err
	}
	sure, unsure, unknown := v.authorMemos(q.user, own)
	if err := checkNeighbour(res, v, "older", id, p.older, sure, unsure, unknown, own, -1); err != nil {
		return err
	}
	if err := checkNeighbour(res, v, "newer", id, p.newer, sure, unsure, unknown, own, +1); err != nil {
		return err
	}
	if full {
		return checkContent(res, v.m, q, p.content)
	}
	return nil
}

// checkNeighbour checks the older (dir -1) or newer (+1) link of memo id:
// the nearest sure memo that way, or an unsure one nearer still.
func checkNeighbour(res *engine.Response, v *view, name string, id, got int64, sure, unsure []int64, unknown int, own bool, dir int64) error {
	want := int64(0)
	for _, s := range sure {
		if (s-id)*dir > 0 && (want == 0 || (s-want)*dir < 0) {
			want = s
		}
	}
	if got == want {
		return nil
	}
	between := func(x int64) bool { return (x-id)*dir > 0 && (want == 0 || (want-x)*dir > 0) }
	if got != 0 && between(got) {
		if slices.Contains(unsure, got) {
			return nil
		}
		if v.find(got) == nil && unknown > 0 {
			return nil
		}
	}
	if got != 0 {
		if q := v.find(got); q != nil && q.private && !own {
			return res.Criticalf("private-leak", "memo %d links to the private memo %d as %s", id, got, name)
		}
	}
	if want == 0 {
		return res.Criticalf("neighbours", "memo %d links to memo %d as %s; there is none", id, got, name)
	}
	return res.Criticalf("neighbours", "memo %d links to %s as %s, expected memo %d", id, linkName(got), name, want)
}

func linkName(id int64) string {
	if id == 0 {
		return "nothing"
	}
	return "memo " + itoa(id)
}

// checkMine compares /mypage with the user's memos: every one, newest
// first, private ones marked; the user's posts in flight may show or not.
func checkMine(res *engine.Response, p *listPage, v *view, u *user) error {
	sure, unsure, _ := v.authorMemos(u.id, true)
	want := slices.Clone(sure)
	slices.Reverse(want)
	i := 0
	for _, e := range p.entries {
		if err := checkEntry(res, v, e, u.name); err != nil {
			return err
		}
		if e.author != u.name {
			return res.Criticalf("other-user", "/mypage of %s lists memo %d of %s", u.name, e.id, e.author)
		}
		q := v.find(e.id)
		if q != nil && q.private != e.private {
			return res.Criticalf("memo", "/mypage marks memo %d private: %v, expected %v", e.id, e.private, q.private)
		}
		if i < len(want) && want[i] == e.id {
			i++
			continue
		}
		if q == nil || slices.Contains(unsure, e.id) {
			continue // a post in flight
		}
		if i < len(want) && slices.Contains(want[i:], e.id) {
			return res.Criticalf("missing", "/mypage of %s lacks memo %d", u.name, want[i])
		}
		return res.Criticalf("mypage", "/mypage lists memo %d out of place (newest first)", e.id)
	}
	if i < len(want) {
		return res.Criticalf("missing", "/mypage of %s lacks memo %d", u.name, want[i])
	}
	return nil
}

// checkContent compares the page content of q, element by element.
func checkContent(res *engine.Response, m *model, q *memo, got *goquery.Selection) error {
	content := q.content
	if q.sent.IsZero() {
		content = m.in.cfg.Memo(q.id).Content
	}
	want, err := normalizedMarkdown(m.md, content)
	if err != nil {
		return engine.Internalf("markdown", "rendering memo %d: %v", q.id, err)
	}
	have := normalize(got.Nodes[0])
	if have != want {
		return res.Criticalf("content", "memo %d's content differs from its Markdown: %s", q.id, firstDiff(have, want))
	}
	return nil
}

// normalizedMarkdown renders content as CommonMark and normalizes it.
func normalizedMarkdown(md goldmark.Markdown, content string) (string, error) {
	var buf bytes.Buffer
	if err := md.Convert([]byte(content), &buf); err != nil {
		return "", err
	}
	root, err := html.Parse(strings.NewReader("<div>" + buf.String() + "</div>"))
	if err != nil {
		return "", err
	}
	div := goquery.NewDocumentFromNode(root).FindMatcher(selDiv).First()
	return normalize(div.Nodes[0]), nil
}

// normalize writes the elements under n as the benchmarker compares them:
// names, text with runs of white space as one space, and the href of links;
// nothing else (no attributes, no comments, no white space between
// elements).
func normalize(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				if t := strings.Join(strings.Fields(c.Data), " "); t != "" {
					b.WriteString(t)
					b.WriteByte('\n')
				}
			case html.ElementNode:
				b.WriteString("<" + c.Data)
				if c.Data == "a" {
					for _, a := range c.Attr {
						if a.Key == "href" {
							b.WriteString(" href=" + a.Val)
						}
					}
				}
				b.WriteString(">\n")
				walk(c)
				b.WriteString("</" + c.Data + ">\n")
			}
		}
	}
	walk(n)
	return b.String()
}

// firstDiff describes where two normalized contents first differ.
func firstDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := range min(len(h), len(w)) {
		if h[i] != w[i] {
			return "shown " + quote(h[i]) + " where " + quote(w[i]) + " belongs"
		}
	}
	if len(h) < len(w) {
		return "it ends before " + quote(w[len(h)])
	}
	return "it goes on with " + quote(h[len(w)])
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "«" + s + "»"
}
