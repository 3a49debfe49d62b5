// Package data generates the initial data of the bank problem: the bank's users
// and a login log of the weeks before 2026-01-01, the same bytes for the same
// Config on every machine.
//
// Every user comes from its own PCG stream, seeded from the Config's seed and
// the user's id, so User(id) works on its own: the benchmarker knows any user's
// password without reading the database. The login log is planned from one
// stream of its own and replayed under the problem's rules (see LockThreshold
// and BanThreshold), so it is a log the reference apps could have written;
// Initial replays it into what the benchmarker must know of the initial state,
// and WriteSQL writes the dump the reference apps load.
package data

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/tunecon/tunecon/kit/datagen"
)

// Version is the version of the generated data. Bump it whenever the bytes
// WriteSQL writes for a Config change, so that dumps written by an older
// generator are replaced (see EnsureSQL).
const Version = 1

// TimeFormat is how times are written in the dump and shown on the pages,
// always in UTC.
const TimeFormat = "2006-01-02 15:04:05"

// The rules of the problem. A user is locked while LockThreshold or more of the
// attempts naming it failed since its last successful login (or since the start
// of the log, if it has none); an IP address is banned while BanThreshold or
// more of the attempts from it failed since the last successful login from it.
const (
	LockThreshold = 3
	BanThreshold  = 10
)

// End is when the initial log ends: every row of it is created before End.
var End = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// logSpan is how long before End the log starts (when LogRows is large enough
// to fill it at one row per second).
const logSpan = 28 * 24 * 60 * 60

// MaxUsers is the most users a Config may have: logins have seven digits.
const MaxUsers = 9_999_999

// Config says which data to generate.
type Config struct {
	Seed    uint64
	Users   int // users 1..Users, 1 <= Users <= MaxUsers
	LogRows int // rows 1..LogRows of the login log, exactly; LogRows >= 0
}

// Default returns the configuration of the problem's initial data.
func Default() Config {
	return Config{Seed: 20140921, Users: 200000, LogRows: 400000}
}

func (c Config) validate() error {
	if c.Users < 1 || c.Users > MaxUsers {
		return fmt.Errorf("bank data: %d users, want 1 to %d", c.Users, MaxUsers)
	}
	if c.LogRows < 0 || c.LogRows > 1<<26 {
		return fmt.Errorf("bank data: %d log rows, want 0 to %d", c.LogRows, 1<<26)
	}
	return nil
}

// User is one customer of the bank.
type User struct {
	ID       int64
	Login    string // Login(ID): "u" and the id in seven digits, e.g. u0000042
	Password string // 8 to 12 lowercase ASCII letters and digits
	Salt     string // 16 lowercase hex digits
	PassHash string // HashPassword(Password, Salt): what the users table stores
	// Home is the user's home network, a /24 in 10.0.0.0/8 that several users
	// may share, and Addrs are the two addresses in it the user logs in from in
	// the initial log (they may be equal).
	Home  netip.Prefix
	Addrs [2]netip.Addr
}

// Login returns the login of user id: "u" followed by the id in seven digits.
func Login(id int64) string {
	var buf [8]byte
	return string(appendLogin(buf[:0], id))
}

func appendLogin(buf []byte, id int64) []byte {
	buf = append(buf, 'u')
	for d := int64(1_000_000); d > 1 && id < d; d /= 10 {
		buf = append(buf, '0')
	}
	return strconv.AppendInt(buf, id, 10)
}

// HashPassword returns what the users table stores for a password and its salt:
// the SHA-256 of password + ":" + salt, in lowercase hex.
func HashPassword(password, salt string) string {
	sum := sha256.Sum256([]byte(password + ":" + salt))
	return hex.EncodeToString(sum[:])
}

// Stream kinds, mixed into the seeds so that the users' streams and the log's
// differ.
const (
	kindUser uint64 = 0x757365727321     // "users!"
	kindLog  uint64 = 0x6c6f67696e6c6f67 // "loginlog"
)

// PasswordChars are the characters of the users' passwords: no l, o, 0, 1,
// easy to read back.
const PasswordChars = "abcdefghijkmnpqrstuvwxyz23456789"

// User returns user id, for 1 <= id <= c.Users. It panics when id is out of
// range.
func (c Config) User(id int64) User {
	if id < 1 || id > int64(c.Users) {
		panic(fmt.Sprintf("bank data: user id %d out of range [1, %d]", id, c.Users))
	}
	g := datagen.Stream(c.Seed, kindUser, uint64(id))
	home, addrs := userAddrs(g) // the first draws: see c.addrs
	pw := make([]byte, 8+g.Intn(5))
	for i := range pw {
		pw[i] = PasswordChars[g.Intn(len(PasswordChars))]
	}
	salt := fmt.Sprintf("%016x", g.Uint64())
	return User{
		ID:       id,
		Login:    Login(id),
		Password: string(pw),
		Salt:     salt,
		PassHash: HashPassword(string(pw), salt),
		Home:     home,
		Addrs:    addrs,
	}
}

// addrs returns user id's two addresses as numbers, from the first draws of its
// stream, without the rest of it.
func (c Config) addrs(id int64) [2]uint32 {
	_, a := userAddrs(datagen.Stream(c.Seed, kindUser, uint64(id)))
	return [2]uint32{addrNum(a[0]), addrNum(a[1])}
}

// userAddrs makes a user's first draws: its home /24 and its two addresses
// there. Six users in ten always use the same address; the others have a second
// one (a phone, a new DHCP lease).
func userAddrs(g datagen.Gen) (netip.Prefix, [2]netip.Addr) {
	b, cc := byte(g.Intn(256)), byte(g.Intn(256))
	h1 := byte(1 + g.Intn(254))
	h2 := byte(1 + g.Intn(254))
	if g.Intn(10) < 6 {
		h2 = h1
	}
	home := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, b, cc, 0}), 24)
	return home, [2]netip.Addr{netip.AddrFrom4([4]byte{10, b, cc, h1}), netip.AddrFrom4([4]byte{10, b, cc, h2})}
}

func addrNum(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func appendAddr(buf []byte, n uint32) []byte {
	buf = strconv.AppendUint(buf, uint64(n>>24), 10)
	buf = append(buf, '.')
	buf = strconv.AppendUint(buf, uint64(n>>16&0xff), 10)
	buf = append(buf, '.')
	buf = strconv.AppendUint(buf, uint64(n>>8&0xff), 10)
	buf = append(buf, '.')
	return strconv.AppendUint(buf, uint64(n&0xff), 10)
}

func addrString(n uint32) string {
	var buf [15]byte
	return string(appendAddr(buf[:0], n))
}

// LogRow is one row of the initial login log: one login attempt.
type LogRow struct {
	ID        int64
	CreatedAt time.Time // whole seconds, UTC, strictly increasing with ID, before End
	UserID    int64     // 0 when Login names no user (stored as NULL)
	Login     string    // the login as typed
	IP        string    // the client's IPv4 address
	Succeeded bool
}

// entry is a row of the log, compact: the dump and the replay make the strings
// only when they need them.
type entry struct {
	created int64  // Unix seconds
	user    int32  // 0: an unknown login, then other says which
	other   int32  // index of the unknown login (see unknownLogin)
	ip      uint32 // IPv4 as a number
	ok      bool
}

func (c Config) login(e entry) string {
	if e.user > 0 {
		return Login(int64(e.user))
	}
	return c.unknownLogin(e.other)
}

// commonLogins are the logins attackers try that are nobody's; they also try
// logins of users that do not exist.
var commonLogins = []string{
	"admin", "root", "test", "guest", "user", "administrator", "info", "support", "demo", "oracle", "postgres",
	"mysql", "webmaster", "sales", "backup", "operator", "manager", "staff", "service", "user1", "test1",
	"admin1", "bank", "account", "login", "alice", "bob", "taro", "hanako", "suzuki", "sato", "tanaka",
	"yamada", "u000001", "u00000001", "U0000001", "0000001", "u-0000001",
}

// unknownLogin returns unknown login k: one of commonLogins, or the login of a
// user id past c.Users.
func (c Config) unknownLogin(k int32) string {
	if int(k) < len(commonLogins) {
		return commonLogins[k]
	}
	return Login(int64(c.Users) + 1 + int64(int(k)-len(commonLogins)))
}

// Log returns the rows of the initial login log, in id order.
func (c Config) Log() ([]LogRow, error) {
	entries, err := c.entries()
	if err != nil {
		return nil, err
	}
	rows := make([]LogRow, len(entries))
	for i, e := range entries {
		rows[i] = LogRow{
			ID:        int64(i + 1),
			CreatedAt: time.Unix(e.created, 0).UTC(),
			UserID:    int64(e.user),
			Login:     c.login(e),
			IP:        addrString(e.ip),
			Succeeded: e.ok,
		}
	}
	return rows, nil
}

// The plan of the log. Per user (rates in per mille of users, drawn in user id
// order):
//   - lockTailRate: the user forgets its password and gives up after 3 to 6
//     wrong attempts from home, after its last success: it ends locked;
//   - nearTailRate: the same with 1 or 2 wrong attempts: it ends near the lock.
//
// Attackers (counts per 4000 rows): bannedPer4000 attackers make 10 to 40
// attempts each, nearPer4000 make 1 to 9, every one from its own address in one
// of a few /24 ranges in 172.16.0.0/12, none with a right password. Each
// attempt block is an unknown login (unknownShare percent), one try on a random
// user (stuffShare percent, credential stuffing) or a brute force of 3 to 5
// tries on one random user (the rest), which locks that user.
//
// Everything else is users logging in from one of their addresses: a right
// password, after a typo now and then (typo1Share percent of the time one wrong
// attempt first, typo2Share percent two). Tails and attackers take at most half
// of the rows: in a Config with few rows for its users, the ones past that are
// left out.
const (
	lockTailRate  = 8  // per mille of users
	nearTailRate  = 40 // per mille of users
	bannedPer4000 = 3
	nearPer4000   = 15
	unknownShare  = 35
	stuffShare    = 55
	typo1Share    = 10
	typo2Share    = 2
	// unit is the positions per row: attempts are placed at positions in [0,
	// LogRows*unit) and sorted.
	unit = 16
)

// attempt is one planned attempt. Replayed in pos order under the rules, it
// becomes an entry: a right password still fails if the user is locked or the
// address banned by then.
type attempt struct {
	pos   int64
	seq   int32 // the order of planning: ties of pos go by it
	user  int32
	other int32
	ip    uint32
	right bool
}

// entries plans the log, sorts it by time and replays it under the rules.
// Every draw comes from the log's one stream, in this order: the users'
// tails, the attackers, the ordinary logins, the tails' places, the rows'
// times.
func (c Config) entries() ([]entry, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	n := c.LogRows
	// Specials come first, up to half of the log, the rest are ordinary logins.
	p := &planner{
		c:      c,
		g:      datagen.Stream(c.Seed, kindLog, 0),
		span:   int64(n) * unit,
		plan:   make([]attempt, 0, n),
		budget: n / 2,
	}
	tails := p.drawTails()
	p.planAttackers()
	last := p.planLogins()
	p.planTails(tails, last)
	if len(p.plan) != n {
		panic(fmt.Sprintf("bank data: planned %d attempts for %d rows", len(p.plan), n))
	}

	slices.SortFunc(p.plan, func(a, b attempt) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.seq, b.seq))
	})
	return c.replayPlan(p.g, p.plan), nil
}

// planner is the plan of the log while entries makes it.
type planner struct {
	c      Config
	g      datagen.Gen // the log's stream
	span   int64       // positions are in [0, span)
	plan   []attempt
	budget int // the rows specials may still take
}

// add appends an attempt to the plan, after every one planned before it.
func (p *planner) add(pos int64, user, other int32, ip uint32, right bool) {
	p.plan = append(p.plan, attempt{pos: pos, seq: int32(len(p.plan)), user: user, other: other, ip: ip, right: right})
}

// tail is a user's wrong attempts after its last success.
type tail struct {
	user  int32
	fails int
}

// drawTails draws, in user id order, the users who end locked or near the
// lock, as long as the budget lasts; planTails places them.
func (p *planner) drawTails() []tail {
	var tails []tail
	for u := 1; u <= p.c.Users; u++ {
		var fails int
		switch r := p.g.Intn(1000); {
		case r < lockTailRate:
			fails = LockThreshold + p.g.Intn(4)
		case r < lockTailRate+nearTailRate:
			fails = 1 + p.g.Intn(LockThreshold-1)
		default:
			continue
		}
		if fails > p.budget {
			continue
		}
		p.budget -= fails
		tails = append(tails, tail{int32(u), fails})
	}
	return tails
}

// planAttackers draws the attackers and plans their attempts, as long as the
// budget lasts.
func (p *planner) planAttackers() {
	n := p.c.LogRows
	banned, near := n*bannedPer4000/4000, n*nearPer4000/4000
	attackers := make([]int, 0, banned+near) // attempts per attacker, in a random order
	for i := 0; i < banned+near; i++ {
		k := 1 + p.g.Intn(BanThreshold-1)
		if i < banned {
			k = BanThreshold + p.g.Intn(31)
		}
		attackers = append(attackers, k)
	}
	for i := len(attackers) - 1; i > 0; i-- {
		j := p.g.Intn(i + 1)
		attackers[i], attackers[j] = attackers[j], attackers[i]
	}
	nets := attackerNets(p.g, 1+len(attackers)/40)
	for i, k := range attackers {
		if k > p.budget {
			continue
		}
		p.budget -= k
		ip := nets[i%len(nets)] | uint32(1+(i/len(nets)*97+int(nets[i%len(nets)]>>8&0xff))%254)
		p.planAttacker(ip, k)
	}
}

// planAttacker plans the k attempts of one attacker from ip, in blocks: an
// unknown login, one try on a random user or a brute force of one.
func (p *planner) planAttacker(ip uint32, k int) {
	pos := p.g.Int63n(max(p.span, 1))
	for k > 0 {
		var user, other int32
		tries := 1
		switch r := p.g.Intn(100); {
		case r < unknownShare:
			other = p.c.drawUnknown(p.g)
		case r < unknownShare+stuffShare:
			user = int32(1 + p.g.Intn(p.c.Users))
		default:
			user = int32(1 + p.g.Intn(p.c.Users))
			tries = min(k, LockThreshold+p.g.Intn(3))
		}
		for ; tries > 0; tries-- {
			p.add(pos, user, other, ip, false)
			pos += unit/2 + p.g.Int63n(unit*3/2)
			k--
		}
	}
}

// planLogins fills the rest of the log with ordinary logins. It returns each
// user's last one (-1 for none), so that its tail can come after it.
func (p *planner) planLogins() []int64 {
	n := p.c.LogRows
	last := make([]int64, p.c.Users+1)
	for i := range last {
		last[i] = -1
	}
	// rest is every row that is not a special attempt, tails included.
	rest := n - (n/2 - p.budget)
	for rest > 0 {
		u := 1 + p.g.Intn(p.c.Users)
		typos := 0
		switch r := p.g.Intn(100); {
		case r < typo2Share:
			typos = 2
		case r < typo2Share+typo1Share:
			typos = 1
		}
		typos = min(typos, rest-1)
		addrs := p.c.addrs(int64(u))
		ip := addrs[p.g.Intn(2)]
		pos := p.g.Int63n(max(p.span, 1))
		for i := 0; i <= typos; i++ {
			p.add(pos, int32(u), 0, ip, i == typos)
			last[u] = max(last[u], pos)
			pos += unit + p.g.Int63n(unit*3)
		}
		rest -= typos + 1
	}
	return last
}

// planTails places each tail's wrong attempts after its user's last login.
func (p *planner) planTails(tails []tail, last []int64) {
	for _, t := range tails {
		lo := last[t.user] + 1
		if lo >= p.span {
			lo = max(p.span-1, 0)
		}
		pos := lo + p.g.Int63n(max(p.span-lo, 1))
		addrs := p.c.addrs(int64(t.user))
		ip := addrs[p.g.Intn(2)]
		for i := 0; i < t.fails; i++ {
			p.add(pos, t.user, 0, ip, false)
			pos += unit + p.g.Int63n(unit*3)
		}
	}
}

// replayPlan replays the sorted plan under the rules, and gives every row its
// time, drawn from g: row k (from 1) in the k-th of len(plan) slots of step
// seconds that end at End.
func (c Config) replayPlan(g datagen.Gen, plan []attempt) []entry {
	n := len(plan)
	step := max(int64(1), logSpan/int64(max(n, 1)))
	start := End.Unix() - int64(n)*step
	userFails := make([]int32, c.Users+1)
	ipFails := make(map[uint32]int32)
	entries := make([]entry, n)
	for i, a := range plan {
		ok := a.right && a.user > 0 && userFails[a.user] < LockThreshold && ipFails[a.ip] < BanThreshold
		if ok {
			userFails[a.user] = 0
			ipFails[a.ip] = 0
		} else {
			if a.user > 0 {
				userFails[a.user]++
			}
			ipFails[a.ip]++
		}
		entries[i] = entry{
			created: start + int64(i)*step + g.Int63n(step),
			user:    a.user,
			other:   a.other,
			ip:      a.ip,
			ok:      ok,
		}
	}
	return entries
}

// drawUnknown draws an unknown login: a common one, or a user id past c.Users.
func (c Config) drawUnknown(g datagen.Gen) int32 {
	room := min(MaxUsers-c.Users, 100000)
	if room == 0 || g.Intn(100) < 60 {
		return int32(g.Intn(len(commonLogins)))
	}
	return int32(len(commonLogins) + g.Intn(room))
}

// attackerNets draws k distinct /24 networks in 172.16.0.0/12, as the numbers
// of their first address.
func attackerNets(g datagen.Gen, k int) []uint32 {
	nets := make([]uint32, 0, k)
	seen := map[uint32]bool{}
	for len(nets) < k {
		n := uint32(172)<<24 | uint32(16+g.Intn(16))<<16 | uint32(g.Intn(256))<<8
		if !seen[n] {
			seen[n] = true
			nets = append(nets, n)
		}
	}
	return nets
}

// Success is a successful login.
type Success struct {
	At time.Time // the zero time when there is none
	IP string
}

// UserState is what the initial log says about one user.
type UserState struct {
	// Failures is the number of failed attempts naming the user since its last
	// success (since the start of the log if it has none). The user is locked
	// when Failures >= LockThreshold.
	Failures int
	// Last is the user's last successful login and Prev the one before it; At
	// is zero when there is none.
	Last, Prev Success
}

// State is what the benchmarker must know of the initial data.
type State struct {
	Rows  int64       // rows in the initial log: the next attempt gets id Rows+1
	Users []UserState // Users[id] for 1 <= id <= Config.Users; Users[0] is unused
	// IPs maps every address in the log to its failed attempts since the last
	// success from it (since the start of the log if there is none). The
	// address is banned when the count is >= BanThreshold.
	IPs    map[string]int
	Locked []string // the logins of the locked users, sorted
	Banned []string // the banned addresses, sorted (as strings: "10.0.0.10" before "10.0.0.9")
}

// Initial replays the initial log into the initial state. It takes about half a
// second for the default Config.
func (c Config) Initial() (*State, error) {
	entries, err := c.entries()
	if err != nil {
		return nil, err
	}
	s := &State{Rows: int64(len(entries)), Users: make([]UserState, c.Users+1)}
	ips := make(map[uint32]int)
	names := make(map[uint32]string)
	for _, e := range entries {
		name, seen := names[e.ip]
		if !seen {
			name = addrString(e.ip)
			names[e.ip] = name
		}
		u := &s.Users[e.user] // Users[0] gathers the unknown logins and is cleared below
		if e.ok {
			u.Failures = 0
			u.Prev = u.Last
			u.Last = Success{At: time.Unix(e.created, 0).UTC(), IP: name}
			ips[e.ip] = 0
		} else {
			u.Failures++
			ips[e.ip]++
		}
	}
	s.Users[0] = UserState{}
	for id := 1; id <= c.Users; id++ {
		if s.Users[id].Failures >= LockThreshold {
			s.Locked = append(s.Locked, Login(int64(id)))
		}
	}
	s.IPs = make(map[string]int, len(ips))
	for ip, n := range ips {
		s.IPs[names[ip]] = n
		if n >= BanThreshold {
			s.Banned = append(s.Banned, names[ip])
		}
	}
	slices.Sort(s.Locked) // already in id order, which is login order; sorted all the same
	slices.Sort(s.Banned)
	return s, nil
}

// header is the first line of the dump; EnsureSQL compares it to tell whether a
// dump is current.
func (c Config) header() string {
	return fmt.Sprintf("-- tunecon bank initial data v%d seed=%d users=%d rows=%d",
		Version, c.Seed, c.Users, c.LogRows)
}

// WriteSQL writes the whole initial data as SQL: a header comment line, then
// multi-row INSERT statements of at most 500 rows, users first, then the login
// log. Every statement ends with ");\n" at the end of a line, and no text
// contains ';', so the dump can be split into statements on ";\n". It is valid
// for SQLite and for MariaDB.
func (c Config) WriteSQL(w io.Writer) error {
	entries, err := c.entries()
	if err != nil {
		return err
	}
	sw := datagen.NewSQLWriter(w, c.header())
	sw.Table("INSERT INTO users (id, login, password_hash, salt) VALUES", int64(c.Users))
	for id := int64(1); id <= int64(c.Users); id++ {
		u := c.User(id)
		row := append(sw.Buf(), '(')
		row = strconv.AppendInt(row, id, 10)
		row = append(row, ',')
		row = datagen.AppendQuoted(row, u.Login)
		row = append(row, ',')
		row = datagen.AppendQuoted(row, u.PassHash)
		row = append(row, ',')
		row = datagen.AppendQuoted(row, u.Salt)
		if err := sw.Row(append(row, ')')); err != nil {
			return err
		}
	}
	sw.Table("INSERT INTO login_log (id, created_at, user_id, login, ip, succeeded) VALUES", int64(len(entries)))
	for i, e := range entries {
		row := append(sw.Buf(), '(')
		row = strconv.AppendInt(row, int64(i+1), 10)
		row = append(row, ",'"...)
		row = time.Unix(e.created, 0).UTC().AppendFormat(row, TimeFormat)
		row = append(row, "',"...)
		if e.user > 0 {
			row = strconv.AppendInt(row, int64(e.user), 10)
			row = append(row, ",'"...)
			row = appendLogin(row, int64(e.user))
		} else {
			row = append(row, "NULL,'"...)
			row = append(row, c.unknownLogin(e.other)...)
		}
		row = append(row, "','"...)
		row = appendAddr(row, e.ip)
		if e.ok {
			row = append(row, "',1)"...)
		} else {
			row = append(row, "',0)"...)
		}
		if err := sw.Row(row); err != nil {
			return err
		}
	}
	return sw.Close()
}

// EnsureSQL writes c's dump to path unless a file there already starts with the
// same header line (same version, seed and sizes). It writes a temporary file
// in the same directory and renames it, so a dump at path is always complete.
// It reports whether it wrote.
func EnsureSQL(path string, c Config) (bool, error) {
	if err := c.validate(); err != nil {
		return false, err
	}
	return datagen.Ensure(path, c.header(), c.WriteSQL)
}
