package main

import (
	"net/http"
	"strconv"
	"sync"
)

// The pages, spelled out: byte for byte what the reference's templates (../../webapp/go/templates) produce;
// render_test.go checks it against them.

const (
	pageHead1 = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
	pageHead2 = "memo</title>\n<link rel=\"stylesheet\" href=\"/static/css/memo.css\">\n" +
		"<script src=\"/static/js/memo.js\"></script>\n</head>\n<body>\n" +
		"<header id=\"header\"><a id=\"home-link\" href=\"/\"><img id=\"logo\" src=\"/static/img/logo.png\" " +
		"alt=\"memo\"></a>\n"
	signedOutHeader = "<a id=\"signin-link\" href=\"/signin\">sign in</a> <a id=\"signup-link\" " +
		"href=\"/signup\">sign up</a>\n"
	pageHead3 = "</header>\n<main id=\"main\">\n"
	pageTail  = "\n</main>\n</body>\n</html>\n"
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// page is a page being written: begin it with beginPage, append the content of <main> to b, finish it with send.
type page struct {
	buf *[]byte
	b   []byte
}

// beginPage starts a page with its title (HTML-escaped; empty for none) and the header of sess (nil: signed
// out).
func beginPage(title []byte, sess *session) *page {
	p := &page{buf: bufPool.Get().(*[]byte)}
	b := append((*p.buf)[:0], pageHead1...)
	if len(title) > 0 {
		b = append(b, title...)
		b = append(b, " - "...)
	}
	b = append(b, pageHead2...)
	if sess != nil {
		b = append(b, sess.header...)
	} else {
		b = append(b, signedOutHeader...)
	}
	p.b = append(b, pageHead3...)
	return p
}

// send finishes the page and writes it in one write, with its length.
func (p *page) send(w http.ResponseWriter, status int) {
	p.b = append(p.b, pageTail...)
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

// appendSessionHeader renders the signed-in part of the header.
func appendSessionHeader(b []byte, name, csrf string) []byte {
	b = append(b, `<span id="username">`...)
	b = appendEscaped(b, name)
	b = append(b, "</span> <a id=\"mypage-link\" href=\"/mypage\">my page</a>\n"+
		`<form id="signout" method="post" action="/signout"><input type="hidden" name="csrf_token" value="`...)
	b = appendEscaped(b, csrf)
	return append(b, "\"><button>sign out</button></form>\n"...)
}

// appendItem renders a memo's <li> in a list, with the newline that follows it, and says where in b the escaped
// title is.
func appendItem(b []byte, m *memo, title string) (_ []byte, start, end int) {
	b = append(b, `<li class="memo" id="memo-`...)
	b = strconv.AppendInt(b, m.id, 10)
	b = append(b, `"><a class="memo-title" href="/memos/`...)
	b = strconv.AppendInt(b, m.id, 10)
	b = append(b, `">`...)
	start = len(b)
	b = appendEscaped(b, title)
	end = len(b)
	b = append(b, `</a> <span class="memo-author">`...)
	b = appendEscaped(b, m.author.name)
	b = append(b, `</span> <span class="memo-created">`...)
	b = appendEscaped(b, m.created)
	b = append(b, `</span>`...)
	if m.private {
		b = append(b, ` <span class="memo-private">private</span>`...)
	}
	return append(b, "</li>\n"...), start, end
}

// writeList writes page n of the public memos, out of total: ms are its memos, in id order, shown newest first.
func writeList(w http.ResponseWriter, sess *session, n int64, total int, ms []*memo) {
	var title []byte
	if n > 0 {
		title = strconv.AppendInt([]byte("Public memos, page "), n, 10)
	}
	p := beginPage(title, sess)
	p.b = append(p.b, `<p id="total">public memos: <span id="total-count">`...)
	p.b = strconv.AppendInt(p.b, int64(total), 10)
	p.b = append(p.b, "</span></p>\n<ol id=\"memos\">\n"...)
	for i := len(ms) - 1; i >= 0; i-- {
		p.b = append(p.b, ms[i].item...)
	}
	p.b = append(p.b, "</ol>\n"...)
	if int64(total) > (n+1)*pageSize {
		p.b = append(p.b, `<a id="more" href="/recent/`...)
		p.b = strconv.AppendInt(p.b, n+1, 10)
		p.b = append(p.b, "\">older</a>\n"...)
	}
	p.send(w, http.StatusOK)
}

// writeMemo writes a memo's page: content is its content rendered, older and newer the ids of the pager's links
// (0: none).
func writeMemo(w http.ResponseWriter, sess *session, m *memo, content []byte, older, newer int64) {
	p := beginPage(m.title, sess)
	p.b = append(p.b, `<article id="memo" data-id="`...)
	p.b = strconv.AppendInt(p.b, m.id, 10)
	p.b = append(p.b, "\">\n<p class=\"memo-meta\"><span class=\"memo-author\">"...)
	p.b = appendEscaped(p.b, m.author.name)
	p.b = append(p.b, `</span> <span class="memo-created">`...)
	p.b = appendEscaped(p.b, m.created)
	p.b = append(p.b, `</span> <span class="memo-visibility">`...)
	if m.private {
		p.b = append(p.b, "private"...)
	} else {
		p.b = append(p.b, "public"...)
	}
	p.b = append(p.b, "</span></p>\n<div id=\"memo-content\">"...)
	p.b = append(p.b, content...)
	p.b = append(p.b, "</div>\n</article>\n<nav id=\"memo-pager\">"...)
	if older != 0 {
		p.b = append(p.b, `<a id="older" href="/memos/`...)
		p.b = strconv.AppendInt(p.b, older, 10)
		p.b = append(p.b, `">older</a>`...)
	}
	p.b = append(p.b, ' ')
	if newer != 0 {
		p.b = append(p.b, `<a id="newer" href="/memos/`...)
		p.b = strconv.AppendInt(p.b, newer, 10)
		p.b = append(p.b, `">newer</a>`...)
	}
	p.b = append(p.b, "</nav>"...)
	p.send(w, http.StatusOK)
}

var mypageTitle = []byte("My page")

// writeMypage writes the page of sess's user: ms are the user's memos, in id order, shown newest first.
func writeMypage(w http.ResponseWriter, sess *session, ms []*memo) {
	p := beginPage(mypageTitle, sess)
	p.b = append(p.b, "<h1>My memos</h1>\n<ol id=\"memos\">\n"...)
	for i := len(ms) - 1; i >= 0; i-- {
		p.b = append(p.b, ms[i].item...)
	}
	p.b = append(p.b, "</ol>\n<h2>Write a memo</h2>\n"+
		`<form id="new-memo" method="post" action="/memos"><input type="hidden" name="csrf_token" value="`...)
	p.b = appendEscaped(p.b, sess.csrf)
	p.b = append(p.b, "\">\n<textarea name=\"content\"></textarea><label><input type=\"checkbox\" "+
		"name=\"is_private\" value=\"1\"> private</label><button>save</button></form>"...)
	p.send(w, http.StatusOK)
}

// A form page: sign in or sign up.
type form struct {
	title, h1, id, autocomplete, button, footer string
}

var (
	signinForm = form{"Sign in", "Sign in", "signin", "current-password", "sign in",
		"<p>No account yet? <a href=\"/signup\">Sign up</a>.</p>"}
	signupForm = form{"Sign up", "Sign up", "signup", "new-password", "sign up",
		"<p>A name is 3 to 24 characters of a-z, 0-9 and _; a password is 8 to 64 characters long.</p>"}
)

// writeForm writes the sign-in or sign-up page, with a message (none if empty) and the name the form was sent
// with.
func writeForm(w http.ResponseWriter, status int, sess *session, f *form, message, username string) {
	p := beginPage([]byte(f.title), sess)
	p.b = append(p.b, "<h1>"...)
	p.b = append(p.b, f.h1...)
	p.b = append(p.b, "</h1>\n"...)
	if message != "" {
		p.b = append(p.b, `<p class="error-message">`...)
		p.b = appendEscaped(p.b, message)
		p.b = append(p.b, "</p>\n"...)
	}
	p.b = append(p.b, `<form id="`...)
	p.b = append(p.b, f.id...)
	p.b = append(p.b, `" method="post" action="/`...)
	p.b = append(p.b, f.id...)
	p.b = append(p.b, `"><label>name <input name="username" value="`...)
	p.b = appendEscaped(p.b, username)
	p.b = append(p.b, `" autocomplete="username"></label><label>password <input name="password" type="password" `+
		`autocomplete="`...)
	p.b = append(p.b, f.autocomplete...)
	p.b = append(p.b, `"></label><button>`...)
	p.b = append(p.b, f.button...)
	p.b = append(p.b, "</button></form>\n"...)
	p.b = append(p.b, f.footer...)
	p.send(w, status)
}

// writeError writes an error page: the layout, with the header of sess, and a message.
func writeError(w http.ResponseWriter, sess *session, status int, message string) {
	title := appendEscaped(nil, http.StatusText(status))
	p := beginPage(title, sess)
	p.b = append(p.b, `<section id="error"><h1>`...)
	p.b = append(p.b, title...)
	p.b = append(p.b, `</h1><p class="error-message">`...)
	p.b = appendEscaped(p.b, message)
	p.b = append(p.b, `</p><p><a href="/">Back to the newest memos</a></p></section>`...)
	p.send(w, status)
}

// appendEscaped appends s escaped as html/template escapes text and quoted attributes: NUL becomes U+FFFD and
// " & ' + < > become entities. Every byte of a multi-byte UTF-8 sequence (or of an invalid one) is >= 0x80, so
// going byte by byte is the same as html/template going rune by rune.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, repl...)
		last = i + 1
	}
	return append(b, s[last:]...)
}
