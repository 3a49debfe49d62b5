package portal_test

import (
	"strings"
	"testing"

	"github.com/tunecon/tunecon/internal/portal"
)

// TestCheckTeamName: a name is trimmed; an empty or long one, or one with
// control or invisible formatting characters (which would let it pass for
// another team's), is refused.
func TestCheckTeamName(t *testing.T) {
	if got, err := portal.CheckTeamName("  Blue Herons  "); got != "Blue Herons" || err != nil {
		t.Errorf("%q, %v", got, err)
	}
	if _, err := portal.CheckTeamName("チーム・速い"); err != nil {
		t.Errorf("a Japanese name: %v", err)
	}
	for _, name := range []string{"", "   ", strings.Repeat("x", portal.MaxTeamName+1), "a\nb", "a\x00b",
		"top\u200bteam", "team\u202eevil", "\ufeffteam", "a\u2066b"} {
		if _, err := portal.CheckTeamName(name); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("%q: %v, want refused", name, err)
		}
	}
}
