// Package dom builds the tree of an HTML page: a page of the plain shape
// templates produce directly, in one pass, any other with x/net/html's
// parser; the tree is html.Parse's either way.
package dom

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Parse returns the tree html.Parse builds from body. A page of the plain
// shape templates produce is built directly: one pass, no tokenizer buffer,
// its nodes and attributes in a few blocks and its strings cut from one copy
// of the body. Anything else (and anything the direct builder is unsure of)
// goes to html.Parse, so the tree is always exactly html.Parse's; a
// differential test and a fuzz target hold the builder to that.
func Parse(body []byte) (*html.Node, error) {
	if doc, ok := buildPlainHTML(body); ok {
		return doc, nil
	}
	return html.Parse(bytes.NewReader(body))
}

// plainBuilder builds the tree of a page in the plain subset of HTML:
//
//   - <!DOCTYPE html> (optional), then explicit <html>, <head>, </head>,
//     <body>, and optionally </body> and </html>, with only whitespace
//     between them;
//   - in the head, only meta, link, base, title, style and script;
//   - in the body, elements closed by their own end tags in order (void
//     elements have none), and none of the elements the HTML parser treats
//     in a special way (tables, forms inside forms, select, pre, template,
//     svg, math, raw-text elements other than script, style, title and
//     textarea, ...); inside a p, only phrasing elements; no li, dd or dt
//     that would close an open one; no heading right inside a heading;
//   - comments only in the head and the body, each without "--" inside;
//   - no NUL, no carriage return, no byte-order mark, no '<' that does not
//     start a tag or a comment, and character references in attribute
//     values only in their complete forms (&amp; &#39; ...).
//
// For such a page the HTML parsing algorithm builds exactly the tree the
// tags spell out, which is what this builder builds. It reports false at
// the first thing outside the subset.
type plainBuilder struct {
	b []byte // the page
	// s is the page as a string: text and attribute values are cut from it.
	s     string
	pos   int
	nodes []html.Node // the current block: never grown, so pointers stay valid
	spare int         // nodes the bound allows beyond the first block
	attrs []html.Attribute
	// cur is the current node: the open elements are it and its ancestors.
	cur *html.Node

	mode                   int
	doctype                bool
	pOpen, aOpen, btnOpen  int
	formOpen               bool
	doc, htmlEl, head, bod *html.Node
	scratch                [8]attrSpan
}

// Insertion modes of the subset.
const (
	modeInitial = iota // before <html>
	modeBeforeHead
	modeInHead
	modeAfterHead
	modeInBody
	modeAfterBody
	modeAfterAfterBody
)

type attrSpan struct{ k0, k1, v0, v1 int } // v0 == -1: no value

const htmlSpace = " \t\n\f"

func buildPlainHTML(b []byte) (*html.Node, bool) {
	if bytes.IndexByte(b, 0) >= 0 || bytes.IndexByte(b, '\r') >= 0 || bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return nil, false
	}
	// Each '<' makes at most one element, comment or doctype and ends at most
	// one text node. Most pages need about one node per '<': a first block of
	// that size, and a second one for the rest of the bound if it runs out.
	lt := bytes.Count(b, []byte{'<'})
	p := &plainBuilder{b: b, s: string(b), nodes: make([]html.Node, 0, lt+2), spare: lt}
	p.doc = p.node(html.DocumentNode, 0, "")
	if !p.run() {
		return nil, false
	}
	return p.doc, true
}

func (p *plainBuilder) node(t html.NodeType, a atom.Atom, data string) *html.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]html.Node, 0, max(p.spare, 1))
		p.spare = 0
	}
	p.nodes = append(p.nodes, html.Node{Type: t, DataAtom: a, Data: data})
	return &p.nodes[len(p.nodes)-1]
}

func (p *plainBuilder) top() *html.Node { return p.cur }

func (p *plainBuilder) run() bool {
	for p.pos < len(p.s) {
		if p.s[p.pos] != '<' {
			end := strings.IndexByte(p.s[p.pos:], '<')
			if end < 0 {
				end = len(p.s)
			} else {
				end += p.pos
			}
			if !p.text(p.pos, end) {
				return false
			}
			p.pos = end
			continue
		}
		rest := p.s[p.pos+1:]
		var ok bool
		switch {
		case strings.HasPrefix(rest, "!--"):
			ok = p.comment()
		case len(rest) > 0 && rest[0] == '!':
			ok = p.doctypeToken()
		case len(rest) > 1 && rest[0] == '/' && isASCIILetter(rest[1]):
			ok = p.endTag()
		case len(rest) > 0 && isASCIILetter(rest[0]):
			ok = p.startTag()
		}
		if !ok {
			return false
		}
	}
	return p.mode >= modeInBody
}

func isASCIILetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

func allSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(htmlSpace, s[i]) < 0 {
			return false
		}
	}
	return true
}

// text handles the text s[i:j].
func (p *plainBuilder) text(i, j int) bool {
	t := p.s[i:j]
	switch p.mode {
	case modeInitial, modeBeforeHead:
		return allSpace(t) // ignored
	case modeInHead, modeAfterHead, modeAfterBody, modeAfterAfterBody:
		if !allSpace(t) {
			return false
		}
	case modeInBody:
		if strings.IndexByte(t, '&') >= 0 {
			t = html.UnescapeString(t)
		}
	default:
		return false
	}
	p.addText(p.top(), t)
	return true
}

func (p *plainBuilder) addText(parent *html.Node, t string) {
	if t == "" {
		return
	}
	if last := parent.LastChild; last != nil && last.Type == html.TextNode {
		last.Data += t
		return
	}
	appendChild(parent, p.node(html.TextNode, 0, t))
}

func appendChild(parent, c *html.Node) {
	c.Parent = parent
	if last := parent.LastChild; last != nil {
		last.NextSibling = c
		c.PrevSibling = last
	} else {
		parent.FirstChild = c
	}
	parent.LastChild = c
}

// comment reads <!--data--> with plain data.
func (p *plainBuilder) comment() bool {
	start := p.pos + len("<!--")
	end := strings.Index(p.s[start:], "-->")
	if end < 0 {
		return false
	}
	data := p.s[start : start+end]
	if strings.HasPrefix(data, ">") || strings.HasPrefix(data, "->") || strings.Contains(data, "--") ||
		strings.HasSuffix(data, "-") || strings.Contains(data, "<!-") {
		return false
	}
	if p.mode != modeInHead && p.mode != modeInBody {
		return false
	}
	appendChild(p.top(), p.node(html.CommentNode, 0, data))
	p.pos = start + end + len("-->")
	return true
}

// doctypeToken reads <!DOCTYPE html>, first in the page.
func (p *plainBuilder) doctypeToken() bool {
	rest := p.s[p.pos+2:]
	if p.mode != modeInitial || p.doctype || len(rest) < len("doctype") || !strings.EqualFold(rest[:7], "doctype") {
		return false
	}
	rest = rest[7:]
	trimmed := strings.TrimLeft(rest, htmlSpace)
	if len(trimmed) == len(rest) || len(trimmed) < 4 || !strings.EqualFold(trimmed[:4], "html") {
		return false
	}
	after := strings.TrimLeft(trimmed[4:], htmlSpace)
	if !strings.HasPrefix(after, ">") {
		return false
	}
	p.doctype = true
	appendChild(p.doc, p.node(html.DoctypeNode, 0, "html"))
	p.pos = len(p.s) - len(after) + 1
	return true
}

// tagName reads a tag name at i: letters, digits and '-', starting with a
// letter. It returns its end and its atom (0 for a name without one).
func (p *plainBuilder) tagName(i int) (end int, a atom.Atom, name string, ok bool) {
	j := i
	lower := true
	for j < len(p.s) {
		c := p.s[j]
		if 'A' <= c && c <= 'Z' {
			lower = false
		} else if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			break
		}
		j++
	}
	if j == i || j-i > 32 {
		return 0, 0, "", false
	}
	raw := p.b[i:j]
	if !lower {
		raw = bytes.ToLower(raw)
	}
	a = atom.Lookup(raw)
	switch {
	case a != 0:
		name = a.String()
	case lower:
		name = p.s[i:j]
	default:
		name = string(raw)
	}
	return j, a, name, true
}

// startTag reads a start tag and inserts its element.
func (p *plainBuilder) startTag() bool {
	end, a, name, ok := p.tagName(p.pos + 1)
	if !ok {
		return false
	}
	spans := p.scratch[:0]
	selfClosing := false
	i := end
	for {
		if i >= len(p.s) {
			return false
		}
		c := p.s[i]
		if c == '>' {
			i++
			break
		}
		if c == '/' {
			if i+1 < len(p.s) && p.s[i+1] == '>' {
				selfClosing = true
				i += 2
				break
			}
			return false
		}
		if strings.IndexByte(htmlSpace, c) < 0 {
			return false
		}
		for i < len(p.s) && strings.IndexByte(htmlSpace, p.s[i]) >= 0 {
			i++
		}
		if i < len(p.s) && (p.s[i] == '>' || p.s[i] == '/') {
			continue
		}
		var sp attrSpan
		if sp, i, ok = p.attr(i); !ok {
			return false
		}
		for _, o := range spans {
			if strings.EqualFold(p.s[o.k0:o.k1], p.s[sp.k0:sp.k1]) {
				return false // a repeated attribute
			}
		}
		spans = append(spans, sp)
	}
	p.pos = i
	void := isVoid(a)
	if selfClosing && !void {
		return false
	}
	if p.mode == modeInBody {
		return p.bodyStartTag(a, name, spans, void)
	}
	return p.headStartTag(a, name, spans)
}

// headStartTag inserts an element before the body (html, head, an element
// of the head, body), if the parser would insert it there as the tags say.
func (p *plainBuilder) headStartTag(a atom.Atom, name string, spans []attrSpan) bool {
	switch p.mode {
	case modeInitial:
		if a != atom.Html {
			return false
		}
		p.htmlEl = p.element(p.doc, a, name, spans)
		p.cur = p.htmlEl
		p.mode = modeBeforeHead
		return true
	case modeBeforeHead:
		if a != atom.Head {
			return false
		}
		p.head = p.element(p.htmlEl, a, name, spans)
		p.cur = p.head
		p.mode = modeInHead
		return true
	case modeInHead:
		switch a {
		case atom.Meta, atom.Link, atom.Base:
			p.element(p.head, a, name, spans)
			return true
		case atom.Title, atom.Style, atom.Script:
			return p.rawText(p.element(p.head, a, name, spans))
		}
		return false
	case modeAfterHead:
		if a != atom.Body {
			return false
		}
		p.bod = p.element(p.htmlEl, a, name, spans)
		p.cur = p.bod
		p.mode = modeInBody
		return true
	}
	return false
}

// bodyStartTag inserts an element in the body, if the parser would insert
// it there as the tags say.
func (p *plainBuilder) bodyStartTag(a atom.Atom, name string, spans []attrSpan, void bool) bool {
	if refusedInBody(a) {
		return false
	}
	if p.pOpen > 0 && !phrasing(a) {
		return false // it might close the p
	}
	parent := p.top()
	switch a {
	case atom.Meta, atom.Link, atom.Base:
		p.element(parent, a, name, spans)
		return true
	case atom.Title, atom.Style, atom.Script, atom.Textarea:
		return p.rawText(p.element(parent, a, name, spans))
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		if isHeading(parent.DataAtom) {
			return false
		}
	case atom.Li:
		if !p.noOpenItem(atom.Li, atom.Li) {
			return false
		}
	case atom.Dd, atom.Dt:
		if !p.noOpenItem(atom.Dd, atom.Dt) {
			return false
		}
	case atom.Form:
		if p.formOpen {
			return false
		}
		p.formOpen = true
	case atom.Button:
		if p.btnOpen > 0 {
			return false
		}
		p.btnOpen++
	case atom.A:
		if p.aOpen > 0 {
			return false
		}
		p.aOpen++
	case atom.P:
		p.pOpen++
	}
	el := p.element(parent, a, name, spans)
	if isFormatting(a) && len(el.Attr) > 1 {
		// The parser sorts a formatting element's attributes (to compare
		// elements quickly): so must the builder.
		slices.SortFunc(el.Attr, func(x, y html.Attribute) int {
			return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Val, y.Val))
		})
	}
	if !void {
		p.cur = el
	}
	return true
}

// isFormatting: the elements the parser keeps in its list of active
// formatting elements.
func isFormatting(a atom.Atom) bool {
	switch a {
	case atom.A, atom.B, atom.Big, atom.Code, atom.Em, atom.Font, atom.I, atom.Nobr, atom.S, atom.Small,
		atom.Strike, atom.Strong, atom.Tt, atom.U:
		return true
	}
	return false
}

// noOpenItem reports that a new li (or dd, dt) closes none: looking down
// the open elements, a list (or definition list), or another element the
// parser stops at, comes before any open item.
func (p *plainBuilder) noOpenItem(x, y atom.Atom) bool {
	for n := p.cur; n != nil && n.Type == html.ElementNode; n = n.Parent {
		switch n.DataAtom {
		case x, y:
			return false
		case atom.Ul, atom.Ol, atom.Menu, atom.Dl, atom.Body, atom.Html, atom.Section, atom.Article, atom.Nav,
			atom.Aside, atom.Header, atom.Footer, atom.Main, atom.Form, atom.Fieldset, atom.Blockquote,
			atom.Figure, atom.Figcaption, atom.Details, atom.Summary, atom.Button:
			return true
		}
	}
	return true
}

// element makes an element with the attributes spans locate and appends it
// to parent.
func (p *plainBuilder) element(parent *html.Node, a atom.Atom, name string, spans []attrSpan) *html.Node {
	el := p.node(html.ElementNode, a, name)
	if len(spans) > 0 {
		if cap(p.attrs)-len(p.attrs) < len(spans) {
			// The first block holds an attribute per '=' in the page and a
			// few without values; more are rare.
			n := 2 * cap(p.attrs)
			if n == 0 {
				n = bytes.Count(p.b, []byte{'='}) + 4
			}
			p.attrs = make([]html.Attribute, 0, max(n, len(spans)))
		}
		start := len(p.attrs)
		for _, sp := range spans {
			key := p.s[sp.k0:sp.k1]
			if strings.ContainsFunc(key, func(r rune) bool { return 'A' <= r && r <= 'Z' }) {
				key = strings.ToLower(key)
			}
			val := ""
			if sp.v0 >= 0 {
				val = p.s[sp.v0:sp.v1]
				if strings.IndexByte(val, '&') >= 0 {
					val = html.UnescapeString(val)
				}
			}
			p.attrs = append(p.attrs, html.Attribute{Key: key, Val: val})
		}
		el.Attr = p.attrs[start:len(p.attrs):len(p.attrs)]
	}
	appendChild(parent, el)
	return el
}

// attr reads name, name=value, name="value" or name='value' at i.
func (p *plainBuilder) attr(i int) (sp attrSpan, end int, ok bool) {
	sp.k0 = i
	for i < len(p.s) {
		c := p.s[i]
		if isASCIILetter(c) || c == '_' || c == ':' || (i > sp.k0 && ('0' <= c && c <= '9' || c == '-' || c == '.')) {
			i++
			continue
		}
		break
	}
	sp.k1, sp.v0, sp.v1 = i, -1, -1
	if sp.k1 == sp.k0 || i >= len(p.s) {
		return sp, 0, false
	}
	if p.s[i] == '=' {
		i++
		if i >= len(p.s) {
			return sp, 0, false
		}
		switch q := p.s[i]; q {
		case '"', '\'':
			j := strings.IndexByte(p.s[i+1:], q)
			if j < 0 {
				return sp, 0, false
			}
			sp.v0, sp.v1 = i+1, i+1+j
			i = sp.v1 + 1
		default:
			sp.v0 = i
			for i < len(p.s) {
				c := p.s[i]
				if isASCIILetter(c) || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':' {
					i++
					continue
				}
				break
			}
			sp.v1 = i
			if sp.v1 == sp.v0 {
				return sp, 0, false
			}
		}
		if !plainReferences(p.s[sp.v0:sp.v1]) {
			return sp, 0, false
		}
	}
	if i >= len(p.s) || (p.s[i] != '>' && p.s[i] != '/' && strings.IndexByte(htmlSpace, p.s[i]) < 0) {
		return sp, 0, false
	}
	return sp, i, true
}

// plainReferences reports whether every '&' in an attribute value starts a
// complete character reference that reads the same in an attribute as in
// text: &amp; &lt; &gt; &quot; &apos; or a numeric one with its ';'.
func plainReferences(v string) bool {
	for {
		i := strings.IndexByte(v, '&')
		if i < 0 {
			return true
		}
		v = v[i+1:]
		semi := strings.IndexByte(v, ';')
		if semi < 0 {
			return false
		}
		ref := v[:semi]
		switch ref {
		case "amp", "lt", "gt", "quot", "apos":
		default:
			if len(ref) < 2 || ref[0] != '#' || len(ref) > 8 {
				return false
			}
			digits, hex := ref[1:], false
			if digits[0] == 'x' || digits[0] == 'X' {
				digits, hex = digits[1:], true
			}
			if digits == "" {
				return false
			}
			for j := 0; j < len(digits); j++ {
				c := digits[j]
				if !('0' <= c && c <= '9' || hex && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F')) {
					return false
				}
			}
		}
		v = v[semi+1:]
	}
}

// rawText reads the content of a title, style, script or textarea element
// just inserted, and its end tag.
func (p *plainBuilder) rawText(el *html.Node) bool {
	name := el.Data
	i := p.pos
	for {
		j := strings.Index(p.s[i:], "</")
		if j < 0 {
			return false
		}
		j += i
		k := j + 2 + len(name)
		if k < len(p.s) && strings.EqualFold(p.s[j+2:k], name) && strings.IndexByte(htmlSpace+"/>", p.s[k]) >= 0 {
			content := p.s[p.pos:j]
			if el.DataAtom == atom.Script && strings.Contains(content, "<!--") {
				return false // script data's escape states
			}
			if el.DataAtom == atom.Textarea {
				// The parser drops a first newline.
				content = strings.TrimPrefix(content, "\n")
			}
			if (el.DataAtom == atom.Title || el.DataAtom == atom.Textarea) && strings.IndexByte(content, '&') >= 0 {
				content = html.UnescapeString(content)
			}
			for k < len(p.s) && strings.IndexByte(htmlSpace, p.s[k]) >= 0 {
				k++
			}
			if k >= len(p.s) || p.s[k] != '>' {
				return false
			}
			if content != "" {
				appendChild(el, p.node(html.TextNode, 0, content))
			}
			p.pos = k + 1
			return true
		}
		i = j + 2
	}
}

// endTag reads an end tag: it must close the current element.
func (p *plainBuilder) endTag() bool {
	end, a, name, ok := p.tagName(p.pos + 2)
	if !ok {
		return false
	}
	i := end
	for i < len(p.s) && strings.IndexByte(htmlSpace, p.s[i]) >= 0 {
		i++
	}
	if i >= len(p.s) || p.s[i] != '>' {
		return false
	}
	p.pos = i + 1
	switch p.mode {
	case modeInHead:
		if a != atom.Head {
			return false
		}
		p.cur = p.htmlEl
		p.mode = modeAfterHead
		return true
	case modeInBody:
		top := p.top()
		if a == atom.Body {
			if top != p.bod {
				return false
			}
			p.mode = modeAfterBody
			return true
		}
		if top == p.bod || top.Data != name || isVoid(a) {
			return false
		}
		switch a {
		case atom.P:
			p.pOpen--
		case atom.A:
			p.aOpen--
		case atom.Button:
			p.btnOpen--
		case atom.Form:
			p.formOpen = false
		}
		p.cur = top.Parent
		return true
	case modeAfterBody:
		if a != atom.Html {
			return false
		}
		p.mode = modeAfterAfterBody
		return true
	}
	return false
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Embed, atom.Hr, atom.Img, atom.Input, atom.Link, atom.Meta,
		atom.Param, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// refusedInBody are the start tags the parser treats in a way of its own
// that the builder does not follow.
func refusedInBody(a atom.Atom) bool {
	switch a {
	case atom.Html, atom.Head, atom.Body, atom.Frameset, atom.Frame, atom.Basefont, atom.Bgsound, atom.Noframes,
		atom.Template, atom.Pre, atom.Listing, atom.Plaintext, atom.Nobr, atom.Applet, atom.Marquee, atom.Object,
		atom.Table, atom.Caption, atom.Col, atom.Colgroup, atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead,
		atom.Tr, atom.Image, atom.Xmp, atom.Iframe, atom.Noembed, atom.Noscript, atom.Select,
		atom.Option, atom.Optgroup, atom.Rb, atom.Rtc, atom.Rp, atom.Rt, atom.Math, atom.Svg, atom.Keygen:
		return true
	}
	return false
}

// phrasing are the elements that may open inside a p without closing it
// (0: a name the parser does not know, which it never treats specially).
func phrasing(a atom.Atom) bool {
	switch a {
	case 0, atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Big, atom.Br, atom.Cite, atom.Code, atom.Data,
		atom.Dfn, atom.Em, atom.Font, atom.I, atom.Img, atom.Input, atom.Kbd, atom.Label, atom.Mark, atom.Q,
		atom.S, atom.Samp, atom.Small, atom.Span, atom.Strike, atom.Strong, atom.Sub, atom.Sup, atom.Time,
		atom.Tt, atom.U, atom.Var, atom.Wbr, atom.Script, atom.Style, atom.Textarea:
		return true
	}
	return false
}
