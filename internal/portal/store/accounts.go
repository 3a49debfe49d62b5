package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

const accountColumns = `id, login, role, COALESCE(team_id, 0), created_at, display_name, email`

func scanAccount(r scanner, extra ...any) (portal.Account, error) {
	var (
		a    portal.Account
		role string
	)
	err := r.Scan(append([]any{&a.ID, &a.Login, &role, &a.TeamID, &a.CreatedAt, &a.Name, &a.Email}, extra...)...)
	a.Role = portal.Role(role)
	return a, err
}

// CreateAccount adds an account with a password hash (portal.Passwords).
// Its login must be new (CodeConflict otherwise).
func (q *queries) CreateAccount(ctx context.Context, login, passwordHash string, role portal.Role) (portal.Account, error) {
	login, err := portal.CheckLogin(login)
	if err != nil {
		return portal.Account{}, err
	}
	if role != portal.RoleAdmin && role != portal.RoleContestant {
		return portal.Account{}, portal.Errorf(portal.CodeInvalid, "no role %q", role)
	}
	a := portal.Account{Login: login, Role: role, CreatedAt: q.stamp()}
	err = q.queryRow(ctx, `INSERT INTO accounts (login, password_hash, role, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
		login, passwordHash, string(role), a.CreatedAt).Scan(&a.ID)
	if q.dialect.uniqueViolation(err) {
		return portal.Account{}, portal.Errorf(portal.CodeConflict, "the login %q is taken", login)
	}
	if err != nil {
		return portal.Account{}, fmt.Errorf("store: adding account %q: %w", login, err)
	}
	return a, nil
}

// AccountByLogin reads an account and its password hash (CodeNotFound for
// no such login).
func (q *queries) AccountByLogin(ctx context.Context, login string) (portal.Account, string, error) {
	var hash string
	a, err := scanAccount(q.queryRow(ctx, `SELECT `+accountColumns+`, password_hash FROM accounts WHERE login = ?`, login), &hash)
	if err != nil {
		return a, "", notFound(err, "account %q", login)
	}
	return a, hash, nil
}

// Account reads one account.
func (q *queries) Account(ctx context.Context, id int64) (portal.Account, error) {
	a, err := scanAccount(q.queryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if err != nil {
		return a, notFound(err, "account %d", id)
	}
	return a, nil
}

// Accounts lists every account, oldest first.
func (q *queries) Accounts(ctx context.Context) ([]portal.Account, error) {
	return q.listAccounts(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY id`)
}

// TeamMembers lists a team's accounts, in the order they joined.
func (q *queries) TeamMembers(ctx context.Context, teamID int64) ([]portal.Account, error) {
	return q.listAccounts(ctx, `SELECT `+accountColumns+` FROM accounts WHERE team_id = ? ORDER BY id`, teamID)
}

func (q *queries) listAccounts(ctx context.Context, query string, args ...any) ([]portal.Account, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing accounts: %w", err)
	}
	defer rows.Close()
	var out []portal.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// CreateSession records a session token's hash for an account until expires.
func (q *queries) CreateSession(ctx context.Context, tokenHash string, accountID int64, expires time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		tokenHash, accountID, q.stamp(), expires.UTC())
	if err != nil {
		return fmt.Errorf("store: adding a session: %w", err)
	}
	return nil
}

// SessionAccount reads the account of a live session (CodeNotFound for an
// unknown or expired one).
func (q *queries) SessionAccount(ctx context.Context, tokenHash string) (portal.Account, error) {
	a, err := scanAccount(q.queryRow(ctx, `SELECT a.id, a.login, a.role, COALESCE(a.team_id, 0), a.created_at,
			a.display_name, a.email
		FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ? AND s.expires_at > ?`,
		tokenHash, q.stamp()))
	if err != nil {
		return a, notFound(err, "the session")
	}
	return a, nil
}

// DeleteSession ends a session (signing out); an unknown one is no error.
func (q *queries) DeleteSession(ctx context.Context, tokenHash string) error {
	if _, err := q.exec(ctx, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash); err != nil {
		return fmt.Errorf("store: deleting a session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes the sessions past their expiry.
func (q *queries) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	res, err := q.exec(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, q.stamp())
	if err != nil {
		return 0, fmt.Errorf("store: deleting expired sessions: %w", err)
	}
	return res.RowsAffected()
}

// CreateTeamFor makes a team with a new invite code in a bracket and puts
// the account, which must have none, in it. With brackets the team must be
// in one of them; without, in none ("").
func (s *Store) CreateTeamFor(ctx context.Context, accountID int64, name, bracket string) (portal.Team, error) {
	var t portal.Team
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.canJoin(ctx, accountID); err != nil {
			return err
		}
		c, err := tx.Contest(ctx)
		if err != nil && portal.ErrorCode(err) != portal.CodeNotFound {
			return err
		}
		if err := checkBracket(c, bracket); err != nil {
			return err
		}
		if t, err = tx.insertTeam(ctx, name, "", portal.NewInviteCode(), bracket); err != nil {
			return err
		}
		return tx.setTeam(ctx, accountID, t.ID)
	})
	return t, err
}

// JoinTeam puts the account, which must have no team, in the team whose
// invite code is given, unless it has maxSize members already. The team's
// row is written first in the transaction: two joins at once take turns
// (on SQLite the write lock, on PostgreSQL the row's), so a team never
// passes its size.
func (s *Store) JoinTeam(ctx context.Context, accountID int64, invite string, maxSize int) (portal.Team, error) {
	var t portal.Team
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.canJoin(ctx, accountID); err != nil {
			return err
		}
		var err error
		t, err = scanTeam(tx.queryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE invite_code = ?`, invite))
		if err == sql.ErrNoRows || invite == "" {
			return portal.Errorf(portal.CodeNotFound, "no team has that invite code")
		} else if err != nil {
			return fmt.Errorf("store: finding a team by invite: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE teams SET invite_code = invite_code WHERE id = ?`, t.ID); err != nil {
			return fmt.Errorf("store: locking team %d: %w", t.ID, err)
		}
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM accounts WHERE team_id = ?`, t.ID).Scan(&n); err != nil {
			return fmt.Errorf("store: counting team %d: %w", t.ID, err)
		}
		if n >= maxSize {
			return portal.Errorf(portal.CodeConflict, "team %q is full (%d members)", t.Name, n)
		}
		return tx.setTeam(ctx, accountID, t.ID)
	})
	return t, err
}

// canJoin refuses an account that cannot join a team: an admin, or one in
// a team already.
func (q *queries) canJoin(ctx context.Context, accountID int64) error {
	a, err := q.Account(ctx, accountID)
	if err != nil {
		return err
	}
	switch {
	case a.Admin():
		return portal.Errorf(portal.CodeInvalid, "admins are in no team")
	case a.TeamID != 0:
		return portal.Errorf(portal.CodeConflict, "you are in a team already")
	}
	return nil
}

func (q *queries) setTeam(ctx context.Context, accountID, teamID int64) error {
	res, err := q.exec(ctx, `UPDATE accounts SET team_id = ? WHERE id = ? AND team_id IS NULL`, teamID, accountID)
	if err != nil {
		return fmt.Errorf("store: joining team %d: %w", teamID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return portal.Errorf(portal.CodeConflict, "you are in a team already")
	}
	return nil
}
