package main

import (
	"sync"
	"sync/atomic"
	"time"
)

// memory is what the app keeps of the database, rendered. Readers load the atomic pointers and never lock;
// writers hold App.wmu. Everything a reader can reach is immutable, except that byte slices may grow past the
// length a reader holds (see commentList), which the reader never looks at.
type memory struct {
	// articles holds every article, indexed by id (nil where no article has that id). Posting an article appends
	// to the slice and stores a new slice header; POST /initialize stores a fresh slice.
	articles atomic.Pointer[[]*article]
	// sidebar is the rendered sidebar, replaced on every new comment.
	sidebar atomic.Pointer[sidebar]
}

type article struct {
	id    int64
	title []byte // the title, HTML-escaped
	html  []byte // the whole <article> element

	// mu serialises loading the comments from the database and appending new ones, so a comment inserted while
	// the list loads is neither lost nor shown twice.
	mu       sync.Mutex
	comments atomic.Pointer[commentList] // nil until the article's page is first asked for
}

// commentList is an article's comments, rendered: one <li> per comment, each followed by "\n". A new comment makes
// a new commentList whose html is append(old.html, item...): the bytes a reader of the old list sees never change.
type commentList struct {
	html  []byte
	count int
}

// sidebar is the ten articles with the newest comments, newest first, and their rendered <aside>.
type sidebar struct {
	ids  []int64
	html []byte
}

// article returns the article with the id, or nil.
func (m *memory) article(id int64) *article {
	as := *m.articles.Load()
	if id <= 0 || id >= int64(len(as)) {
		return nil
	}
	return as[id]
}

// latest returns up to n articles, highest id first.
func (m *memory) latest(n int) []*article {
	as := *m.articles.Load()
	out := make([]*article, 0, n)
	for i := len(as) - 1; i > 0 && len(out) < n; i-- {
		if as[i] != nil {
			out = append(out, as[i])
		}
	}
	return out
}

// addArticle stores a new article. The caller holds App.wmu.
func (m *memory) addArticle(a *article) {
	as := *m.articles.Load()
	for int64(len(as)) < a.id {
		as = append(as, nil) // a gap in the ids (MariaDB can leave some)
	}
	as = append(as, a)
	m.articles.Store(&as)
}

// setSidebar renders and stores the sidebar of the given article ids.
func (m *memory) setSidebar(ids []int64) {
	b := make([]byte, 0, 2048)
	b = append(b, sidebarOpen...)
	for _, id := range ids {
		if a := m.article(id); a != nil {
			b = appendRecentItem(b, a)
		}
	}
	b = append(b, sidebarClose...)
	m.sidebar.Store(&sidebar{ids: ids, html: b})
}

// commented moves the article to the top of the sidebar. The caller holds App.wmu, so comments reach here in id
// order and the newest comment always leads.
func (m *memory) commented(articleID int64) {
	old := m.sidebar.Load().ids
	ids := make([]int64, 0, 10)
	ids = append(ids, articleID)
	for _, id := range old {
		if id != articleID && len(ids) < 10 {
			ids = append(ids, id)
		}
	}
	m.setSidebar(ids)
}

// newArticle renders an article.
func newArticle(id int64, title, body string, created time.Time) *article {
	a := &article{id: id, title: appendEscaped(nil, title)}
	a.html = appendArticle(make([]byte, 0, len(body)+len(title)+300), id, a.title, body, created)
	return a
}

// reload rebuilds the memory from the database: every article, rendered, and the sidebar. Comment lists load
// lazily. It runs at start and, holding App.wmu, in POST /initialize.
func (app *App) reload() error {
	rows, err := app.db.Query("SELECT id, title, body, created_at FROM article ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	as := make([]*article, 1, initialArticles+2048)
	for rows.Next() {
		var (
			id          int64
			title, body string
			created     time.Time
		)
		if err := rows.Scan(&id, &title, &body, &created); err != nil {
			return err
		}
		for int64(len(as)) < id {
			as = append(as, nil)
		}
		as = append(as, newArticle(id, title, body, created))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()

	var m memory
	m.articles.Store(&as)
	ids, err := app.recentFromDB(&m)
	if err != nil {
		return err
	}
	m.setSidebar(ids)
	// Publish the new state; in-flight readers finish with the old one.
	app.mem.articles.Store(m.articles.Load())
	app.mem.sidebar.Store(m.sidebar.Load())
	return nil
}

// recentFromDB finds the ten articles with the newest comments by walking the comments from the newest, a
// thousand at a time, until ten distinct articles turned up: a few rows through the primary key instead of an
// aggregate over the whole table.
func (app *App) recentFromDB(m *memory) ([]int64, error) {
	ids := make([]int64, 0, 10)
	seen := map[int64]bool{}
	before := int64(1) << 62
	for len(ids) < 10 {
		rows, err := app.db.Query("SELECT id, article_id FROM comment WHERE id < ? ORDER BY id DESC LIMIT 1000", before)
		if err != nil {
			return nil, err
		}
		n := 0
		for rows.Next() {
			var cid, aid int64
			if err := rows.Scan(&cid, &aid); err != nil {
				rows.Close()
				return nil, err
			}
			n++
			before = cid
			if !seen[aid] && len(ids) < 10 && m.article(aid) != nil {
				seen[aid] = true
				ids = append(ids, aid)
			}
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return nil, err
		}
		rows.Close()
		if n == 0 {
			break
		}
	}
	return ids, nil
}

// comments returns the article's rendered comments, loading them from the database the first time.
func (app *App) comments(a *article) (*commentList, error) {
	if cl := a.comments.Load(); cl != nil {
		return cl, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cl := a.comments.Load(); cl != nil {
		return cl, nil
	}
	rows, err := app.db.Query("SELECT id, name, body, created_at FROM comment WHERE article_id = ? ORDER BY id", a.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cl := &commentList{}
	for rows.Next() {
		var (
			id         int64
			name, body string
			created    time.Time
		)
		if err := rows.Scan(&id, &name, &body, &created); err != nil {
			return nil, err
		}
		cl.html = appendComment(cl.html, id, name, body, created)
		cl.count++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	a.comments.Store(cl)
	return cl, nil
}

// insertComment writes a comment and adds it to the memory. The caller holds a.mu and App.wmu.
func (app *App) insertComment(a *article, name, body string) (int64, error) {
	now := time.Now().UTC().Truncate(time.Second)
	res, err := app.db.Exec("INSERT INTO comment (article_id, name, body, created_at) VALUES (?, ?, ?, ?)",
		a.id, name, body, now.Format(timeFormat))
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if cl := a.comments.Load(); cl != nil {
		a.comments.Store(&commentList{html: appendComment(cl.html, id, name, body, now), count: cl.count + 1})
	}
	app.mem.commented(a.id)
	return id, nil
}

// insertArticle writes an article and adds it to the memory. The caller holds App.wmu.
func (app *App) insertArticle(title, body string) (int64, error) {
	now := time.Now().UTC().Truncate(time.Second)
	res, err := app.db.Exec("INSERT INTO article (title, body, created_at) VALUES (?, ?, ?)",
		title, body, now.Format(timeFormat))
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	a := newArticle(id, title, body, now)
	a.comments.Store(&commentList{}) // a new article has no comments yet
	app.mem.addArticle(a)
	return id, nil
}

// initialize deletes what was added since the initial data and rebuilds the memory.
func (app *App) initialize() error {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	statements := []string{
		"DELETE FROM comment WHERE id > ?",
		"DELETE FROM article WHERE id > ?",
	}
	args := []any{initialComments, initialArticles}
	for i, s := range statements {
		if _, err := app.db.Exec(s, args[i]); err != nil {
			return err
		}
	}
	if app.isMySQL {
		for _, s := range []string{
			"ALTER TABLE comment AUTO_INCREMENT = " + itoa(initialComments+1),
			"ALTER TABLE article AUTO_INCREMENT = " + itoa(initialArticles+1),
		} {
			if _, err := app.db.Exec(s); err != nil {
				return err
			}
		}
	}
	return app.reload()
}
