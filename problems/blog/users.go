package blog

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// The user mix (MANUAL: "The users"): by user number modulo 10, 0 writes
// articles, 1 to 3 comment, 4 to 9 browse.
func role(id int) string {
	switch id % 10 {
	case 0:
		return "writer"
	case 1, 2, 3:
		return "commenter"
	}
	return "browser"
}

// User plays one session of a virtual user.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	score := func(tag string, n int64) { u.ScoreN(tag, n) }
	full := func() bool { return u.Rand.Float64() < fullCheckShare }
	think := func() bool { return u.Think(ctx, thinkMin, thinkMax) }
	switch role(u.ID) {
	case "writer":
		return s.writer(ctx, r, u, score, full, think)
	case "commenter":
		return s.commenter(ctx, r, u, score, full, think)
	}
	return s.browser(ctx, u, score, full, think)
}

// browser opens /, follows a link from it or from the sidebar, and now and
// then opens an old article.
func (s *Scenario) browser(ctx context.Context, u *engine.User, score func(string, int64), full func() bool, think func() bool) error {
	p, err := s.index(ctx, u.Agent, full(), score)
	if err != nil || !think() {
		return err
	}
	next := pickLink(u.Rand, p)
	if _, err := s.articlePage(ctx, u.Agent, next, full(), score); err != nil || !think() {
		return err
	}
	if u.Rand.IntN(3) == 0 {
		old := 1 + u.Rand.Int64N(s.m.in.articles())
		if _, err := s.articlePage(ctx, u.Agent, old, full(), score); err != nil {
			return err
		}
		think()
	}
	return nil
}

// pickLink picks an article from the sidebar or from /'s list.
func pickLink(rnd *rand.Rand, p *page) int64 {
	if ids := p.doc.Find("section#articles article.article"); ids.Length() > 0 && rnd.IntN(2) == 0 {
		if e, ok := parseEntry(ids.Eq(rnd.IntN(ids.Length()))); ok {
			return e.id
		}
	}
	return p.sidebar[rnd.IntN(len(p.sidebar))].id
}

// commenter reads an article (mostly a recently commented one), comments on
// it, and between 1 and 3 seconds after the 303 checks that the comment is
// on the article's page and that another page's sidebar accounts for it.
func (s *Scenario) commenter(ctx context.Context, r *engine.Run, u *engine.User, score func(string, int64), full func() bool, think func() bool) error {
	var article int64
	if u.Rand.IntN(10) < 7 {
		p, err := s.index(ctx, u.Agent, full(), score)
		if err != nil || !think() {
			return err
		}
		article = pickLink(u.Rand, p)
	} else {
		article = 1 + u.Rand.Int64N(s.m.in.articles())
	}
	if _, err := s.articlePage(ctx, u.Agent, article, full(), score); err != nil || !think() {
		return err
	}
	name := ""
	if u.Rand.IntN(2) == 0 {
		name = text(u.Rand, 1, 20, false)
	}
	c, err := s.postComment(ctx, r, u.Agent, article, name, text(u.Rand, 10, 200, true))
	if err != nil {
		return err
	}
	score(tagComment, 1)
	if !waitToCheck(ctx, r, u, c.received) {
		return nil
	}
	if _, err := s.articlePage(ctx, u.Agent, article, true, score); err != nil {
		return err
	}
	if u.Rand.IntN(2) == 0 {
		_, err = s.index(ctx, u.Agent, full(), score)
	} else {
		_, err = s.articlePage(ctx, u.Agent, 1+u.Rand.Int64N(s.m.in.articles()), full(), score)
	}
	if err != nil {
		return err
	}
	think()
	return nil
}

// writer opens the form, posts an article, and between 1 and 3 seconds
// after the 303 checks / and the article's page.
func (s *Scenario) writer(ctx context.Context, r *engine.Run, u *engine.User, score func(string, int64), full func() bool, think func() bool) error {
	if err := s.postPage(ctx, u.Agent, score); err != nil || !think() {
		return err
	}
	a, err := s.postArticle(ctx, r, u.Agent, text(u.Rand, 8, 40, false), text(u.Rand, 100, 1000, true))
	if err != nil {
		return err
	}
	score(tagArticle, 1)
	if !waitToCheck(ctx, r, u, a.received) {
		return nil
	}
	if _, err := s.index(ctx, u.Agent, true, score); err != nil {
		return err
	}
	if _, err := s.articlePage(ctx, u.Agent, a.id, true, score); err != nil {
		return err
	}
	think()
	think()
	return nil
}

// waitToCheck waits until a random moment 1 to 3 s after a 303.
func waitToCheck(ctx context.Context, r *engine.Run, u *engine.User, received time.Time) bool {
	at := received.Add(checkDelayMin + time.Duration(u.Rand.Int64N(int64(checkDelayMax-checkDelayMin))))
	return r.SleepUntil(ctx, at)
}

// PreCheck checks the initialized app exactly, one request at a time,
// negative cases included; any error fails the run.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	rnd := r.Rand(0)
	none := func(string, int64) {}
	if _, err := s.index(ctx, a, true, none); err != nil {
		return err
	}
	for range 2 {
		if _, err := s.articlePage(ctx, a, 1+rnd.Int64N(s.m.in.articles()), true, none); err != nil {
			return err
		}
	}
	for _, path := range []string{"/articles/0", "/articles/abc", "/articles/99999999", "/no-such-page"} {
		endpoint := "GET /articles/{id}"
		if !strings.HasPrefix(path, "/articles/") {
			endpoint = "GET (unknown path)"
		}
		res, err := a.Get(ctx, endpoint, path)
		if err != nil {
			return err
		}
		if err := res.Check(engine.Status(http.StatusNotFound)); err != nil {
			return err
		}
	}
	if err := s.postPage(ctx, a, none); err != nil {
		return err
	}
	bad := []struct {
		path   string
		form   url.Values
		status int
	}{
		{"/articles", url.Values{"title": {""}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles", url.Values{"title": {"two\nlines"}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles", url.Values{"title": {"title"}, "body": {""}}, http.StatusBadRequest},
		{"/articles", url.Values{"title": {strings.Repeat("長", 129)}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles/1/comments", url.Values{"name": {"x"}, "body": {""}}, http.StatusBadRequest},
		{"/articles/1/comments", url.Values{"name": {strings.Repeat("名", 65)}, "body": {"body"}}, http.StatusBadRequest},
		{"/articles/99999999/comments", url.Values{"body": {"body"}}, http.StatusNotFound},
	}
	for _, b := range bad {
		endpoint := "POST /articles"
		if b.path != endpoint[len("POST "):] {
			endpoint = "POST /articles/{id}/comments"
		}
		res, err := a.PostForm(ctx, endpoint, b.path, b.form)
		if err != nil {
			return err
		}
		if err := res.Check(engine.Status(b.status)); err != nil {
			return err
		}
	}
	// A comment with an empty name and markup-like text on an old article,
	// then an article and a named comment on it: each must show exactly.
	old := 1 + rnd.Int64N(s.m.in.articles()/2)
	c, err := s.postComment(ctx, r, a, old, "", "pre-check <b>bold?</b> & \"quotes\"\nsecond line 二行目")
	if err != nil {
		return err
	}
	if !r.SleepUntil(ctx, c.received.Add(Freshness)) {
		return ctx.Err()
	}
	if _, err := s.articlePage(ctx, a, old, true, none); err != nil {
		return err
	}
	art, err := s.postArticle(ctx, r, a, "pre-check 記事 <title> & more", "first line\n二行目 <br> is text\nthird")
	if err != nil {
		return err
	}
	if _, err := s.postComment(ctx, r, a, art.id, "checker 検査", "a named comment"); err != nil {
		return err
	}
	if !r.Sleep(ctx, Freshness) {
		return ctx.Err()
	}
	if _, err := s.index(ctx, a, true, none); err != nil {
		return err
	}
	_, err = s.articlePage(ctx, a, art.id, true, none)
	return err
}

// FinalCheck checks the end state: /, the newest articles, and a sample of
// the articles commented during the run, every text compared.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	none := func(string, int64) {}
	if _, err := s.index(ctx, a, true, none); err != nil {
		return err
	}
	ids := s.m.commentedArticles()
	rnd := r.Rand(1)
	rnd.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	ids = append(ids[:min(len(ids), finalCheckArticles)], s.m.newestKnownArticles(5)...)
	for _, id := range ids {
		if _, err := s.articlePage(ctx, a, id, true, none); err != nil {
			return err
		}
	}
	return nil
}

// finalCheckArticles is how many commented articles the final check reads.
const finalCheckArticles = 20

// Words for the text users post: Japanese, English, and characters that
// must be escaped.
var (
	wordsJa    = strings.Fields("性能 改善 計測 索引 キャッシュ ボトルネック 応答 遅延 負荷 試験 ひとこと ありがとう なるほど たしかに すごい データベース サーバ 設定 記事 感想 質問 回答 今日 明日")
	wordsEn    = strings.Fields("tuning index cache latency throughput query nginx sqlite mariadb profile benchmark score sidebar comment article fast slow great thanks")
	wordsMarks = strings.Fields(`<b>bold</b> a&b "quoted" it's 1<2 x>y &amp; <script>`)
)

// text returns random text of lo to hi runes; lines allows line breaks.
func text(rnd *rand.Rand, lo, hi int, lines bool) string {
	n := lo + rnd.IntN(hi-lo+1)
	var b strings.Builder
	count := 0
	for count < n {
		var w string
		switch k := rnd.IntN(10); {
		case k < 5:
			w = wordsJa[rnd.IntN(len(wordsJa))]
		case k < 9:
			w = wordsEn[rnd.IntN(len(wordsEn))]
		default:
			w = wordsMarks[rnd.IntN(len(wordsMarks))]
		}
		sep := " "
		if lines && count > 0 && rnd.IntN(12) == 0 {
			sep = "\n"
		}
		if count > 0 {
			w = sep + w
		}
		r := []rune(w)
		if count+len(r) > n {
			r = r[:n-count]
		}
		b.WriteString(string(r))
		count += len(r)
	}
	return strings.TrimSpace(strings.TrimRight(b.String(), "\n "))
}
