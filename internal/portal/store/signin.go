package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// errLinkDead is the refusal of a sign-in link that is unknown, used or
// expired: the same for each, as a made-up token learns nothing.
var errLinkDead = portal.Errorf(portal.CodeNotFound,
	"this sign-in link does not work: it was used already or has expired; ask the organisers for a new one")

// createSignInLink makes a one-time sign-in link for an account, valid for
// ttl; the portal keeps the token's hash only.
func (q *queries) createSignInLink(ctx context.Context, accountID int64, ttl time.Duration) (string, time.Time, error) {
	token, hash := portal.NewToken()
	now := q.stamp()
	expires := now.Add(ttl)
	_, err := q.exec(ctx, `INSERT INTO signin_links (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		hash, accountID, now, expires)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("store: adding a sign-in link: %w", err)
	}
	return token, expires, nil
}

// NewSignInLink makes a contestant's account a new one-time sign-in link,
// valid for ttl, for by, and records it in the audit log; the account's
// links not used yet stop working. Its owner chooses a new password with
// it (a lost link, a forgotten password).
func (s *Store) NewSignInLink(ctx context.Context, by portal.Actor, accountID int64, ttl time.Duration) (portal.SignInLink, error) {
	var link portal.SignInLink
	err := s.InTx(ctx, func(tx *Tx) error {
		a, err := tx.Account(ctx, accountID)
		if err != nil {
			return err
		}
		if a.Admin() {
			return portal.Errorf(portal.CodeInvalid, "%s is an admin: admins sign in with the password they were made with", a.Login)
		}
		if _, err := tx.exec(ctx, `DELETE FROM signin_links WHERE account_id = ? AND used_at IS NULL`, a.ID); err != nil {
			return fmt.Errorf("store: account %d's links: %w", a.ID, err)
		}
		link = portal.SignInLink{Login: a.Login, Name: a.Name, Email: a.Email}
		if a.TeamID != 0 {
			t, err := tx.Team(ctx, a.TeamID)
			if err != nil {
				return err
			}
			link.Team = t.Name
		}
		if link.Token, link.ExpiresAt, err = tx.createSignInLink(ctx, a.ID, ttl); err != nil {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditSignInLink, fmt.Sprintf("account %d (%s)", a.ID, a.Login),
			map[string]any{"expires_at": auditTime(link.ExpiresAt)})
	})
	return link, err
}

// SignInLinkAccount reads the account of a sign-in link that still works
// (by its token's hash); any other is refused (CodeNotFound).
func (q *queries) SignInLinkAccount(ctx context.Context, tokenHash string) (portal.Account, error) {
	a, err := scanAccount(q.queryRow(ctx, `SELECT a.id, a.login, a.role, COALESCE(a.team_id, 0), a.created_at,
			a.display_name, a.email
		FROM signin_links l JOIN accounts a ON a.id = l.account_id
		WHERE l.token_hash = ? AND l.used_at IS NULL AND l.expires_at > ?`, tokenHash, q.stamp()))
	if errors.Is(err, sql.ErrNoRows) {
		return a, errLinkDead
	} else if err != nil {
		return a, fmt.Errorf("store: reading a sign-in link: %w", err)
	}
	return a, nil
}

// RedeemSignInLink uses a sign-in link (by its token's hash) once: it sets
// its account's password hash, ends the account's sessions, and returns the
// account. (An account has one link at most that works: NewSignInLink ends
// the one before.) The link is marked used by a
// compare-and-set, so of two uses at once one wins; a link unknown, used
// or expired is refused (CodeNotFound) and changes nothing.
func (s *Store) RedeemSignInLink(ctx context.Context, tokenHash, passwordHash string) (portal.Account, error) {
	var a portal.Account
	err := s.InTx(ctx, func(tx *Tx) error {
		now := tx.stamp()
		var id int64
		err := tx.queryRow(ctx, `UPDATE signin_links SET used_at = ?
			WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING account_id`, now, tokenHash, now).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return errLinkDead
		} else if err != nil {
			return fmt.Errorf("store: using a sign-in link: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE accounts SET password_hash = ? WHERE id = ?`, passwordHash, id); err != nil {
			return fmt.Errorf("store: account %d's password: %w", id, err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM sessions WHERE account_id = ?`, id); err != nil {
			return fmt.Errorf("store: account %d's sessions: %w", id, err)
		}
		a, err = tx.Account(ctx, id)
		return err
	})
	return a, err
}
