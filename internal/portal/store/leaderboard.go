package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
)

// Leaderboard reads every team's standing, ranked (portal.Rank). A team's
// score is its latest passed job's (j); it reached that score with the
// first of the passed jobs that scored it since its last passed job that
// scored otherwise (r), so running the same app again keeps a tie won.
func (q *queries) Leaderboard(ctx context.Context) ([]portal.Standing, error) {
	rows, err := q.query(ctx, `SELECT t.id, t.name,
			(SELECT COUNT(*) FROM jobs f WHERE f.team_id = t.id AND f.state = 'finished'),
			j.score, r.finished_at
		FROM teams t
		LEFT JOIN jobs j ON j.id = (
			SELECT p.id FROM jobs p WHERE p.team_id = t.id AND p.state = 'finished' AND p.verdict = 'passed'
			ORDER BY p.finished_at DESC, p.id DESC LIMIT 1)
		LEFT JOIN jobs r ON r.id = (
			SELECT p.id FROM jobs p WHERE p.team_id = t.id AND p.state = 'finished' AND p.verdict = 'passed'
				AND p.score = j.score AND NOT EXISTS (
					SELECT 1 FROM jobs o WHERE o.team_id = t.id AND o.state = 'finished' AND o.verdict = 'passed'
						AND o.score <> j.score AND o.finished_at >= p.finished_at)
			ORDER BY p.finished_at, p.id LIMIT 1)
		ORDER BY t.id`)
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
		if err := rows.Scan(&s.TeamID, &s.Team, &s.Runs, &score, &at); err != nil {
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
		WHERE state = 'finished' AND verdict = 'passed' ORDER BY finished_at, id`)
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
// when a job finishes or a team is added. The portal polls it to know when
// to read the leaderboard again.
func (q *queries) Changes(ctx context.Context) (string, error) {
	var finished, maxID, teams int64
	err := q.queryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM jobs WHERE state = 'finished'),
			(SELECT COALESCE(MAX(id), 0) FROM jobs WHERE state = 'finished'),
			(SELECT COUNT(*) FROM teams)`).Scan(&finished, &maxID, &teams)
	if err != nil {
		return "", fmt.Errorf("store: reading changes: %w", err)
	}
	return fmt.Sprintf("%d/%d/%d", finished, maxID, teams), nil
}
