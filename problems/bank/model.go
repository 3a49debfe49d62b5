package bank

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/tunecon/tunecon/problems/bank/data"
)

// Reasons of a refused attempt, as the manual names them; "" is a success.
const (
	reasonWrong         = "wrong"
	reasonLocked        = "locked"
	reasonBanned        = "banned"
	reasonLoginRequired = "login-required"
)

// noticeTexts are the manual's fixed notice texts.
var noticeTexts = map[string]string{
	reasonWrong:         "Wrong login or password.",
	reasonLocked:        "This account is locked after too many failed attempts.",
	reasonBanned:        "Too many failed attempts from your address: it is banned.",
	reasonLoginRequired: "Please log in first.",
}

// success is a successful login: exact for the initial data, and for a
// login of the run the server's time lies in [sent, received].
type success struct {
	at             time.Time // exact (initial data); zero for a run login
	sent, received time.Time
	ip             string
}

func (s success) none() bool { return s.at.IsZero() && s.sent.IsZero() }

// initialState is the initial data as the generator says it is, once per
// process.
var initialState = sync.OnceValues(func() (*data.State, error) { return data.Default().Initial() })

// model is the benchmarker's copy of the rules' state: every user's
// failures and last two successes, every address's failures. Users and
// addresses whose last attempt has an unknown outcome (the request failed
// or was cut off) are uncertain: they are never used again, and the final
// report may list them or not.
//
// The model also lends the load's accounts and addresses (see pool): a
// session borrows the account and the address it needs and gives them back
// when it ends, so no two sessions ever hold one at once, whichever virtual
// users play them. The state of an account or an address is global and
// outlives every loan: the next borrower continues from it.
type model struct {
	// cfg and init never change: read them without the lock.
	cfg  data.Config
	init *data.State

	mu          sync.Mutex
	failures    map[int64]int // users touched during the run
	last, prev  map[int64]success
	ipFailures  map[string]int // addresses touched during the run
	unsureUsers map[int64]bool
	unsureIPs   map[string]bool
	free        pool
	lentUsers   map[int64]bool  // accounts borrowed and not yet given back
	lentIPs     map[string]bool // addresses borrowed and not yet given back
	// cookies holds every session cookie a login handed out in this run,
	// the one before POST /initialize included.
	cookies map[string]struct{}
}

// pool holds the accounts and addresses free to borrow, filed by state so
// that a borrower finds what it needs at once. Uncertain ones and banned
// addresses are never filed: they are of no more use.
type pool struct {
	unlocked, locked []int64
	addrs            [data.BanThreshold][]string // by failures since the last success
}

func newModel(cfg data.Config, init *data.State) *model {
	return &model{cfg: cfg, init: init, failures: map[int64]int{}, last: map[int64]success{}, prev: map[int64]success{},
		ipFailures: map[string]int{}, unsureUsers: map[int64]bool{}, unsureIPs: map[string]bool{},
		lentUsers: map[int64]bool{}, lentIPs: map[string]bool{}, cookies: map[string]struct{}{}}
}

// handedOut records a session cookie a login set, and reports whether it
// was handed out before in this run.
func (m *model) handedOut(cookie string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cookies[cookie]; ok {
		return true
	}
	m.cookies[cookie] = struct{}{}
	return false
}

// The *Locked methods read the state; their callers hold m.mu.

func (m *model) userFailuresLocked(id int64) int {
	if n, ok := m.failures[id]; ok {
		return n
	}
	if id >= 1 && id < int64(len(m.init.Users)) {
		return m.init.Users[id].Failures
	}
	return 0
}

func (m *model) ipFailuresLocked(ip string) int {
	if n, ok := m.ipFailures[ip]; ok {
		return n
	}
	return m.init.IPs[ip]
}

func (m *model) lastLocked(id int64) (success, success) {
	if s, ok := m.last[id]; ok {
		return s, m.prev[id]
	}
	u := m.init.Users[id]
	conv := func(s data.Success) success { return success{at: s.At, ip: s.IP} }
	return conv(u.Last), conv(u.Prev)
}

// expect returns the decision the rules make for an attempt by user id (0:
// a login that names no user) from ip with a right or wrong password.
func (m *model) expect(id int64, ip string, right bool) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.ipFailuresLocked(ip) >= data.BanThreshold:
		return reasonBanned
	case id > 0 && m.userFailuresLocked(id) >= data.LockThreshold:
		return reasonLocked
	case id == 0 || !right:
		return reasonWrong
	}
	return ""
}

// record applies an attempt's outcome; for a success it returns the
// success the user's /mypage must show.
func (m *model) record(id int64, ip, reason string, sent, received time.Time) success {
	m.mu.Lock()
	defer m.mu.Unlock()
	if reason != "" {
		m.ipFailures[ip] = m.ipFailuresLocked(ip) + 1
		if id > 0 {
			m.failures[id] = m.userFailuresLocked(id) + 1
		}
		return success{}
	}
	last, _ := m.lastLocked(id)
	now := success{sent: sent, received: received, ip: ip}
	m.failures[id], m.ipFailures[ip] = 0, 0
	m.prev[id], m.last[id] = last, now
	if last.none() {
		return now
	}
	return last
}

// unsure marks a user and an address whose attempt had no known outcome.
func (m *model) unsure(id int64, ip string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id > 0 {
		m.unsureUsers[id] = true
	}
	m.unsureIPs[ip] = true
}

// usable reports whether neither user id nor ip is uncertain (0 and "" are
// never uncertain).
func (m *model) usable(id int64, ip string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.unsureUsers[id] && !m.unsureIPs[ip]
}

// locked reports whether user id is locked.
func (m *model) locked(id int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.userFailuresLocked(id) >= data.LockThreshold
}

// ipCount returns ip's failures since its last success.
func (m *model) ipCount(ip string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ipFailuresLocked(ip)
}

// expectedReport is what /report must say: the banned addresses and the
// locked users' logins, each sorted, plus the entries that may go either way
// (left out of the lists).
type expectedReport struct {
	banned, locked        []string
	maybeIPs, maybeLogins map[string]bool
}

// report returns what /report must say now.
func (m *model) report() expectedReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	bannedSet := map[string]bool{}
	for _, ip := range m.init.Banned {
		bannedSet[ip] = true
	}
	for ip, n := range m.ipFailures {
		bannedSet[ip] = n >= data.BanThreshold
	}
	lockedSet := map[string]bool{}
	for _, l := range m.init.Locked {
		lockedSet[l] = true
	}
	for id, n := range m.failures {
		lockedSet[data.Login(id)] = n >= data.LockThreshold
	}
	maybeIPs, maybeLogins := map[string]bool{}, map[string]bool{}
	var banned, locked []string
	for ip := range m.unsureIPs {
		maybeIPs[ip] = true
	}
	for id := range m.unsureUsers {
		maybeLogins[data.Login(id)] = true
	}
	for ip, b := range bannedSet {
		if b && !maybeIPs[ip] {
			banned = append(banned, ip)
		}
	}
	for l, b := range lockedSet {
		if b && !maybeLogins[l] {
			locked = append(locked, l)
		}
	}
	slices.Sort(banned)
	slices.Sort(locked)
	return expectedReport{banned: banned, locked: locked, maybeIPs: maybeIPs, maybeLogins: maybeLogins}
}

// userFailures returns user id's failures since its last success.
func (m *model) userFailures(id int64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.userFailuresLocked(id)
}

// stock puts accounts 1 to accounts and the addresses addrs in the pool, for
// the load's sessions to borrow; the pre-check uses none of them.
func (m *model) stock(accounts int64, addrs []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id := int64(1); id <= accounts; id++ {
		m.fileUserLocked(id)
	}
	for _, ip := range addrs {
		m.fileIPLocked(ip)
	}
}

// fileUserLocked files a free account by its state.
func (m *model) fileUserLocked(id int64) {
	switch {
	case m.unsureUsers[id]:
	case m.userFailuresLocked(id) >= data.LockThreshold:
		m.free.locked = append(m.free.locked, id)
	default:
		m.free.unlocked = append(m.free.unlocked, id)
	}
}

// fileIPLocked files a free address by its failures.
func (m *model) fileIPLocked(ip string) {
	if n := m.ipFailuresLocked(ip); n < data.BanThreshold && !m.unsureIPs[ip] {
		m.free.addrs[n] = append(m.free.addrs[n], ip)
	}
}

// takeAt removes element k of *list, in constant time (the order of a pool's
// list does not matter).
func takeAt[T any](list *[]T, k int) T {
	l := *list
	x := l[k]
	l[k] = l[len(l)-1]
	*list = l[:len(l)-1]
	return x
}

// borrowAccount lends a random free account, locked or unlocked as asked; 0
// when there is none.
func (m *model) borrowAccount(rnd *rand.Rand, locked bool) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := &m.free.unlocked
	if locked {
		list = &m.free.locked
	}
	if len(*list) == 0 {
		return 0
	}
	id := takeAt(list, rnd.IntN(len(*list)))
	m.lentUsers[id] = true
	return id
}

// borrowAddr lends a random free address with room for n more failures
// before a ban, provided keep others stay free; "" when there is none. The
// buckets that fit are the first ones, so the walk below finds the k-th.
func (m *model) borrowAddr(rnd *rand.Rand, n, keep int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	total, fit := 0, 0
	for f, list := range m.free.addrs {
		total += len(list)
		if f+n < data.BanThreshold {
			fit += len(list)
		}
	}
	if fit == 0 || total <= keep {
		return ""
	}
	k := rnd.IntN(fit)
	for f := range m.free.addrs {
		if k < len(m.free.addrs[f]) {
			ip := takeAt(&m.free.addrs[f], k)
			m.lentIPs[ip] = true
			return ip
		}
		k -= len(m.free.addrs[f])
	}
	panic("bank: borrowAddr counted addresses it cannot find")
}

// giveBack ends a loan: the account id (0: none) and the address ip ("":
// none) go back to the pool, filed by their state now; uncertain ones and
// banned addresses stay out for good. Giving back what is not lent is a bug
// of the benchmarker's, and panics.
func (m *model) giveBack(id int64, ip string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id != 0 {
		if !m.lentUsers[id] {
			panic(fmt.Sprintf("bank: account %d given back but not lent", id))
		}
		delete(m.lentUsers, id)
		m.fileUserLocked(id)
	}
	if ip != "" {
		if !m.lentIPs[ip] {
			panic(fmt.Sprintf("bank: address %s given back but not lent", ip))
		}
		delete(m.lentIPs, ip)
		m.fileIPLocked(ip)
	}
}

// poolSize counts the pool's free accounts, unlocked and locked, and free
// addresses.
func (m *model) poolSize() (unlocked, locked, addrs int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, list := range m.free.addrs {
		addrs += len(list)
	}
	return len(m.free.unlocked), len(m.free.locked), addrs
}
