package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
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
