package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
)

// QuarantineIfFaulty quarantines a worker, in the transaction that ended
// one of its jobs, when its recent jobs break portal's quarantine rule
// (portal.QuarantineErrors of its last portal.QuarantineRecent since its
// last clearance errored through the benchmarker's fault, of
// portal.QuarantineTeams teams at least), and records it
// in the audit log as the portal's own action (portal.SystemActor). It
// reports whether it quarantined the worker now; a worker quarantined
// already is left as it is.
func (t *Tx) QuarantineIfFaulty(ctx context.Context, name string) (bool, error) {
	var quarantined sql.NullTime
	err := t.queryRow(ctx, `SELECT quarantined_at FROM workers WHERE name = ?`+t.dialect.forUpdate, name).Scan(&quarantined)
	if err != nil {
		return false, notFound(err, "worker %q", name)
	}
	if quarantined.Valid {
		return false, nil
	}
	recent, err := t.recentWorkerJobs(ctx, portal.QuarantineRecent, name)
	if err != nil {
		return false, err
	}
	faults, teams, faulty := portal.Faults(recent[name])
	if !faulty {
		return false, nil
	}
	reason := fmt.Sprintf("%d of its last %d jobs (of %d teams) errored through the benchmarker's fault", faults,
		len(recent[name]), teams)
	if _, err := t.exec(ctx, `UPDATE workers SET quarantined_at = ?, quarantine_reason = ? WHERE name = ?`,
		t.stamp(), reason, name); err != nil {
		return false, fmt.Errorf("store: quarantining worker %q: %w", name, err)
	}
	return true, t.Audit(ctx, portal.SystemActor, portal.AuditQuarantine, "worker "+name,
		map[string]any{"worker": name, "reason": reason})
}

// WorkerQuarantined reports whether a worker is quarantined (false for a
// worker never started).
func (q *queries) WorkerQuarantined(ctx context.Context, name string) (bool, error) {
	var quarantined sql.NullTime
	err := q.queryRow(ctx, `SELECT quarantined_at FROM workers WHERE name = ?`, name).Scan(&quarantined)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: worker %q's quarantine: %w", name, err)
	}
	return quarantined.Valid, nil
}

// ClearQuarantine lets a quarantined worker take jobs again, for by, and
// records it in the audit log. Its health starts afresh: the jobs it ended
// before count no more. A worker not quarantined is CodeConflict.
func (s *Store) ClearQuarantine(ctx context.Context, by portal.Actor, name string) error {
	return s.InTx(ctx, func(tx *Tx) error {
		var quarantined sql.NullTime
		var reason string
		err := tx.queryRow(ctx, `SELECT quarantined_at, quarantine_reason FROM workers WHERE name = ?`+tx.dialect.forUpdate, name).
			Scan(&quarantined, &reason)
		if err != nil {
			return notFound(err, "worker %q", name)
		}
		if !quarantined.Valid {
			return portal.Errorf(portal.CodeConflict, "worker %q is not quarantined", name)
		}
		if _, err := tx.exec(ctx, `UPDATE workers SET quarantined_at = NULL, quarantine_reason = '', cleared_at = ? WHERE name = ?`,
			tx.stamp(), name); err != nil {
			return fmt.Errorf("store: clearing worker %q: %w", name, err)
		}
		return tx.Audit(ctx, by, portal.AuditClear, "worker "+name, map[string]any{"worker": name,
			"quarantined_at": auditTime(quarantined.Time), "reason": reason})
	})
}

// SetDisqualified disqualifies a team with a reason (dq) or lifts its
// disqualification (!dq, reason unused), for by, and records it in the
// audit log. Disqualifying a disqualified team again changes its reason;
// lifting a disqualification that is not there is CodeConflict.
func (s *Store) SetDisqualified(ctx context.Context, by portal.Actor, teamID int64, dq bool, reason string) error {
	if dq {
		var err error
		if reason, err = portal.CheckDQReason(reason); err != nil {
			return err
		}
	} else {
		reason = ""
	}
	return s.InTx(ctx, func(tx *Tx) error {
		// The contest's row first, then the team's: the order SetTeamPlace
		// and an enqueue take them in, so that none waits on another.
		if _, err := tx.contest(ctx, tx.dialect.forUpdate); err != nil && portal.ErrorCode(err) != portal.CodeNotFound {
			return err
		}
		team, err := scanTeam(tx.queryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = ?`+tx.dialect.forUpdate, teamID))
		if err != nil {
			return notFound(err, "team %d", teamID)
		}
		switch {
		case !dq && !team.Disqualified:
			return portal.Errorf(portal.CodeConflict, "team %d is not disqualified", teamID)
		case dq && team.Disqualified && team.DQReason == reason:
			return nil // a save that changes nothing is no action
		}
		if _, err := tx.exec(ctx, `UPDATE teams SET disqualified = ?, dq_reason = ? WHERE id = ?`, dq, reason, teamID); err != nil {
			return fmt.Errorf("store: team %d's disqualification: %w", teamID, err)
		}
		if _, err := tx.exec(ctx, `UPDATE contest SET revision = revision + 1 WHERE id = 1`); err != nil {
			return fmt.Errorf("store: the contest's revision: %w", err)
		}
		action, detail := portal.AuditDisqualify, map[string]any{"reason": portal.Change{Before: team.DQReason, After: reason}}
		if !dq {
			action = portal.AuditReinstate
		}
		return tx.Audit(ctx, by, action, fmt.Sprintf("team %d (%s)", team.ID, team.Name), detail)
	})
}

// LatestValidations reads each team's latest validation job, by team.
func (q *queries) LatestValidations(ctx context.Context) (map[int64]portal.Job, error) {
	jobs, err := q.listJobs(ctx, `SELECT `+jobColumns+` FROM jobs j WHERE kind = 'validation' AND id = (
			SELECT MAX(id) FROM jobs l WHERE l.team_id = j.team_id AND l.kind = 'validation')`)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]portal.Job, len(jobs))
	for _, j := range jobs {
		out[j.TeamID] = j
	}
	return out, nil
}

// ErroredToRerun lists the errored jobs no job re-runs yet, the newest
// first: what "re-run all errored" runs again.
func (q *queries) ErroredToRerun(ctx context.Context) ([]portal.Job, error) {
	return q.listJobs(ctx, `SELECT `+jobColumns+` FROM jobs j WHERE state = 'errored'
		AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.rerun_of = j.id) ORDER BY id DESC`)
}

// TeamRunning reports whether a team has a running job other than job id:
// a worker waits before it runs a second benchmark against the same target.
func (t *Tx) TeamRunning(ctx context.Context, teamID, id int64) (bool, error) {
	var n int
	err := t.queryRow(ctx, `SELECT COUNT(*) FROM jobs WHERE team_id = ? AND id <> ? AND state = 'running'`, teamID, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: team %d's running jobs: %w", teamID, err)
	}
	return n > 0, nil
}

// LockTeam holds a team's row until the transaction ends (PostgreSQL; on
// SQLite the immediate transaction holds the one write lock): the workers
// starting two jobs of one team take turns.
func (t *Tx) LockTeam(ctx context.Context, teamID int64) error {
	var id int64
	if err := t.queryRow(ctx, `SELECT id FROM teams WHERE id = ?`+t.dialect.forUpdate, teamID).Scan(&id); err != nil {
		return notFound(err, "team %d", teamID)
	}
	return nil
}
