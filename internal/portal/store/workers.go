package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
)

// StartWorker records a worker starting: its row is created or, for a name
// seen before, started afresh (its counts are kept).
func (q *queries) StartWorker(ctx context.Context, name string, problems []string) error {
	if problems == nil {
		problems = []string{}
	}
	list, err := json.Marshal(problems)
	if err != nil {
		return err
	}
	now := q.stamp()
	_, err = q.exec(ctx, `INSERT INTO workers (name, started_at, heartbeat_at, doing, problems) VALUES (?, ?, ?, 'idle', ?)
		ON CONFLICT (name) DO UPDATE SET started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at,
			doing = excluded.doing, problems = excluded.problems`, name, now, now, string(list))
	if err != nil {
		return fmt.Errorf("store: starting worker %q: %w", name, err)
	}
	return nil
}

// Heartbeat records that a worker is alive and what it is doing.
func (q *queries) Heartbeat(ctx context.Context, name, doing string) error {
	_, err := q.exec(ctx, `UPDATE workers SET heartbeat_at = ?, doing = ? WHERE name = ?`, q.stamp(), doing, name)
	if err != nil {
		return fmt.Errorf("store: worker %q's heartbeat: %w", name, err)
	}
	return nil
}

// CountJob counts a job a worker ended; internal says the benchmarker's own
// fault errored it.
func (q *queries) CountJob(ctx context.Context, name string, internal bool) error {
	n := 0
	if internal {
		n = 1
	}
	_, err := q.exec(ctx, `UPDATE workers SET jobs_done = jobs_done + 1, internal_errors = internal_errors + ? WHERE name = ?`, n, name)
	if err != nil {
		return fmt.Errorf("store: worker %q's counts: %w", name, err)
	}
	return nil
}

// Workers lists the workers by name.
func (q *queries) Workers(ctx context.Context) ([]portal.Worker, error) {
	rows, err := q.query(ctx, `SELECT name, started_at, heartbeat_at, doing, problems, jobs_done, internal_errors,
			quarantined_at, quarantine_reason
		FROM workers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: listing workers: %w", err)
	}
	defer rows.Close()
	var out []portal.Worker
	for rows.Next() {
		var w portal.Worker
		var problems string
		var quarantined sql.NullTime
		if err := rows.Scan(&w.Name, &w.StartedAt, &w.HeartbeatAt, &w.Doing, &problems, &w.JobsDone, &w.InternalErrors,
			&quarantined, &w.Quarantine.Reason); err != nil {
			return nil, fmt.Errorf("store: listing workers: %w", err)
		}
		w.Quarantine.At = quarantined.Time
		if err := json.Unmarshal([]byte(problems), &w.Problems); err != nil {
			return nil, fmt.Errorf("store: worker %q's problems: %w", w.Name, err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// RecentWorkerJobs lists each worker's last n ended jobs (finished or
// errored), newest first, of those it ended after staff last cleared its
// quarantine: what the admin page judges a worker's health by, and the
// quarantine rule too.
func (q *queries) RecentWorkerJobs(ctx context.Context, n int) (map[string][]portal.Job, error) {
	return q.recentWorkerJobs(ctx, n, "")
}

func (q *queries) recentWorkerJobs(ctx context.Context, n int, only string) (map[string][]portal.Job, error) {
	rows, err := q.query(ctx, `SELECT worker, team_id, state, error_code FROM (
			SELECT j.worker, j.team_id, j.state, j.error_code,
				ROW_NUMBER() OVER (PARTITION BY j.worker ORDER BY j.finished_at DESC, j.id DESC) AS k
			FROM jobs j LEFT JOIN workers w ON w.name = j.worker
			WHERE j.worker <> '' AND (CAST(? AS TEXT) = '' OR j.worker = CAST(? AS TEXT)) AND j.state IN ('finished', 'errored')
				AND (w.cleared_at IS NULL OR j.finished_at > w.cleared_at)
		) AS recent WHERE k <= ?`, only, only, n)
	if err != nil {
		return nil, fmt.Errorf("store: workers' recent jobs: %w", err)
	}
	defer rows.Close()
	out := map[string][]portal.Job{}
	for rows.Next() {
		var j portal.Job
		var state string
		if err := rows.Scan(&j.Worker, &j.TeamID, &state, &j.ErrorCode); err != nil {
			return nil, fmt.Errorf("store: workers' recent jobs: %w", err)
		}
		j.State = portal.JobState(state)
		out[j.Worker] = append(out[j.Worker], j)
	}
	return out, rows.Err()
}
