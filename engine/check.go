package engine

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// Check validates one aspect of a response. A failed check returns an *Error
// (ClassApplication unless wrapped in Critical) that names the request.
type Check func(res *Response) error

// Check runs checks in order and returns the first failure, naming the
// response's endpoint and carrying its URL for the staff log.
func (r *Response) Check(checks ...Check) error {
	for _, c := range checks {
		if err := c(r); err != nil {
			e := *AsError(err)
			if e.Request == "" {
				e.Request = r.Endpoint
			}
			if e.URL == "" {
				e.URL = r.URL.String()
			}
			return &e
		}
	}
	return nil
}

func failf(code, format string, args ...any) error {
	return &Error{Code: code, Class: ClassApplication, Message: fmt.Sprintf(format, args...)}
}

// Status expects one of the given status codes.
func Status(codes ...int) Check {
	return func(res *Response) error {
		if slices.Contains(codes, res.StatusCode) {
			return nil
		}
		want := make([]string, len(codes))
		for i, c := range codes {
			want[i] = fmt.Sprint(c)
		}
		return failf("status", "expected status %s, got %d", strings.Join(want, " or "), res.StatusCode)
	}
}

// Header expects a header to have exactly this value (after trimming).
func Header(name, want string) Check {
	return func(res *Response) error {
		got := strings.TrimSpace(res.Header.Get(name))
		if got != want {
			return failf("header", "expected header %s: %q, got %q", name, want, got)
		}
		return nil
	}
}

// HeaderHasToken expects a comma-separated header (such as Cache-Control) to
// contain a token, compared without case.
func HeaderHasToken(name, token string) Check {
	return func(res *Response) error {
		if headerHasAny(res.Header.Values(name), token) {
			return nil
		}
		return failf("header", "expected %s to contain %q, got %q", name, token, strings.Join(res.Header.Values(name), ", "))
	}
}

// Private expects Cache-Control to keep the answer out of shared caches, as
// every answer meant for one viewer must: the token private, or one of also
// where the problem's manual allows it (such as "no-store").
func Private(also ...string) Check {
	tokens := append([]string{"private"}, also...)
	return func(res *Response) error {
		got := res.Header.Values("Cache-Control")
		if headerHasAny(got, tokens...) {
			return nil
		}
		return failf("cache-control", "Cache-Control %q: an answer for one viewer must carry %s (status %d)",
			strings.Join(got, ", "), strings.Join(tokens, " or "), res.StatusCode)
	}
}

// headerHasAny reports whether a comma-separated header's values hold one
// of tokens, compared without case.
func headerHasAny(values []string, tokens ...string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			for _, want := range tokens {
				if strings.EqualFold(t, want) {
					return true
				}
			}
		}
	}
	return false
}

// ContentType expects a media type such as "text/html", ignoring parameters.
func ContentType(mediaType string) Check {
	// The usual answers ("text/html" with or without "; charset=utf-8") are
	// read without mime.ParseMediaType, which makes a map per call; only when
	// they are exactly that, so that anything else is judged by it as before.
	_, params, err := mime.ParseMediaType(mediaType)
	quick := err == nil && len(params) == 0 && !strings.ContainsAny(mediaType, " \t;")
	return func(res *Response) error {
		got := ""
		if v := res.Header["Content-Type"]; len(v) > 0 {
			got = v[0]
		}
		if quick && plainMediaType(got, mediaType) {
			return nil
		}
		mt, _, err := mime.ParseMediaType(got)
		if err != nil || !strings.EqualFold(mt, mediaType) {
			return failf("content-type", "expected Content-Type %s, got %q", mediaType, got)
		}
		return nil
	}
}

// plainMediaType reports v is want, alone or with a plain charset
// parameter ("; charset=utf-8"): a value mime.ParseMediaType accepts and
// reads as want.
func plainMediaType(v, want string) bool {
	if len(v) < len(want) || !strings.EqualFold(v[:len(want)], want) {
		return false
	}
	rest := v[len(want):]
	if rest == "" {
		return true
	}
	cs, ok := strings.CutPrefix(rest, "; charset=")
	if !ok {
		if cs, ok = strings.CutPrefix(rest, ";charset="); !ok {
			return false
		}
	}
	if cs == "" {
		return false
	}
	for i := 0; i < len(cs); i++ {
		c := cs[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// RedirectTo expects a redirect (301, 302, 303 or 307) whose Location passes
// match; match returns "" when the location is right, or what is wrong.
func RedirectTo(match func(loc string) string) Check {
	return func(res *Response) error {
		switch res.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect:
		default:
			return failf("status", "expected a redirect, got status %d", res.StatusCode)
		}
		u, err := res.Location()
		if err != nil {
			return err
		}
		if why := match(u.RequestURI() + fragment(u.Fragment)); why != "" {
			return failf("redirect", "redirected to %s: %s", u.RequestURI(), why)
		}
		return nil
	}
}

// RedirectExactly expects a redirect to exactly path: its path, query and
// fragment, as the app's Location names them relative to the target.
func RedirectExactly(path string) Check {
	return RedirectTo(func(loc string) string {
		if loc != path {
			return "expected " + path
		}
		return ""
	})
}

func fragment(f string) string {
	if f == "" {
		return ""
	}
	return "#" + f
}

// HTML runs f on the parsed document.
func HTML(f func(doc *goquery.Document) error) Check {
	return func(res *Response) error {
		doc, err := res.Document()
		if err != nil {
			return err
		}
		return f(doc)
	}
}

// Count expects exactly n elements matching a CSS selector.
func Count(selector string, n int) Check {
	m := goquery.Single(selector) // compiled once; its Match is the selector's
	return func(res *Response) error {
		root, err := res.node()
		if err != nil {
			return err
		}
		if got := countMatches(m, root); got != n {
			return failf("html", "expected %d element(s) matching %q, found %d", n, selector, got)
		}
		return nil
	}
}

// Exists expects at least one element matching a CSS selector.
func Exists(selector string) Check {
	m := goquery.Single(selector)
	return func(res *Response) error {
		root, err := res.node()
		if err != nil {
			return err
		}
		if firstMatch(m, root) == nil {
			return failf("html", "expected an element matching %q, found none", selector)
		}
		return nil
	}
}

// Text expects the trimmed text of the first element matching selector.
func Text(selector, want string) Check {
	m := goquery.Single(selector)
	return func(res *Response) error {
		root, err := res.node()
		if err != nil {
			return err
		}
		el := firstMatch(m, root)
		if el == nil {
			return failf("html", "expected an element matching %q, found none", selector)
		}
		if got := strings.TrimSpace(NodeText(el)); got != want {
			return failf("html", "expected %q to read %q, got %q", selector, want, abbreviate(got, 80))
		}
		return nil
	}
}

// The checks above select as goquery's Document.Find does, without making
// selections: Find looks in each element child of the document, that child
// included.

// firstMatch is doc.Find(selector).First()'s node, or nil.
func firstMatch(m goquery.Matcher, doc *html.Node) *html.Node {
	first, _ := m.(interface{ MatchFirst(*html.Node) *html.Node })
	for c := doc.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if first != nil {
			if n := first.MatchFirst(c); n != nil {
				return n
			}
		} else if all := m.MatchAll(c); len(all) > 0 {
			return all[0]
		}
	}
	return nil
}

// countMatches is doc.Find(selector).Length().
func countMatches(m goquery.Matcher, doc *html.Node) int {
	var count func(n *html.Node) int
	count = func(n *html.Node) int {
		k := 0
		if m.Match(n) {
			k++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			k += count(c)
		}
		return k
	}
	total := 0
	for c := doc.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			total += count(c)
		}
	}
	return total
}

// NodeText is goquery's Text of one node: its text nodes' data, in order.
func NodeText(n *html.Node) string {
	if c := n.FirstChild; c != nil && c == n.LastChild && c.Type == html.TextNode {
		return c.Data // the common case, without copying
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// JSON expects a JSON body (by Content-Type and by syntax) and decodes it
// into v, a pointer to a typed struct.
func JSON(v any) Check {
	return func(res *Response) error {
		if err := ContentType("application/json")(res); err != nil {
			return err
		}
		if err := json.Unmarshal(res.Body, v); err != nil {
			return failf("json", "invalid JSON for %T: %v", v, err)
		}
		return nil
	}
}

// Fail builds a check failure for use inside HTML callbacks and scenario code.
func Fail(code, format string, args ...any) error { return failf(code, format, args...) }

func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
