// Package data generates the initial data of the dashboard problem, the same
// bytes for the same Config on every machine: users of four grades with salted
// password hashes, and each user's subscriptions to the external services, and
// it holds the facts the app and the benchmarker share: the services, the
// grades, which grade may use which service, and the dashboard's refresh
// interval.
//
// Every user comes from its own datagen.Stream, seeded from the Config's seed
// and the user's id, so the benchmarker models any user with User without
// reading the app's database; the reference apps load the dump that WriteSQL
// writes.
package data

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/kit/datagen"
)

// Version is the version of the generated data. Bump it whenever the bytes
// WriteSQL writes for a Config change, so that dumps written by an older
// generator are replaced (see EnsureSQL).
const Version = 1

// TimeFormat is how times are written in the dump, in UTC.
const TimeFormat = "2006-01-02 15:04:05"

// The services, in the order of the manual's table (and of the reference apps'
// calls).
const (
	Postal    = "postal"
	Postal2   = "postal2"
	Surname   = "surname"
	GivenName = "givenname"
	Weather   = "weather"
	Security  = "security"
	Attacked  = "attacked"
)

// Services lists every service in the manual's order.
var Services = []string{Postal, Postal2, Surname, GivenName, Weather, Security, Attacked}

// The grades, from the least to the most.
const (
	Micro    = "micro"
	Small    = "small"
	Standard = "standard"
	Premium  = "premium"
)

// Grades lists the grades from the least to the most.
var Grades = []string{Micro, Small, Standard, Premium}

// gradeShare is the percentage of the initial users in each grade, in Grades'
// order (MANUAL: "Initial data").
var gradeShare = []int{40, 30, 20, 10}

// Allowed lists the services a grade may subscribe to, in the manual's order.
func Allowed(grade string) []string {
	switch grade {
	case Micro:
		return []string{Postal, Postal2, Surname}
	case Small:
		return []string{Postal, Postal2, Surname, GivenName}
	case Standard:
		return []string{Postal, Postal2, Surname, GivenName, Weather}
	case Premium:
		return slices.Clone(Services)
	}
	return nil
}

// Allows reports whether grade may subscribe to service.
func Allows(grade, service string) bool { return slices.Contains(Allowed(grade), service) }

// Refresh is the dashboard's refresh interval for a grade (what /user.js says).
func Refresh(grade string) time.Duration {
	switch grade {
	case Standard:
		return 20 * time.Second
	case Premium:
		return 10 * time.Second
	}
	return 30 * time.Second
}

// Params are one subscription's parameters; which fields a service uses is in
// the manual.
type Params struct {
	Code     string `json:"code,omitempty"`
	Q        string `json:"q,omitempty"`
	Location string `json:"location,omitempty"`
	Req      string `json:"req,omitempty"`
	Token    string `json:"token,omitempty"`
}

// Subscriptions maps a service to its parameters.
type Subscriptions map[string]Params

// JSON is the subscriptions as the dump stores them: one object, keys in sorted
// order.
func (s Subscriptions) JSON() string {
	b, err := json.Marshal(map[string]Params(s))
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return string(b)
}

// subscribeShare is the percentage of chance that a user subscribes to each
// service its grade allows.
const subscribeShare = 70

// Config says which data to generate.
type Config struct {
	Seed  uint64
	Users int // users 1..Users
}

// Default returns the configuration of the problem's initial data. The
// reference apps know its size (10000 users): change them together.
func Default() Config { return Config{Seed: 20151031, Users: 10000} }

// User is one generated user.
type User struct {
	ID       int64
	Email    string
	Password string
	Salt     string
	Grade    string
	// CreatedAt is when the user signed up.
	CreatedAt time.Time
	Subs      Subscriptions
}

// PasswordHash is what the users table stores: the hex SHA-512 of the salt
// followed by the password.
func (u User) PasswordHash() string { return HashPassword(u.Salt, u.Password) }

// HashPassword returns the hex SHA-512 of salt followed by password.
func HashPassword(salt, password string) string {
	sum := sha512.Sum512([]byte(salt + password))
	return hex.EncodeToString(sum[:])
}

// Email is user id's email address.
func Email(id int64) string { return "user" + strconv.FormatInt(id, 10) + "@dashboard.test" }

// Stream kinds, mixed into the seeds.
const (
	kindUser uint64 = 0x7573657273 // "users"
)

var base = time.Date(2015, 10, 1, 0, 0, 0, 0, time.UTC).Unix()

const (
	hexChars      = "0123456789abcdef"
	passwordChars = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	reqChars      = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// User returns user id, for 1 <= id <= c.Users. It panics when id is out of
// range.
func (c Config) User(id int64) User {
	if id < 1 || id > int64(c.Users) {
		panic(fmt.Sprintf("dashboard data: user id %d out of range [1, %d]", id, c.Users))
	}
	g := datagen.Stream(c.Seed, kindUser, uint64(id))
	u := User{
		ID:        id,
		Email:     Email(id),
		Password:  draw(g.Intn, passwordChars, 12),
		Salt:      draw(g.Intn, hexChars, 16),
		CreatedAt: time.Unix(base+id*60, 0).UTC(),
		Subs:      Subscriptions{},
	}
	n := g.Intn(100)
	for i, share := range gradeShare {
		if n < share {
			u.Grade = Grades[i]
			break
		}
		n -= share
	}
	for _, service := range Allowed(u.Grade) {
		if g.Intn(100) < subscribeShare {
			u.Subs[service] = NewParams(g.Intn, service)
		}
	}
	return u
}

// NewParams draws parameters for a subscription to service with intn, which
// returns a number in [0, n): a datagen stream's for the initial data, a user's
// random source during a run.
//
// Names' prefixes are a syllable or two, which most names start with;
// security's req comes from a small set that many users share, so that an
// answer cached by req alone goes to the wrong user.
func NewParams(intn func(n int) int, service string) Params {
	switch service {
	case Postal, Postal2:
		return Params{Code: strconv.Itoa(1000000 + intn(9000000))}
	case Surname, GivenName:
		q := syllables[intn(len(syllables))]
		if intn(2) == 0 {
			q += syllables[intn(len(syllables))]
		}
		return Params{Q: q}
	case Weather:
		return Params{Location: fmt.Sprintf("L%04d", intn(10000))}
	case Security:
		return Params{Req: reqs[intn(len(reqs))], Token: draw(intn, hexChars, 32)}
	case Attacked:
		return Params{Token: draw(intn, hexChars, 32)}
	}
	panic("dashboard data: no service " + service)
}

// syllables start the names' prefixes.
var syllables = []string{"a", "ka", "ki", "ko", "sa", "shi", "su", "ta", "to", "na", "no", "ha", "hi", "ma", "mi",
	"mo", "ya", "yo", "ra", "ri", "wa", "i", "u", "e", "o", "ku", "se", "te", "ni", "fu", "mu", "ro"}

// reqs are the security service's request names the initial users and the
// benchmarker use.
var reqs = func() []string {
	out := make([]string, 40)
	for i := range out {
		g := datagen.Stream(0x72657173, 0, uint64(i)) // fixed: the same on every seed
		out[i] = draw(g.Intn, reqChars, 4+g.Intn(9))
	}
	return out
}()

// Password draws a password for a new user.
func Password(intn func(n int) int) string { return draw(intn, passwordChars, 12) }

func draw(intn func(n int) int, chars string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[intn(len(chars))]
	}
	return string(b)
}

// header is the first line of the dump; EnsureSQL compares it to tell whether a
// dump is current.
func (c Config) header() string {
	return fmt.Sprintf("-- tunecon dashboard initial data v%d seed=%d users=%d", Version, c.Seed, c.Users)
}

// WriteSQL writes the whole initial data as SQL: the header line, then INSERT
// statements of at most datagen.RowsPerInsert rows, each ending with ");\n" at
// the end of a line: users, then subscriptions (one row per user, its JSON). No
// generated text holds a quote, a backslash or a semicolon.
func (c Config) WriteSQL(w io.Writer) error {
	if c.Users < 0 {
		return errors.New("dashboard data: negative size")
	}
	sw := datagen.NewSQLWriter(w, c.header())
	sw.Table("INSERT INTO users (id, email, salt, passhash, grade, created_at) VALUES", int64(c.Users))
	for id := int64(1); id <= int64(c.Users); id++ {
		u := c.User(id)
		row := append(sw.Buf(), '(')
		row = strconv.AppendInt(row, u.ID, 10)
		for _, v := range []string{u.Email, u.Salt, u.PasswordHash(), u.Grade, u.CreatedAt.Format(TimeFormat)} {
			row = append(row, ',')
			row = datagen.AppendQuoted(row, v)
		}
		if err := sw.Row(append(row, ')')); err != nil {
			return err
		}
	}
	sw.Table("INSERT INTO subscriptions (user_id, arg) VALUES", int64(c.Users))
	for id := int64(1); id <= int64(c.Users); id++ {
		u := c.User(id)
		row := append(sw.Buf(), '(')
		row = strconv.AppendInt(row, u.ID, 10)
		row = append(row, ',')
		row = datagen.AppendQuoted(row, u.Subs.JSON())
		if err := sw.Row(append(row, ')')); err != nil {
			return err
		}
	}
	return sw.Close()
}

// EnsureSQL writes c's dump to path unless a file there already starts with the
// same header line, and reports whether it wrote.
func EnsureSQL(path string, c Config) (bool, error) {
	return datagen.Ensure(path, c.header(), c.WriteSQL)
}

// CheckParams reports whether p are parameters of the manual's forms for
// service (only the fields it uses).
func CheckParams(service string, p Params) error {
	only := func(set ...string) bool {
		fields := map[string]string{"code": p.Code, "q": p.Q, "location": p.Location, "req": p.Req, "token": p.Token}
		for name, v := range fields {
			if (v != "") != slices.Contains(set, name) {
				return false
			}
		}
		return true
	}
	var ok bool
	switch service {
	case Postal, Postal2:
		ok = only("code") && all(p.Code, 7, 7, "0123456789")
	case Surname, GivenName:
		ok = only("q") && all(p.Q, 1, 8, "abcdefghijklmnopqrstuvwxyz")
	case Weather:
		ok = only("location") && len(p.Location) == 5 && p.Location[0] == 'L' && all(p.Location[1:], 4, 4, "0123456789")
	case Security:
		ok = only("req", "token") && all(p.Req, 1, 16, reqChars) && all(p.Token, 32, 32, hexChars)
	case Attacked:
		ok = only("token") && all(p.Token, 32, 32, hexChars)
	default:
		return fmt.Errorf("no service %q", service)
	}
	if !ok {
		return fmt.Errorf("bad parameters for %s", service)
	}
	return nil
}

// all reports whether s has lo to hi bytes, each one of chars.
func all(s string, lo, hi int, chars string) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := range len(s) {
		if !strings.ContainsRune(chars, rune(s[i])) {
			return false
		}
	}
	return true
}
