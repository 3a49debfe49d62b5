package memo

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/yuin/goldmark"

	"github.com/tunecon/tunecon/problems/memo/data"
)

// initial is what the benchmarker knows of the initial data, computed once
// from the generator (never read from the app).
type initial struct {
	cfg    data.Config
	memos  []data.Meta // memos[i] is memo i+1
	public []int64     // the public memos' ids, ascending
	byUser [][]int64   // user id → the user's memo ids, ascending
	names  []string    // user id → name
	marks  *marks      // what the privacy scan knows the private memos by
}

var loadInitial = sync.OnceValue(func() *initial { return newInitial(data.Default()) })

func newInitial(cfg data.Config) *initial {
	in := &initial{cfg: cfg, memos: make([]data.Meta, cfg.Memos), byUser: make([][]int64, cfg.Users+1),
		names: make([]string, cfg.Users+1)}
	for id := int64(1); id <= int64(cfg.Users); id++ {
		in.names[id] = cfg.User(id).Name
	}
	for i := range in.memos {
		m := cfg.MemoMeta(int64(i + 1))
		in.memos[i] = m
		if !m.Private {
			in.public = append(in.public, m.ID)
		}
		in.byUser[m.UserID] = append(in.byUser[m.UserID], m.ID)
	}
	in.marks = initialMarks(in)
	return in
}

func (in *initial) lastMemo() int64 { return int64(len(in.memos)) }
func (in *initial) lastUser() int64 { return int64(in.cfg.Users) }

// memo is what the model knows of one memo: an initial one (sent zero) or
// one posted during the run.
type memo struct {
	id      int64 // 0 until its 303 came
	user    int64
	private bool
	title   string
	content string // a run memo's; an initial one's comes from the generator
	created string // an initial memo's time as pages show it; "" for a run memo
	// sent and received are when its POST was sent and its 303 came: a run
	// memo's time lies between them on the app's clock.
	sent, received time.Time
	// failed: no valid 303 came, so it may or may not be stored.
	failed bool
}

// done: the memo has its id (an initial memo, or a run memo whose 303 came).
func (m *memo) done() bool { return m.id > 0 }

// certain: the memo must show where it belongs on a page requested at t,
// its 303 having come at least Freshness before.
func (m *memo) certain(t time.Time) bool {
	return m.done() && (m.sent.IsZero() || !m.received.Add(Freshness).After(t))
}

// runUserBase is the model's id of the first user signed up during the run.
const runUserBase = 1 << 40

// user is what the model knows of one user.
type user struct {
	id       int64
	name     string
	password string
	memos    []*memo // the user's run memos, in the order posted
	// ended is the CSRF token of the user's last session signed out in the
	// load, "" if none: written and read by the session the user is lent to.
	ended string
	// unsure: a post of the user failed and /mypage has not shown it since;
	// the user is not lent again while it is.
	unsure bool
}

// model is the benchmarker's picture of the app's data: the initial data
// plus everything written during the run, with the times of each write, so
// that a check can tell what a page must show, may show, and must not show.
// Its lock never leaves this file.
type model struct {
	in *initial

	mu     sync.Mutex
	run    []*memo          // run memos stored, by id ascending (a memo here is never changed again)
	byID   map[int64]*memo  // run memos by id
	unsure []*memo          // run memos in flight or failed
	users  map[int64]*user  // every user lent or signed up, by id
	byName map[string]*user // users signed up during the run
	free   []int64          // users no session holds
	posts  int64            // memos posted (nextPost)
	signup int64            // users signed up, for unique names
	// ahead bounds how far the app's clock is ahead of the benchmarker's.
	ahead func() (lo, hi time.Duration)
	// md renders memos as the manual says: CommonMark.
	md goldmark.Markdown
	// runMarks are the marks of the run's private memos, for the privacy
	// scan; they have a lock of their own.
	runMarks *runMarks
}

func newModel(in *initial) *model {
	m := &model{in: in, byID: map[int64]*memo{}, users: map[int64]*user{}, byName: map[string]*user{},
		ahead: func() (lo, hi time.Duration) { return 0, 0 }, md: goldmark.New(), runMarks: newRunMarks()}
	for id := int64(1); id <= in.lastUser(); id++ {
		m.free = append(m.free, id)
	}
	return m
}

// initialMemo returns initial memo id as the model keeps memos.
func (m *model) initialMemo(id int64) *memo {
	d := m.in.memos[id-1]
	return &memo{id: id, user: d.UserID, private: d.Private, title: d.Title, created: d.CreatedAt.Format(data.TimeFormat)}
}

// lookup returns memo id, nil if the model does not know it (it may still
// exist if a post is unsure).
func (m *model) lookup(id int64) *memo {
	if id >= 1 && id <= m.in.lastMemo() {
		return m.initialMemo(id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.byID[id]; p != nil {
		c := *p
		return &c
	}
	return nil
}

// privateAuthor returns the name of memo id's author and whether it is
// private, as far as the model knows it (not private when it does not).
func (m *model) privateAuthor(id int64) (string, bool) {
	if id >= 1 && id <= m.in.lastMemo() {
		d := &m.in.memos[id-1]
		return m.in.names[d.UserID], d.Private
	}
	m.mu.Lock()
	p := m.byID[id]
	private, user := p != nil && p.private, int64(0)
	if p != nil {
		user = p.user
	}
	m.mu.Unlock()
	if !private {
		return "", false
	}
	return m.name(user), true
}

// name returns user id's name.
func (m *model) name(id int64) string {
	if id >= 1 && id <= m.in.lastUser() {
		return m.in.names[id]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := m.users[id]; u != nil {
		return u.name
	}
	return ""
}

// user returns user id if a session holds it or it signed up in the run,
// else nil. Its name and password never change: read them without a lock.
func (m *model) user(id int64) *user {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.users[id]
}

// borrow lends a free user to one session, nil if none is free; the
// session gives it back with giveBack.
func (m *model) borrow(rnd *rand.Rand) *user {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.free) == 0 {
		return nil
	}
	i := rnd.IntN(len(m.free))
	id := m.free[i]
	m.free[i] = m.free[len(m.free)-1]
	m.free = m.free[:len(m.free)-1]
	u := m.users[id]
	if u == nil {
		d := m.in.cfg.User(id)
		u = &user{id: id, name: d.Name, password: d.Password}
		m.users[id] = u
	}
	return u
}

// giveBack returns a user to the free ones unless it is unsure.
func (m *model) giveBack(u *user) {
	if u == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !u.unsure {
		m.free = append(m.free, u.id)
	}
}

// newName returns a name no user has: run users are "new_N".
func (m *model) newName() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.signup++
	return "new_" + itoa(m.signup)
}

// signedUp records a user signed up during the run. The app's user ids
// never show, so the model numbers run users itself, above every initial id.
func (m *model) signedUp(name, password string) *user {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := &user{id: runUserBase + int64(len(m.byName)), name: name, password: password}
	m.users[u.id], m.byName[name] = u, u
	return u
}

// nextPost numbers the memos the run writes, from 1: the number makes each
// title unique and picks the body.
func (m *model) nextPost() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.posts++
	return m.posts
}

// begin records a memo about to be posted by u, and tells the privacy scan.
func (m *model) begin(u *user, private bool, title, content string, sent time.Time) *memo {
	m.runMarks.posting(u.name, title, content, private, m.in.marks)
	p := &memo{user: u.id, private: private, title: title, content: content, sent: sent}
	m.mu.Lock()
	defer m.mu.Unlock()
	u.memos = append(u.memos, p)
	m.unsure = append(m.unsure, p)
	return p
}

// stored records a memo's 303 with its id; false if the id breaks the
// manual's rule (given before, or not above every id acknowledged before the
// post was sent), and then the memo stays unsure.
func (m *model) stored(p *memo, id int64, received time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.accept(p, id, received) {
		p.failed = true
		return false
	}
	return true
}

// accept records p as stored under id, acknowledged at received, if the id
// keeps the manual's rule. The caller holds m.mu.
func (m *model) accept(p *memo, id int64, received time.Time) bool {
	if id <= m.in.lastMemo() || m.byID[id] != nil {
		return false
	}
	i, _ := slices.BinarySearchFunc(m.run, id, func(q *memo, id int64) int { return cmp.Compare(q.id, id) })
	for _, q := range m.run[i:] {
		if q.received.Before(p.sent) {
			return false
		}
	}
	p.id, p.received, p.failed = id, received, false
	m.unsure = slices.DeleteFunc(m.unsure, func(q *memo) bool { return q == p })
	// Views share run's backing array up to their length: the newest id is
	// appended past it; one that arrives out of order gets a new array.
	if i == len(m.run) {
		m.run = append(m.run, p)
	} else {
		m.run = slices.Concat(m.run[:i], []*memo{p}, m.run[i:])
	}
	m.byID[id] = p
	return true
}

// failed records that a memo's answer never came or was wrong: it may or may
// not be stored, and its author is not lent again until settle finds it.
func (m *model) failed(u *user, p *memo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.failed, u.unsure = true, true
}

// settle reads a /mypage of u answered at received for u's memos whose post
// failed: one listed there (by its title, which no other memo has) was
// stored after all, and is acknowledged from received on, like any other.
// One not listed stays unsure, since the app may still be writing it. It
// returns the id of a memo listed under an id the rule forbids, 0 if none.
func (m *model) settle(u *user, entries []entry, received time.Time) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !u.unsure {
		return 0
	}
	u.unsure = false
	for _, p := range u.memos {
		if !p.failed {
			continue
		}
		i := slices.IndexFunc(entries, func(e entry) bool { return e.title == p.title })
		if i >= 0 && !m.accept(p, entries[i].id, received) {
			u.unsure = true
			return entries[i].id
		}
		u.unsure = u.unsure || p.failed
	}
	return 0
}

// view is a snapshot of the model for checking one page requested at sent
// and answered at received.
type view struct {
	m              *model
	sent, received time.Time
	run            []*memo // run memos done, by id ascending; never changed once there
	unsure         []memo  // in flight or failed, sent before received
}

func (m *model) view(sent, received time.Time) *view {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := &view{m: m, sent: sent, received: received, run: m.run[:len(m.run):len(m.run)]}
	for _, p := range m.unsure {
		if p.sent.Before(received) {
			v.unsure = append(v.unsure, *p)
		}
	}
	return v
}

// userMemos returns a snapshot of u's run memos.
func (m *model) userMemos(u *user) []memo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]memo, len(u.memos))
	for i, p := range u.memos {
		out[i] = *p
	}
	return out
}

// appTimes bounds on the app's clock a time stamped between sent and received.
func (m *model) appTimes(sent, received time.Time) (time.Time, time.Time) {
	lo, hi := m.ahead()
	return sent.Add(lo).Truncate(time.Second), received.Add(hi)
}

// sampleUsers returns up to n users who wrote during the run, at random.
func (m *model) sampleUsers(rnd *rand.Rand, n int) []*user {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*user
	for _, u := range m.users {
		if len(u.memos) > 0 {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *user) int { return cmp.Compare(a.id, b.id) })
	rnd.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:min(n, len(out))]
}

// privateMemo returns a private memo not by exclude, at random from the
// initial data and the run's memos.
func (m *model) privateMemo(rnd *rand.Rand, exclude int64) int64 {
	for {
		id := 1 + rnd.Int64N(m.in.lastMemo())
		if d := m.in.memos[id-1]; d.Private && d.UserID != exclude {
			if rnd.IntN(4) == 0 {
				if p := m.runPrivate(rnd, exclude); p > 0 {
					return p
				}
			}
			return id
		}
	}
}

// privateOf returns a private memo of user at random, an initial one or one
// of the run's with its id; 0 if the user has none.
func (m *model) privateOf(rnd *rand.Rand, user int64) int64 {
	var ids []int64
	if user >= 1 && user <= m.in.lastUser() {
		for _, id := range m.in.byUser[user] {
			if m.in.memos[id-1].Private {
				ids = append(ids, id)
			}
		}
	}
	m.mu.Lock()
	if u := m.users[user]; u != nil {
		for _, p := range u.memos {
			if p.private && p.done() {
				ids = append(ids, p.id)
			}
		}
	}
	m.mu.Unlock()
	if len(ids) == 0 {
		return 0
	}
	return ids[rnd.IntN(len(ids))]
}

// runPrivate returns a private run memo not by exclude, 0 if none.
func (m *model) runPrivate(rnd *rand.Rand, exclude int64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.run) == 0 {
		return 0
	}
	for range 8 {
		p := m.run[rnd.IntN(len(m.run))]
		if p.private && p.user != exclude {
			return p.id
		}
	}
	return 0
}
