package portal

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Open data: a team's read-only API tokens. A token reads what its team
// sees in a browser (the public board, frozen as the public's, its own
// line, its own jobs) and nothing else: it changes nothing, opens no page
// and no form.
const (
	// MaxAPITokens is how many tokens a team holds at once.
	MaxAPITokens = 5
	// MaxAPITokenName bounds a token's name, in characters.
	MaxAPITokenName = 40
	// APITokenPrefix starts every API token, so that one pasted where it
	// should not be is recognised (by people and by secret scanners).
	APITokenPrefix = "tct_"
	// APITokenTouch is how stale a token's last-used time may get: a token
	// used again within it is not written again.
	APITokenTouch = time.Minute
)

// APIToken is a team's read-only API token as the portal keeps it: its
// SHA-256 (TokenHash), never the token itself, which its team sees once.
type APIToken struct {
	ID     int64
	TeamID int64
	Name   string
	// CreatedBy is the login of the member who made it.
	CreatedBy string
	CreatedAt time.Time
	// LastUsedAt is when it was last used, to APITokenTouch (zero: never).
	LastUsedAt time.Time
}

// NewAPIToken returns a new API token, shown to its team once, and its
// hash, kept in the database: APITokenPrefix and 32 random bytes in hex.
func NewAPIToken() (token, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token = APITokenPrefix + hex.EncodeToString(b)
	return token, TokenHash(token)
}

// CheckAPITokenName returns a token's name trimmed: 1 to MaxAPITokenName
// characters, no control or formatting characters.
func CheckAPITokenName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxAPITokenName || !utf8.ValidString(name) ||
		strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return "", Errorf(CodeInvalid, "a token's name has 1 to %d characters, none of them control characters", MaxAPITokenName)
	}
	return name, nil
}
