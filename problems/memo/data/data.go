// Package data generates the initial data of the memo problem, the same bytes
// for the same Config on every machine: users with salted password hashes, and
// Markdown memos, about half of them private.
//
// Every user and every memo comes from its own datagen.Stream, seeded from the
// Config's seed and the item's id, so any of them can be generated on its own:
// the benchmarker models the initial state with User, MemoMeta and Memo, and
// the reference apps load the dump that WriteSQL writes. A memo's stream draws
// its author, visibility, time and title first, so MemoMeta can stop before the
// body.
package data

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/kit/datagen"
)

// Version is the version of the generated data. Bump it whenever the bytes
// WriteSQL writes for a Config change, so that dumps written by an older
// generator are replaced (see EnsureSQL).
const Version = 1

// TimeFormat is how times are written in the dump and shown on the pages,
// always in UTC.
const TimeFormat = "2006-01-02 15:04:05"

// Timing of the generated items, in seconds: user id signs up at base +
// id*userInterval, memo id is created at memoBase + id*memoInterval plus a
// jitter below memoInterval, so memo times increase with ids.
const (
	userInterval = 60
	memoInterval = 10 * 60
)

// Authors are skewed: prolificShare percent of the memos are by the prolific
// tenth of the users, the rest by anyone.
const (
	prolificShare = 50
	prolificUsers = 10 // percent of the users
)

// A memo's body is blocks appended until it has a length drawn between
// bodyMinLen and bodyMaxLen characters (runes); no block is longer than a few
// hundred.
const (
	bodyMinLen = 150
	bodyMaxLen = 1500
)

var (
	base     = time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC).Unix()
	memoBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// Stream kinds, mixed into the seeds so that user i and memo i draw from
// different streams.
const (
	kindUser uint64 = 0x7573657273 // "users"
	kindMemo uint64 = 0x6d656d6f73 // "memos"
	kindRun  uint64 = 0x72756e     // "run": memos written during a run
)

// Config says which data to generate.
type Config struct {
	Seed  uint64
	Users int // users 1..Users
	Memos int // memos 1..Memos; needs Users >= 1
}

// Default returns the configuration of the problem's initial data. The
// reference apps know its size (50000 memos, 1000 users): change them together.
func Default() Config {
	return Config{Seed: 20131005, Users: 1000, Memos: 50000}
}

// User is one generated user.
type User struct {
	ID       int64
	Name     string
	Password string
	Salt     string
	// CreatedAt is when the user signed up.
	CreatedAt time.Time
}

// PasswordHash is what the users table stores: the hex SHA-256 of the salt
// followed by the password.
func (u User) PasswordHash() string { return HashPassword(u.Salt, u.Password) }

// HashPassword returns the hex SHA-256 of salt followed by password.
func HashPassword(salt, password string) string {
	sum := sha256.Sum256([]byte(salt + password))
	return hex.EncodeToString(sum[:])
}

// User returns user id, for 1 <= id <= c.Users. It panics when id is out of
// range. Names are a given name's letters followed by the id, so no two users
// share one.
func (c Config) User(id int64) User {
	if id < 1 || id > int64(c.Users) {
		panic(fmt.Sprintf("memo data: user id %d out of range [1, %d]", id, c.Users))
	}
	g := datagen.Stream(c.Seed, kindUser, uint64(id))
	name := g.Pick(givenNames) + strconv.FormatInt(id, 10)
	return User{
		ID:        id,
		Name:      name,
		Password:  draw(g, passwordChars, 10),
		Salt:      draw(g, hexChars, 16),
		CreatedAt: time.Unix(base+id*userInterval, 0).UTC(),
	}
}

// Meta is what lists show of a memo: everything but its body.
type Meta struct {
	ID        int64
	UserID    int64
	Private   bool
	Title     string
	CreatedAt time.Time
}

// Memo is one generated memo: its Meta and its Markdown content, whose first
// line is "# " and the title.
type Memo struct {
	Meta
	Content string
}

// MemoMeta returns memo id without generating its body. Same range rules as
// Memo.
func (c Config) MemoMeta(id int64) Meta {
	m, _ := c.memoMeta(id)
	return m
}

// Memo returns memo id, for 1 <= id <= c.Memos. It panics when id is out of
// range or when there are no users.
func (c Config) Memo(id int64) Memo {
	m, g := c.memoMeta(id)
	var b strings.Builder
	b.WriteString("# ")
	b.WriteString(m.Title)
	b.WriteString("\n")
	for n, length := 0, bodyMinLen+g.Intn(bodyMaxLen-bodyMinLen); n < length; {
		b.WriteString("\n")
		n += gen{g}.block(&b)
	}
	return Memo{Meta: m, Content: b.String()}
}

// Content returns the body of the n-th memo the benchmarker writes during a
// run: blocks like the initial memos' bodies, without the title line.
func (c Config) Content(n uint64) string {
	g := gen{datagen.Stream(c.Seed, kindRun, n)}
	var b strings.Builder
	for k, length := 0, bodyMinLen+g.Intn(bodyMaxLen-bodyMinLen); k < length; {
		if k > 0 {
			b.WriteString("\n")
		}
		k += g.block(&b)
	}
	return b.String()
}

// memoMeta makes memo id's first draws: its author, visibility, time and title;
// g continues with the body.
func (c Config) memoMeta(id int64) (Meta, datagen.Gen) {
	if id < 1 || id > int64(c.Memos) {
		panic(fmt.Sprintf("memo data: memo id %d out of range [1, %d]", id, c.Memos))
	}
	if c.Users < 1 {
		panic("memo data: memos need at least one user")
	}
	g := datagen.Stream(c.Seed, kindMemo, uint64(id))
	authors := c.Users
	if g.Intn(100) < prolificShare {
		authors = max(1, c.Users*prolificUsers/100)
	}
	m := Meta{
		ID:        id,
		UserID:    1 + g.Int63n(int64(authors)),
		Private:   g.Intn(2) == 1,
		CreatedAt: time.Unix(memoBase+id*memoInterval+g.Int63n(memoInterval), 0).UTC(),
	}
	words := make([]string, 2+g.Intn(5))
	for i := range words {
		words[i] = g.Pick(titleWords)
	}
	m.Title = strings.Join(words, " ")
	return m, g
}

// Title returns the title of a memo's content as the manual defines it: its
// first line without the '#' and spaces at its start and the spaces and tabs at
// its end.
func Title(content string) string {
	line, _, _ := strings.Cut(content, "\n")
	line = strings.TrimLeft(line, "# ")
	return strings.TrimRight(line, " \t")
}

// header is the first line of the dump; EnsureSQL compares it to tell whether a
// dump is current.
func (c Config) header() string {
	return fmt.Sprintf("-- tunecon memo initial data v%d seed=%d users=%d memos=%d", Version, c.Seed, c.Users, c.Memos)
}

// WriteSQL writes the whole initial data as SQL: the header line, then INSERT
// statements of at most datagen.RowsPerInsert rows, each ending with ");\n" at
// the end of a line. No generated text holds a quote, a backslash or a
// semicolon, so the values need no escaping and ";" ends statements only.
func (c Config) WriteSQL(w io.Writer) error {
	if c.Users < 0 || c.Memos < 0 {
		return errors.New("memo data: negative size")
	}
	if c.Memos > 0 && c.Users < 1 {
		return errors.New("memo data: memos need at least one user")
	}
	sw := datagen.NewSQLWriter(w, c.header())
	sw.Table("INSERT INTO users (id, username, salt, password_hash, created_at) VALUES", int64(c.Users))
	for id := int64(1); id <= int64(c.Users); id++ {
		u := c.User(id)
		row := append(sw.Buf(), '(')
		row = strconv.AppendInt(row, u.ID, 10)
		for _, v := range []string{u.Name, u.Salt, u.PasswordHash(), u.CreatedAt.Format(TimeFormat)} {
			row = append(row, ',')
			row = datagen.AppendQuoted(row, v)
		}
		row = append(row, ')')
		if err := sw.Row(row); err != nil {
			return err
		}
	}
	sw.Table("INSERT INTO memos (id, user_id, content, is_private, created_at) VALUES", int64(c.Memos))
	for id := int64(1); id <= int64(c.Memos); id++ {
		m := c.Memo(id)
		row := append(sw.Buf(), '(')
		row = strconv.AppendInt(row, m.ID, 10)
		row = append(row, ',')
		row = strconv.AppendInt(row, m.UserID, 10)
		row = append(row, ',')
		row = datagen.AppendQuoted(row, m.Content)
		row = append(row, ',')
		row = append(row, "01"[btoi(m.Private)])
		row = append(row, ',')
		row = datagen.AppendQuoted(row, m.CreatedAt.Format(TimeFormat))
		row = append(row, ')')
		if err := sw.Row(row); err != nil {
			return err
		}
	}
	return sw.Close()
}

// EnsureSQL writes c's dump to path unless a file there already starts with the
// same header line (same version, seed and size), and reports whether it wrote.
func EnsureSQL(path string, c Config) (bool, error) {
	return datagen.Ensure(path, c.header(), c.WriteSQL)
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

const (
	passwordChars = "abcdefghijkmnpqrstuvwxyz23456789"
	hexChars      = "0123456789abcdef"
)

// draw returns n characters of chars drawn from g.
func draw(g datagen.Gen, chars string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[g.Intn(len(chars))]
	}
	return string(b)
}

// gen adds the body's blocks to a memo's stream.
type gen struct{ datagen.Gen }

// block appends one Markdown block and a blank line after it, and returns how
// many characters it wrote.
func (g gen) block(b *strings.Builder) int {
	start := b.Len()
	switch k := g.Intn(10); {
	case k < 4:
		g.paragraph(b)
	case k < 6:
		n := 2 + g.Intn(4)
		for range n {
			b.WriteString("- ")
			g.phrase(b, 2, 6)
			b.WriteString("\n")
		}
	case k < 7:
		b.WriteString("## ")
		g.phrase(b, 1, 4)
		b.WriteString("\n")
	case k < 8:
		lang := g.Pick(codeLangs)
		b.WriteString("```" + lang + "\n")
		lines := codeLines[lang]
		for range 1 + g.Intn(5) {
			b.WriteString(g.Pick(lines))
			b.WriteString("\n")
		}
		b.WriteString("```\n")
	case k < 9:
		b.WriteString("1. ")
		g.phrase(b, 2, 5)
		b.WriteString("\n2. ")
		g.phrase(b, 2, 5)
		b.WriteString("\n")
	default:
		b.WriteString("参考: [")
		g.phrase(b, 1, 3)
		b.WriteString("](https://example.com/")
		b.WriteString(g.Pick(linkPaths))
		b.WriteString("/")
		b.WriteString(strconv.Itoa(1 + g.Intn(999)))
		b.WriteString(")\n")
	}
	return len([]rune(b.String()[start:]))
}

// paragraph appends one to three sentences on one line, Japanese or English,
// some with emphasis or code.
func (g gen) paragraph(b *strings.Builder) {
	for i := range 1 + g.Intn(3) {
		if i > 0 {
			b.WriteString(" ")
		}
		if g.Intn(2) == 0 {
			b.WriteString(g.Pick(jaSentences))
			continue
		}
		words := 4 + g.Intn(8)
		for w := range words {
			if w > 0 {
				b.WriteString(" ")
			}
			switch g.Intn(12) {
			case 0:
				b.WriteString("**" + g.Pick(enWords) + "**")
			case 1:
				b.WriteString("*" + g.Pick(enWords) + "*")
			case 2:
				b.WriteString("`" + g.Pick(codeWords) + "`")
			default:
				b.WriteString(g.Pick(enWords))
			}
		}
		b.WriteString(".")
	}
	b.WriteString("\n")
}

// phrase appends between lo and hi words, English or Japanese.
func (g gen) phrase(b *strings.Builder, lo, hi int) {
	for i := range lo + g.Intn(hi-lo+1) {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(g.Pick(titleWords))
	}
}

// The vocabulary. No word may hold a quote, a backslash, a semicolon, a
// character HTML escapes (<, >, &) or one Markdown gives a meaning to (*, _, `,
// #, [, ], +, !, |, ~) other than where the generator puts it; the tests check.
var (
	titleWords = strings.Fields(`
		tuning index cache query latency profile benchmark server table join memo notes draft plan review
		weekly daily meeting todo ideas reading list morning evening release deploy incident report
		性能 計測 改善 索引 キャッシュ 応答 遅延 負荷 試験 設定 会議 議事録 メモ 日報 週報 読書 計画 振り返り
	`)
	enWords = strings.Fields(`
		the a this that we they it is was will should could and or but with without for from into over
		server database query index cache request response latency slow fast memory disk network page list
		user session memo note plan review measure profile tune deploy release fix bug test check result
	`)
	codeWords = strings.Fields(`
		cache_size max_connections EXPLAIN innodb_buffer_pool_size GOMAXPROCS worker_processes keepalive
		COUNT OFFSET LIMIT pprof strace top vmstat
	`)
	jaSentences = strings.Fields(`
		今日は索引を追加して応答時間を計測した。 遅いクエリを一つずつ確認する。 キャッシュの有効期限に注意すること。
		負荷試験の結果を表にまとめた。 明日の会議で改善案を共有する予定。 ボトルネックはデータベースだった。
		まずは計測してから直すのが大事。 設定を変えたら必ず再起動して確認。 この方法で応答が三倍速くなった。
		ログを見るとエラーはなかった。 一覧ページの件数表示が重い。 読書メモとして残しておく。
	`)
	linkPaths = strings.Fields(`docs blog notes wiki manual`)
	codeLangs = strings.Fields(`go python sql sh`)
	codeLines = map[string][]string{
		"go": {
			"for i := range n {",
			"total += prices[i]",
			"}",
			"rows, err := db.Query(q, id)",
			"if err != nil {",
			"return err",
			"fmt.Println(total)",
		},
		"python": {
			"for memo in memos:",
			"    total += len(memo.content)",
			"print(total)",
			"rows = db.execute(query).fetchall()",
			"def title(content):",
			"    return content.split()[0]",
		},
		"sql": {
			"SELECT id, title FROM memos",
			"WHERE is_private = 0",
			"ORDER BY id DESC LIMIT 100",
			"CREATE INDEX memos_user ON memos (user_id)",
			"EXPLAIN SELECT COUNT(*) FROM memos",
		},
		"sh": {
			"curl -s http://127.0.0.1:8080/",
			"sudo systemctl restart nginx",
			"top -b -n 1",
			"go tool pprof cpu.out",
		},
	}
	givenNames = strings.Fields(`
		hana sakura yuki haruto sota ren aoi mei riku yui kaito mio daiki nana kenta ami
		alice bob carol dave erin frank grace heidi ivan judy mallory oscar peggy trent victor wendy
	`)
)
