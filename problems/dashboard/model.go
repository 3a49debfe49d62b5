package dashboard

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/problems/dashboard/data"
)

// user is the benchmarker's model of one user. A session borrows a user for
// itself alone, so its subscriptions are exactly what the app has while the
// session runs.
type user struct {
	email, password, grade string
	subs                   data.Subscriptions
	// unsure marks a user whose last change has an unknown outcome (its answer
	// never came or was wrong): it is never used again.
	unsure bool
	// lastData is when the request of u's last checked /data was sent (zero:
	// none in this run).
	lastData time.Time
	// session is the id of u's current or last session ("" before its first
	// sign-in in this run).
	session string
	// sending holds the parameters of the refused change u is sending: its
	// answer may show them back, as a form shows what was typed.
	sending data.Params
	// oldQueries holds the surname and givenname queries u had earlier in the
	// run: the names they found were u's own, and an answer that still shows
	// them is wrong, not a leak.
	oldQueries []string
}

// model holds the users sessions may borrow.
type model struct {
	cfg  data.Config
	mu   sync.Mutex
	free []*user
	made int // users signed up during the run
	seed uint64

	// owners maps each parameter that names a user's data (a postal code, a
	// weather location, a token) to the users who subscribed with it in this
	// run: the leak scan looks up what it finds there.
	omu    sync.RWMutex
	owners map[string][]*user
	// issued holds every session id the app gave in this run.
	imu    sync.Mutex
	issued map[string]struct{}
	// ad holds the postal addresses relayed in the run.
	ad addresses
	// names holds the names relayed in the run.
	names relayedNames
	// last is the last id issued ("" before the first): the shape a made-up
	// one takes.
	last string
}

func newModel(c data.Config) *model {
	m := &model{cfg: c, free: make([]*user, 0, c.Users), seed: c.Seed, owners: make(map[string][]*user, 2*c.Users),
		issued: map[string]struct{}{}}
	for id := int64(1); id <= int64(c.Users); id++ {
		u := c.User(id)
		w := &user{email: u.Email, password: u.Password, grade: u.Grade, subs: u.Subs}
		m.free = append(m.free, w)
		for _, p := range u.Subs {
			m.own(w, p)
		}
	}
	return m
}

// own records that u subscribes with p.
func (m *model) own(u *user, p data.Params) {
	m.omu.Lock()
	defer m.omu.Unlock()
	for _, k := range []string{p.Code, p.Location, p.Token} {
		if k != "" && !slices.Contains(m.owners[k], u) {
			m.owners[k] = append(m.owners[k], u)
		}
	}
}

// foreign reports whether k names the data of a user other than viewer (nil:
// of any user), one viewer does not subscribe with now.
func (m *model) foreign(k string, viewer *user) bool {
	m.omu.RLock()
	defer m.omu.RUnlock()
	owners := m.owners[k]
	if len(owners) == 0 || viewer != nil && viewer.uses(k) {
		return false
	}
	return slices.ContainsFunc(owners, func(o *user) bool { return o != viewer })
}

// uses reports whether one of u's subscriptions has the parameter k.
func (u *user) uses(k string) bool {
	for _, p := range u.subs {
		if p.Code == k || p.Location == k || p.Token == k {
			return true
		}
	}
	s := u.sending
	return k != "" && (strings.EqualFold(s.Code, k) || strings.EqualFold(s.Location, k) || strings.EqualFold(s.Token, k))
}

// issue records a session id the app gave, and reports whether it is new.
func (m *model) issue(id string) bool {
	m.imu.Lock()
	defer m.imu.Unlock()
	if _, ok := m.issued[id]; ok {
		return false
	}
	m.issued[id] = struct{}{}
	m.last = id
	return true
}

// lastIssued is the last session id the app gave ("" before the first).
func (m *model) lastIssued() string {
	m.imu.Lock()
	defer m.imu.Unlock()
	return m.last
}

// other is a user of the initial data other than u, drawn from rnd.
func (m *model) other(rnd *rand.Rand, u *user) data.User {
	for {
		o := m.cfg.User(1 + rnd.Int64N(int64(m.cfg.Users)))
		if o.Email != u.email {
			return o
		}
	}
}

// borrow takes a random free user of the grade (any grade when grade is ""), or
// nil when there is none.
func (m *model) borrow(rnd *rand.Rand, grade string) *user {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.free)
	if n == 0 {
		return nil
	}
	i, tries := rnd.IntN(n), 0
	for grade != "" && m.free[i].grade != grade {
		// A few random picks find one at once; past them, a scan onwards from
		// the last pick.
		if tries++; tries < 64 {
			i = rnd.IntN(n)
		} else if i = (i + 1) % n; tries > 64+n {
			return nil
		}
	}
	u := m.free[i]
	m.free[i] = m.free[n-1]
	m.free = m.free[:n-1]
	return u
}

// giveBack returns a user to the free ones, unless it is unsure.
func (m *model) giveBack(u *user) {
	if u.unsure {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.free = append(m.free, u)
}

// newUser makes a user to sign up, with a new email and no subscriptions.
func (m *model) newUser(grade string) *user {
	m.mu.Lock()
	m.made++
	n := m.made
	m.mu.Unlock()
	rnd := m.runStream(uint64(n))
	return &user{email: "new" + strconv.Itoa(n) + "@dashboard.test", password: data.Password(rnd.IntN), grade: grade,
		subs: data.Subscriptions{}}
}

// runStream is a random source of the run's own draws.
func (m *model) runStream(n uint64) *rand.Rand { return rand.New(rand.NewPCG(m.seed, 0x72756e<<32|n)) }

// change picks a change of u's subscriptions: a service it does not subscribe
// to yet, or new parameters for one it does, or (one time in four) the removal
// of one (p nil).
func (m *model) change(rnd *rand.Rand, u *user) (service string, p *data.Params) {
	allowed := data.Allowed(u.grade)
	var unsubscribed, subscribed []string
	for _, s := range allowed {
		if _, ok := u.subs[s]; ok {
			subscribed = append(subscribed, s)
		} else {
			unsubscribed = append(unsubscribed, s)
		}
	}
	if len(subscribed) == 0 || len(unsubscribed) > 0 && rnd.IntN(2) == 0 {
		service = unsubscribed[rnd.IntN(len(unsubscribed))]
	} else {
		service = subscribed[rnd.IntN(len(subscribed))]
		if rnd.IntN(4) == 0 {
			return service, nil
		}
	}
	np := data.NewParams(rnd.IntN, service)
	return service, &np
}

// returning takes up to n free users who read /data during the run, those
// subscribed to a timed service (weather, security, attacked) first, the
// earliest readers first among equals.
func (m *model) returning(n int) []*user {
	m.mu.Lock()
	defer m.mu.Unlock()
	var seen []int
	for i, u := range m.free {
		if !u.lastData.IsZero() {
			seen = append(seen, i)
		}
	}
	timed := func(u *user) int {
		for _, s := range []string{data.Weather, data.Security, data.Attacked} {
			if _, ok := u.subs[s]; ok {
				return 0
			}
		}
		return 1
	}
	slices.SortFunc(seen, func(i, j int) int {
		a, b := m.free[i], m.free[j]
		if c := timed(a) - timed(b); c != 0 {
			return c
		}
		return a.lastData.Compare(b.lastData)
	})
	seen = seen[:min(n, len(seen))]
	out := make([]*user, 0, len(seen))
	for _, i := range seen {
		out = append(out, m.free[i])
	}
	m.free = slices.DeleteFunc(m.free, func(u *user) bool { return slices.Contains(out, u) })
	return out
}

// subscribed lists u's services in the manual's order.
func (u *user) subscribed() []string {
	var out []string
	for _, s := range data.Services {
		if _, ok := u.subs[s]; ok {
			out = append(out, s)
		}
	}
	return slices.Clip(out)
}
