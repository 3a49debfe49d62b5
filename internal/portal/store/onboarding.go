package store

import (
	"context"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
)

// ChangePassword sets the password hash of a's account, its owner's
// choice, and ends its other sessions than the one it was changed from
// (keep, a session token's hash): whoever else was signed in as a is
// signed out. The audit log records it, by a.
func (s *Store) ChangePassword(ctx context.Context, a portal.Account, passwordHash, keep string) error {
	return s.InTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE accounts SET password_hash = ? WHERE id = ?`, passwordHash, a.ID)
		if err != nil {
			return fmt.Errorf("store: account %d's password: %w", a.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return portal.Errorf(portal.CodeNotFound, "account %d not found", a.ID)
		}
		if _, err := tx.exec(ctx, `DELETE FROM sessions WHERE account_id = ? AND token_hash <> ?`, a.ID, keep); err != nil {
			return fmt.Errorf("store: account %d's sessions: %w", a.ID, err)
		}
		return tx.Audit(ctx, portal.ActorOf(a), portal.AuditPassword, fmt.Sprintf("account %d (%s)", a.ID, a.Login), nil)
	})
}

// lockedTeam reads a team and, on PostgreSQL, locks its row until the
// transaction ends.
func (t *Tx) lockedTeam(ctx context.Context, teamID int64) (portal.Team, error) {
	team, err := scanTeam(t.queryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = ?`+t.dialect.forUpdate, teamID))
	if err != nil {
		return team, notFound(err, "team %d", teamID)
	}
	return team, nil
}

// bumpRevision tells the live pages that the board's teams changed.
func (t *Tx) bumpRevision(ctx context.Context) error {
	if _, err := t.exec(ctx, `UPDATE contest SET revision = revision + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("store: the contest's revision: %w", err)
	}
	return nil
}

// RenameTeam gives a team a new name, for by: a name that is, or looks
// like, another team's is refused (CodeConflict, portal.NameKey).
func (s *Store) RenameTeam(ctx context.Context, by portal.Actor, teamID int64, name string) error {
	name, err := portal.CheckTeamName(name)
	if err != nil {
		return err
	}
	return s.InTx(ctx, func(tx *Tx) error {
		team, err := tx.lockedTeam(ctx, teamID)
		if err != nil || team.Name == name {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE teams SET name = ?, name_key = ? WHERE id = ?`, name, portal.NameKey(name), teamID)
		if tx.dialect.uniqueViolation(err) {
			return errNameTaken(name)
		} else if err != nil {
			return fmt.Errorf("store: renaming team %d: %w", teamID, err)
		}
		if err := tx.bumpRevision(ctx); err != nil {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditTeamRename, fmt.Sprintf("team %d", teamID),
			map[string]portal.Change{"name": {Before: team.Name, After: name}})
	})
}

// RemoveTeam removes a team that has no member, job or question, with its
// servers and API tokens, for by. A team that has any is refused
// (CodeConflict): its history stays, and hiding it takes it off the
// board.
func (s *Store) RemoveTeam(ctx context.Context, by portal.Actor, teamID int64) error {
	return s.InTx(ctx, func(tx *Tx) error {
		team, err := tx.lockedTeam(ctx, teamID)
		if err != nil {
			return err
		}
		for _, has := range [][2]string{{"accounts", "members"}, {"jobs", "jobs"}, {"clarifications", "questions"}} {
			var n int
			if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM `+has[0]+` WHERE team_id = ?`, teamID).Scan(&n); err != nil {
				return fmt.Errorf("store: team %d's %s: %w", teamID, has[1], err)
			}
			if n > 0 {
				return portal.Errorf(portal.CodeConflict,
					"the team %q has %s (%d): only an empty team is removed; hide it to take it off the board", team.Name, has[1], n)
			}
		}
		for _, table := range []string{"servers", "api_tokens", "teams"} {
			column := "team_id"
			if table == "teams" {
				column = "id"
			}
			if _, err := tx.exec(ctx, `DELETE FROM `+table+` WHERE `+column+` = ?`, teamID); err != nil {
				return fmt.Errorf("store: removing team %d's %s: %w", teamID, table, err)
			}
		}
		if err := tx.bumpRevision(ctx); err != nil {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditTeamRemove, fmt.Sprintf("team %d", teamID), map[string]any{"name": team.Name})
	})
}
