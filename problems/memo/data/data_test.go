package data

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark"

	"github.com/tunecon/tunecon/kit/apptest"
)

// small is big enough for several INSERT statements of each table.
var small = Config{Seed: 7, Users: 600, Memos: 1234}

// forbidden are the characters no generated text may hold: they would need
// escaping in the dump.
const forbidden = ";\\'\r"

func dump(t *testing.T, c Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteSQL(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeterministic(t *testing.T) {
	a := dump(t, small)
	if !bytes.Equal(a, dump(t, small)) {
		t.Fatal("two dumps of the same config differ")
	}
	other := small
	other.Seed++
	_, restA, _ := bytes.Cut(a, []byte("\n"))
	_, restB, _ := bytes.Cut(dump(t, other), []byte("\n"))
	if bytes.Equal(restA, restB) {
		t.Error("different seeds give the same data")
	}
	for _, id := range []int64{1234, 1, 600, 1, 1234} {
		if x, y := small.Memo(id), small.Memo(id); x != y {
			t.Errorf("Memo(%d) differs between calls", id)
		}
		if small.MemoMeta(id) != small.Memo(id).Meta {
			t.Errorf("MemoMeta(%d) is not Memo(%d).Meta", id, id)
		}
	}
	if small.Memo(5).Content == small.Memo(6).Content || small.User(5).Password == small.User(6).Password {
		t.Error("items share a stream")
	}
}

func TestUsers(t *testing.T) {
	names := map[string]bool{}
	for id := int64(1); id <= int64(small.Users); id++ {
		u := small.User(id)
		if u.ID != id || names[u.Name] || len(u.Name) < 3 || len(u.Name) > 24 || strings.Trim(u.Name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			t.Fatalf("user %d: %+v (names must be unique, 3 to 24 of a-z, 0-9 and _)", id, u)
		}
		names[u.Name] = true
		if len(u.Password) < 8 || len(u.Salt) != 16 || len(u.PasswordHash()) != 64 {
			t.Errorf("user %d: password %q, salt %q", id, u.Password, u.Salt)
		}
	}
	if got := HashPassword("ab", "cd"); got != "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589" {
		t.Errorf("HashPassword = %s, want sha256(\"abcd\")", got)
	}
}

// TestMemos checks every memo of small: times increase, the title is the
// manual's title of the content, the text needs no escaping, its length is
// within the manual's bounds, and goldmark renders it with the title as its
// first heading and no Markdown syntax left in its text (a generated word that
// Markdown misreads would show).
func TestMemos(t *testing.T) {
	var prev time.Time
	private, prolific := 0, 0
	minLen, maxLen := 1<<30, 0
	md := goldmark.New()
	for id := int64(1); id <= int64(small.Memos); id++ {
		m := small.Memo(id)
		if m.ID != id || m.UserID < 1 || m.UserID > int64(small.Users) {
			t.Fatalf("memo %d: id %d, user %d", id, m.ID, m.UserID)
		}
		if !m.CreatedAt.After(prev) || m.CreatedAt.Location() != time.UTC {
			t.Errorf("memo %d created at %v, after %v", id, m.CreatedAt, prev)
		}
		prev = m.CreatedAt
		if Title(m.Content) != m.Title || m.Title == "" {
			t.Errorf("memo %d: title %q, the content's %q", id, m.Title, Title(m.Content))
		}
		if strings.ContainsAny(m.Content, forbidden) {
			t.Errorf("memo %d holds one of %q:\n%s", id, forbidden, m.Content)
		}
		n := utf8.RuneCountInString(m.Content)
		minLen, maxLen = min(minLen, n), max(maxLen, n)
		if m.Private {
			private++
		}
		if m.UserID <= int64(small.Users/10) {
			prolific++
		}
		var html bytes.Buffer
		if err := md.Convert([]byte(m.Content), &html); err != nil {
			t.Fatal(err)
		}
		h := html.String()
		if !strings.HasPrefix(h, "<h1>"+m.Title+"</h1>\n") {
			t.Errorf("memo %d renders as %.80q", id, h)
		}
		text := stripCode(h)
		if strings.ContainsAny(text, "*`[]#_") {
			t.Errorf("memo %d: Markdown syntax left in the rendered text:\n%s\n%s", id, m.Content, h)
		}
	}
	if minLen < 150 || maxLen > 2000 {
		t.Errorf("contents are %d to %d characters, the manual says 150 to 2,000", minLen, maxLen)
	}
	if share := float64(private) / float64(small.Memos); share < 0.45 || share > 0.55 {
		t.Errorf("%.0f%% private, want about half", 100*share)
	}
	if share := float64(prolific) / float64(small.Memos); share < 0.45 || share > 0.65 {
		t.Errorf("the prolific tenth wrote %.0f%%, want about half", 100*share)
	}
}

// stripCode drops the code blocks and spans of rendered HTML, where Markdown's
// characters are text.
func stripCode(h string) string {
	var b strings.Builder
	for {
		i := strings.Index(h, "<code")
		if i < 0 {
			b.WriteString(h)
			return b.String()
		}
		b.WriteString(h[:i])
		j := strings.Index(h[i:], "</code>")
		h = h[i+j+len("</code>"):]
	}
}

func TestDumpShape(t *testing.T) {
	header, rest, _ := strings.Cut(string(dump(t, small)), "\n")
	if header != small.header() || !strings.HasPrefix(header, "-- ") {
		t.Errorf("header = %q, want %q", header, small.header())
	}
	if !strings.HasSuffix(rest, ");\n") {
		t.Fatal("the dump does not end with );\\n")
	}
	stmts := strings.Split(strings.TrimSuffix(rest, ";\n"), ";\n")
	users, memos := (small.Users+499)/500, (small.Memos+499)/500
	if len(stmts) != users+memos {
		t.Fatalf("%d statements, want %d", len(stmts), users+memos)
	}
	for i, s := range stmts {
		want := "INSERT INTO memos (id, user_id, content, is_private, created_at) VALUES\n("
		if i < users {
			want = "INSERT INTO users (id, username, salt, password_hash, created_at) VALUES\n("
		}
		if !strings.HasPrefix(s, want) {
			t.Fatalf("statement %d starts with %q", i, s[:min(len(s), 80)])
		}
	}
	u := small.User(1)
	if want := fmt.Sprintf("(1,'%s','%s','%s','%s'),\n", u.Name, u.Salt, u.PasswordHash(), u.CreatedAt.Format(TimeFormat)); !strings.Contains(stmts[0], want) {
		t.Errorf("the first row is not user 1:\n%.200s", stmts[0])
	}
	m := small.Memo(1)
	if want := fmt.Sprintf("(1,%d,'%s',%d,'%s'),\n", m.UserID, m.Content, btoi(m.Private), m.CreatedAt.Format(TimeFormat)); !strings.Contains(stmts[users], want) {
		t.Errorf("the first memo row is not memo 1:\n%.300s", stmts[users])
	}
}

func TestEnsureSQL(t *testing.T) {
	c := Config{Seed: 1, Users: 3, Memos: 30}
	other := c
	other.Memos++
	apptest.CheckEnsureSQL(t, EnsureSQL, Config.WriteSQL, c, other)
}

// ExampleConfig_User prints the name and password of the first two users, to
// sign in by hand.
func ExampleConfig_User() {
	for id := int64(1); id <= 2; id++ {
		u := Default().User(id)
		fmt.Println(u.Name, u.Password)
	}
	// Output:
	// yui1 zn2scjjbqt
	// peggy2 vwb8kep22z
}
