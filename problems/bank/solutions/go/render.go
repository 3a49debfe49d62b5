package main

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The pages, spelled out: byte for byte what the reference's templates (../../webapp/go/templates) produce;
// render_test.go checks it against them.

const (
	pageHead1 = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
	pageHead2 = " - tunecon bank</title>\n<link rel=\"stylesheet\" href=\"/static/css/bank.css\">\n" +
		"<script src=\"/static/js/bank.js\"></script>\n</head>\n<body>\n" +
		"<header id=\"header\"><a id=\"home-link\" href=\"/\"><img id=\"logo\" src=\"/static/img/logo.png\" " +
		"alt=\"tunecon bank\"></a></header>\n<main id=\"main\">\n"
	pageTail = "\n</main>\n<footer id=\"footer\"><p>tunecon bank will never ask for your password by email or on " +
		"the phone.</p></footer>\n</body>\n</html>\n"

	indexMain1 = "<section id=\"login\"><h1>Log in to online banking</h1>\n"
	indexMain2 = "<form id=\"login-form\" method=\"post\" action=\"/login\"><input name=\"login\">" +
		"<input name=\"password\" type=\"password\"><button type=\"submit\">Log in</button></form>\n" +
		"<p class=\"hint\">Three failed attempts since the last successful login lock an account; ten from one " +
		"address ban the address.</p>\n</section>"

	mypageMain1 = "<section id=\"mypage\"><h1>Welcome, <span id=\"login-name\">"
	mypageMain2 = "</span></h1>\n<dl id=\"last-login\"><dt>Last login (UTC)</dt><dd id=\"last-login-at\">"
	mypageMain3 = "</dd><dt>From</dt><dd id=\"last-login-ip\">"
	mypageMain4 = "</dd></dl>\n<p class=\"hint\">If you do not recognise this login, change your password and " +
		"call us.</p>\n</section>"

	errorMain = "<section id=\"error\"><h1>Not found</h1><p class=\"error-message\">There is no such page.</p>" +
		"<p><a href=\"/\">Back to the login page</a></p></section>"
)

// indexPages are the login page, by notice (noticeNone: without one); notFoundPage is the 404 page. Neither
// depends on anything else, so they are made once.
var (
	indexPages   [len(noticeReasons)][]byte
	notFoundPage = []byte(pageHead1 + "Not found" + pageHead2 + errorMain + pageTail)
)

func init() {
	for n := range indexPages {
		notice := ""
		if n != noticeNone {
			notice = "<p id=\"notice\" class=\"notice\" data-reason=\"" + noticeReasons[n] + "\">" + noticeTexts[n] +
				"</p>\n"
		}
		indexPages[n] = []byte(pageHead1 + "Log in" + pageHead2 + indexMain1 + notice + indexMain2 + pageTail)
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// writeMypage writes the page of a logged-in session.
func writeMypage(w http.ResponseWriter, login string, at int64, ip string) {
	bp := bufPool.Get().(*[]byte)
	b := append((*bp)[:0], pageHead1+"My page"+pageHead2+mypageMain1...)
	b = appendEscaped(b, login)
	b = append(b, mypageMain2...)
	b = time.Unix(at, 0).UTC().AppendFormat(b, timeFormat)
	b = append(b, mypageMain3...)
	b = appendEscaped(b, ip)
	b = append(b, mypageMain4+pageTail...)
	writeHTML(w, http.StatusOK, true, b)
	*bp = b
	bufPool.Put(bp)
}

// writeHTML sends an HTML page in one write, with its length.
func writeHTML(w http.ResponseWriter, status int, private bool, page []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"text/html; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(page))}
	if private {
		h["Cache-Control"] = []string{"private"}
	}
	w.WriteHeader(status)
	w.Write(page)
}

// appendEscaped appends s escaped as html/template escapes text: NUL becomes U+FFFD and " & ' + < > become
// entities. Every byte of a multi-byte UTF-8 sequence (or of an invalid one) is >= 0x80, so going byte by byte
// is the same as html/template going rune by rune.
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
