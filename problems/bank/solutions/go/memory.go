package main

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// user is a row of the users table. The table never changes while the app runs, so it is read once.
type user struct {
	id    int64
	login string
	salt  string
	hash  [32]byte // password_hash, decoded
	// hashOK is false when password_hash is not 64 lowercase hex digits: the reference compares the lowercase
	// hex of the SHA-256 with it, which then never matches.
	hashOK bool
}

// check reports whether password is the user's: hex(SHA-256(password + ":" + salt)) == password_hash.
func (u *user) check(password string) bool {
	var buf [128]byte
	b := append(buf[:0], password...)
	b = append(b, ':')
	b = append(b, u.salt...)
	return u.hashOK && sha256.Sum256(b) == u.hash
}

// userState is what the rules need of a user: its failures since its last successful login, and that login.
type userState struct {
	failures int32
	lastID   int64 // the log id of the last successful login; 0 when there is none
	lastAt   int64 // its time, in Unix seconds
	lastIP   string
}

// state is the login log boiled down to what the rules and /report need. It changes under App.mu only.
type state struct {
	users []userState // by index in App.users

	// Every address seen, interned: ipIdx maps it to its index in ipName and ipFail. ipFail is its failures
	// since the last successful login from it.
	ipIdx  map[string]int32
	ipName []string
	ipFail []int32

	banned []string // addresses with ipFail >= banThreshold, sorted
	locked []string // logins of users with failures >= lockThreshold, sorted

	// The time of the last attempt, formatted, so that attempts in the same second format it once.
	nowSec int64
	nowStr string
}

// snapshot is the state of the initial log (ids 1 to initialLogRows), which POST /initialize restores.
type snapshot struct {
	users          []userState
	ipFail         []int32 // of the first len(ipFail) addresses of state.ipName
	banned, locked []string
}

func (st *state) addIP(ip string) int32 {
	i := int32(len(st.ipName))
	st.ipIdx[ip] = i
	st.ipName = append(st.ipName, ip)
	st.ipFail = append(st.ipFail, 0)
	return i
}

// App is the tuned app.
type App struct {
	db      *sql.DB
	isMySQL bool
	static  map[string]*staticFile
	insert  *sql.Stmt // INSERT INTO login_log

	users   []user           // read once at start, never changed
	byLogin map[string]int32 // login -> index in users

	// mu serialises the attempts (decision, INSERT, update of st) and POST /initialize: attempts are decided
	// one at a time, in the order of their log ids, and SQLite never makes a writer wait.
	mu      sync.Mutex
	st      state
	initial snapshot

	report atomic.Pointer[[]byte] // /report's body; nil when banned or locked changed since it was made

	sessions sessionStore
}

// Attempts.

// Notice reasons, as kept in sessions; noticeNone is no notice.
const (
	noticeNone = iota
	noticeWrong
	noticeLocked
	noticeBanned
	noticeLoginRequired
)

var noticeReasons = [...]string{"", "wrong", "locked", "banned", "login-required"}

var noticeTexts = [...]string{
	"",
	"Wrong login or password.",
	"This account is locked after too many failed attempts.",
	"Too many failed attempts from your address: it is banned.",
	"Please log in first.",
}

// attempt decides a login attempt, writes it to the log, updates the memory, ends the session oldToken (when
// hasOld) and starts a new one, whose token it returns. ok reports a successful login.
func (app *App) attempt(login, password, ip, oldToken string, hasOld bool) (token string, ok bool, err error) {
	// The user table never changes and the hash depends on nothing else: look up and hash outside the lock.
	ui, found := app.byLogin[login]
	if !found {
		ui = -1
	}
	passwordOK := found && app.users[ui].check(password)
	token = newToken()

	app.mu.Lock()
	defer app.mu.Unlock()
	st := &app.st

	// The checks, in order: the address, the user, the password.
	ipi, known := st.ipIdx[ip]
	reason := noticeNone
	switch {
	case known && st.ipFail[ipi] >= banThreshold:
		reason = noticeBanned
	case found && st.users[ui].failures >= lockThreshold:
		reason = noticeLocked
	case !found || !passwordOK:
		reason = noticeWrong
	}

	// Every attempt goes into the log, before anything else changes.
	now := time.Now().Unix()
	if now != st.nowSec || st.nowStr == "" {
		st.nowSec, st.nowStr = now, time.Unix(now, 0).UTC().Format(timeFormat)
	}
	var userID any
	if found {
		userID = app.users[ui].id
	}
	succeeded := 0
	if reason == noticeNone {
		succeeded = 1
	}
	res, err := app.insert.Exec(st.nowStr, userID, login, ip, succeeded)
	if err != nil {
		return "", false, err
	}
	logID, idErr := res.LastInsertId() // the row is in: the memory follows it whatever happens next

	if !known {
		ipi = st.addIP(strings.Clone(ip))
	}
	sess := &session{user: -1, notice: uint8(reason), created: now}
	changed := false
	if reason != noticeNone {
		st.ipFail[ipi]++
		if st.ipFail[ipi] == banThreshold {
			st.banned = insertSorted(st.banned, st.ipName[ipi])
			changed = true
		}
		if found {
			u := &st.users[ui]
			u.failures++
			if u.failures == lockThreshold {
				st.locked = insertSorted(st.locked, app.users[ui].login)
				changed = true
			}
		}
	} else {
		// A success: the session remembers the user's previous successful login (this one if it is the first),
		// then this login becomes the last one, and both counts go back to zero.
		u := &st.users[ui]
		sess.user, sess.logID = ui, logID
		if u.lastID != 0 {
			sess.lastAt, sess.lastIP = u.lastAt, u.lastIP
		} else {
			sess.lastAt, sess.lastIP = now, st.ipName[ipi]
		}
		*u = userState{lastID: logID, lastAt: now, lastIP: st.ipName[ipi]}
		st.ipFail[ipi] = 0
	}
	if changed {
		app.report.Store(nil)
	}
	if idErr != nil {
		return "", false, idErr
	}
	app.sessions.replace(oldToken, hasOld, token, sess)
	return token, reason == noticeNone, nil
}

// insertSorted inserts s into the sorted list, unless it is there already.
func insertSorted(list []string, s string) []string {
	i, found := slices.BinarySearch(list, s)
	if found {
		return list
	}
	return slices.Insert(list, i, s)
}

// reportBody is /report's JSON, made again only after the lists changed.
func (app *App) reportBody() ([]byte, error) {
	if p := app.report.Load(); p != nil {
		return *p, nil
	}
	app.mu.Lock()
	defer app.mu.Unlock()
	if p := app.report.Load(); p != nil {
		return *p, nil
	}
	body, err := json.Marshal(struct {
		BannedIPs   []string `json:"banned_ips"`
		LockedUsers []string `json:"locked_users"`
	}{app.st.banned, app.st.locked})
	if err != nil {
		return nil, err
	}
	app.report.Store(&body)
	return body, nil
}

// initialize restores the initial data: the database (every row added to the log, every session) and the
// memory (from the snapshot of the initial log).
func (app *App) initialize() error {
	app.mu.Lock()
	defer app.mu.Unlock()
	statements := []string{
		fmt.Sprintf("DELETE FROM login_log WHERE id > %d", initialLogRows),
		"DELETE FROM sessions",
	}
	if app.isMySQL {
		statements = append(statements, fmt.Sprintf("ALTER TABLE login_log AUTO_INCREMENT = %d", initialLogRows+1))
	}
	for _, s := range statements {
		if _, err := app.db.Exec(s); err != nil {
			return err
		}
	}
	st, snap := &app.st, &app.initial
	copy(st.users, snap.users)
	n := len(snap.ipFail)
	for _, ip := range st.ipName[n:] {
		delete(st.ipIdx, ip)
	}
	clear(st.ipName[n:]) // let the strings go
	st.ipName = st.ipName[:n]
	st.ipFail = append(st.ipFail[:0], snap.ipFail...)
	st.banned = slices.Clone(snap.banned)
	st.locked = slices.Clone(snap.locked)
	app.report.Store(nil)
	app.sessions.clear()
	return nil
}

// Loading.

// load reads the users, the sessions saved by the last clean shutdown and the whole login log into memory, and
// takes the snapshot of the initial state on the way.
func (app *App) load() error {
	if err := app.loadUsers(); err != nil {
		return err
	}
	byID := make(map[int64]int32, len(app.users)) // users.id -> index in app.users
	for i := range app.users {
		byID[app.users[i].id] = int32(i)
	}
	pending, err := app.loadSessions(byID)
	if err != nil {
		return err
	}
	if err := app.scanLog(byID, pending); err != nil {
		return err
	}
	// The sessions are in memory now. Take them out of the table, so that a crash (which cannot save them)
	// never brings back sessions ended since.
	_, err = app.db.Exec("DELETE FROM sessions")
	return err
}

func (app *App) loadUsers() error {
	rows, err := app.db.Query("SELECT id, login, password_hash, salt FROM users ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	app.byLogin = make(map[string]int32, 1<<18)
	for rows.Next() {
		var u user
		var hash string
		if err := rows.Scan(&u.id, &u.login, &hash, &u.salt); err != nil {
			return err
		}
		if b, err := hex.DecodeString(hash); err == nil && len(b) == 32 && hex.EncodeToString(b) == hash {
			copy(u.hash[:], b)
			u.hashOK = true
		}
		app.byLogin[u.login] = int32(len(app.users))
		app.users = append(app.users, u)
	}
	return rows.Err()
}

// loadSessions reads the sessions table. Anonymous sessions go straight into memory; the logged-in ones are
// returned, sorted by login_log_id, for scanLog to find the login their /mypage shows.
func (app *App) loadSessions(byID map[int64]int32) ([]*pendingSession, error) {
	app.sessions.m = make(map[string]*session)
	query := "SELECT id, user_id, login_log_id, notice, CAST(created_at AS TEXT) FROM sessions"
	if app.isMySQL {
		query = "SELECT id, user_id, login_log_id, notice, created_at FROM sessions"
	}
	rows, err := app.db.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var pending []*pendingSession
	for rows.Next() {
		var token string
		var userID, logID sql.NullInt64
		var notice sql.NullString
		var created unixTime
		if err := rows.Scan(&token, &userID, &logID, &notice, &created); err != nil {
			return nil, err
		}
		s := &session{user: -1, logID: logID.Int64, created: int64(created)}
		if notice.Valid {
			s.notice = uint8(slices.Index(noticeReasons[:], notice.String))
			if s.notice == 255 { // not a reason this app writes: show nothing rather than guess
				s.notice = noticeNone
			}
		}
		if !userID.Valid {
			app.sessions.m[token] = s
			continue
		}
		ui, ok := byID[userID.Int64]
		if !ok || !logID.Valid {
			continue // the reference could not show its /mypage either
		}
		s.user = ui
		pending = append(pending, &pendingSession{token: token, s: s})
	}
	slices.SortFunc(pending, func(a, b *pendingSession) int { return cmp.Compare(a.s.logID, b.s.logID) })
	return pending, rows.Err()
}

type pendingSession struct {
	token string
	s     *session
}

// scanLog replays the login log into app.st, in id order, and takes the snapshot after the initial rows.
// Along the way it finds, for each logged-in session in pending, the user's last successful login before the
// one that logged the session in (or that one if there is none): what its /mypage shows.
func (app *App) scanLog(byID map[int64]int32, pending []*pendingSession) error {
	st := &app.st
	st.users = make([]userState, len(app.users))
	st.ipIdx = make(map[string]int32, 1<<14)

	query := "SELECT id, CAST(created_at AS TEXT), user_id, ip, succeeded FROM login_log ORDER BY id"
	if app.isMySQL {
		query = "SELECT id, created_at, user_id, ip, succeeded FROM login_log ORDER BY id"
	}
	rows, err := app.db.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	snapped := false
	p := 0
	// resolve settles the pending sessions logged in by rows before id (whose row is missing) or by id itself.
	resolve := func(id, created int64, ipi int32) {
		for ; p < len(pending) && pending[p].s.logID <= id; p++ {
			s, u := pending[p].s, &st.users[pending[p].s.user]
			switch {
			case u.lastID != 0:
				s.lastAt, s.lastIP = u.lastAt, u.lastIP
			case s.logID == id && ipi >= 0:
				s.lastAt, s.lastIP = created, st.ipName[ipi]
			default:
				continue // no such login: the reference could not show its /mypage
			}
			app.sessions.m[pending[p].token] = s
		}
	}
	var (
		id, succeeded int64
		created       unixTime
		userID        sql.NullInt64
		ip            sql.RawBytes
		n             int
	)
	for rows.Next() {
		if err := rows.Scan(&id, &created, &userID, &ip, &succeeded); err != nil {
			return err
		}
		n++
		if id > initialLogRows && !snapped {
			app.takeSnapshot()
			snapped = true
		}
		ipi, ok := st.ipIdx[string(ip)]
		if !ok {
			ipi = st.addIP(string(ip))
		}
		resolve(id, int64(created), ipi)
		ui := int32(-1)
		if userID.Valid {
			if i, ok := byID[userID.Int64]; ok {
				ui = i
			}
		}
		if succeeded != 0 {
			st.ipFail[ipi] = 0
			if ui >= 0 {
				st.users[ui] = userState{lastID: id, lastAt: int64(created), lastIP: st.ipName[ipi]}
			}
		} else {
			st.ipFail[ipi]++
			if ui >= 0 {
				st.users[ui].failures++
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	resolve(1<<62, 0, -1)
	if !snapped {
		app.takeSnapshot()
	}
	st.banned, st.locked = app.lists(st.users, st.ipFail)
	log.Printf("read %d users, %d log rows and %d addresses; %d users locked and %d addresses banned",
		len(app.users), n, len(st.ipName), len(st.locked), len(st.banned))
	return nil
}

func (app *App) takeSnapshot() {
	snap := &app.initial
	snap.users = slices.Clone(app.st.users)
	snap.ipFail = slices.Clone(app.st.ipFail)
	snap.banned, snap.locked = app.lists(snap.users, snap.ipFail)
}

// lists returns the sorted lists of banned addresses and locked users.
func (app *App) lists(users []userState, ipFail []int32) (banned, locked []string) {
	banned, locked = []string{}, []string{}
	for i, n := range ipFail {
		if n >= banThreshold {
			banned = append(banned, app.st.ipName[i])
		}
	}
	for i := range users {
		if users[i].failures >= lockThreshold {
			locked = append(locked, app.users[i].login)
		}
	}
	slices.Sort(banned)
	slices.Sort(locked)
	return banned, locked
}

// unixTime scans a time column into Unix seconds: a time.Time (MariaDB) or the text SQLite keeps, read the way
// the SQLite driver reads a DATETIME column (so /mypage shows what the reference shows).
type unixTime int64

func (t *unixTime) Scan(v any) error {
	switch v := v.(type) {
	case time.Time:
		*t = unixTime(v.Unix())
	case []byte:
		*t = parseTime(string(v))
	case string:
		*t = parseTime(v)
	case int64:
		*t = unixTime(v) // not written by any app of this problem; the driver would read it so
	default:
		return fmt.Errorf("unexpected time value %T", v)
	}
	return nil
}

// sqliteTimeFormats are the layouts the SQLite driver tries, in order.
var sqliteTimeFormats = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseTime reads "YYYY-MM-DD HH:MM:SS" (what the dump and the apps write) quickly, anything else as the SQLite
// driver does: the zero time when no layout fits.
func parseTime(s string) unixTime {
	if len(s) == 19 && s[4] == '-' && s[7] == '-' && s[10] == ' ' && s[13] == ':' && s[16] == ':' {
		num := func(i, n int) int {
			v := 0
			for _, c := range []byte(s[i : i+n]) {
				if c < '0' || c > '9' {
					return -1
				}
				v = v*10 + int(c-'0')
			}
			return v
		}
		y, mo, d, h, mi, se := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 &&
			se >= 0 && se <= 59 {
			tm := time.Date(y, time.Month(mo), d, h, mi, se, 0, time.UTC)
			if tm.Day() == d { // not normalised from, say, February 30
				return unixTime(tm.Unix())
			}
		}
	}
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range sqliteTimeFormats {
		if tm, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return unixTime(tm.Unix())
		}
	}
	return unixTime(time.Time{}.Unix())
}

// Sessions.

// session is a session of the bank_session cookie. A logged-in session (user >= 0) remembers the login its
// /mypage shows, found when it was made.
type session struct {
	user    int32 // index in App.users; -1 for an anonymous session
	notice  uint8 // noticeNone or the notice the next GET / shows
	logID   int64 // the successful attempt that logged it in
	created int64 // Unix seconds
	lastAt  int64 // the login /mypage shows
	lastIP  string
}

// sessionStore keeps the sessions in memory. Lock order: App.mu before sessionStore.mu.
type sessionStore struct {
	mu sync.Mutex
	m  map[string]*session
}

func newToken() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// replace ends the session old (when hasOld; a token naming no session is fine) and starts s as token.
func (ss *sessionStore) replace(old string, hasOld bool, token string, s *session) {
	ss.mu.Lock()
	if hasOld {
		delete(ss.m, old)
	}
	ss.m[token] = s
	ss.mu.Unlock()
}

// takeNotice returns the notice of session token and clears it: it is shown once.
func (ss *sessionStore) takeNotice(token string) uint8 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.m[token]
	if s == nil {
		return noticeNone
	}
	n := s.notice
	s.notice = noticeNone
	return n
}

func (ss *sessionStore) clear() {
	ss.mu.Lock()
	ss.m = make(map[string]*session)
	ss.mu.Unlock()
}

// saveSessions writes the sessions to the sessions table, replacing what is there, so that the next start finds
// them. It runs after the server stopped; it takes the locks all the same, in case a request outlived the
// shutdown's grace period. It gives up after the deadline, so that the app stops in time however many sessions
// there are: the sessions that carry something (a login or a notice) go first, and the rest (anonymous sessions
// without a notice) are then lost, like every session after a crash.
func (app *App) saveSessions(deadline time.Time) error {
	app.mu.Lock()
	defer app.mu.Unlock()
	app.sessions.mu.Lock()
	defer app.sessions.mu.Unlock()
	start := time.Now()
	var first, rest []string
	for token, s := range app.sessions.m {
		if s.user >= 0 || s.notice != noticeNone {
			first = append(first, token)
		} else {
			rest = append(rest, token)
		}
	}
	tx, err := app.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec("DELETE FROM sessions"); err != nil {
		return err
	}
	const perInsert = 500
	insertSQL := func(rows int) string {
		return "INSERT INTO sessions (id, user_id, login_log_id, notice, created_at) VALUES (?, ?, ?, ?, ?)" +
			strings.Repeat(", (?, ?, ?, ?, ?)", rows-1)
	}
	full, err := tx.Prepare(insertSQL(perInsert))
	if err != nil {
		return err
	}
	defer full.Close()
	args := make([]any, 0, 5*perInsert)
	saved := 0
	flush := func() error {
		rows := len(args) / 5
		if rows == 0 {
			return nil
		}
		var err error
		if rows == perInsert {
			_, err = full.Exec(args...)
		} else {
			_, err = tx.Exec(insertSQL(rows), args...)
		}
		saved += rows
		args = args[:0]
		return err
	}
	timeStr := map[int64]string{}
	for _, token := range append(first, rest...) {
		s := app.sessions.m[token]
		var userID, logID, notice any
		if s.user >= 0 {
			userID, logID = app.users[s.user].id, s.logID
		}
		if s.notice != noticeNone {
			notice = noticeReasons[s.notice]
		}
		created, ok := timeStr[s.created]
		if !ok {
			created = time.Unix(s.created, 0).UTC().Format(timeFormat)
			timeStr[s.created] = created
		}
		args = append(args, token, userID, logID, notice, created)
		if len(args) == cap(args) {
			if err := flush(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				break
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	log.Printf("saved %d of %d sessions in %v", saved, len(app.sessions.m), time.Since(start).Round(time.Millisecond))
	return nil
}
