package portal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

const (
	// DefaultMaxTeamSize is how many accounts a team holds unless the
	// contest's settings say otherwise.
	DefaultMaxTeamSize = 3
	// MinPassword and MaxPassword bound a password's length in bytes
	// (bcrypt reads 72 bytes at most: a longer password is refused rather
	// than cut silently).
	MinPassword = 8
	MaxPassword = 72
	// MaxLogin and MaxTeamName bound names, in characters.
	MaxLogin    = 32
	MaxTeamName = 40
	// DefaultSessionTTL is how long a login lasts.
	DefaultSessionTTL = 7 * 24 * time.Hour
)

// Role is what an account may do.
type Role string

const (
	// RoleAdmin runs the contest: every team, job, staff log and worker.
	RoleAdmin Role = "admin"
	// RoleContestant belongs to at most one team and sees only its own.
	RoleContestant Role = "contestant"
)

// Account is a person who signs in.
type Account struct {
	ID    int64
	Login string
	Role  Role
	// TeamID is the account's team (0 for none; admins have none).
	TeamID    int64
	CreatedAt time.Time
	// Name and Email are how the organiser knows its owner (the team
	// import's), "" when not given.
	Name  string
	Email string
}

// Admin reports whether a is an admin.
func (a Account) Admin() bool { return a.Role == RoleAdmin }

// CheckLogin returns a login in its one spelling (lower case): 3 to
// MaxLogin letters, digits, '-', '_' or '.'.
func CheckLogin(login string) (string, error) {
	login = strings.ToLower(strings.TrimSpace(login))
	if n := utf8.RuneCountInString(login); n < 3 || n > MaxLogin {
		return "", Errorf(CodeInvalid, "a login has 3 to %d characters", MaxLogin)
	}
	for _, r := range login {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return "", Errorf(CodeInvalid, "a login has only letters a-z, digits and - _ .")
		}
	}
	return login, nil
}

// CheckPassword refuses a password too short or too long to hash.
func CheckPassword(password string) error {
	if len(password) < MinPassword || len(password) > MaxPassword {
		return Errorf(CodeInvalid, "a password has %d to %d bytes", MinPassword, MaxPassword)
	}
	return nil
}

// CheckTeamName returns a team name trimmed: 1 to MaxTeamName characters,
// none of them control characters, one at least that shows. Names are
// shown as text, whatever they hold; two that look alike are one
// (NameKey), which the store keeps to one team.
func CheckTeamName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxTeamName || !utf8.ValidString(name) {
		return "", Errorf(CodeInvalid, "a team name has 1 to %d characters", MaxTeamName)
	}
	// Format characters (zero-width spaces, direction overrides) would let
	// one team's name pass for another's on the leaderboard.
	if strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return "", Errorf(CodeInvalid, "a team name has no control or invisible formatting characters")
	}
	if NameKey(name) == "" {
		return "", Errorf(CodeInvalid, "a team name has a character that shows")
	}
	return name, nil
}

// Passwords hashes and checks passwords with bcrypt.
type Passwords struct {
	// Cost is bcrypt's cost (bcrypt.DefaultCost when zero); tests lower it.
	Cost int
}

// Hash returns the hash to store for password.
func (p Passwords) Hash(password string) (string, error) {
	if err := CheckPassword(password); err != nil {
		return "", err
	}
	cost := p.Cost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// Match reports whether password is the one hash was made from. It takes
// as long for a wrong password as for a right one.
func (Passwords) Match(hash, password string) bool {
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
	return err == nil
}

// DummyHash is a hash to compare with when a login does not exist, so that
// an unknown login takes as long to refuse as a wrong password.
func (p Passwords) DummyHash() string {
	h, err := p.Hash("not a password of anyone")
	if err != nil {
		panic(err) // the fixed password fits
	}
	return h
}

// NewToken returns a random session token, sent to the browser, and its
// hash, kept in the database: a stolen database gives no working session.
func NewToken() (token, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token = hex.EncodeToString(b)
	return token, TokenHash(token)
}

// TokenHash is the stored form of a session token.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewInviteCode returns a team's invite code: 16 characters of base32, easy
// to read out and type.
func NewInviteCode() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.EncodeToString(b))
}

// ErrBadLogin is a refused sign-in: no such login or a wrong password (the
// same error for both).
var ErrBadLogin = Errorf(CodeDenied, "wrong login or password")

// IsDenied reports whether err refuses access.
func IsDenied(err error) bool { return errors.Is(err, ErrBadLogin) || ErrorCode(err) == CodeDenied }
