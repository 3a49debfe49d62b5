package main

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The pages are written straight into a byte buffer. The markup is the reference's templates
// (../../webapp/go/templates) with the template actions spelled out, so the output is the same byte for byte.

const pageStart = "<!DOCTYPE html>\n<html lang=\"ja\">\n<head>\n<meta charset=\"utf-8\">\n" +
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"

const pageHead = "tunecon blog</title>\n" +
	"<link rel=\"stylesheet\" href=\"/static/css/blog.css\">\n" +
	"<script src=\"/static/js/blog.js\"></script>\n" +
	"</head>\n<body>\n" +
	"<header id=\"header\"><a id=\"home-link\" href=\"/\"><img id=\"logo\" src=\"/static/img/logo.png\" alt=\"tunecon blog\"></a>" +
	"<a id=\"post-link\" href=\"/post\">Write an article</a></header>\n" +
	"<div id=\"page\">\n<main id=\"main\">\n"

const mainEnd = "\n</main>\n"

const sidebarOpen = "<aside id=\"sidebar\"><h2>Recently commented</h2><ol id=\"recent-commented\">\n"

const sidebarClose = "</ol></aside>\n"

const pageEnd = "</div>\n" +
	"<footer id=\"footer\"><img id=\"badge\" src=\"/static/img/badge.png\" alt=\"powered by tunecon\">" +
	"<img id=\"banner\" src=\"/static/img/banner.jpg\" alt=\"\"></footer>\n" +
	"</body>\n</html>\n"

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// page is a page being written: start it with beginPage, add the content of <main>, finish it with send.
type page struct {
	buf *[]byte
	b   []byte
}

// beginPage starts a page; title is the HTML-escaped title, or nil for the top page.
func beginPage(title []byte) *page {
	p := &page{buf: bufPool.Get().(*[]byte)}
	p.b = append((*p.buf)[:0], pageStart...)
	if title != nil {
		p.b = append(p.b, title...)
		p.b = append(p.b, " - "...)
	}
	p.b = append(p.b, pageHead...)
	return p
}

// send finishes the page with the current sidebar and writes it.
func (p *page) send(w http.ResponseWriter, app *App, status int) {
	p.b = append(p.b, mainEnd...)
	p.b = append(p.b, app.mem.sidebar.Load().html...)
	p.b = append(p.b, pageEnd...)
	h := w.Header()
	h["Content-Type"] = []string{"text/html; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(p.b))}
	w.WriteHeader(status)
	w.Write(p.b)
	if cap(p.b) <= 1<<20 { // do not keep huge buffers around
		*p.buf = p.b[:0]
		bufPool.Put(p.buf)
	}
}

// appendArticle renders the entry template: one article.
func appendArticle(b []byte, id int64, title []byte, body string, created time.Time) []byte {
	b = append(b, `<article class="article" id="article-`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `"><h2 class="article-title"><a class="article-link" href="/articles/`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `">`...)
	b = append(b, title...)
	b = append(b, `</a></h2><p class="article-created">`...)
	b = created.UTC().AppendFormat(b, timeFormat)
	b = append(b, `</p><div class="article-body">`...)
	b = appendMultiline(b, body)
	b = append(b, `</div></article>`...)
	return b
}

// appendComment renders one comment of an article page, with the newline that follows it.
func appendComment(b []byte, id int64, name, body string, created time.Time) []byte {
	if name == "" {
		name = anonymousName
	}
	b = append(b, `<li class="comment" id="comment-`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `"><p class="comment-name">`...)
	b = appendEscaped(b, name)
	b = append(b, `</p><div class="comment-body">`...)
	b = appendMultiline(b, body)
	b = append(b, `</div><p class="comment-created">`...)
	b = created.UTC().AppendFormat(b, timeFormat)
	b = append(b, "</p></li>\n"...)
	return b
}

// appendRecentItem renders one item of the sidebar, with the newline that follows it.
func appendRecentItem(b []byte, a *article) []byte {
	b = append(b, `<li class="recent-item"><a class="recent-link" href="/articles/`...)
	b = strconv.AppendInt(b, a.id, 10)
	b = append(b, `">`...)
	b = append(b, a.title...)
	b = append(b, "</a></li>\n"...)
	return b
}

// appendEscaped escapes text the way html/template does in element content ({{.Title}} in the reference).
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '+':
			r = "&#43;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, r...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// appendMultiline escapes text the way the reference's "multiline" function does (template.HTMLEscapeString, then
// each "\r\n" and each "\n" becomes <br>).
func appendMultiline(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		case '\n':
			r = "<br>"
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				b = append(b, s[last:i]...)
				b = append(b, "<br>"...)
				i++
				last = i + 1
			}
			continue
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, r...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

func itoa(n int) string { return strconv.Itoa(n) }
