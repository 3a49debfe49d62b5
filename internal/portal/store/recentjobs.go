package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// RecentJobTimes returns how long the last n finished benchmarks took, from
// their start to their end, the newest first: what the portal's estimates
// of a job's wait and of its time left are made of.
func (q *queries) RecentJobTimes(ctx context.Context, n int) ([]time.Duration, error) {
	rows, err := q.query(ctx, `SELECT started_at, finished_at FROM jobs
		WHERE kind = 'normal' AND state = 'finished' AND started_at IS NOT NULL AND finished_at IS NOT NULL
		ORDER BY finished_at DESC, id DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("store: recent jobs' times: %w", err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var started, finished sql.NullTime
		if err := rows.Scan(&started, &finished); err != nil {
			return nil, fmt.Errorf("store: recent jobs' times: %w", err)
		}
		if d := finished.Time.Sub(started.Time); d > 0 {
			out = append(out, d)
		}
	}
	return out, rows.Err()
}

// RecentTeamJobs lists a team's last n own jobs, the newest first, with
// their state, verdict, score and times only (not their results or logs):
// the team's dashboard.
func (q *queries) RecentTeamJobs(ctx context.Context, teamID int64, n int) ([]portal.Job, error) {
	rows, err := q.query(ctx, `SELECT id, state, verdict, score, created_at, started_at, finished_at FROM jobs
		WHERE team_id = ? AND kind = 'normal' ORDER BY id DESC LIMIT ?`, teamID, n)
	if err != nil {
		return nil, fmt.Errorf("store: a team's recent jobs: %w", err)
	}
	defer rows.Close()
	var out []portal.Job
	for rows.Next() {
		j := portal.Job{TeamID: teamID, Kind: portal.KindNormal}
		var state, verdict string
		var score sql.NullFloat64
		var started, finished sql.NullTime
		if err := rows.Scan(&j.ID, &state, &verdict, &score, &j.CreatedAt, &started, &finished); err != nil {
			return nil, fmt.Errorf("store: a team's recent jobs: %w", err)
		}
		j.State, j.Verdict, j.Score = portal.JobState(state), portal.Verdict(verdict), score.Float64
		j.StartedAt, j.FinishedAt = started.Time, finished.Time
		out = append(out, j)
	}
	return out, rows.Err()
}
