package main

import (
	"bytes"
	"html/template"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/yuin/goldmark"
)

// The reference's view of a page (../../webapp/go/main.go), for its templates.
type (
	refSession struct {
		Username, CSRFToken string
	}
	refItem struct {
		ID                       int64
		Title, Author, CreatedAt string
		IsPrivate                bool
	}
	refPage struct {
		Title    string
		Session  *refSession
		Message  string
		Username string
		Total    int
		Memos    []refItem
		More     string
		Memo     refItem
		Content  template.HTML
		Older    int64
		Newer    int64
	}
)

// refRender renders a page with the reference app's templates.
func refRender(t *testing.T, name string, page refPage) []byte {
	t.Helper()
	dir := filepath.Join("..", "..", "webapp", "go", "templates")
	tmpl, err := template.ParseFiles(filepath.Join(dir, "layout.html"), filepath.Join(dir, "item.html"),
		filepath.Join(dir, name+".html"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "layout", page); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tricky are strings that html/template escapes, or might: HTML's special characters, '+', quotes, NUL,
// Japanese, noncharacters, invalid UTF-8.
var tricky = []string{"", "a", "Tuning notes", `<script>alert("x")</script>`, "Tom & Jerry's", "1 + 1 = 2",
	"日本語のメモ", "a\x00b", "\"quoted\"", "'single'", "`back`", "é", "\ufdd0\uffff\ufffd", "\xff\xe6\x97",
	"&amp; &#34;", " spaced ", "C++ <T>", "\U0001F600 emoji", "=;/?#"}

// randomText is up to n random pieces of the tricky strings and a few characters.
func randomText(rng *rand.Rand, n int) string {
	pieces := append([]string{" ", "\t", "x", "#", "+", "<", ">", "&", "\"", "'"}, tricky...)
	var b []byte
	for range rng.IntN(n + 1) {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return string(b)
}

// fixture is a user, a session and memos of theirs, with the reference's view of each.
type fixture struct {
	u     *user
	sess  *session
	refS  *refSession
	memos []*memo
	items []refItem
}

func newFixture(name, csrf string, titles []string, private func(i int) bool) *fixture {
	f := &fixture{u: &user{id: 7, name: name}}
	f.sess = newSession("sid", f.u, csrf)
	f.refS = &refSession{Username: name, CSRFToken: csrf}
	for i, t := range titles {
		id := int64(i*3 + 1)
		created := "2025-01-02 03:04:" + strconv.Itoa(10+i%50)
		priv := private(i)
		f.memos = append(f.memos, newMemo(id, f.u, priv, created, title(t)))
		f.items = append(f.items, refItem{ID: id, Title: title(t), Author: name, CreatedAt: created, IsPrivate: priv})
	}
	return f
}

// newestFirst is the reference's view of the items, reversed, as the lists show them.
func newestFirst(items []refItem) []refItem {
	out := make([]refItem, 0, len(items))
	for i := len(items) - 1; i >= 0; i-- {
		out = append(out, items[i])
	}
	return out
}

func record(write func(w http.ResponseWriter)) []byte {
	rec := httptest.NewRecorder()
	write(rec)
	return rec.Body.Bytes()
}

func check(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n%s\nwant\n%s", what, got, want)
	}
}

func TestTitle(t *testing.T) {
	for content, want := range map[string]string{
		"# Tuning notes\nbody":  "Tuning notes",
		"## # x #\t \nbody":     "x #",
		"  ## spaced  \t":       "spaced",
		"#\t tab\n":             "\t tab",
		"plain":                 "plain",
		"###   \nbody":          "",
		"\nsecond":              "",
		"# 日本語 \t\r\nbody":      "日本語 \t\r",
		"# a + b & <c>\nbody\n": "a + b & <c>",
	} {
		if got := title(content); got != want {
			t.Errorf("title(%q) = %q, want %q", content, got, want)
		}
	}
}

func TestListMatchesTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		titles := append([]string(nil), tricky...)
		if round > 0 {
			titles = titles[:0]
			for range rng.IntN(120) {
				titles = append(titles, "# "+randomText(rng, 6)+"x\nbody")
			}
		}
		name := "yui1"
		if round%3 == 1 {
			name = randomText(rng, 5)
		}
		f := newFixture(name, "0123abcd", titles, func(int) bool { return false })
		for _, signedIn := range []bool{false, true} {
			sess, refS := (*session)(nil), (*refSession)(nil)
			if signedIn {
				sess, refS = f.sess, f.refS
			}
			n := int64(rng.IntN(3))
			total := len(f.memos) + rng.IntN(250)
			page := refPage{Session: refS, Total: total, Memos: newestFirst(f.items)}
			if n > 0 {
				page.Title = "Public memos, page " + strconv.FormatInt(n, 10)
			}
			if int64(total) > (n+1)*pageSize {
				page.More = "/recent/" + strconv.FormatInt(n+1, 10)
			}
			got := record(func(w http.ResponseWriter) { writeList(w, sess, n, total, f.memos) })
			check(t, "list page "+strconv.FormatInt(n, 10), got, refRender(t, "index", page))
		}
	}
}

func TestMypageMatchesTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		var titles []string
		for range rng.IntN(60) {
			titles = append(titles, randomText(rng, 6)+"x\n")
		}
		if round == 0 {
			titles = tricky
		}
		f := newFixture(randomText(rng, 4)+"u", randomText(rng, 3)+"tok", titles,
			func(int) bool { return rng.IntN(2) == 0 })
		got := record(func(w http.ResponseWriter) { writeMypage(w, f.sess, f.memos) })
		want := refRender(t, "mypage", refPage{Title: "My page", Session: f.refS, Memos: newestFirst(f.items)})
		check(t, "mypage", got, want)
	}
}

func TestMemoMatchesTheReference(t *testing.T) {
	md := goldmark.New()
	contents := []string{
		"# Tuning notes\n\nSome *emphasis*, `code` and a [link](https://example.com/?a=1&b=2).\n",
		"# 日本語のメモ + \"quotes\" & 'apostrophes' <tags>\n\n- 一つ\n- two\n\n```go\nfmt.Println(\"<hi>\")\n```\n",
		"#   <b>raw</b> html\n\n<div>raw block</div>\n\ntext & more",
		"title only",
	}
	f := newFixture("peggy2", "c5f3", contents, func(i int) bool { return i%2 == 1 })
	for i, m := range f.memos {
		var html bytes.Buffer
		if err := md.Convert([]byte(contents[i]), &html); err != nil {
			t.Fatal(err)
		}
		for _, pager := range [][2]int64{{0, 0}, {3, 0}, {0, 9}, {12, 40}} {
			for _, signedIn := range []bool{false, true} {
				sess, refS := (*session)(nil), (*refSession)(nil)
				if signedIn {
					sess, refS = f.sess, f.refS
				}
				got := record(func(w http.ResponseWriter) { writeMemo(w, sess, m, html.Bytes(), pager[0], pager[1]) })
				want := refRender(t, "memo", refPage{Title: f.items[i].Title, Session: refS, Memo: f.items[i],
					Content: template.HTML(html.String()), Older: pager[0], Newer: pager[1]})
				check(t, "memo page "+strconv.Itoa(i), got, want)
			}
		}
	}
}

func TestFormsAndErrorsMatchTheReference(t *testing.T) {
	f := newFixture("alice6", "deadbeef", nil, nil)
	messages := []string{"", msgWrongPass, msgBadSignup, msgTaken}
	for _, username := range tricky {
		for _, msg := range messages {
			for _, sess := range []*session{nil, f.sess} {
				refS := (*refSession)(nil)
				if sess != nil {
					refS = f.refS
				}
				for _, c := range []struct {
					name  string
					title string
					form  *form
				}{{"signin", "Sign in", &signinForm}, {"signup", "Sign up", &signupForm}} {
					got := record(func(w http.ResponseWriter) { writeForm(w, http.StatusOK, sess, c.form, msg, username) })
					want := refRender(t, c.name, refPage{Title: c.title, Session: refS, Message: msg, Username: username})
					check(t, c.name+" page", got, want)
				}
			}
		}
	}
	for _, status := range []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound,
		http.StatusInternalServerError} {
		for _, msg := range []string{msgNoPage, msgNoMemo, msgExpired, msgSignIn, msgBadMemo, "<&+'\">"} {
			for _, sess := range []*session{nil, f.sess} {
				refS := (*refSession)(nil)
				if sess != nil {
					refS = f.refS
				}
				rec := httptest.NewRecorder()
				writeError(rec, sess, status, msg)
				if rec.Code != status {
					t.Errorf("error page status %d, want %d", rec.Code, status)
				}
				want := refRender(t, "error", refPage{Title: http.StatusText(status), Session: refS, Message: msg})
				check(t, "error page", rec.Body.Bytes(), want)
			}
		}
	}
}

func TestNeighbours(t *testing.T) {
	var ms []*memo
	for _, id := range []int64{2, 5, 9, 14} {
		ms = append(ms, &memo{id: id})
	}
	for _, c := range []struct{ id, older, newer int64 }{
		{2, 0, 5}, {5, 2, 9}, {14, 9, 0}, {1, 0, 2}, {7, 5, 9}, {20, 14, 0},
	} {
		if older, newer := neighbours(ms, c.id); older != c.older || newer != c.newer {
			t.Errorf("neighbours(%d) = %d, %d; want %d, %d", c.id, older, newer, c.older, c.newer)
		}
	}
	if older, newer := neighbours(nil, 3); older != 0 || newer != 0 {
		t.Errorf("neighbours of nothing = %d, %d", older, newer)
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]bool{"1": true, "50000": true, "9223372036854775807": true,
		"9223372036854775808": false, "0": false, "01": false, "-1": false, "+1": false, "1a": false, "": false,
		" 1": false, "1.0": false, "１": false} {
		if _, ok := parseID(s); ok != want {
			t.Errorf("parseID(%q) ok = %v, want %v", s, ok, want)
		}
	}
	for s, want := range map[string]bool{"0": true, "1": true, "499": true, "00": false, "01": false, "-0": false,
		"92233720368547758": false, "92233720368547757": true, "x": false, "": false} {
		if _, ok := parsePage(s); ok != want {
			t.Errorf("parsePage(%q) ok = %v, want %v", s, ok, want)
		}
	}
	for s, want := range map[string]bool{"abc": true, "a_1": true, "ab": false, "ABC": false, "abc-d": false,
		"abcdefghijklmnopqrstuvwx": true, "abcdefghijklmnopqrstuvwxy": false, "abc\n": false, "日本語": false} {
		if got := validName(s); got != want {
			t.Errorf("validName(%q) = %v, want %v", s, got, want)
		}
	}
}

// listFixture is a full list page: 100 memos with Japanese titles, signed in.
func listFixture() *fixture {
	titles := make([]string, pageSize)
	for i := range titles {
		titles[i] = "# 日本語のメモ " + strconv.Itoa(i) + ": tuning notes & more\nbody"
	}
	return newFixture("yui1", "0123456789abcdef0123456789abcdef", titles, func(int) bool { return false })
}

// BenchmarkListPage: a list page from the pre-rendered items.
func BenchmarkListPage(b *testing.B) {
	f := listFixture()
	w := discard{h: http.Header{}}
	for b.Loop() {
		writeList(w, f.sess, 1, 25048, f.memos)
	}
}

// BenchmarkListPageTemplate: the same page with the reference's html/template.
func BenchmarkListPageTemplate(b *testing.B) {
	f := listFixture()
	dir := filepath.Join("..", "..", "webapp", "go", "templates")
	tmpl := template.Must(template.ParseFiles(filepath.Join(dir, "layout.html"), filepath.Join(dir, "item.html"),
		filepath.Join(dir, "index.html")))
	page := refPage{Title: "Public memos, page 1", Session: f.refS, Total: 25048, Memos: newestFirst(f.items),
		More: "/recent/2"}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := tmpl.ExecuteTemplate(&buf, "layout", page); err != nil {
			b.Fatal(err)
		}
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
