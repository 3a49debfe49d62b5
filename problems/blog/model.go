package blog

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/blog/data"
)

// unknownID stands for the id of a post whose 303 never came (in flight, or
// failed and so perhaps stored): it may be newer than anything.
const unknownID = math.MaxInt64

// initial is what the benchmarker knows of the initial data, computed once
// from the generator (never read from the app).
type initial struct {
	cfg       data.Config
	byArticle [][]int32 // article id → its comment ids, ascending
	last      []int64   // article id → its highest comment id (0: none)
	commentOf []int32   // comment id → its article
	titles    []string  // article id → title
	created   []time.Time
}

var loadInitial = sync.OnceValue(func() *initial { return newInitial(data.Default()) })

func newInitial(cfg data.Config) *initial {
	in := &initial{
		cfg:       cfg,
		byArticle: make([][]int32, cfg.Articles+1),
		last:      make([]int64, cfg.Articles+1),
		commentOf: make([]int32, cfg.Comments+1),
		titles:    make([]string, cfg.Articles+1),
		created:   make([]time.Time, cfg.Articles+1),
	}
	for k := int64(1); k <= int64(cfg.Comments); k++ {
		a := cfg.CommentArticle(k)
		in.commentOf[k] = int32(a)
		in.byArticle[a] = append(in.byArticle[a], int32(k))
		in.last[a] = k
	}
	for id := int64(1); id <= int64(cfg.Articles); id++ {
		a := cfg.Article(id)
		in.titles[id], in.created[id] = a.Title, a.CreatedAt
	}
	return in
}

func (in *initial) articles() int64 { return int64(in.cfg.Articles) }
func (in *initial) comments() int64 { return int64(in.cfg.Comments) }

// post is an article or a comment the benchmarker sent.
type post struct {
	article        int64 // a comment's article; an article's own id once known
	id             int64 // from the 303; 0 until then
	title          string
	name, body     string
	sent, received time.Time
	// failed: no valid 303, so it may or may not be stored until a later
	// read settles it; ended is when its answer was given up.
	failed   bool
	ended    time.Time
	settling bool // a read to settle it is under way
	// unsettleable: an article with too many ids to try; it stays unsure.
	unsettleable bool
}

// done: the 303 came with an id.
func (p *post) done() bool { return p.id > 0 }

// definite: done, and the freshness deadline had passed by time t.
func (p *post) definite(t time.Time) bool { return p.done() && !p.received.Add(Freshness).After(t) }

// model is the benchmarker's picture of the app's data: the initial data
// plus everything posted during the run, with the times of each post, so
// that a check can tell what a page must show, may show, and must not show.
type model struct {
	in *initial

	mu              sync.Mutex
	comments        []*post           // done comments, by id
	commentsOf      map[int64][]*post // article → every comment posted on it
	unsureComments  []*post           // in flight or failed
	articles        []*post           // done articles, by id
	articleByID     map[int64]*post
	unsureArticles  []*post
	posted, settled int
	// ahead bounds how far the app's clock is ahead of the benchmarker's
	// (set by the pre-check before any other use): a time the app stamped
	// during a request lies between its sending plus lo and its answer plus
	// hi.
	ahead func() (lo, hi time.Duration)
}

func newModel(in *initial) *model {
	return &model{in: in, commentsOf: map[int64][]*post{}, articleByID: map[int64]*post{},
		ahead: func() (lo, hi time.Duration) { return 0, 0 }}
}

// beginComment records a comment about to be posted.
func (m *model) beginComment(article int64, name, body string, sent time.Time) *post {
	p := &post{article: article, name: name, body: body, sent: sent}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commentsOf[article] = append(m.commentsOf[article], p)
	m.unsureComments = append(m.unsureComments, p)
	return p
}

// endComment records a comment's 303 with its new id. An id that breaks the
// manual's rule of ids is a critical error, and the comment stays unsure.
func (m *model) endComment(p *post, id int64, received time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.storedLocked(p, id, received)
}

// storedLocked records comment p as stored under id, visible from received.
func (m *model) storedLocked(p *post, id int64, received time.Time) error {
	i, err := checkNewID(m.comments, id, p.sent, "comment")
	if err != nil {
		return err
	}
	p.id, p.received, p.failed = id, received, false
	m.unsureComments = slices.DeleteFunc(m.unsureComments, func(q *post) bool { return q == p })
	m.comments = slices.Insert(m.comments, i, p)
	return nil
}

// failComment records a comment whose answer was given up at ended: it may
// or may not be stored until a read settles it (settleComment).
func (m *model) failComment(p *post, ended time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.failed, p.ended = true, ended
}

// dueComment claims a failed comment whose answer was given up at least
// settleAfter before now, for the caller to settle, or returns nil.
func (m *model) dueComment(now time.Time) *post {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.unsureComments {
		if p.failed && !p.settling && !p.ended.Add(settleAfter).After(now) {
			p.settling = true
			return p
		}
	}
	return nil
}

// anyFailed reports whether a failed post is still unsettled.
func (m *model) anyFailed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	failed := func(p *post) bool { return p.failed }
	return slices.ContainsFunc(m.unsureComments, failed) || slices.ContainsFunc(m.unsureArticles, failed)
}

// settleComment settles failed comment p from a read of its article's page
// sent at least settleAfter after p's answer was given up (res; shown are the
// comments the page shows, already checked). If the page shows it (its name
// and body, under an id no other comment has), it was stored under that id,
// visible from then on; if not, it was not stored, and a page that shows it
// later shows a comment that was never posted. With res nil (the read
// failed), p stays unsettled for another read.
func (m *model) settleComment(p *post, res *engine.Response, shown []shownComment) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.settling = false
	if res == nil || res.Sent.Before(p.ended.Add(settleAfter)) {
		return nil
	}
	for _, c := range shown {
		if c.id <= m.in.comments() || c.name != displayName(p.name) || c.body != normalize(p.body) {
			continue
		}
		if _, known := slices.BinarySearchFunc(m.comments, c.id, func(q *post, id int64) int { return cmp.Compare(q.id, id) }); !known {
			return m.storedLocked(p, c.id, res.Received)
		}
	}
	m.unsureComments = slices.DeleteFunc(m.unsureComments, func(q *post) bool { return q == p })
	m.commentsOf[p.article] = slices.DeleteFunc(m.commentsOf[p.article], func(q *post) bool { return q == p })
	return nil
}

// checkNewID holds a post's new id to the manual's rule: ids are never given
// twice, and a post's id is above that of every post of its kind whose 303
// came before it was sent (new ids increase, so an app cannot choose ids that
// keep its lists unchanged). done is sorted by id; it returns where id goes.
func checkNewID(done []*post, id int64, sent time.Time, kind string) (int, error) {
	i, found := slices.BinarySearchFunc(done, id, func(q *post, id int64) int { return cmp.Compare(q.id, id) })
	if found {
		return 0, engine.Criticalf("id-reused", "%s id %d was given to two %ss", kind, id, kind)
	}
	for _, q := range done[i:] {
		if q.received.Before(sent) {
			return 0, engine.Criticalf("id-order", "new %s id %d is below %d, the id of a %s acknowledged before this one was posted: new ids must increase",
				kind, id, q.id, kind)
		}
	}
	return i, nil
}

// failArticle records an article whose answer was given up at ended.
func (m *model) failArticle(p *post, ended time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.failed, p.ended = true, ended
}

// maxArticleProbes bounds the ids a settling read of an article tries.
const maxArticleProbes = 20

// dueArticle claims a failed article whose answer was given up at least
// settleAfter before now, for the caller to settle, or returns nil.
func (m *model) dueArticle(now time.Time) *post {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.unsureArticles {
		if p.failed && !p.settling && !p.unsettleable && !p.ended.Add(settleAfter).After(now) {
			p.settling = true
			return p
		}
	}
	return nil
}

// articleCandidates lists the ids failed article p may have been stored
// under, up to newest (the newest id / shows): above every article
// acknowledged before p was sent, and no other article's. ok is false when
// there are more than maxArticleProbes: p is then never tried again.
func (m *model) articleCandidates(p *post, newest int64) (ids []int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	floor := m.in.articles()
	for _, q := range m.articles {
		if q.received.Before(p.sent) {
			floor = max(floor, q.id)
		}
	}
	for id := floor + 1; id <= newest; id++ {
		if _, known := m.articleByID[id]; !known {
			if len(ids) == maxArticleProbes {
				p.unsettleable = true
				return nil, false
			}
			ids = append(ids, id)
		}
	}
	return ids, true
}

// settleArticle settles failed article p: stored under id (0: not stored),
// visible from received; ok false leaves it for another read.
func (m *model) settleArticle(p *post, id int64, received time.Time, ok bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.settling = false
	if !ok {
		return nil
	}
	if id == 0 {
		m.unsureArticles = slices.DeleteFunc(m.unsureArticles, func(q *post) bool { return q == p })
		return nil
	}
	i, err := checkNewID(m.articles, id, p.sent, "article")
	if err != nil {
		return err
	}
	p.id, p.article, p.received, p.failed = id, id, received, false
	m.unsureArticles = slices.DeleteFunc(m.unsureArticles, func(q *post) bool { return q == p })
	m.articles = slices.Insert(m.articles, i, p)
	m.articleByID[id] = p
	return nil
}

// beginArticle records an article about to be posted.
func (m *model) beginArticle(title, body string, sent time.Time) *post {
	p := &post{title: title, body: body, sent: sent}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unsureArticles = append(m.unsureArticles, p)
	return p
}

// endArticle records an article's 303 with its new id, as endComment does.
func (m *model) endArticle(p *post, id int64, received time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, err := checkNewID(m.articles, id, p.sent, "article")
	if err != nil {
		return err
	}
	p.id, p.article, p.received = id, id, received
	m.unsureArticles = slices.DeleteFunc(m.unsureArticles, func(q *post) bool { return q == p })
	m.articles = slices.Insert(m.articles, i, p)
	m.articleByID[id] = p
	return nil
}

// appTimes are a request's sending and answer on the app's clock, at their
// earliest and latest (zero times stay zero: an initial item has none).
func (m *model) appTimes(sent, received time.Time) (time.Time, time.Time) {
	if sent.IsZero() {
		return sent, received
	}
	lo, hi := m.ahead()
	return sent.Add(lo), received.Add(hi)
}

// articleInfo is what the model knows of an article; ok is false for an id
// it does not know (which may still exist if an article post is unsure).
type articleInfo struct {
	title, body string
	created     time.Time
	// sent and received bound a run article's server time.
	sent, received time.Time
}

// article returns what the model knows of article id.
func (m *model) article(id int64, withBody bool) (articleInfo, bool) {
	a, ok, _ := m.lookupArticle(id, withBody, time.Time{})
	return a, ok
}

// lookupArticle returns what the model knows of article id and, when it
// knows nothing, whether an article post sent before t is unsure (so an
// unknown article may legitimately exist). Both answers come from one look
// at the model: a post acknowledged in between cannot fall through the gap.
func (m *model) lookupArticle(id int64, withBody bool, t time.Time) (a articleInfo, known, maybe bool) {
	if id >= 1 && id <= m.in.articles() {
		a = articleInfo{title: m.in.titles[id], created: m.in.created[id]}
		if withBody {
			a.body = m.in.cfg.Article(id).Body
		}
		return a, true, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.articleByID[id]; ok {
		return articleInfo{title: p.title, body: p.body, sent: p.sent, received: p.received}, true, false
	}
	for _, p := range m.unsureArticles {
		if p.sent.Before(t) {
			return articleInfo{}, false, true
		}
	}
	return articleInfo{}, false, false
}

// lastMinLocked is the newest comment on article a that must be visible at t.
func (m *model) lastMinLocked(a int64, t time.Time) int64 {
	var l int64
	if a >= 1 && a <= m.in.articles() {
		l = m.in.last[a]
	}
	for _, p := range m.commentsOf[a] {
		if p.definite(t) {
			l = max(l, p.id)
		}
	}
	return l
}

// lastMaxLocked is the newest comment on article a that may be visible to a
// request answered at t (unknownID if a post of unknown id may be).
func (m *model) lastMaxLocked(a int64, t time.Time) int64 {
	var l int64
	if a >= 1 && a <= m.in.articles() {
		l = m.in.last[a]
	}
	for _, p := range m.commentsOf[a] {
		if !p.sent.Before(t) {
			continue
		}
		if !p.done() {
			return unknownID
		}
		l = max(l, p.id)
	}
	return l
}

// ranked is an article and the newest comment that must be visible on it.
type ranked struct {
	article, last int64
}

// sidebarView is what the model says a sidebar may show, for one request:
// computed at once, so that its parts agree with each other.
type sidebarView struct {
	// top are the ten articles whose newest must-be-visible comments are the
	// newest, in order, and outrankers[i] is how many other articles may rank
	// above top[i]. An article that fewer than ten others may outrank must be
	// in the sidebar.
	top        []ranked
	outrankers []int
	// lastMin[i] and lastMax[i] bound the newest comment of the i-th listed
	// article: the newest that must be visible when the request was sent, and
	// the newest that may be visible when it was answered (unknownID if a
	// post of unknown id may be).
	lastMin, lastMax []int64
}

// sidebar returns the model's view of the sidebar of a request sent at sent
// and answered at received, whose sidebar lists the articles listed, all
// under one lock.
func (m *model) sidebar(sent, received time.Time, listed []int64) sidebarView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v sidebarView
	v.top, v.outrankers = m.sidebarBoundsLocked(sent, received)
	v.lastMin = make([]int64, len(listed))
	v.lastMax = make([]int64, len(listed))
	for i, a := range listed {
		v.lastMin[i] = m.lastMinLocked(a, sent)
		v.lastMax[i] = m.lastMaxLocked(a, received)
	}
	return v
}

// sidebarBoundsLocked returns, for a request sent at sent and answered at
// received, the ten articles whose newest must-be-visible comments are the
// newest (in order), and for each of them how many other articles may rank
// above it.
func (m *model) sidebarBoundsLocked(sent, received time.Time) (top []ranked, outrankers []int) {
	seen := map[int64]bool{}
	maybe := map[int64]int64{} // article → newest comment id that may be visible but need not be
	for i := len(m.comments) - 1; i >= 0 && len(top) < 10; i-- {
		p := m.comments[i]
		if !p.definite(sent) {
			if p.sent.Before(received) {
				maybe[p.article] = max(maybe[p.article], p.id)
			}
			continue
		}
		if !seen[p.article] {
			seen[p.article] = true
			top = append(top, ranked{p.article, p.id})
		}
	}
	for k := m.in.comments(); k >= 1 && len(top) < 10; k-- {
		if a := int64(m.in.commentOf[k]); !seen[a] {
			seen[a] = true
			top = append(top, ranked{a, k})
		}
	}
	for _, p := range m.unsureComments {
		if p.sent.Before(received) {
			maybe[p.article] = unknownID
		}
	}
	outrankers = make([]int, len(top))
	for i, c := range top {
		n := i // the articles above it in top all rank above it
		above := map[int64]bool{}
		for _, d := range top[:i] {
			above[d.article] = true
		}
		for a, l := range maybe {
			if a != c.article && !above[a] && l > c.last {
				n++
			}
		}
		outrankers[i] = n
	}
	return top, outrankers
}

// newestArticleBounds returns the newest article id that must be visible at
// sent, and the newest that may be visible to a request answered at received.
func (m *model) newestArticleBounds(sent, received time.Time) (lo, hi int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	lo, hi = m.in.articles(), m.in.articles()
	for _, p := range m.articles {
		if p.definite(sent) {
			lo = max(lo, p.id)
		}
		if p.sent.Before(received) {
			hi = max(hi, p.id)
		}
	}
	for _, p := range m.unsureArticles {
		if p.sent.Before(received) {
			hi = unknownID
		}
	}
	return lo, hi
}

// definiteArticlesBetween lists run articles with lo < id < hi that must be
// visible at t.
func (m *model) definiteArticlesBetween(lo, hi int64, t time.Time) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int64
	for _, p := range m.articles {
		if p.id > lo && p.id < hi && p.definite(t) {
			out = append(out, p.id)
		}
	}
	return out
}

// runComments returns a copy of the comments posted on article a.
func (m *model) runComments(a int64) []post {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]post, len(m.commentsOf[a]))
	for i, p := range m.commentsOf[a] {
		out[i] = *p
	}
	return out
}

// commentedArticles lists the articles that got comments during the run.
func (m *model) commentedArticles() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int64, 0, len(m.commentsOf))
	for a := range m.commentsOf {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// newestKnownArticles returns the ids of the newest known articles, up to n.
func (m *model) newestKnownArticles(n int) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int64
	for i := len(m.articles) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, m.articles[i].id)
	}
	for id := m.in.articles(); id >= 1 && len(out) < n; id-- {
		out = append(out, id)
	}
	return out
}
