package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
)

const apiTokenColumns = `id, team_id, name, created_by, created_at, last_used_at`

func scanAPIToken(r scanner) (portal.APIToken, error) {
	var (
		t    portal.APIToken
		used sql.NullTime
	)
	err := r.Scan(&t.ID, &t.TeamID, &t.Name, &t.CreatedBy, &t.CreatedAt, &used)
	t.LastUsedAt = used.Time
	return t, err
}

// CreateAPIToken records a read-only API token of a team by its hash
// (portal.NewAPIToken), made by the member by. A team holds at most
// portal.MaxAPITokens, each named differently (CodeConflict otherwise). The
// team's row is written first, so that two tokens made at once take turns
// and the team never passes the limit.
func (s *Store) CreateAPIToken(ctx context.Context, teamID int64, by, name, hash string) (portal.APIToken, error) {
	name, err := portal.CheckAPITokenName(name)
	if err != nil {
		return portal.APIToken{}, err
	}
	t := portal.APIToken{TeamID: teamID, Name: name, CreatedBy: by}
	err = s.InTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE teams SET name = name WHERE id = ?`, teamID)
		if err != nil {
			return fmt.Errorf("store: locking team %d: %w", teamID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return portal.Errorf(portal.CodeNotFound, "team %d not found", teamID)
		}
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM api_tokens WHERE team_id = ?`, teamID).Scan(&n); err != nil {
			return fmt.Errorf("store: counting team %d's tokens: %w", teamID, err)
		}
		if n >= portal.MaxAPITokens {
			return portal.Errorf(portal.CodeConflict, "a team has at most %d tokens: revoke one first", portal.MaxAPITokens)
		}
		var dup int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM api_tokens WHERE team_id = ? AND name = ?`, teamID, name).Scan(&dup); err != nil {
			return fmt.Errorf("store: reading team %d's tokens: %w", teamID, err)
		}
		if dup > 0 {
			return portal.Errorf(portal.CodeConflict, "your team has a token named %q", name)
		}
		t.CreatedAt = tx.stamp()
		err = tx.queryRow(ctx, `INSERT INTO api_tokens (team_id, name, token_hash, created_by, created_at) VALUES (?, ?, ?, ?, ?)
			RETURNING id`, teamID, name, hash, by, t.CreatedAt).Scan(&t.ID)
		if err != nil {
			return fmt.Errorf("store: adding a token of team %d: %w", teamID, err)
		}
		return nil
	})
	if err != nil {
		return portal.APIToken{}, err
	}
	return t, nil
}

// APITokens lists a team's tokens, oldest first (every team's with teamID
// 0).
func (q *queries) APITokens(ctx context.Context, teamID int64) ([]portal.APIToken, error) {
	query, args := `SELECT `+apiTokenColumns+` FROM api_tokens ORDER BY id`, []any{}
	if teamID != 0 {
		query, args = `SELECT `+apiTokenColumns+` FROM api_tokens WHERE team_id = ? ORDER BY id`, []any{teamID}
	}
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing tokens: %w", err)
	}
	defer rows.Close()
	out := []portal.APIToken{}
	for rows.Next() {
		t, err := scanAPIToken(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeAPIToken deletes a team's token: it works no more. Another team's
// token is not found, as one that does not exist.
func (q *queries) RevokeAPIToken(ctx context.Context, teamID, id int64) error {
	res, err := q.exec(ctx, `DELETE FROM api_tokens WHERE id = ? AND team_id = ?`, id, teamID)
	if err != nil {
		return fmt.Errorf("store: revoking token %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return portal.Errorf(portal.CodeNotFound, "no such token")
	}
	return nil
}

// APITokenByHash reads the token whose hash is given (CodeNotFound for
// none: never made, or revoked).
func (q *queries) APITokenByHash(ctx context.Context, hash string) (portal.APIToken, error) {
	t, err := scanAPIToken(q.queryRow(ctx, `SELECT `+apiTokenColumns+` FROM api_tokens WHERE token_hash = ?`, hash))
	if err != nil {
		return t, notFound(err, "the token")
	}
	return t, nil
}

// TouchAPIToken records that a token was used now, unless it was within
// portal.APITokenTouch: a token used often is written once a minute.
func (q *queries) TouchAPIToken(ctx context.Context, id int64) error {
	now := q.stamp()
	_, err := q.exec(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)`,
		now, id, now.Add(-portal.APITokenTouch))
	if err != nil {
		return fmt.Errorf("store: token %d's last use: %w", id, err)
	}
	return nil
}

// TeamJobsPage lists up to limit of a team's own jobs (as TeamJobs: no
// validation run), the newest first, older than the job before (every job
// with before 0): the pages of the API's job list, each a short read.
func (q *queries) TeamJobsPage(ctx context.Context, teamID, before int64, limit int) ([]portal.Job, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	return q.listJobs(ctx, `SELECT `+jobColumns+` FROM jobs WHERE team_id = ? AND kind = ? AND id < ? ORDER BY id DESC LIMIT ?`,
		teamID, string(portal.KindNormal), before, limit)
}

// JobsAfter lists up to limit jobs of every team with an id above after,
// the oldest first: the export reads every job this way, a page at a time,
// holding no connection while it writes.
func (q *queries) JobsAfter(ctx context.Context, after int64, limit int) ([]portal.Job, error) {
	return q.listJobs(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
}
