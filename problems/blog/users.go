package blog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// newMix is the session mix (MANUAL: "The users"): of every ten sessions
// started, one writes an article, three comment and six browse, evenly
// interleaved, whichever users play them.
func newMix() *engine.Mix {
	return engine.NewMix(engine.Share{Role: "writer", Weight: 1}, engine.Share{Role: "commenter", Weight: 3},
		engine.Share{Role: "browser", Weight: 6})
}

// User plays one session of a virtual user.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	full := func() bool { return u.Rand.Float64() < fullCheckShare }
	think := func() bool { return u.Think(ctx, thinkMin, thinkMax) }
	if p := s.m.dueComment(r.Now()); p != nil {
		if err := s.settle(ctx, u.Agent, p, u); err != nil || !think() {
			return err
		}
	}
	if p := s.m.dueArticle(r.Now()); p != nil {
		if err := s.settleArticle(ctx, u.Agent, p, u); err != nil || !think() {
			return err
		}
	}
	switch s.mix.Next() {
	case "writer":
		return s.writer(ctx, r, u, full, think)
	case "commenter":
		return s.commenter(ctx, r, u, full, think)
	}
	return s.browser(ctx, u, full, think)
}

// browser opens /, follows a link from it or from the sidebar, and now and
// then opens an old article.
func (s *Scenario) browser(ctx context.Context, u *engine.User, full func() bool, think func() bool) error {
	p, err := s.index(ctx, u.Agent, full(), u)
	if err != nil || !think() {
		return err
	}
	next := pickLink(u.Rand, p)
	if _, err := s.articlePage(ctx, u.Agent, next, full(), u); err != nil || !think() {
		return err
	}
	if u.Rand.IntN(3) == 0 {
		old := 1 + u.Rand.Int64N(s.m.in.articles())
		if _, err := s.articlePage(ctx, u.Agent, old, full(), u); err != nil {
			return err
		}
		think()
	}
	return nil
}

// settle reads the article of failed comment p, as a visitor who got no
// answer reloads the page to see whether the comment went through, and the
// model counts the comment as stored or not from what the page shows.
func (s *Scenario) settle(ctx context.Context, a *engine.Agent, p *post, sc engine.Scorer) error {
	pg, err := s.articlePage(ctx, a, p.article, true, sc)
	if err != nil {
		_ = s.m.settleComment(p, nil, nil) // another read will settle it
		return err
	}
	shown, _, err := parseComments(pg, p.article)
	if err != nil {
		_ = s.m.settleComment(p, nil, nil)
		return err
	}
	return s.m.settleComment(p, pg.res, shown)
}

// settleArticle looks for failed article p as its writer would, and the
// model counts it as stored (under the id whose page shows its title) or not.
func (s *Scenario) settleArticle(ctx context.Context, a *engine.Agent, p *post, sc engine.Scorer) error {
	id, at, decided, err := s.findArticle(ctx, a, p, sc)
	if serr := s.m.settleArticle(p, id, at, decided && err == nil); err == nil {
		err = serr
	}
	return err
}

// findArticle reads / for the newest id, then each id failed article p may
// have been stored under, and returns the one whose page shows its title and
// when it came (0: none; decided false: too many ids to try).
func (s *Scenario) findArticle(ctx context.Context, a *engine.Agent, p *post, sc engine.Scorer) (int64, time.Time, bool, error) {
	top, err := s.index(ctx, a, true, sc)
	if err != nil {
		return 0, time.Time{}, false, err
	}
	var newest int64
	if e, ok := parseEntry(top.listed().First()); ok {
		newest = e.id
	}
	ids, ok := s.m.articleCandidates(p, newest)
	if !ok {
		return 0, time.Time{}, false, nil
	}
	for _, id := range ids {
		res, err := a.Get(ctx, "GET /articles/{id}", "/articles/"+strconv.FormatInt(id, 10))
		if err != nil {
			return 0, time.Time{}, false, err
		}
		if res.StatusCode == http.StatusNotFound {
			continue
		}
		pg, err := parsePage(res)
		if err != nil {
			return 0, time.Time{}, false, err
		}
		e, err := parseArticle(pg, id)
		if err != nil {
			return 0, time.Time{}, false, err
		}
		if e.title == p.title {
			return id, res.Received, true, nil
		}
	}
	return 0, time.Time{}, true, nil
}

// pickLink picks an article from the sidebar or from /'s list.
func pickLink(rnd *rand.Rand, p *page) int64 {
	if ids := p.listed(); ids.Length() > 0 && rnd.IntN(2) == 0 {
		if e, ok := parseEntry(ids.Eq(rnd.IntN(ids.Length()))); ok {
			return e.id
		}
	}
	return p.sidebar[rnd.IntN(len(p.sidebar))].id
}

// commenter reads an article (mostly a recently commented one), comments on
// it, and between 1 and 3 seconds after the 303 checks that the comment is
// on the article's page and that another page's sidebar accounts for it.
func (s *Scenario) commenter(ctx context.Context, r *engine.Run, u *engine.User, full func() bool, think func() bool) error {
	var article int64
	if u.Rand.IntN(10) < 7 {
		p, err := s.index(ctx, u.Agent, full(), u)
		if err != nil || !think() {
			return err
		}
		article = pickLink(u.Rand, p)
	} else {
		article = 1 + u.Rand.Int64N(s.m.in.articles())
	}
	if _, err := s.articlePage(ctx, u.Agent, article, full(), u); err != nil || !think() {
		return err
	}
	name := ""
	if u.Rand.IntN(2) == 0 {
		name = text(u.Rand, 1, 20, false)
	}
	c, res, err := s.postComment(ctx, r, u.Agent, article, name, text(u.Rand, 10, 200, true))
	if err != nil {
		return err
	}
	u.Score(tagComment, res)
	if !waitToCheck(ctx, r, u, c.received) {
		return nil
	}
	if _, err := s.articlePage(ctx, u.Agent, article, true, u); err != nil {
		return err
	}
	if u.Rand.IntN(2) == 0 {
		_, err = s.index(ctx, u.Agent, full(), u)
	} else {
		_, err = s.articlePage(ctx, u.Agent, 1+u.Rand.Int64N(s.m.in.articles()), full(), u)
	}
	if err != nil {
		return err
	}
	think()
	return nil
}

// writer opens the form, posts an article, and between 1 and 3 seconds
// after the 303 checks / and the article's page.
func (s *Scenario) writer(ctx context.Context, r *engine.Run, u *engine.User, full func() bool, think func() bool) error {
	if err := s.postPage(ctx, u.Agent, u); err != nil || !think() {
		return err
	}
	a, res, err := s.postArticle(ctx, r, u.Agent, text(u.Rand, 8, 40, false), text(u.Rand, 100, 1000, true))
	if err != nil {
		return err
	}
	u.Score(tagArticle, res)
	if !waitToCheck(ctx, r, u, a.received) {
		return nil
	}
	if _, err := s.index(ctx, u.Agent, true, u); err != nil {
		return err
	}
	if _, err := s.articlePage(ctx, u.Agent, a.id, true, u); err != nil {
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

// fetch loads a page as a browser does: the HTML, its checks, its assets.
func (s *Scenario) fetch(ctx context.Context, a *engine.Agent, endpoint, path string) (*page, error) {
	res, err := a.Get(ctx, endpoint, path)
	if err != nil {
		return nil, err
	}
	p, err := parsePage(res)
	if err != nil {
		return nil, err
	}
	if err := s.m.checkSidebar(p); err != nil {
		return nil, err
	}
	if err := a.FetchAssets(ctx, res); err != nil {
		return nil, err
	}
	return p, nil
}

// index loads and checks / ; full compares every text.
func (s *Scenario) index(ctx context.Context, a *engine.Agent, full bool, sc engine.Scorer) (*page, error) {
	p, err := s.fetch(ctx, a, "GET /", "/")
	if err != nil {
		return nil, err
	}
	if err := s.m.checkIndex(p, full); err != nil {
		return nil, err
	}
	sc.Score(tagPage, p.res)
	return p, nil
}

// articlePage loads and checks article id's page; full compares every text.
func (s *Scenario) articlePage(ctx context.Context, a *engine.Agent, id int64, full bool, sc engine.Scorer) (*page, error) {
	p, err := s.fetch(ctx, a, "GET /articles/{id}", "/articles/"+strconv.FormatInt(id, 10))
	if err != nil {
		return nil, err
	}
	if err := s.m.checkArticle(p, id, full); err != nil {
		return nil, err
	}
	sc.Score(tagPage, p.res)
	return p, nil
}

// postPage loads and checks /post, the form to post an article.
func (s *Scenario) postPage(ctx context.Context, a *engine.Agent, sc engine.Scorer) error {
	p, err := s.fetch(ctx, a, "GET /post", "/post")
	if err != nil {
		return err
	}
	if err := parsePostForm(p); err != nil {
		return err
	}
	sc.Score(tagPage, p.res)
	return nil
}

// postComment posts a comment and records it in the model.
func (s *Scenario) postComment(ctx context.Context, r *engine.Run, a *engine.Agent, article int64, name, body string) (*post, *engine.Response, error) {
	p := s.m.beginComment(article, name, body, r.Now())
	res, cid, err := postForNewID(ctx, a, "POST /articles/{id}/comments", fmt.Sprintf("/articles/%d/comments", article),
		url.Values{"name": {name}, "body": {body}}, fmt.Sprintf("/articles/%d#comment-", article), s.m.in.comments(),
		fmt.Sprintf("expected /articles/%d#comment-NEWID with a new comment id", article))
	if err != nil {
		s.m.failComment(p, r.Now())
		return nil, nil, err
	}
	return p, res, s.m.endComment(p, cid, res.Received)
}

// postArticle posts an article and records it in the model.
func (s *Scenario) postArticle(ctx context.Context, r *engine.Run, a *engine.Agent, title, body string) (*post, *engine.Response, error) {
	p := s.m.beginArticle(title, body, r.Now())
	res, id, err := postForNewID(ctx, a, "POST /articles", "/articles",
		url.Values{"title": {title}, "body": {body}}, "/articles/", s.m.in.articles(),
		"expected /articles/NEWID with a new article id")
	if err != nil {
		s.m.failArticle(p, r.Now())
		return nil, nil, err
	}
	return p, res, s.m.endArticle(p, id, res.Received)
}

// postForNewID posts form to path, which must answer 303 to prefix followed
// by a new id, above last (the initial data's highest); want is the message
// for any other answer. It returns the answer and the new id, or the error.
func postForNewID(ctx context.Context, a *engine.Agent, endpoint, path string, form url.Values, prefix string, last int64, want string) (*engine.Response, int64, error) {
	res, err := a.PostForm(ctx, endpoint, path, form)
	if err != nil {
		return nil, 0, err
	}
	var id int64
	err = res.Check(engine.Status(http.StatusSeeOther), engine.RedirectTo(func(loc string) string {
		rest, ok := strings.CutPrefix(loc, prefix)
		n, err := strconv.ParseInt(rest, 10, 64)
		if !ok || err != nil || n <= last {
			return want
		}
		id = n
		return ""
	}))
	if err != nil {
		return nil, 0, err
	}
	return res, id, nil
}

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
