package portal

import (
	"cmp"
	"slices"
	"time"
)

// Standing is a team's line on the leaderboard: the score of its latest
// passed job.
type Standing struct {
	// Rank is 1 for the first; 0 for a team with no passed job yet.
	Rank   int
	TeamID int64
	Team   string
	// Score and ReachedAt are the latest passed job's score and the time it
	// finished (zero with Passed false).
	Passed    bool
	Score     float64
	ReachedAt time.Time
	// Runs counts the team's finished jobs, passed or failed.
	Runs int
}

// Rank orders standings and numbers them: teams with a passed job first,
// by score, a tie going to the team that reached its score first (then to
// the older team); then the others, oldest team first. Every ranked team
// has its own rank.
func Rank(s []Standing) {
	slices.SortStableFunc(s, func(a, b Standing) int {
		if a.Passed != b.Passed {
			if a.Passed {
				return -1
			}
			return 1
		}
		if a.Passed {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			if c := a.ReachedAt.Compare(b.ReachedAt); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.TeamID, b.TeamID)
	})
	for i := range s {
		s[i].Rank = 0
		if s[i].Passed {
			s[i].Rank = i + 1
		}
	}
}

// ScorePoint is one passed job on the score-over-time chart.
type ScorePoint struct {
	TeamID int64
	At     time.Time
	Score  float64
}
