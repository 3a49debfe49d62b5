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
		t.Errorf("%d keys after made-up logins, want 1 (the source)", len(l.times))
	}
	for i := range maxLimiterKeys {
		l.reserve(rule{key: "src:" + strconv.Itoa(i), limit: 1, window: LoginWindow})
	}
	now = now.Add(SignupWindow)
	l.reserve(rule{key: "src:last", limit: 1, window: LoginWindow})
	if len(l.times) != 1 {
		t.Errorf("%d keys after a sweep, want 1", len(l.times))
	}
}
