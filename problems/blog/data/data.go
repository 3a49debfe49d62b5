// Package data generates the initial data of the blog problem: articles and
// comments in Japanese and English, the same bytes for the same Config on every
// machine.
//
// Every item comes from its own PCG stream, seeded from the Config's seed and
// the item's id, so any article or comment can be generated on its own: the
// benchmarker models the initial state with Article and Comment, and the
// reference apps load the dump that WriteSQL writes.
package data

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tunecon/tunecon/kit/datagen"
)

// Version is the version of the generated data. Bump it whenever the bytes
// WriteSQL writes for a Config change, so that dumps written by an older
// generator are replaced (see EnsureSQL).
const Version = 1

// TimeFormat is how times are written in the dump and shown on the pages,
// always in UTC.
const TimeFormat = "2006-01-02 15:04:05"

// AnonymousName is the label the pages show for a comment whose name is empty.
const AnonymousName = "名無しさん"

// Text lengths, counted in runes.
const (
	titleMinLen       = 8
	titleMaxLen       = 40
	articleBodyMinLen = 200
	articleBodyMaxLen = 1500
	commentBodyMinLen = 10
	commentBodyMaxLen = 200
	nameMaxLen        = 20
)

// Timing of the generated items, in seconds.
const (
	articleInterval = 20 * 60 // article i is created at base + i*articleInterval + jitter
	commentInterval = 40      // comment k is created at article 1's time + commentDelay + k*commentInterval + jitter
	commentDelay    = 60 * 60
)

// Choosing a comment's article: recentShare percent of comments go to one of
// the recentArticles newest articles created before the comment, the others to
// any article created before it.
const (
	recentShare    = 70
	recentArticles = 100
)

// base is the time of "article 0": article i is created in [base + i*20min,
// base + (i+1)*20min).
var base = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

// Config says which data to generate.
type Config struct {
	Seed     uint64
	Articles int // articles 1..Articles
	Comments int // comments 1..Comments; needs Articles >= 1
}

// Default returns the configuration of the problem's initial data.
func Default() Config {
	return Config{Seed: 20110827, Articles: 10000, Comments: 300000}
}

// Article is one generated article.
type Article struct {
	ID        int64
	Title     string
	Body      string
	CreatedAt time.Time
}

// Comment is one generated comment. An empty Name shows as AnonymousName.
type Comment struct {
	ID        int64
	ArticleID int64
	Name      string
	Body      string
	CreatedAt time.Time
}

// Stream kinds, mixed into the seeds so that article i and comment i draw from
// different streams.
const (
	kindArticle uint64 = 0x61727469636c6573 // "articles"
	kindComment uint64 = 0x636f6d6d656e7473 // "comments"
)

// Article returns article id, for 1 <= id <= c.Articles. It panics when id is
// out of range.
func (c Config) Article(id int64) Article {
	if id < 1 || id > int64(c.Articles) {
		panic(fmt.Sprintf("blog data: article id %d out of range [1, %d]", id, c.Articles))
	}
	g := c.stream(kindArticle, id)
	created := articleTime(id, g.Intn(articleInterval)) // first draw: see articleJitter
	return Article{
		ID:        id,
		Title:     g.text(titleMinLen, titleMaxLen, false),
		Body:      g.text(articleBodyMinLen, articleBodyMaxLen, true),
		CreatedAt: time.Unix(created, 0).UTC(),
	}
}

// Comment returns comment id, for 1 <= id <= c.Comments. It panics when id is
// out of range or when there are no articles.
func (c Config) Comment(id int64) Comment {
	if id < 1 || id > int64(c.Comments) {
		panic(fmt.Sprintf("blog data: comment id %d out of range [1, %d]", id, c.Comments))
	}
	if c.Articles < 1 {
		panic("blog data: comments need at least one article")
	}
	g := c.stream(kindComment, id)
	created, articleID := c.commentPlace(g, id)
	name := ""
	if g.Intn(2) == 1 {
		name = g.nickname()
	}
	return Comment{
		ID:        id,
		ArticleID: articleID,
		Name:      name,
		Body:      g.text(commentBodyMinLen, commentBodyMaxLen, true),
		CreatedAt: time.Unix(created, 0).UTC(),
	}
}

// CommentArticle returns the article of comment id without generating the
// comment's text: what the benchmarker needs to index the initial comments by
// article. Same range rules as Comment.
func (c Config) CommentArticle(id int64) int64 {
	if id < 1 || id > int64(c.Comments) || c.Articles < 1 {
		panic(fmt.Sprintf("blog data: comment id %d out of range [1, %d]", id, c.Comments))
	}
	_, articleID := c.commentPlace(c.stream(kindComment, id), id)
	return articleID
}

// commentPlace makes comment id's first draws from its stream g: its creation
// time (Unix seconds) and its article.
func (c Config) commentPlace(g gen, id int64) (int64, int64) {
	created := c.commentBase() + id*commentInterval + int64(g.Intn(commentInterval))
	n := c.articlesBefore(created)
	if g.Intn(100) < recentShare {
		lo := max(1, n-recentArticles+1)
		return created, lo + int64(g.Intn(int(n-lo+1)))
	}
	return created, 1 + int64(g.Intn(int(n)))
}

// articleTime is the creation time, in Unix seconds, of article id with the
// given jitter.
func articleTime(id int64, jitter int) int64 {
	return base + id*articleInterval + int64(jitter)
}

// articleJitter returns the first draw of article id's stream, which is its
// creation time's jitter, without generating its text.
func (c Config) articleJitter(id int64) int {
	return c.stream(kindArticle, id).Intn(articleInterval)
}

// commentBase is the time comment 0 would be created at: one hour after article
// 1.
func (c Config) commentBase() int64 {
	return articleTime(1, c.articleJitter(1)) + commentDelay
}

// articlesBefore returns how many articles are created strictly before t (Unix
// seconds). Articles are created in id order, article i within [base +
// i*interval, base + (i+1)*interval), so only article q = (t-base)/interval
// needs a look at its jitter.
func (c Config) articlesBefore(t int64) int64 {
	q := (t - base) / articleInterval
	if q > int64(c.Articles) {
		return int64(c.Articles)
	}
	n := q - 1
	if q >= 1 && articleTime(q, c.articleJitter(q)) < t {
		n = q
	}
	return max(n, 0)
}

// header is the first line of the dump; EnsureSQL compares it to tell whether a
// dump is current.
func (c Config) header() string {
	return fmt.Sprintf("-- tunecon blog initial data v%d seed=%d articles=%d comments=%d",
		Version, c.Seed, c.Articles, c.Comments)
}

// WriteSQL writes the whole initial data as SQL: a header comment line, then
// multi-row INSERT statements of at most 500 rows, articles first. Every
// statement ends with ");\n" at the end of a line, and no text contains ';', so
// the dump can be split into statements on ";\n". It is valid for SQLite and
// for MariaDB.
func (c Config) WriteSQL(w io.Writer) error {
	if c.Articles < 0 || c.Comments < 0 {
		return errors.New("blog data: negative sizes")
	}
	if c.Comments > 0 && c.Articles < 1 {
		return errors.New("blog data: comments need at least one article")
	}
	sw := datagen.NewSQLWriter(w, c.header())
	err := writeTable(sw, "INSERT INTO article (id, title, body, created_at) VALUES", c.Articles,
		func(row []byte, id int64) []byte {
			a := c.Article(id)
			row = strconv.AppendInt(append(row, '('), a.ID, 10)
			return appendTexts(row, a.CreatedAt, a.Title, a.Body)
		})
	if err != nil {
		return err
	}
	err = writeTable(sw, "INSERT INTO comment (id, article_id, name, body, created_at) VALUES", c.Comments,
		func(row []byte, id int64) []byte {
			m := c.Comment(id)
			row = strconv.AppendInt(append(row, '('), m.ID, 10)
			row = strconv.AppendInt(append(row, ','), m.ArticleID, 10)
			return appendTexts(row, m.CreatedAt, m.Name, m.Body)
		})
	if err != nil {
		return err
	}
	return sw.Close()
}

// writeTable writes rows 1..n of a table, each built by row into the writer's
// scratch buffer.
func writeTable(sw *datagen.SQLWriter, insert string, n int, row func(buf []byte, id int64) []byte) error {
	sw.Table(insert, int64(n))
	for id := int64(1); id <= int64(n); id++ {
		if err := sw.Row(row(sw.Buf(), id)); err != nil {
			return err
		}
	}
	return nil
}

// appendTexts ends a row after its numbers: each text quoted, then the time
// quoted, then ")". The generated text holds no quote or backslash, so it needs
// no escaping.
func appendTexts(row []byte, created time.Time, texts ...string) []byte {
	for _, s := range texts {
		row = datagen.AppendQuoted(append(row, ','), s)
	}
	row = append(row, ",'"...)
	row = created.UTC().AppendFormat(row, TimeFormat)
	return append(row, "')"...)
}

// EnsureSQL writes c's dump to path unless a file there already starts with the
// same header line (same version, seed and sizes). It writes a temporary file
// in the same directory and renames it, so a dump at path is always complete.
// It reports whether it wrote.
func EnsureSQL(path string, c Config) (bool, error) {
	return datagen.Ensure(path, c.header(), c.WriteSQL)
}

// gen draws from one item's stream, with the generator's own ways to make text.
type gen struct {
	datagen.Gen
}

// stream returns the stream of item id of the given kind.
func (c Config) stream(kind uint64, id int64) gen {
	return gen{datagen.Stream(c.Seed, kind, uint64(id))}
}

// text returns text of min..max runes made of sentences, with line breaks
// between some sentences when lines is true. It never starts or ends with
// whitespace.
func (g gen) text(minLen, maxLen int, lines bool) string {
	want := minLen + g.Intn(maxLen-minLen+1)
	var b strings.Builder
	b.Grow(want * 3)
	n := 0
	for n < want {
		n += g.sentence(&b)
		if n >= want {
			break
		}
		switch r := g.Intn(100); {
		case lines && r < 12:
			b.WriteByte('\n')
			n++
		case r < 55:
			b.WriteByte(' ')
			n++
		}
	}
	s := b.String()
	if n > want { // cut to want runes
		i, k := 0, 0
		for k < want {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			k++
		}
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	for utf8.RuneCountInString(s) < minLen {
		s += "。"
	}
	return s
}

// sentence writes one sentence and returns its length in runes.
func (g gen) sentence(b *strings.Builder) int {
	start := b.Len()
	switch r := g.Intn(100); {
	case r < 65: // Japanese, with an English word now and then
		clauses := 1 + g.Intn(3)
		for i := 0; i < clauses; i++ {
			g.noun(b)
			b.WriteString(g.Pick(particles))
			if g.Intn(3) == 0 {
				g.noun(b)
				b.WriteString(g.Pick(particles))
			}
			if i < clauses-1 {
				b.WriteString("、")
			}
		}
		b.WriteString(g.Pick(predicates))
		b.WriteString(g.Pick(jaEndings))
	case r < 85: // English
		words := 3 + g.Intn(10)
		for i := 0; i < words; i++ {
			w := g.Pick(asciiWords)
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(g.Pick(enEndings))
	default: // an interjection
		b.WriteString(g.Pick(interjections))
		b.WriteString(g.Pick(shortEndings))
	}
	return utf8.RuneCountInString(b.String()[start:])
}

// noun writes a noun: kanji, katakana, hiragana or an English word set off by
// spaces.
func (g gen) noun(b *strings.Builder) {
	switch r := g.Intn(100); {
	case r < 40:
		b.WriteString(g.Pick(kanjiNouns))
	case r < 65:
		b.WriteString(g.Pick(katakanaNouns))
	case r < 85:
		b.WriteString(g.Pick(hiraganaNouns))
	default:
		if s := b.String(); s != "" && s[len(s)-1] != ' ' && s[len(s)-1] != '\n' {
			b.WriteByte(' ')
		}
		b.WriteString(g.Pick(asciiWords))
		b.WriteByte(' ')
	}
}

// nickname returns a commenter's name of 1..20 runes, Japanese or ASCII.
func (g gen) nickname() string {
	var s string
	if g.Intn(2) == 0 {
		s = g.Pick(jaNicks) + g.Pick(jaNickSuffixes)
	} else {
		s = g.Pick(asciiNicks)
		switch g.Intn(4) {
		case 0:
			s += "_" + g.Pick(asciiWords)
		case 1:
			s += strconv.Itoa(g.Intn(1000))
		}
	}
	if r := []rune(s); len(r) > nameMaxLen {
		s = strings.TrimSpace(string(r[:nameMaxLen]))
	}
	return s
}

// Word lists. No word may hold a semicolon, backslash, quote, double quote,
// angle bracket, ampersand or carriage return (the tests check).
var (
	kanjiNouns = []string{
		"今日", "明日", "昨日", "週末", "仕事", "会社", "電車", "天気", "料理", "写真", "旅行", "映画", "音楽",
		"読書", "散歩", "近所", "公園", "季節", "桜", "雨", "夕方", "朝食", "珈琲", "弁当", "友人", "家族",
		"先輩", "後輩", "性能", "計測", "改善", "設計", "実装", "検索", "記事", "日記", "感想", "時間", "問題",
		"結果", "予定", "練習", "勉強", "試験", "図書館", "駅前", "商店街", "温泉", "山道", "海辺", "本番",
		"負荷試験", "競技", "得点", "上位",
	}
	katakanaNouns = []string{
		"サーバ", "データベース", "キャッシュ", "インデックス", "クエリ", "ブログ", "コメント", "カフェ",
		"ラーメン", "パン", "ケーキ", "コーヒー", "ゲーム", "アニメ", "ドラマ", "ニュース", "メモ", "ノート",
		"パソコン", "スマホ", "キーボード", "マウス", "ベンチマーク", "チューニング", "レスポンス", "アクセス",
		"ログ", "エラー", "テスト", "プログラム", "ライブラリ", "サイドバー", "テンプレート", "プロファイル",
	}
	hiraganaNouns = []string{
		"ねこ", "いぬ", "おやつ", "おにぎり", "おみそしる", "ひるね", "さんぽ", "やさい", "くだもの", "おまつり",
		"はなび", "ゆうがた", "あさごはん", "おべんとう", "みかん", "りんご", "いちご", "さかな", "とり",
		"ひこうき", "おちゃ", "あめ",
	}
	particles  = []string{"は", "が", "を", "に", "で", "と", "の", "も", "から", "まで", "より", "へ"}
	predicates = []string{
		"食べました", "行きました", "見ました", "書きました", "読みました", "作りました", "直しました",
		"速くなりました", "遅いです", "楽しかったです", "難しいです", "便利です", "気になります", "考えています",
		"試してみました", "調べました", "待っています", "頑張ります", "よかったです", "すごいです",
		"たのしみです", "わかりません", "おいしかったです", "ねむいです", "測ってみました", "増やしました",
		"減らしました", "あります", "ありません", "思います",
	}
	jaEndings = []string{"。", "。", "。", "ね。", "よ。", "な。", "!", "?", "…。", "!!", "(笑)。"}
	enEndings = []string{".", ".", ".", "!", "?", "..."}

	asciiWords = []string{
		"go", "sql", "index", "cache", "query", "server", "blog", "comment", "latency", "throughput",
		"benchmark", "nginx", "mysql", "sqlite", "http", "json", "cpu", "memory", "disk", "profile", "trace",
		"debug", "deploy", "request", "response", "slow", "fast", "table", "join", "sort", "page", "static",
		"file", "image", "score", "team", "contest", "tuning", "hello", "world", "today", "coffee", "lunch",
		"train", "weekend", "morning", "night", "rain", "sunny", "the", "a", "is", "was", "very", "quite",
		"and", "but", "with", "without", "again",
	}
	interjections = []string{
		"なるほど", "ふむふむ", "やった", "えっ", "うーん", "わーい", "おお", "たしかに", "ですよね", "Nice", "Wow",
		"OK", "lol", "Thanks", "Great",
	}
	shortEndings = []string{"!", "。", "…", "!!", "?"}

	jaNicks = []string{
		"ねこ好き", "通りすがり", "名もなき猫", "たろう", "はなこ", "ゆうき", "さくら", "けんじ", "みどり", "山田",
		"佐藤", "鈴木", "高橋", "田中", "タロウ", "ハナコ", "ケンタ", "ミキ", "ゴーファー", "チューナー", "常連",
		"初心者", "見習い", "読者", "はじめて投稿する者",
	}
	jaNickSuffixes = []string{"", "", "", "", "2号", "@東京", "@大阪", "(仮)", "です", "さん", "改"}
	asciiNicks     = []string{
		"gopher", "tanaka", "neko", "hoge", "fuga", "piyo", "alice", "bob", "carol", "dave", "tuner", "isu",
		"kaz", "yuki", "ken", "sakura", "anon", "reader", "nightowl", "earlybird",
	}
)
