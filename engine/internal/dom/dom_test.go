package dom

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// plainPages are pages the direct builder must take (the common shapes of
// the problems' templates); each must give html.Parse's tree.
var plainPages = []string{
	`<!DOCTYPE html><html><head><title>perf</title></head><body><ul id="items">` +
		`<li>one</li><li>two</li><li>three</li></ul><p id="total">3</p></body></html>`,
	`<!DOCTYPE html>
<html lang="ja">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>A &amp; B - tunecon blog</title>
<link rel="stylesheet" href="/static/css/blog.css">
<script src="/static/js/blog.js"></script>
</head>
<body>
<header id="header"><a id="home-link" href="/"><img id="logo" src="/static/img/logo.png" alt="tunecon blog"></a><a id="post-link" href="/post">Write an article</a></header>
<div id="page">
<main id="main">
<section id="articles">
<article class="entry" id="article-12"><h2><a href="/articles/12?x=1&amp;y=2">Hello &lt;world&gt; &#39;x&#39;</a></h2>
<p class="meta">by <span class="author">alice</span> at <time>2026-11-23</time><br>two<br/>lines</p>
<div class="body">Body text &copy; with entities&nbsp;&hellip;</div>
<form method="post" action="/articles/12/comments"><input type="text" name="name"><textarea name="body">
first line &amp; more</textarea><button type="submit">Send</button></form>
</article>
</section>
</main>
<aside id="sidebar"><h2>Recently commented</h2><ol id="recent-commented">
<li class="recent-item"><a class="recent-link" href="/articles/3">Three</a></li>
<li class="recent-item"><a class="recent-link" href="/articles/4">Four</a></li>
</ol></aside>
</div>
<footer id="footer"><img id="badge" src="/static/img/badge.png" alt="powered by tunecon"><img id="banner" src="/static/img/banner.jpg" alt=""></footer>
</body>
</html>
`,
	`<!doctype HTML>
<HTML><HEAD><META CHARSET=utf-8><Title>x</Title>
<style>p > a { color: red }</style><!-- a comment -->
</HEAD>
<BODY CLASS=main>
<section id="mypage"><h1>Welcome, <span id="login-name">bob</span></h1>
<dl id="last-login"><dt>Last login (UTC)</dt><dd id="last-login-at">2026-11-23 09:00:00</dd><dt>From</dt><dd id="last-login-ip">10.0.0.1</dd></dl>
<p class="hint">If you do not recognise this login, <em>change</em> your password.</p>
<ul><li>a<ul><li>nested</li></ul></li><li data-x='1' hidden>b</li></ul>
<script>var a = "</scrip" + "t>"; if (a < 3) {}</script>
<custom-el foo="bar">custom</custom-el>
</section><!-- done -->
</BODY></HTML>`,
	`<html><head></head><body></body></html>`,
	`<html><head></head><body>text only`,
	`<html><head></head><body><div><p>unclosed at the end`,
}

// notPlainPages are pages the builder must leave to html.Parse.
var notPlainPages = []string{
	`<p>no html element</p>`,
	`<html><body>no head</body></html>`,
	`<html><head></head><body><p><div>closes the p</div></p></body></html>`,
	`<html><head></head><body><table><tr><td>x</td></tr></table></body></html>`,
	`<html><head></head><body><li>a<li>b</body></html>`,
	`<html><head></head><body><div>a</span></div></body></html>`,
	`<html><head></head><body><a href="/?a=1&b=2">x</a></body></html>`,
	`<html><head></head><body><!-- a -- b --></body></html>`,
	`<html><head></head><body>a < b</body></html>`,
	"<html><head></head><body>a\r\nb</body></html>",
	`<html><head></head><body><pre>
x</pre></body></html>`,
	`<html><head></head><body><b><i>x</b></i></body></html>`,
	`<html><head><div>x</div></head><body></body></html>`,
	`<html><head></head><body><div class="a" class="b"></div></body></html>`,
	`<html><head></head><body><div/></body></html>`,
	`<html><head></head><body><script><!-- x --></script></body></html>`,
}

func TestPlainHTMLBuildsParsesTree(t *testing.T) {
	t.Parallel()
	for i, page := range plainPages {
		doc, ok := buildPlainHTML([]byte(page))
		if !ok {
			t.Errorf("plain page %d was left to html.Parse", i)
			continue
		}
		if diff := sameTree(t, page, doc); diff != "" {
			t.Errorf("plain page %d: %s", i, diff)
		}
	}
	for i, page := range notPlainPages {
		if doc, ok := buildPlainHTML([]byte(page)); ok {
			if diff := sameTree(t, page, doc); diff != "" {
				t.Errorf("page %d was built, and differs from html.Parse's tree: %s", i, diff)
			} else {
				t.Errorf("page %d was built directly; it is outside the subset the builder promises", i)
			}
		}
	}
}

// FuzzPlainHTMLMatchesParse: whatever the builder takes, it builds
// html.Parse's tree. Run it with
// go test ./engine/internal/dom -run XXX -fuzz FuzzPlainHTMLMatchesParse.
func FuzzPlainHTMLMatchesParse(f *testing.F) {
	for _, p := range plainPages {
		f.Add(p)
	}
	for _, p := range notPlainPages {
		f.Add(p)
	}
	for _, p := range []string{
		`<html><head></head><body><p>a<b>b</b><br>c</p><p>d</p></body></html>`,
		`<html><head></head><body><h1>a<h2>b</h2></h1><dl><dt>x<dd>y</dl></body></html>`,
		`<html><head></head><body><a href=x>1</a><a href=y>2<span><a>3</a></span></a></body></html>`,
		`<html><head></head><body><form><form></form></form><button><button></button></button></body></html>`,
		`<html><head></head><body><ul><li><div><li>x</li></div></li></ul></body></html>`,
		`<html><head><title>&amp;&lt;x</title><script>a</SCRIPT ></head><body>&notin;&amp&#x41;&#65</body>  </html> `,
		"<html><head></head><body>x</body>\n<!--after-->\n</html>",
		"<html><head></head><body><p>a<textarea>\n\nx&amp;<b></textarea></p><textarea>\n</textarea></body></html>",
		`<html><head></head>  <body><p><input disabled/><img src='a&amp;b'></p></body></html>`,
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, page string) {
		doc, ok := buildPlainHTML([]byte(page))
		if !ok {
			return
		}
		if diff := sameTree(t, page, doc); diff != "" {
			t.Fatalf("%q: %s", page, diff)
		}
	})
}

// sameTree compares doc with html.Parse's tree of page, links included, and
// says where they differ ("" when they do not).
func sameTree(t testing.TB, page string, doc *html.Node) string {
	t.Helper()
	want, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return fmt.Sprintf("html.Parse: %v", err)
	}
	return diffNodes(want, doc, "document")
}

func diffNodes(want, got *html.Node, at string) string {
	if want.Type != got.Type || want.DataAtom != got.DataAtom || want.Data != got.Data || want.Namespace != got.Namespace {
		return fmt.Sprintf("at %s: want %s, got %s", at, describe(want), describe(got))
	}
	if len(want.Attr) != len(got.Attr) {
		return fmt.Sprintf("at %s: want attributes %v, got %v", at, want.Attr, got.Attr)
	}
	for i := range want.Attr {
		if want.Attr[i] != got.Attr[i] {
			return fmt.Sprintf("at %s: want attributes %v, got %v", at, want.Attr, got.Attr)
		}
	}
	w, g := want.FirstChild, got.FirstChild
	var prev *html.Node
	for i := 0; w != nil || g != nil; i++ {
		here := fmt.Sprintf("%s/%d", at, i)
		if w == nil || g == nil {
			return fmt.Sprintf("at %s: want %s, got %s", here, describe(w), describe(g))
		}
		if g.Parent != got || g.PrevSibling != prev {
			return fmt.Sprintf("at %s: broken links", here)
		}
		if d := diffNodes(w, g, here); d != "" {
			return d
		}
		prev = g
		w, g = w.NextSibling, g.NextSibling
	}
	if got.LastChild != prev {
		return fmt.Sprintf("at %s: LastChild is not the last child", at)
	}
	return ""
}

func describe(n *html.Node) string {
	if n == nil {
		return "nothing"
	}
	var b bytes.Buffer
	_ = html.Render(&b, n)
	return fmt.Sprintf("%v %q %q", n.Type, n.Data, abbreviate(b.String(), 60))
}

// abbreviate cuts s to n runes and an ellipsis.
func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// TestPlainHTMLOnGeneratedPages builds random pages from tags that nest in
// every way, the parser's special cases among them, and holds every page the
// builder takes to html.Parse's tree. A good share must be taken, or the
// test would prove nothing.
func TestPlainHTMLOnGeneratedPages(t *testing.T) {
	t.Parallel()
	tags := []string{"div", "p", "span", "a", "b", "i", "em", "strong", "ul", "ol", "li", "dl", "dt", "dd", "h1",
		"h2", "section", "form", "button", "label", "code", "small", "nav", "main", "header", "footer", "article",
		"x-item", "font", "s", "u", "table", "pre", "select", "option", "textarea", "menu", "blockquote", "summary"}
	voids := []string{"br", "img", "input", "hr", "wbr", "meta", "link"}
	attrs := []string{``, ` id="x"`, ` class="a b"`, ` href="/p?a=1&amp;b=2" id=z`, ` data-n='3'`, ` hidden`,
		` title="&lt;&#39;&quot;"`, ` ID="Up"`, ` b="2" a="1"`}
	texts := []string{"text", " ", "\n", "a &amp; b", "&copy;&nbsp;x", "&#65;&#x42;", "&notit;", "x&y"}
	seed := uint64(1)
	rnd := func(n int) int { // a small xorshift: deterministic and enough here
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	var gen func(b *strings.Builder, depth int)
	gen = func(b *strings.Builder, depth int) {
		for range rnd(4) {
			switch k := rnd(10); {
			case k < 3:
				b.WriteString(texts[rnd(len(texts))])
			case k < 4:
				fmt.Fprintf(b, "<%s%s>", voids[rnd(len(voids))], attrs[rnd(len(attrs))])
			case k < 5:
				b.WriteString("<!-- c -->")
			default:
				tag := tags[rnd(len(tags))]
				if rnd(5) == 0 {
					tag = strings.ToUpper(tag)
				}
				fmt.Fprintf(b, "<%s%s>", tag, attrs[rnd(len(attrs))])
				if depth < 6 {
					gen(b, depth+1)
				}
				if rnd(12) != 0 { // sometimes left open
					fmt.Fprintf(b, "</%s>", tag)
				}
			}
		}
	}
	const pages = 20000
	taken := 0
	for range pages {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html><head><title>t</title></head>\n<body>")
		gen(&b, 0)
		b.WriteString("</body>\n</html>\n")
		page := b.String()
		doc, ok := buildPlainHTML([]byte(page))
		if !ok {
			continue
		}
		taken++
		if diff := sameTree(t, page, doc); diff != "" {
			t.Fatalf("%q: %s", page, diff)
		}
	}
	if taken < pages/5 {
		t.Errorf("the builder took only %d of %d generated pages", taken, pages)
	}
	t.Logf("the builder took %d of %d generated pages", taken, pages)
}

// BenchmarkParseHTML compares the direct builder with html.Parse on a
// problem-like page (plainPages[1]).
func BenchmarkParseHTML(b *testing.B) {
	page := []byte(plainPages[1])
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := buildPlainHTML(page); !ok {
				b.Fatal("not plain")
			}
		}
	})
	b.Run("html.Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := html.Parse(bytes.NewReader(page)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
