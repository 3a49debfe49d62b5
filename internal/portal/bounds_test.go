package portal

import (
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// TestBounds: the portal's own checks, which the store runs whatever the
// caller, refuse a load, a team size and a target past their bounds.
func TestBounds(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, engine.MaxLoadDuration + time.Millisecond} {
		if CheckLoad(d) == nil {
			t.Errorf("a load of %s passed", d)
		}
	}
	for _, d := range []time.Duration{0, 200 * time.Millisecond, engine.MaxLoadDuration} {
		if err := CheckLoad(d); err != nil {
			t.Errorf("a load of %s: %v", d, err)
		}
	}
	for _, n := range []int{-1, MaxMembers + 1} {
		if (Settings{MaxTeamSize: n}).Check() == nil {
			t.Errorf("teams of %d passed", n)
		}
	}
	if err := (Settings{MaxTeamSize: MaxMembers}).Check(); err != nil {
		t.Errorf("teams of %d: %v", MaxMembers, err)
	}
	target := "http://192.0.2.1/" + strings.Repeat("x", MaxTarget)
	if _, err := CheckTarget(target, TargetRules{}); ErrorCode(err) != CodeInvalid {
		t.Errorf("a target of %d bytes: %v", len(target), err)
	}
}
