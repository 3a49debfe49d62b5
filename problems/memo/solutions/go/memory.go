package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/mattn/go-sqlite3"
)

// state is what the app keeps of the database: every user, session and memo, the memos rendered. Readers load
// App.st once per request and use what they find without locking; writers hold App.wmu. Everything a reader can
// reach is immutable, except the slices of memos, which only grow: a writer appends past the length a reader
// holds and publishes the longer slice with an atomic store, so a reader never sees an element being written.
type state struct {
	// memos holds every memo, indexed by id (nil where no memo has that id, as MariaDB can leave gaps).
	memos atomic.Pointer[[]*memo]
	// public holds the public memos in id order: the total is its length, and page n of / and /recent is the
	// pageSize memos that end n*pageSize from its end.
	public   atomic.Pointer[[]*memo]
	users    sync.Map // name → *user
	sessions sync.Map // session id → *session
}

type user struct {
	id         int64
	name       string
	salt, hash string
	// all and public are the user's memos, and the public ones, in id order: /mypage and the older and newer
	// links of a memo page, for its author and for everyone else.
	all, public atomic.Pointer[[]*memo]
}

type memo struct {
	id      int64
	author  *user
	private bool
	created string // "YYYY-MM-DD HH:MM:SS", UTC
	item    []byte // the memo's <li> in a list, with the newline that follows it; the private mark if private
	title   []byte // the title, HTML-escaped: a part of item
	// html is the content rendered from Markdown: set when a memo is posted, and for a memo read from the database
	// on its first view (see App.content; the content of a memo never changes: the app has no way to edit one).
	html atomic.Pointer[[]byte]
}

type session struct {
	id     string
	user   *user
	csrf   string
	header []byte // the signed-in part of the page header, with the user's name and the CSRF token
}

var itemBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// newMemo makes a memo, with its <li> rendered. Its escaped title is a part of the <li>.
func newMemo(id int64, author *user, private bool, created, title string) *memo {
	m := &memo{id: id, author: author, private: private, created: created}
	bp := itemBufs.Get().(*[]byte)
	b, start, end := appendItem((*bp)[:0], m, title)
	m.item = bytes.Clone(b)
	m.title = m.item[start:end:end]
	*bp = b[:0]
	itemBufs.Put(bp)
	return m
}

func newSession(id string, u *user, csrf string) *session {
	return &session{id: id, user: u, csrf: csrf, header: appendSessionHeader(nil, u.name, csrf)}
}

// memo returns the memo with the id, or nil.
func (st *state) memo(id int64) *memo {
	ms := *st.memos.Load()
	if id <= 0 || id >= int64(len(ms)) {
		return nil
	}
	return ms[id]
}

// session returns the session with the id, or nil.
func (st *state) session(id string) *session {
	if s, ok := st.sessions.Load(id); ok {
		return s.(*session)
	}
	return nil
}

// user returns the user with the name, or nil.
func (st *state) user(name string) *user {
	if u, ok := st.users.Load(name); ok {
		return u.(*user)
	}
	return nil
}

// addMemo publishes a new memo, whose id is higher than any before. The caller holds App.wmu.
func (st *state) addMemo(m *memo) {
	ms := *st.memos.Load()
	for int64(len(ms)) < m.id {
		ms = append(ms, nil) // a gap in the ids
	}
	ms = append(ms, m)
	st.memos.Store(&ms)
	appendMemo(&m.author.all, m)
	if !m.private {
		appendMemo(&m.author.public, m)
		appendMemo(&st.public, m)
	}
}

// appendMemo appends m to the slice p points to and publishes the longer slice.
func appendMemo(p *atomic.Pointer[[]*memo], m *memo) {
	var ms []*memo
	if old := p.Load(); old != nil {
		ms = *old
	}
	ms = append(ms, m)
	p.Store(&ms)
}

// memos returns the slice p points to, nil if none.
func memos(p *atomic.Pointer[[]*memo]) []*memo {
	if ms := p.Load(); ms != nil {
		return *ms
	}
	return nil
}

// neighbours returns the ids of the memos just below and just above id in ms (in id order), 0 for none.
func neighbours(ms []*memo, id int64) (older, newer int64) {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].id >= id })
	if i > 0 {
		older = ms[i-1].id
	}
	if i < len(ms) && ms[i].id == id {
		i++
	}
	if i < len(ms) {
		newer = ms[i].id
	}
	return older, newer
}

// load reads the database into a new state: every user, memo and session. The memos' Markdown is rendered
// lazily, except that of memos above the initial ids (see content); the rendered content of the initial memos is
// taken over from old, if given, since those memos never change. It runs at start and, holding App.wmu, in
// POST /initialize.
func (app *App) load(old *state) (*state, error) {
	st := &state{}
	byID := map[int64]*user{}
	rows, err := app.db.Query("SELECT id, username, salt, password_hash FROM users ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		u := &user{}
		if err := rows.Scan(&u.id, &u.name, &u.salt, &u.hash); err != nil {
			return nil, err
		}
		byID[u.id] = u
		st.users.Store(u.name, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()

	rows, err = app.db.Query("SELECT id, user_id, content, is_private, created_at FROM memos ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	all := make([]*memo, 1, initialMemos+8192)
	public := make([]*memo, 0, initialMemos/2+4096)
	mine := map[*user][]*memo{}
	minePublic := map[*user][]*memo{}
	for rows.Next() {
		var (
			id, userID       int64
			content, created string
			private          bool
		)
		if err := rows.Scan(&id, &userID, &content, &private, &created); err != nil {
			return nil, err
		}
		u := byID[userID]
		if u == nil {
			log.Printf("memo %d: its author, user %d, does not exist; left out", id, userID)
			continue
		}
		m := newMemo(id, u, private, created, title(content))
		if id > initialMemos {
			// A memo added since the initial data may be deleted by POST /initialize and its id given again:
			// render it now, so that a reader still holding this state never reads another memo's content.
			html, err := app.renderMarkdown(content)
			if err != nil {
				return nil, err
			}
			m.html.Store(&html)
		} else if old != nil {
			if om := old.memo(id); om != nil && om.author.id == userID && om.created == created {
				m.html.Store(om.html.Load())
			}
		}
		for int64(len(all)) < id {
			all = append(all, nil)
		}
		all = append(all, m)
		mine[u] = append(mine[u], m)
		if !private {
			public = append(public, m)
			minePublic[u] = append(minePublic[u], m)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	st.memos.Store(&all)
	st.public.Store(&public)
	for u, ms := range mine {
		u.all.Store(&ms)
	}
	for u, ms := range minePublic {
		u.public.Store(&ms)
	}

	rows, err = app.db.Query("SELECT id, user_id, csrf_token FROM sessions")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	sessions := 0
	for rows.Next() {
		var (
			id, csrf string
			userID   int64
		)
		if err := rows.Scan(&id, &userID, &csrf); err != nil {
			return nil, err
		}
		if u := byID[userID]; u != nil {
			st.sessions.Store(id, newSession(id, u, csrf))
			sessions++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	log.Printf("memory: %d users, %d memos (%d public), %d sessions", len(byID), len(all)-1-countNil(all[1:]),
		len(public), sessions)
	return st, nil
}

func countNil(ms []*memo) int {
	n := 0
	for _, m := range ms {
		if m == nil {
			n++
		}
	}
	return n
}

// content returns the memo's content rendered, reading and rendering it the first time. Two first views at once
// may both render it; they render the same bytes.
func (app *App) content(m *memo) ([]byte, error) {
	if html := m.html.Load(); html != nil {
		return *html, nil
	}
	var content string
	if err := app.db.QueryRow("SELECT content FROM memos WHERE id = ?", m.id).Scan(&content); err != nil {
		return nil, fmt.Errorf("reading memo %d: %w", m.id, err)
	}
	html, err := app.renderMarkdown(content)
	if err != nil {
		return nil, err
	}
	m.html.CompareAndSwap(nil, &html)
	return *m.html.Load(), nil
}

var markdownBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// renderMarkdown renders a memo's content, as the reference does.
func (app *App) renderMarkdown(content string) ([]byte, error) {
	buf := markdownBufs.Get().(*bytes.Buffer)
	defer markdownBufs.Put(buf)
	buf.Reset()
	if err := app.markdown.Convert([]byte(content), buf); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// errSignedOut says the session a write was asked for ended before the write could take App.wmu (signed out, or
// deleted by POST /initialize).
var errSignedOut = errors.New("the session has ended")

// insertMemo writes a memo of the session's user and publishes it, before the caller answers: the memo is on /,
// /recent and /mypage from the moment its 303 is sent.
func (app *App) insertMemo(sess *session, content string, private bool, html []byte) (int64, error) {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	st := app.st.Load()
	if st.session(sess.id) != sess {
		return 0, errSignedOut
	}
	created := now()
	isPrivate := 0
	if private {
		isPrivate = 1
	}
	res, err := app.db.Exec("INSERT INTO memos (user_id, content, is_private, created_at) VALUES (?, ?, ?, ?)",
		sess.user.id, content, isPrivate, created)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	m := newMemo(id, sess.user, private, created, title(content))
	m.html.Store(&html)
	st.addMemo(m)
	return id, nil
}

// errTaken says a sign-up's name is taken.
var errTaken = errors.New("the name is taken")

// insertUser writes a new user and signs in a new session to it, ending the session named oldSession.
func (app *App) insertUser(name, password, oldSession string) (*session, error) {
	salt := randomHex(8)
	hash := hashPassword(salt, password)
	app.wmu.Lock()
	defer app.wmu.Unlock()
	st := app.st.Load()
	if st.user(name) != nil {
		return nil, errTaken
	}
	res, err := app.db.Exec("INSERT INTO users (username, salt, password_hash, created_at) VALUES (?, ?, ?, ?)",
		name, salt, hash, now())
	if isDuplicate(err) {
		return nil, errTaken
	} else if err != nil {
		return nil, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	u := &user{id: id, name: name, salt: salt, hash: hash}
	st.users.Store(name, u)
	return app.startSession(st, u, oldSession)
}

// signIn signs in a new session to the user, ending the session named oldSession. It returns errSignedOut if the
// user is gone (deleted by POST /initialize since the caller looked it up).
func (app *App) signIn(u *user, oldSession string) (*session, error) {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	st := app.st.Load()
	if st.user(u.name) != u {
		return nil, errSignedOut
	}
	return app.startSession(st, u, oldSession)
}

// startSession ends the session named old, if any, and starts a new one signed in to u. The caller holds
// App.wmu.
func (app *App) startSession(st *state, u *user, old string) (*session, error) {
	if old != "" {
		if _, err := app.db.Exec("DELETE FROM sessions WHERE id = ?", old); err != nil {
			return nil, err
		}
		st.sessions.Delete(old)
	}
	s := newSession(randomToken(), u, randomToken())
	_, err := app.db.Exec("INSERT INTO sessions (id, user_id, csrf_token, created_at) VALUES (?, ?, ?, ?)",
		s.id, u.id, s.csrf, now())
	if err != nil {
		return nil, err
	}
	st.sessions.Store(s.id, s)
	return s, nil
}

// signOut ends a session.
func (app *App) signOut(sess *session) error {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	if _, err := app.db.Exec("DELETE FROM sessions WHERE id = ?", sess.id); err != nil {
		return err
	}
	app.st.Load().sessions.Delete(sess.id)
	return nil
}

// initialize deletes what was added since the initial data and rebuilds the memory.
func (app *App) initialize() error {
	app.wmu.Lock()
	defer app.wmu.Unlock()
	statements := []string{
		fmt.Sprintf("DELETE FROM memos WHERE id > %d", initialMemos),
		fmt.Sprintf("DELETE FROM users WHERE id > %d", initialUsers),
		"DELETE FROM sessions",
	}
	if app.isMySQL {
		statements = append(statements,
			fmt.Sprintf("ALTER TABLE memos AUTO_INCREMENT = %d", initialMemos+1),
			fmt.Sprintf("ALTER TABLE users AUTO_INCREMENT = %d", initialUsers+1),
		)
	}
	for _, s := range statements {
		if _, err := app.db.Exec(s); err != nil {
			return err
		}
	}
	st, err := app.load(app.st.Load())
	if err != nil {
		return err
	}
	// Publish the new state; in-flight readers finish with the old one.
	app.st.Store(st)
	return nil
}

// title is a memo's title: the first line of its content without the '#' characters and spaces at its start and
// the spaces and tabs at its end.
func title(content string) string {
	line, _, _ := strings.Cut(content, "\n")
	return strings.TrimRight(strings.TrimLeft(line, "# "), " \t")
}

// hashPassword is what the users table stores: the SHA-256 of salt + password, in lowercase hex.
func hashPassword(salt, password string) string {
	sum := sha256.Sum256([]byte(salt + password))
	return hex.EncodeToString(sum[:])
}

// isDuplicate reports whether err is an insert refused by a unique key.
func isDuplicate(err error) bool {
	var sqliteErr sqlite3.Error
	var mysqlErr *mysql.MySQLError
	return errors.As(err, &sqliteErr) && sqliteErr.ExtendedCode == sqlite3.ErrConstraintUnique ||
		errors.As(err, &mysqlErr) && mysqlErr.Number == 1062
}

// randomToken is a session id or a CSRF token: 32 random hex digits.
func randomToken() string {
	return randomHex(16)
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// now is the current UTC time, in whole seconds.
func now() string {
	return time.Now().UTC().Format(timeFormat)
}
