package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// Position is a queued job's place in its River queue, 1 for the next to
// run, in River's own fetch order (priority, then scheduled time, then id:
// first come first served); 0 when River does not have it waiting.
func (q *queries) Position(ctx context.Context, riverJobID int64) (int, error) {
	var pos sql.NullInt64
	err := q.queryRow(ctx, `SELECT CASE WHEN j.state = 'available' THEN (
			SELECT count(*) FROM river_job o
			WHERE o.state = 'available' AND o.queue = j.queue
				AND (o.priority, o.scheduled_at, o.id) <= (j.priority, j.scheduled_at, j.id)
		) END
		FROM river_job j WHERE j.id = ?`, riverJobID).Scan(&pos)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: River job %d's position: %w", riverJobID, err)
	}
	return int(pos.Int64), nil
}

// RiverView is an active job beside the River job behind it.
type RiverView struct {
	JobID    int64
	State    portal.JobState
	Attempts int
	// RiverState is the River job's state ("" when River no longer has it);
	// RiverAttempt its attempt count.
	RiverState   string
	RiverAttempt int
}

// ActiveWithRiver lists every queued or running job with its River job's
// state: what the queue's settler compares.
func (q *queries) ActiveWithRiver(ctx context.Context) ([]RiverView, error) {
	// River's state is an enum on PostgreSQL, where '' is no value of it:
	// the cast makes the coalesce one of text.
	rows, err := q.query(ctx, `SELECT j.id, j.state, j.attempts, coalesce(CAST(r.state AS TEXT), ''), coalesce(r.attempt, 0)
		FROM jobs j LEFT JOIN river_job r ON r.id = j.river_job_id
		WHERE j.state IN ('queued', 'running') ORDER BY j.id`)
	if err != nil {
		return nil, fmt.Errorf("store: active jobs: %w", err)
	}
	defer rows.Close()
	var out []RiverView
	for rows.Next() {
		var v RiverView
		var state string
		if err := rows.Scan(&v.JobID, &state, &v.Attempts, &v.RiverState, &v.RiverAttempt); err != nil {
			return nil, fmt.Errorf("store: active jobs: %w", err)
		}
		v.State = portal.JobState(state)
		out = append(out, v)
	}
	return out, rows.Err()
}

// RiverLeader names the River client that leads now (a worker's name: the
// queue makes it the client's ID) and when its lease ends; "" when none
// does. The leader runs River's maintenance, the rescuer of jobs whose
// worker died among it: with no worker started, nobody rescues.
func (q *queries) RiverLeader(ctx context.Context) (string, time.Time, error) {
	var id string
	var expires time.Time
	err := q.queryRow(ctx, `SELECT leader_id, expires_at FROM river_leader`).Scan(&id, &expires)
	if err == sql.ErrNoRows {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("store: River's leader: %w", err)
	}
	return id, expires, nil
}

// Positions is Position for every waiting job at once, by the portal's job
// id: what the portal's live pages show each second.
func (q *queries) Positions(ctx context.Context) (map[int64]int, error) {
	rows, err := q.query(ctx, `SELECT j.id, ROW_NUMBER() OVER (PARTITION BY r.queue ORDER BY r.priority, r.scheduled_at, r.id)
		FROM river_job r JOIN jobs j ON j.river_job_id = r.id WHERE r.state = 'available'`)
	if err != nil {
		return nil, fmt.Errorf("store: queue positions: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var pos int
		if err := rows.Scan(&id, &pos); err != nil {
			return nil, fmt.Errorf("store: queue positions: %w", err)
		}
		out[id] = pos
	}
	return out, rows.Err()
}
