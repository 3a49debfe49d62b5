package bank

import (
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
}

func newModel(cfg data.Config, init *data.State) *model {
	return &model{cfg: cfg, init: init, failures: map[int64]int{}, last: map[int64]success{}, prev: map[int64]success{},
		ipFailures: map[string]int{}, unsureUsers: map[int64]bool{}, unsureIPs: map[string]bool{}}
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
