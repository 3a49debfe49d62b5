package web

import (
	"strconv"
	"testing"
	"time"
)

// TestLimiterRemembersOnlyRealLogins: sign-ins with logins that cannot
// exist are counted against the address only, so a spray of them costs one
// key; a sweep forgets keys whose window has passed.
func TestLimiterRemembersOnlyRealLogins(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newLimiter(func() time.Time { return now })
	for i := range 1000 {
		l.reserve(signInRules("no such login "+strconv.Itoa(i), "192.0.2.1")...)
	}
	if len(l.times) != 1 {
		t.Errorf("%d keys after made-up logins, want 1 (the address)", len(l.times))
	}
	for i := range maxLimiterKeys {
		l.reserve(rule{"addr:" + strconv.Itoa(i), 1, LoginWindow})
	}
	now = now.Add(SignupWindow)
	l.reserve(rule{"addr:last", 1, LoginWindow})
	if len(l.times) != 1 {
		t.Errorf("%d keys after a sweep, want 1", len(l.times))
	}
}
