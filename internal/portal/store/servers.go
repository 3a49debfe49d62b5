package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
)

const serverColumns = `id, team_id, url, host, label, created_at`

func scanServer(r scanner) (portal.Server, error) {
	var s portal.Server
	err := r.Scan(&s.ID, &s.TeamID, &s.URL, &s.Host, &s.Label, &s.CreatedAt)
	return s, err
}

func (q *queries) listServers(ctx context.Context, query string, args ...any) ([]portal.Server, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing servers: %w", err)
	}
	defer rows.Close()
	var out []portal.Server
	for rows.Next() {
		s, err := scanServer(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing servers: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Servers lists every team's servers, by team, each team's in the order
// they were assigned.
func (q *queries) Servers(ctx context.Context) ([]portal.Server, error) {
	return q.listServers(ctx, `SELECT `+serverColumns+` FROM servers ORDER BY team_id, id`)
}

// TeamServers lists a team's servers in the order they were assigned.
func (q *queries) TeamServers(ctx context.Context, teamID int64) ([]portal.Server, error) {
	return q.listServers(ctx, `SELECT `+serverColumns+` FROM servers WHERE team_id = ? ORDER BY id`, teamID)
}

// TeamServersForShare lists a team's servers and, on PostgreSQL, holds a
// share lock on them until the transaction ends: an enqueue checks its
// target against them, and a server's removal waits for it.
func (t *Tx) TeamServersForShare(ctx context.Context, teamID int64) ([]portal.Server, error) {
	return t.listServers(ctx, `SELECT `+serverColumns+` FROM servers WHERE team_id = ? ORDER BY id`+t.dialect.forShare, teamID)
}

// Server reads one server.
func (q *queries) Server(ctx context.Context, id int64) (portal.Server, error) {
	s, err := scanServer(q.queryRow(ctx, `SELECT `+serverColumns+` FROM servers WHERE id = ?`, id))
	if err != nil {
		return s, notFound(err, "server %d", id)
	}
	return s, nil
}

// serverByHost reads the server on host (CodeNotFound for none).
func (q *queries) serverByHost(ctx context.Context, host string) (portal.Server, error) {
	s, err := scanServer(q.queryRow(ctx, `SELECT `+serverColumns+` FROM servers WHERE host = ?`, host))
	if err != nil {
		return s, notFound(err, "the server on %s", host)
	}
	return s, nil
}

// hostFree refuses a server for team on a host that is another team's:
// its server, or the host its target is on (a target registered before
// the servers were, or in a contest without them).
func (q *queries) hostFree(ctx context.Context, teamID int64, host string) error {
	var name string
	err := q.queryRow(ctx, `SELECT t.name FROM servers s JOIN teams t ON t.id = s.team_id WHERE s.host = ? AND s.team_id <> ?`,
		host, teamID).Scan(&name)
	if err == nil {
		return portal.Errorf(portal.CodeConflict, "%s is a server of the team %q: a host is one team's", host, name)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: the servers on %s: %w", host, err)
	}
	err = q.queryRow(ctx, `SELECT name FROM teams WHERE target_host = ? AND id <> ?`, host, teamID).Scan(&name)
	if err == nil {
		return portal.Errorf(portal.CodeConflict, "the team %q's target is on %s: a host serves one team", name, host)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: the targets on %s: %w", host, err)
	}
	return nil
}

// insertServer gives a team a server (portal.ParseServer) on a host that
// is no other team's.
func (q *queries) insertServer(ctx context.Context, teamID int64, srv portal.Server) (portal.Server, error) {
	if err := q.hostFree(ctx, teamID, srv.Host); err != nil {
		return srv, err
	}
	srv.TeamID, srv.CreatedAt = teamID, q.stamp()
	err := q.queryRow(ctx, `INSERT INTO servers (team_id, url, host, label, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		teamID, srv.URL, srv.Host, srv.Label, srv.CreatedAt).Scan(&srv.ID)
	if q.dialect.uniqueViolation(err) {
		return srv, portal.Errorf(portal.CodeConflict, "%s is a server already: a host is one team's", srv.Host)
	}
	if err != nil {
		return srv, fmt.Errorf("store: adding the server %s: %w", srv.Host, err)
	}
	return srv, nil
}

// AddServer gives a team a server (portal.ParseServer, checked against the
// contest's target rules) for by, and records it in the audit log. A host
// that is another team's server or target is refused (CodeConflict).
func (s *Store) AddServer(ctx context.Context, by portal.Actor, teamID int64, srv portal.Server) (portal.Server, error) {
	err := s.InTx(ctx, func(tx *Tx) error {
		team, err := tx.Team(ctx, teamID)
		if err != nil {
			return err
		}
		if srv, err = tx.insertServer(ctx, teamID, srv); err != nil {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditServerAdd, teamSubject(team),
			map[string]any{"server": srv.ID, "url": srv.URL, "label": srv.Label})
	})
	return srv, err
}

// RemoveServer takes a server from its team for by, and records it in the
// audit log. A team whose target it was has none after it: its host is
// then free for another team.
func (s *Store) RemoveServer(ctx context.Context, by portal.Actor, id int64) error {
	return s.InTx(ctx, func(tx *Tx) error {
		srv, err := tx.Server(ctx, id)
		if err != nil {
			return err
		}
		team, err := tx.Team(ctx, srv.TeamID)
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `DELETE FROM servers WHERE id = ?`, id); err != nil {
			return fmt.Errorf("store: removing server %d: %w", id, err)
		}
		res, err := tx.exec(ctx, `UPDATE teams SET target = '', target_host = NULL WHERE id = ? AND target = ?`, team.ID, srv.URL)
		if err != nil {
			return fmt.Errorf("store: team %d's target: %w", team.ID, err)
		}
		cleared, _ := res.RowsAffected()
		return tx.Audit(ctx, by, portal.AuditServerRemove, teamSubject(team),
			map[string]any{"server": srv.ID, "url": srv.URL, "label": srv.Label, "target_cleared": cleared > 0})
	})
}

// PickServer makes server id, which must still be teamID's, the team's
// target, with host as SetTarget takes it. The server's row stays locked
// until the target is set: a removal that took it first makes this a
// CodeDenied, and one that comes after clears the target it set, so that
// a removed server never stays a team's target and blocks its host.
func (s *Store) PickServer(ctx context.Context, teamID, id int64, host string) error {
	return s.InTx(ctx, func(tx *Tx) error {
		srv, err := scanServer(tx.queryRow(ctx, `SELECT `+serverColumns+` FROM servers WHERE id = ? AND team_id = ?`+
			tx.dialect.forUpdate, id, teamID))
		if errors.Is(err, sql.ErrNoRows) {
			return portal.Errorf(portal.CodeDenied, "that is not one of your team's servers: pick one of those listed")
		}
		if err != nil {
			return fmt.Errorf("store: server %d: %w", id, err)
		}
		return tx.SetTarget(ctx, teamID, srv.URL, host)
	})
}

// teamSubject is a team as the audit log names it.
func teamSubject(t portal.Team) string { return fmt.Sprintf("team %d (%s)", t.ID, t.Name) }
