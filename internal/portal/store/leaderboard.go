package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// BoardOptions choose how Leaderboard reads the board.
type BoardOptions struct {
	// Rule chooses each team's score among its passed jobs (RankLatest when
	// empty).
	Rule portal.RankRule
	// Before, when not zero, counts only the jobs that finished before it:
	// the board as it stood then (at a freeze).
	Before time.Time
}

// never is the cutoff of a board that counts every job.
var never = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// Leaderboard reads every team's standing, hidden teams too, ranked
// (portal.Rank), counting the finished jobs before o.Before.
//
// With RankLatest a team's score is its latest passed job's (j); it reached
// that score with the first of the passed jobs that scored it since its
// last passed job that scored otherwise (r), so running the same app again
// keeps a tie won. With RankBest its score is its best passed job's, which
// it reached with the first job that scored it (j and r are one job).
func (q *queries) Leaderboard(ctx context.Context, o BoardOptions) ([]portal.Standing, error) {
	before := o.Before
	if before.IsZero() {
		before = never
	}
	before = before.UTC()
	// Validation jobs never count: only a team's own (kind 'normal').
	const passed = `p.team_id = t.id AND p.kind = 'normal' AND p.state = 'finished' AND p.verdict = 'passed' AND p.finished_at < ?`
	pick, reached := `ORDER BY p.finished_at DESC, p.id DESC`, `LEFT JOIN jobs r ON r.id = (
			SELECT p.id FROM jobs p WHERE `+passed+` AND p.score = j.score AND NOT EXISTS (
					SELECT 1 FROM jobs o WHERE o.team_id = t.id AND o.kind = 'normal' AND o.state = 'finished' AND o.verdict = 'passed'
						AND o.score <> j.score AND o.finished_at >= p.finished_at AND o.finished_at < ?)
			ORDER BY p.finished_at, p.id LIMIT 1)`
	args := []any{before, before, before, before}
	switch o.Rule {
	case "", portal.RankLatest:
	case portal.RankBest:
		pick, reached = `ORDER BY p.score DESC, p.finished_at, p.id`, `LEFT JOIN jobs r ON r.id = j.id`
		args = args[:2]
	default:
		return nil, portal.Errorf(portal.CodeInvalid, "no ranking rule %q", o.Rule)
	}
	rows, err := q.query(ctx, `SELECT t.id, t.name, t.bracket, t.hidden, t.disqualified, t.dq_reason,
			(SELECT COUNT(*) FROM jobs f WHERE f.team_id = t.id AND f.kind = 'normal' AND f.state = 'finished' AND f.finished_at < ?),
			j.score, r.finished_at
		FROM teams t
		LEFT JOIN jobs j ON j.id = (SELECT p.id FROM jobs p WHERE `+passed+` `+pick+` LIMIT 1)
		`+reached+`
		ORDER BY t.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading the leaderboard: %w", err)
	}
	defer rows.Close()
	var out []portal.Standing
	for rows.Next() {
		var (
			s     portal.Standing
			score sql.NullFloat64
			at    sql.NullTime
		)
		if err := rows.Scan(&s.TeamID, &s.Team, &s.Bracket, &s.Hidden, &s.Disqualified, &s.DQReason, &s.Runs, &score, &at); err != nil {
			return nil, fmt.Errorf("store: reading the leaderboard: %w", err)
		}
		s.Passed, s.Score, s.ReachedAt = score.Valid, score.Float64, at.Time
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading the leaderboard: %w", err)
	}
	portal.Rank(out)
	return out, nil
}

// ScoreHistory lists the passed jobs of every team, oldest first: the
// points of the score-over-time chart.
func (q *queries) ScoreHistory(ctx context.Context) ([]portal.ScorePoint, error) {
	rows, err := q.query(ctx, `SELECT team_id, finished_at, score FROM jobs
		WHERE kind = 'normal' AND state = 'finished' AND verdict = 'passed' ORDER BY finished_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: reading the score history: %w", err)
	}
	defer rows.Close()
	var out []portal.ScorePoint
	for rows.Next() {
		var p portal.ScorePoint
		if err := rows.Scan(&p.TeamID, &p.At, &p.Score); err != nil {
			return nil, fmt.Errorf("store: reading the score history: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Changes is a cheap fingerprint of what the leaderboard shows: it changes
// when a job finishes, a team is added, or the contest or a team's place
// on the board changes (the contest's revision). The portal polls it to
// know when to read the leaderboard again.
func (q *queries) Changes(ctx context.Context) (string, error) {
	var finished, maxID, teams, revision int64
	err := q.queryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM jobs WHERE kind = 'normal' AND state = 'finished'),
			(SELECT COALESCE(MAX(id), 0) FROM jobs WHERE kind = 'normal' AND state = 'finished'),
			(SELECT COUNT(*) FROM teams),
			(SELECT COALESCE(MAX(revision), 0) FROM contest)`).Scan(&finished, &maxID, &teams, &revision)
	if err != nil {
		return "", fmt.Errorf("store: reading changes: %w", err)
	}
	return fmt.Sprintf("%d/%d/%d/%d", finished, maxID, teams, revision), nil
}
