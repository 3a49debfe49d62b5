package main

import (
	"bytes"
	"html/template"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

// refPage is the reference's Page.
type refPage struct {
	Title, Message, Notice, NoticeText, Login, LastAt, LastIP string
}

// refRender renders a page with the reference app's templates.
func refRender(t *testing.T, name string, page refPage) []byte {
	t.Helper()
	dir := filepath.Join("..", "..", "webapp", "go", "templates")
	tmpl, err := template.ParseFiles(filepath.Join(dir, "layout.html"), filepath.Join(dir, name+".html"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "layout", page); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPagesMatchTheReference(t *testing.T) {
	for n := range indexPages {
		want := refRender(t, "index", refPage{Title: "Log in", Notice: noticeReasons[n], NoticeText: noticeTexts[n]})
		if !bytes.Equal(indexPages[n], want) {
			t.Errorf("index page with notice %q:\n%s\nwant\n%s", noticeReasons[n], indexPages[n], want)
		}
	}
	want := refRender(t, "error", refPage{Title: "Not found", Message: "There is no such page."})
	if !bytes.Equal(notFoundPage, want) {
		t.Errorf("404 page:\n%s\nwant\n%s", notFoundPage, want)
	}
}

func TestMypageMatchesTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", ".", ":", " ", "\t", "\x00", "\"", "&", "'", "+", "<", ">", "=", "`",
		"é", "日", "\xff", "\xe6\x97", "\U0001F600", "\ufdd0", "\uffff", "/", ";"}
	random := func() string {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		return string(b)
	}
	cases := [][2]string{{"u0000001", "10.1.2.3"}, {"u0000002", "::1"}, {"", ""}}
	for range 2000 {
		cases = append(cases, [2]string{random(), random()})
	}
	for _, c := range cases {
		at := rng.Int64N(4_000_000_000)
		rec := httptest.NewRecorder()
		writeMypage(rec, c[0], at, c[1])
		want := refRender(t, "mypage", refPage{Title: "My page", Login: c[0],
			LastAt: time.Unix(at, 0).UTC().Format(timeFormat), LastIP: c[1]})
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("mypage for %q %q:\n%s\nwant\n%s", c[0], c[1], got, want)
		}
	}
}

func TestParseTime(t *testing.T) {
	for _, s := range []string{"2025-12-04 05:20:00", "2025-12-31 23:59:57", "1970-01-01 00:00:00",
		"2024-02-29 12:00:00", "2025-02-30 12:00:00", "2025-12-04T05:20:00", "2025-12-04 05:20:00.5",
		"2025-12-04 05:20:00+09:00", "2025-12-04 05:20:00Z", "2025-12-04", "nonsense", ""} {
		want := int64(0)
		found := false
		for _, layout := range sqliteTimeFormats {
			if tm, err := time.ParseInLocation(layout, trimZ(s), time.UTC); err == nil {
				want, found = tm.Unix(), true
				break
			}
		}
		if !found {
			want = time.Time{}.Unix()
		}
		if got := int64(parseTime(s)); got != want {
			t.Errorf("parseTime(%q) = %d, want %d", s, got, want)
		}
	}
}

func trimZ(s string) string {
	if len(s) > 0 && s[len(s)-1] == 'Z' {
		return s[:len(s)-1]
	}
	return s
}
