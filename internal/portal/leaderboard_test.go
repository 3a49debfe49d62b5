package portal_test

import (
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// TestRank: passed teams by score, a tie to who reached it first; teams
// without a passed job after them, unranked.
func TestRank(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := []portal.Standing{
		{TeamID: 1, Team: "none"},
		{TeamID: 2, Team: "late tie", Passed: true, Score: 500, ReachedAt: t0.Add(time.Minute)},
		{TeamID: 3, Team: "top", Passed: true, Score: 900, ReachedAt: t0.Add(time.Hour)},
		{TeamID: 4, Team: "early tie", Passed: true, Score: 500, ReachedAt: t0},
		{TeamID: 5, Team: "zero", Passed: true, Score: 0, ReachedAt: t0},
	}
	portal.Rank(s)
	want := []struct {
		team string
		rank int
	}{{"top", 1}, {"early tie", 2}, {"late tie", 3}, {"zero", 4}, {"none", 0}}
	for i, w := range want {
		if s[i].Team != w.team || s[i].Rank != w.rank {
			t.Errorf("line %d: %s ranked %d, want %s ranked %d", i+1, s[i].Team, s[i].Rank, w.team, w.rank)
		}
	}
}
