package portal

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// RankRule is how a team's score is chosen among its passed jobs.
type RankRule string

const (
	// RankLatest: the score of the team's latest passed job, as ISUCON
	// ranks (a team that breaks its app loses its place).
	RankLatest RankRule = "latest"
	// RankBest: the best score of any of its passed jobs.
	RankBest RankRule = "best"
)

// Valid reports whether r is RankLatest or RankBest.
func (r RankRule) Valid() bool { return r == RankLatest || r == RankBest }

// MaxBrackets and MaxBracket bound the brackets: how many, and a name's
// characters.
const (
	MaxBrackets = 8
	MaxBracket  = 20
)

// CheckBracket refuses a bracket name that is empty, too long, or holds a
// comma (the admin's form lists brackets separated by commas) or a control
// or formatting character.
func CheckBracket(name string) error {
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxBracket || strings.TrimSpace(name) != name ||
		strings.ContainsFunc(name, func(r rune) bool { return r == ',' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return Errorf(CodeInvalid, "a bracket's name has 1 to %d characters, no commas, no spaces around it", MaxBracket)
	}
	return nil
}

// Standing is a team's line on the leaderboard: the score of its latest
// (or best, RankBest) passed job.
type Standing struct {
	// Rank is 1 for the first; 0 for a team with no passed job yet, and
	// for a hidden team.
	Rank   int
	TeamID int64
	Team   string
	// Bracket and Hidden are the team's (Team.Bracket, Team.Hidden).
	Bracket string
	Hidden  bool
	// Disqualified and DQReason are the team's: a disqualified team takes
	// no rank and comes last.
	Disqualified bool
	DQReason     string
	// Score and ReachedAt are the ranked job's score and the time the team
	// reached it (zero with Passed false).
	Passed    bool
	Score     float64
	ReachedAt time.Time
	// Runs counts the team's finished jobs, passed or failed.
	Runs int
}

// Rank orders standings and numbers them: teams with a passed job first,
// by score, a tie going to the team that reached its score first (then to
// the older team); then the others, oldest team first; disqualified teams
// last, in the same order. Every ranked team has its own rank. A hidden
// team keeps its place in the order, for the staff, but takes no rank: the
// others' ranks are those of the public board. A disqualified team takes
// none either.
func Rank(s []Standing) {
	slices.SortStableFunc(s, func(a, b Standing) int {
		if a.Disqualified != b.Disqualified {
			if b.Disqualified {
				return -1
			}
			return 1
		}
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
	n := 0
	for i := range s {
		s[i].Rank = 0
		if s[i].Passed && !s[i].Hidden && !s[i].Disqualified {
			n++
			s[i].Rank = n
		}
	}
}

// Board is the standings of one board: those of bracket (every bracket
// when ""), without hidden teams unless staff, ranked anew.
func Board(all []Standing, bracket string, staff bool) []Standing {
	out := make([]Standing, 0, len(all))
	for _, s := range all {
		if (bracket == "" || s.Bracket == bracket) && (staff || !s.Hidden) {
			out = append(out, s)
		}
	}
	Rank(out)
	return out
}

// ScorePoint is one passed job on the score-over-time chart.
type ScorePoint struct {
	TeamID int64
	At     time.Time
	Score  float64
}
