package data

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/kit/apptest"
)

// small is big enough to cover several INSERT statements, every kind of tail
// and a few banned addresses.
var small = Config{Seed: 7, Users: 3000, LogRows: 8000}

// smallDumpSHA256 pins the bytes of small's dump. If a change to the generator
// alters them on purpose, bump Version and put the new hash here.
const smallDumpSHA256 = "6792497490e0c61cea52b10aaa09aa07a74066aa2d383fbe60667c0d93071048"

const forbidden = ";\\'\"<>&\r\n\t "

func dump(t *testing.T, c Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteSQL(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// defaultLog and defaultState are the default Config's log and state, made once
// for the tests that need them.
var defaultLog = sync.OnceValues(func() ([]LogRow, error) { return Default().Log() })
var defaultState = sync.OnceValues(func() (*State, error) { return Default().Initial() })

func TestDeterministic(t *testing.T) {
	a, b := dump(t, small), dump(t, small)
	if !bytes.Equal(a, b) {
		t.Fatal("two dumps of the same config differ")
	}
	sum := sha256.Sum256(a)
	if got := hex.EncodeToString(sum[:]); got != smallDumpSHA256 {
		t.Errorf("dump of %+v has sha256 %s, want %s: if the change is intended, bump Version and update the hash",
			small, got, smallDumpSHA256)
	}
	other := small
	other.Seed++
	if bytes.Equal(dump(t, other)[100:], a[100:]) {
		t.Error("different seeds give the same data")
	}
	// Random access in any order gives the same users.
	for _, id := range []int64{2999, 1, 1500, 1, 3000} {
		if x, y := small.User(id), small.User(id); x != y {
			t.Errorf("User(%d) differs between calls: %+v, %+v", id, x, y)
		}
	}
	if x, y := small.User(5), small.User(6); x.Password == y.Password && x.Salt == y.Salt {
		t.Error("users share a stream")
	}
	// A user does not depend on the number of users or rows.
	big := Config{Seed: small.Seed, Users: small.Users * 2, LogRows: small.LogRows * 3}
	if x, y := small.User(77), big.User(77); x != y {
		t.Errorf("User(77) depends on the sizes: %+v, %+v", x, y)
	}
	s1, err := small.Initial()
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := small.Initial()
	if !slices.Equal(s1.Locked, s2.Locked) || !slices.Equal(s1.Banned, s2.Banned) || !slices.Equal(s1.Users, s2.Users) {
		t.Error("two calls of Initial differ")
	}
}

func TestHeader(t *testing.T) {
	const want = "-- tunecon bank initial data v1 seed=20140921 users=200000 rows=400000"
	if got := Default().header(); got != want {
		t.Errorf("header line = %q, want %q", got, want)
	}
	line, _, _ := strings.Cut(string(dump(t, small)), "\n")
	if line != small.header() {
		t.Errorf("dump starts with %q, want %q", line, small.header())
	}
}

func TestLoginAndHash(t *testing.T) {
	for id, want := range map[int64]string{1: "u0000001", 42: "u0000042", 200000: "u0200000", MaxUsers: "u9999999"} {
		if got := Login(id); got != want {
			t.Errorf("Login(%d) = %q, want %q", id, got, want)
		}
	}
	// printf 'hunter2:0123456789abcdef' | sha256sum
	if got := HashPassword("hunter2", "0123456789abcdef"); got != "99cb1d4b61a4980e903711d1c7635d2ff3ceef62c9c38bf9f4daf87c32fd66c3" {
		t.Errorf("HashPassword = %s", got)
	}
}

func TestUsers(t *testing.T) {
	homes := map[netip.Prefix]int{}
	twoAddrs := 0
	for id := int64(1); id <= int64(small.Users); id++ {
		u := small.User(id)
		if u.ID != id || u.Login != Login(id) {
			t.Fatalf("User(%d) = %+v", id, u)
		}
		if n := len(u.Password); n < 8 || n > 12 || strings.Trim(u.Password, PasswordChars) != "" {
			t.Errorf("user %d: password %q", id, u.Password)
		}
		if _, err := strconv.ParseUint(u.Salt, 16, 64); err != nil || len(u.Salt) != 16 || strings.ToLower(u.Salt) != u.Salt {
			t.Errorf("user %d: salt %q", id, u.Salt)
		}
		if u.PassHash != HashPassword(u.Password, u.Salt) {
			t.Errorf("user %d: hash %q", id, u.PassHash)
		}
		if u.Home.Bits() != 24 || !netip.MustParsePrefix("10.0.0.0/8").Contains(u.Home.Addr()) || u.Home.Masked() != u.Home {
			t.Errorf("user %d: home %v", id, u.Home)
		}
		for _, a := range u.Addrs {
			if !u.Home.Contains(a) || a.As4()[3] == 0 || a.As4()[3] == 255 {
				t.Errorf("user %d: address %v outside its home %v", id, a, u.Home)
			}
		}
		if u.Addrs[0] != u.Addrs[1] {
			twoAddrs++
		}
		homes[u.Home]++
		if got := small.addrs(id); got != [2]uint32{addrNum(u.Addrs[0]), addrNum(u.Addrs[1])} {
			t.Errorf("addrs(%d) = %v, User says %v", id, got, u.Addrs)
		}
	}
	if share := float64(twoAddrs) / float64(small.Users); share < 0.35 || share > 0.45 {
		t.Errorf("%.2f of users have two addresses, want about 0.4", share)
	}
	if len(homes) < small.Users*9/10 {
		t.Errorf("%d users share only %d home networks", small.Users, len(homes))
	}
}

// checkLog checks what the log must be, whatever the Config: ids, times,
// strings, addresses, and that the app's rules could have written it.
func checkLog(t *testing.T, c Config, rows []LogRow) {
	t.Helper()
	if len(rows) != c.LogRows {
		t.Fatalf("%d rows, want %d", len(rows), c.LogRows)
	}
	attackers := netip.MustParsePrefix("172.16.0.0/12")
	userFails := map[int64]int{}
	ipFails := map[string]int{}
	var prev time.Time
	for i, r := range rows {
		if r.ID != int64(i+1) {
			t.Fatalf("row %d has id %d", i+1, r.ID)
		}
		if !r.CreatedAt.After(prev) || !r.CreatedAt.Before(End) || r.CreatedAt.Before(End.Add(-29*24*time.Hour)) ||
			r.CreatedAt.Location() != time.UTC || r.CreatedAt.Nanosecond() != 0 {
			t.Fatalf("row %d created at %v, after %v", r.ID, r.CreatedAt, prev)
		}
		prev = r.CreatedAt
		if strings.ContainsAny(r.Login, forbidden) || r.Login == "" {
			t.Fatalf("row %d: login %q", r.ID, r.Login)
		}
		addr, err := netip.ParseAddr(r.IP)
		if err != nil || !addr.Is4() || addr.String() != r.IP {
			t.Fatalf("row %d: address %q", r.ID, r.IP)
		}
		if r.UserID > 0 {
			if r.UserID > int64(c.Users) || r.Login != Login(r.UserID) {
				t.Fatalf("row %d: user %d, login %q", r.ID, r.UserID, r.Login)
			}
			u := c.User(r.UserID)
			if !u.Home.Contains(addr) && !attackers.Contains(addr) {
				t.Fatalf("row %d: user %d from %v, neither its home %v nor an attacker", r.ID, r.UserID, addr, u.Home)
			}
			if r.Succeeded && addr != u.Addrs[0] && addr != u.Addrs[1] {
				t.Fatalf("row %d: user %d logs in from %v, not one of its addresses %v", r.ID, r.UserID, addr, u.Addrs)
			}
		} else {
			if r.UserID < 0 || r.Succeeded || !attackers.Contains(addr) {
				t.Fatalf("row %d: an unknown login %+v", r.ID, r)
			}
			if digits, ok := strings.CutPrefix(r.Login, "u"); ok && len(digits) == 7 {
				if id, err := strconv.Atoi(digits); err == nil && id >= 1 && id <= c.Users {
					t.Fatalf("row %d: login %q of a user, without its id", r.ID, r.Login)
				}
			}
		}
		// The rules: a success needs the user and the address below their
		// thresholds.
		if r.Succeeded {
			if userFails[r.UserID] >= LockThreshold || ipFails[r.IP] >= BanThreshold {
				t.Fatalf("row %d succeeded with %d failures of user %d and %d of %s", r.ID,
					userFails[r.UserID], r.UserID, ipFails[r.IP], r.IP)
			}
			userFails[r.UserID], ipFails[r.IP] = 0, 0
		} else {
			if r.UserID > 0 {
				userFails[r.UserID]++
			}
			ipFails[r.IP]++
		}
	}
}

// replay computes the state from its definition, without resets: a user's
// failures are its failed rows after its last successful one.
func replay(c Config, rows []LogRow) *State {
	lastUser := map[int64]int64{}
	lastIP := map[string]int64{}
	s := &State{Rows: int64(len(rows)), Users: make([]UserState, c.Users+1), IPs: map[string]int{}}
	for _, r := range rows {
		if r.Succeeded {
			lastUser[r.UserID], lastIP[r.IP] = r.ID, r.ID
			u := &s.Users[r.UserID]
			u.Prev, u.Last = u.Last, Success{At: r.CreatedAt, IP: r.IP}
		}
	}
	for _, r := range rows {
		if r.UserID > 0 && r.ID > lastUser[r.UserID] {
			s.Users[r.UserID].Failures++
		}
		if _, ok := s.IPs[r.IP]; !ok {
			s.IPs[r.IP] = 0
		}
		if r.ID > lastIP[r.IP] {
			s.IPs[r.IP]++
		}
	}
	for id := range s.Users {
		if id > 0 && s.Users[id].Failures >= LockThreshold {
			s.Locked = append(s.Locked, Login(int64(id)))
		}
	}
	for ip, n := range s.IPs {
		if n >= BanThreshold {
			s.Banned = append(s.Banned, ip)
		}
	}
	slices.Sort(s.Banned)
	return s
}

func compareStates(t *testing.T, got, want *State) {
	t.Helper()
	if got.Rows != want.Rows {
		t.Errorf("Rows = %d, want %d", got.Rows, want.Rows)
	}
	if !slices.Equal(got.Locked, want.Locked) {
		t.Errorf("Locked: %d users, want %d", len(got.Locked), len(want.Locked))
	}
	if !slices.Equal(got.Banned, want.Banned) {
		t.Errorf("Banned: %d addresses, want %d", len(got.Banned), len(want.Banned))
	}
	if len(got.Users) != len(want.Users) {
		t.Fatalf("%d users, want %d", len(got.Users), len(want.Users))
	}
	bad := 0
	for id := range got.Users {
		if got.Users[id] != want.Users[id] && bad < 5 {
			t.Errorf("user %d: %+v, want %+v", id, got.Users[id], want.Users[id])
			bad++
		}
	}
	if len(got.IPs) != len(want.IPs) {
		t.Errorf("%d addresses, want %d", len(got.IPs), len(want.IPs))
	}
	for ip, n := range want.IPs {
		if m, ok := got.IPs[ip]; !ok || m != n {
			t.Errorf("address %s: %d failures (present: %v), want %d", ip, m, ok, n)
			break
		}
	}
	if !slices.IsSorted(got.Locked) || !slices.IsSorted(got.Banned) {
		t.Error("lists not sorted")
	}
}

func TestSmallLog(t *testing.T) {
	rows, err := small.Log()
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, small, rows)
	s, err := small.Initial()
	if err != nil {
		t.Fatal(err)
	}
	compareStates(t, s, replay(small, rows))
	if len(s.Locked) < 30 || len(s.Banned) != small.LogRows*bannedPer4000/4000 {
		t.Errorf("%d locked users and %d banned addresses", len(s.Locked), len(s.Banned))
	}
}

// TestDefault checks the default data's log and the shape of its initial state:
// what the benchmarker relies on.
func TestDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("the default data takes a few seconds")
	}
	c := Default()
	rows, err := defaultLog()
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, c, rows)
	s, err := defaultState()
	if err != nil {
		t.Fatal(err)
	}
	compareStates(t, s, replay(c, rows))

	var successes, near, never, once int
	for _, r := range rows {
		if r.Succeeded {
			successes++
		}
	}
	for _, u := range s.Users[1:] {
		switch {
		case u.Failures > 0 && u.Failures < LockThreshold:
			near++
		}
		if u.Last.At.IsZero() {
			never++
		} else if u.Prev.At.IsZero() {
			once++
		}
	}
	var nearIPs, homeBanned int
	for ip, n := range s.IPs {
		if n > 0 && n < BanThreshold {
			nearIPs++
		}
		if n >= BanThreshold && strings.HasPrefix(ip, "10.") {
			homeBanned++
		}
	}
	t.Logf("%d rows, %d successes; %d users locked, %d with 1 or 2 failures, %d never and %d once logged in; "+
		"%d addresses, %d banned (%d at home), %d with 1 to 9 failures",
		len(rows), successes, len(s.Locked), near, never, once, len(s.IPs), len(s.Banned), homeBanned, nearIPs)
	for _, check := range []struct {
		what    string
		n       int
		lo, max int
	}{
		{"successes", successes, len(rows) * 3 / 4, len(rows) * 17 / 20},
		{"locked users", len(s.Locked), 2000, 4000},
		{"banned addresses", len(s.Banned), 200, 600},
		{"users with 1 or 2 failures", near, 5000, 20000},
		{"addresses with 1 to 9 failures", nearIPs, 3000, 30000},
		{"users never logged in", never, 10000, 80000},
		{"users logged in once", once, 10000, 100000},
	} {
		if check.n < check.lo || check.n > check.max {
			t.Errorf("%d %s, want %d to %d", check.n, check.what, check.lo, check.max)
		}
	}
	// Some locked users and near users still have a last login: the
	// benchmarker's interesting cases.
	var lockedWithLogin, nearWithPrev int
	for _, u := range s.Users[1:] {
		if u.Failures >= LockThreshold && !u.Last.At.IsZero() {
			lockedWithLogin++
		}
		if u.Failures > 0 && u.Failures < LockThreshold && !u.Prev.At.IsZero() {
			nearWithPrev++
		}
	}
	if lockedWithLogin < 500 || nearWithPrev < 1000 {
		t.Errorf("%d locked users with a last login, %d near users with two", lockedWithLogin, nearWithPrev)
	}
}

func TestStatementShape(t *testing.T) {
	const (
		userInsert = "INSERT INTO users (id, login, password_hash, salt) VALUES\n("
		logInsert  = "INSERT INTO login_log (id, created_at, user_id, login, ip, succeeded) VALUES\n("
	)
	d := string(dump(t, small))
	_, rest, _ := strings.Cut(d, "\n")
	if !strings.HasSuffix(rest, ");\n") {
		t.Fatal("dump does not end with );\\n")
	}
	if strings.Count(rest, ";") != strings.Count(rest, ");\n") {
		t.Error("a ';' that does not end a statement")
	}
	stmts := strings.Split(strings.TrimSuffix(rest, ";\n"), ";\n")
	var users, logs int
	for i, s := range stmts {
		rows := strings.Count(s, "),\n(") + 1
		if rows > 500 {
			t.Errorf("statement %d has %d rows", i, rows)
		}
		switch {
		case strings.HasPrefix(s, userInsert):
			if logs > 0 {
				t.Errorf("statement %d inserts users after the log", i)
			}
			users += rows
		case strings.HasPrefix(s, logInsert):
			logs += rows
		default:
			t.Fatalf("statement %d: unexpected start %q", i, s[:min(len(s), 80)])
		}
	}
	if users != small.Users || logs != small.LogRows {
		t.Errorf("dump holds %d users and %d log rows, want %d and %d", users, logs, small.Users, small.LogRows)
	}
	if want := (small.Users+499)/500 + (small.LogRows+499)/500; len(stmts) != want {
		t.Errorf("%d statements, want %d", len(stmts), want)
	}
	// Rows are the items, written as they are.
	u := small.User(1)
	if want := userInsert + "1,'u0000001','" + u.PassHash + "','" + u.Salt + "'),\n"; !strings.HasPrefix(stmts[0], want) {
		t.Errorf("first row is not user 1:\n%.200s", stmts[0])
	}
	rows, err := small.Log()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []LogRow{rows[0], rows[len(rows)/2], rows[len(rows)-1]} {
		user, ok := "NULL", 0
		if r.UserID > 0 {
			user = strconv.FormatInt(r.UserID, 10)
		}
		if r.Succeeded {
			ok = 1
		}
		want := fmt.Sprintf("(%d,'%s',%s,'%s','%s',%d)", r.ID, r.CreatedAt.Format(TimeFormat), user, r.Login, r.IP, ok)
		if !strings.Contains(d, "\n"+want+",\n") && !strings.Contains(d, "\n"+want+";\n") {
			t.Errorf("row %s is not in the dump", want)
		}
	}
	if !strings.Contains(d, ",NULL,'") {
		t.Error("no unknown login in the dump")
	}
}

func TestTinyConfigs(t *testing.T) {
	for _, c := range []Config{{Seed: 1, Users: 1, LogRows: 0}, {Seed: 1, Users: 1, LogRows: 1}, {Seed: 2, Users: 5, LogRows: 3},
		{Seed: 3, Users: 10, LogRows: 5000}, {Seed: 4, Users: 2000, LogRows: 100}} {
		rows, err := c.Log()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		checkLog(t, c, rows)
		s, err := c.Initial()
		if err != nil {
			t.Fatal(err)
		}
		compareStates(t, s, replay(c, rows))
		d := dump(t, c)
		if got := strings.Count(string(d), "INSERT INTO login_log"); got != (c.LogRows+499)/500 {
			t.Errorf("%+v: %d log statements", c, got)
		}
	}
}

func TestEnsureSQL(t *testing.T) {
	c := Config{Seed: 1, Users: 20, LogRows: 100}
	other := c
	other.LogRows++
	apptest.CheckEnsureSQL(t, EnsureSQL, Config.WriteSQL, c, other)
	if _, err := EnsureSQL(filepath.Join(t.TempDir(), "initial.sql"), Config{}); err == nil {
		t.Error("EnsureSQL of an invalid config: no error")
	}
}

func TestInvalid(t *testing.T) {
	for _, c := range []Config{{Users: 0, LogRows: 10}, {Users: MaxUsers + 1}, {Users: 10, LogRows: -1}} {
		if err := c.WriteSQL(&bytes.Buffer{}); err == nil {
			t.Errorf("WriteSQL(%+v): no error", c)
		}
		if _, err := c.Initial(); err == nil {
			t.Errorf("Initial(%+v): no error", c)
		}
	}
	for name, f := range map[string]func(){
		"user 0":       func() { small.User(0) },
		"user too big": func() { small.User(int64(small.Users) + 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestWordLists(t *testing.T) {
	for _, w := range commonLogins {
		if strings.ContainsAny(w, forbidden) || w == "" {
			t.Errorf("common login %q holds a forbidden character", w)
		}
	}
	if strings.ContainsAny(PasswordChars, forbidden) {
		t.Error("password characters hold a forbidden one")
	}
}

var errStop = errors.New("stop")

// failingWriter fails on its first write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errStop }

func TestWriteError(t *testing.T) {
	if err := small.WriteSQL(failingWriter{}); !errors.Is(err, errStop) {
		t.Errorf("WriteSQL to a failing writer = %v", err)
	}
}

// To log in by hand, take a user's password from User.
func ExampleConfig_User() {
	c := Default()
	for _, id := range []int64{1, 2, 200000} {
		u := c.User(id)
		fmt.Println(u.Login, u.Password, u.Home)
	}
	// Output:
	// u0000001 kfxw38fn 10.116.64.0/24
	// u0000002 wp5pa7488 10.13.16.0/24
	// u0200000 w7i6ribvt 10.30.165.0/24
}
