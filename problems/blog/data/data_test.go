package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tunecon/tunecon/kit/apptest"
)

// small is big enough to cover several INSERT statements and comments spread
// over many articles.
var small = Config{Seed: 7, Articles: 600, Comments: 12000}

const forbidden = ";\\'\"<>&\r"

// smallDumpSHA256 pins the bytes of small's dump. If a change to the generator
// alters them on purpose, bump Version and put the new hash here.
const smallDumpSHA256 = "e8ae523bb3057b52bf581da313f8c3e0542a204cc94563fcfae6c0559bc9a3b4"

func dump(t *testing.T, c Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteSQL(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeterministic(t *testing.T) {
	a, b := dump(t, small), dump(t, small)
	if !bytes.Equal(a, b) {
		t.Fatal("two dumps of the same config differ")
	}
	sum := sha256.Sum256(a)
	if got := hex.EncodeToString(sum[:]); got != smallDumpSHA256 {
		t.Errorf("dump of %+v has sha256 %s, want %s: if the change is intended, bump Version and update the hash",
			small, got, smallDumpSHA256)
	}
	if other := (Config{Seed: small.Seed + 1, Articles: small.Articles, Comments: small.Comments}); bytes.Equal(dump(t, other)[100:], a[100:]) {
		t.Error("different seeds give the same data")
	}
	// Random access in any order gives the same items.
	for _, id := range []int64{599, 1, 300, 1, 599} {
		if x, y := small.Article(id), small.Article(id); x != y {
			t.Errorf("Article(%d) differs between calls: %+v, %+v", id, x, y)
		}
	}
	for _, id := range []int64{11999, 1, 5000, 12000, 1} {
		if x, y := small.Comment(id), small.Comment(id); x != y {
			t.Errorf("Comment(%d) differs between calls: %+v, %+v", id, x, y)
		}
	}
	if small.Article(5) == small.Article(6) || small.Comment(5).Body == small.Article(5).Body {
		t.Error("items share a stream")
	}
}

func TestHeader(t *testing.T) {
	const want = "-- tunecon blog initial data v1 seed=20110827 articles=10000 comments=300000"
	w := &firstChunk{}
	if err := Default().WriteSQL(w); !errors.Is(err, errStop) {
		t.Fatalf("WriteSQL: %v", err)
	}
	if line, _, _ := strings.Cut(w.buf.String(), "\n"); line != want {
		t.Errorf("header line = %q, want %q", line, want)
	}
}

var errStop = errors.New("stop")

// firstChunk keeps the first write and fails, so that WriteSQL stops early.
type firstChunk struct{ buf bytes.Buffer }

func (w *firstChunk) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return 0, errStop
}

func checkText(t *testing.T, what, s string, minLen, maxLen int, newlines bool) {
	t.Helper()
	if n := utf8.RuneCountInString(s); n < minLen || n > maxLen {
		t.Errorf("%s: %d runes, want %d..%d: %q", what, n, minLen, maxLen, s)
	}
	if !utf8.ValidString(s) {
		t.Errorf("%s: invalid UTF-8", what)
	}
	if strings.ContainsAny(s, forbidden) {
		t.Errorf("%s holds a forbidden character: %q", what, s)
	}
	if !newlines && strings.Contains(s, "\n") {
		t.Errorf("%s holds a line break: %q", what, s)
	}
	if s != "" && (unicode.IsSpace([]rune(s)[0]) || unicode.IsSpace([]rune(s)[utf8.RuneCountInString(s)-1])) {
		t.Errorf("%s starts or ends with whitespace: %q", what, s)
	}
}

func checkTime(t *testing.T, what string, tm time.Time) {
	t.Helper()
	if tm.Location() != time.UTC || tm.Nanosecond() != 0 {
		t.Errorf("%s: time %v is not whole seconds in UTC", what, tm)
	}
}

func TestInvariants(t *testing.T) {
	var prev time.Time
	var lines int
	for id := int64(1); id <= int64(small.Articles); id++ {
		a := small.Article(id)
		what := "article " + a.CreatedAt.Format(TimeFormat)
		if a.ID != id {
			t.Fatalf("Article(%d).ID = %d", id, a.ID)
		}
		checkText(t, what+" title", a.Title, 8, 40, false)
		checkText(t, what+" body", a.Body, 200, 1500, true)
		checkTime(t, what, a.CreatedAt)
		slot := time.Unix(base, 0).Add(time.Duration(id) * 20 * time.Minute)
		if a.CreatedAt.Before(slot) || !a.CreatedAt.Before(slot.Add(20*time.Minute)) {
			t.Errorf("article %d created at %v, outside its 20-minute slot", id, a.CreatedAt)
		}
		if !a.CreatedAt.After(prev) {
			t.Errorf("article %d created at %v, not after the previous one", id, a.CreatedAt)
		}
		prev = a.CreatedAt
		if strings.Contains(a.Body, "\n") {
			lines++
		}
	}
	if lines < small.Articles/2 {
		t.Errorf("only %d of %d article bodies have line breaks", lines, small.Articles)
	}

	prev = time.Time{}
	var anonymous, recent, commentLines int
	var wantRecent float64 // expected number of comments on one of the 100 newest articles
	first := small.Article(1).CreatedAt
	for id := int64(1); id <= int64(small.Comments); id++ {
		c := small.Comment(id)
		if c.ID != id {
			t.Fatalf("Comment(%d).ID = %d", id, c.ID)
		}
		checkTime(t, "comment", c.CreatedAt)
		if !c.CreatedAt.After(prev) {
			t.Errorf("comment %d created at %v, not after the previous one", id, c.CreatedAt)
		}
		prev = c.CreatedAt
		if d := c.CreatedAt.Sub(first.Add(time.Hour)) - time.Duration(id)*40*time.Second; d < 0 || d >= 40*time.Second {
			t.Errorf("comment %d created at %v, jitter %v", id, c.CreatedAt, d)
		}
		if c.ArticleID < 1 || c.ArticleID > int64(small.Articles) {
			t.Fatalf("comment %d on article %d", id, c.ArticleID)
		}
		if a := small.Article(c.ArticleID); !a.CreatedAt.Before(c.CreatedAt) {
			t.Errorf("comment %d at %v, on article %d created at %v", id, c.CreatedAt, a.ID, a.CreatedAt)
		}
		n := small.articlesBefore(c.CreatedAt.Unix())
		if c.ArticleID > n-100 {
			recent++
		}
		wantRecent += 0.7 + 0.3*float64(min(n, 100))/float64(n)
		checkText(t, "comment body", c.Body, 10, 200, true)
		if c.Name == "" {
			anonymous++
		} else {
			checkText(t, "comment name", c.Name, 1, 20, false)
		}
		if strings.Contains(c.Body, "\n") {
			commentLines++
		}
	}
	if share := float64(anonymous) / float64(small.Comments); share < 0.47 || share > 0.53 {
		t.Errorf("%.3f of comments are anonymous, want about half", share)
	}
	if d := float64(recent)/wantRecent - 1; d < -0.02 || d > 0.02 {
		t.Errorf("%d comments are on one of the 100 newest articles, want about %.0f", recent, wantRecent)
	}
	if commentLines == 0 {
		t.Error("no comment body has a line break")
	}
}

func TestArticlesBefore(t *testing.T) {
	c := Config{Seed: 3, Articles: 50, Comments: 10}
	times := make([]int64, c.Articles+1)
	for id := 1; id <= c.Articles; id++ {
		times[id] = c.Article(int64(id)).CreatedAt.Unix()
	}
	for ts := base; ts < base+int64(c.Articles+3)*articleInterval; ts += 37 {
		var want int64
		for id := 1; id <= c.Articles; id++ {
			if times[id] < ts {
				want++
			}
		}
		if got := c.articlesBefore(ts); got != want {
			t.Fatalf("articlesBefore(%d) = %d, want %d", ts-base, got, want)
		}
	}
}

func TestDefaultRandomAccess(t *testing.T) {
	c := Default()
	last := c.Comment(int64(c.Comments))
	for _, id := range []int64{1, 2, 4999, 10000} {
		a := c.Article(id)
		checkText(t, "article title", a.Title, 8, 40, false)
		checkText(t, "article body", a.Body, 200, 1500, true)
	}
	for _, id := range []int64{1, 150000, 299999, 300000} {
		m := c.Comment(id)
		checkText(t, "comment body", m.Body, 10, 200, true)
		if a := c.Article(m.ArticleID); !a.CreatedAt.Before(m.CreatedAt) {
			t.Errorf("comment %d before its article %d", id, a.ID)
		}
	}
	// The comments span the articles: the last comment comes after nearly every
	// article.
	if n := c.articlesBefore(last.CreatedAt.Unix()); n < int64(c.Articles)-10 {
		t.Errorf("only %d articles exist when the last comment is written", n)
	}
}

func TestStatementShape(t *testing.T) {
	const (
		articleInsert = "INSERT INTO article (id, title, body, created_at) VALUES\n("
		commentInsert = "INSERT INTO comment (id, article_id, name, body, created_at) VALUES\n("
	)
	d := string(dump(t, small))
	header, rest, _ := strings.Cut(d, "\n")
	if header != small.header() {
		t.Errorf("header = %q", header)
	}
	if !strings.HasSuffix(rest, ");\n") {
		t.Fatal("dump does not end with );\\n")
	}
	stmts := strings.Split(strings.TrimSuffix(rest, ";\n"), ";\n")
	var articles, comments int
	for i, s := range stmts {
		rows := strings.Count(s, "'),\n(") + 1
		if rows > 500 {
			t.Errorf("statement %d has %d rows", i, rows)
		}
		if !strings.HasSuffix(s, "')") {
			t.Errorf("statement %d does not end with a row: %q", i, s[max(0, len(s)-40):])
		}
		switch {
		case strings.HasPrefix(s, articleInsert):
			if comments > 0 {
				t.Errorf("statement %d inserts articles after comments", i)
			}
			articles += rows
		case strings.HasPrefix(s, commentInsert):
			comments += rows
		default:
			t.Fatalf("statement %d: unexpected start %q", i, s[:min(len(s), 80)])
		}
	}
	if articles != small.Articles || comments != small.Comments {
		t.Errorf("dump holds %d articles and %d comments, want %d and %d",
			articles, comments, small.Articles, small.Comments)
	}
	if want := (small.Articles+499)/500 + (small.Comments+499)/500; len(stmts) != want {
		t.Errorf("%d statements, want %d", len(stmts), want)
	}
	// Rows are the items, quoted as they are.
	a := small.Article(1)
	if want := articleInsert + "1,'" + a.Title + "','" + a.Body + "','" + a.CreatedAt.Format(TimeFormat) + "'),\n"; !strings.HasPrefix(stmts[0], want) {
		t.Errorf("first row is not article 1:\n%.200s", stmts[0])
	}
	m := small.Comment(int64(small.Comments))
	if want := ",'" + m.Name + "','" + m.Body + "','" + m.CreatedAt.Format(TimeFormat) + "')"; !strings.HasSuffix(stmts[len(stmts)-1], want) {
		t.Errorf("last row is not the last comment:\n%s", stmts[len(stmts)-1][len(stmts[len(stmts)-1])-200:])
	}
}

func TestEnsureSQL(t *testing.T) {
	c := Config{Seed: 1, Articles: 20, Comments: 100}
	other := c
	other.Comments++
	apptest.CheckEnsureSQL(t, EnsureSQL, Config.WriteSQL, c, other)
}

func TestWordLists(t *testing.T) {
	lists := [][]string{kanjiNouns, katakanaNouns, hiraganaNouns, particles, predicates, jaEndings, enEndings,
		asciiWords, interjections, shortEndings, jaNicks, jaNickSuffixes, asciiNicks}
	for _, list := range lists {
		for _, w := range list {
			if strings.ContainsAny(w, forbidden) || strings.ContainsFunc(w, unicode.IsSpace) {
				t.Errorf("word %q holds a forbidden character or whitespace", w)
			}
		}
	}
}

func TestOutOfRange(t *testing.T) {
	for name, f := range map[string]func(){
		"article 0":         func() { small.Article(0) },
		"article too big":   func() { small.Article(int64(small.Articles) + 1) },
		"comment 0":         func() { small.Comment(0) },
		"comment too big":   func() { small.Comment(int64(small.Comments) + 1) },
		"comment, articles": func() { Config{Comments: 1}.Comment(1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if err := (Config{Comments: 1}).WriteSQL(&bytes.Buffer{}); err == nil {
		t.Error("WriteSQL of comments without articles: no error")
	}
}

func TestCommentArticleMatchesComment(t *testing.T) {
	c := Default()
	for _, id := range []int64{1, 2, 777, 150000, 299999, 300000} {
		if got, want := c.CommentArticle(id), c.Comment(id).ArticleID; got != want {
			t.Errorf("comment %d: CommentArticle %d, Comment().ArticleID %d", id, got, want)
		}
	}
}
