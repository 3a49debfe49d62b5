package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// importPlan is what importing one row would do.
type importPlan struct {
	row portal.ImportRow
	// team is the team of that name, ID 0 when it is new.
	team    portal.Team
	members []portal.Member // the accounts to make
	servers []portal.Server // the servers to add
	created bool            // the team was made (applyImport)
}

// ImportTeams imports a team file (portal.ParseImport) for by, with
// sign-in links valid for linkTTL: in one transaction, it makes each team
// the contest lacks, the accounts of its members (without a password; each
// gets a one-time sign-in link) and its servers. A team that exists is
// given the members and servers it lacks, and one that lacks none is left
// as it is: a file imported twice changes nothing the second time.
//
// Nothing is applied when anything is wrong, and every problem is reported
// by line (a *portal.ImportError): the file's own (imp.Problems), what the
// contest's settings refuse (portal.CheckImport), and what would change an
// existing team in a way an import cannot: a team in another bracket, a
// login taken by someone not in the team, a member known by another name,
// a host that is another team's server or target, a server on another port.
// An import that changed something is one audit entry.
func (s *Store) ImportTeams(ctx context.Context, by portal.Actor, imp portal.Import, linkTTL time.Duration) (portal.ImportReport, error) {
	var report portal.ImportReport
	err := s.InTx(ctx, func(tx *Tx) error {
		report = portal.ImportReport{}
		c, err := tx.lockedContest(ctx)
		if err != nil {
			return err
		}
		invalid := append(append([]portal.LineError(nil), imp.Problems...), portal.CheckImport(imp.Rows, c.Settings)...)
		var conflicts []portal.LineError
		plans := make([]importPlan, 0, len(imp.Rows))
		for _, row := range imp.Rows {
			p, bad, err := tx.planImport(ctx, row, c.Settings.TeamSize())
			if err != nil {
				return err
			}
			conflicts = append(conflicts, bad...)
			plans = append(plans, p)
		}
		if len(invalid) > 0 {
			return portal.NewImportError(portal.CodeInvalid, append(invalid, conflicts...))
		}
		if len(conflicts) > 0 {
			return portal.NewImportError(portal.CodeConflict, conflicts)
		}
		if report, err = tx.applyImport(ctx, plans, linkTTL); err != nil {
			return err
		}
		if report.TeamsCreated+report.TeamsUpdated == 0 {
			return nil // an import that changes nothing is no action
		}
		return tx.Audit(ctx, by, portal.AuditImport, "contest", importDetail(plans))
	})
	if err != nil {
		return portal.ImportReport{}, err
	}
	return report, nil
}

// planImport compares a row with the team of its name, if any: what to
// add, and what conflicts with it (a name that only looks like a team's
// is one).
func (t *Tx) planImport(ctx context.Context, row portal.ImportRow, teamSize int) (importPlan, []portal.LineError, error) {
	p := importPlan{row: row}
	var bad []portal.LineError
	problem := func(format string, args ...any) {
		bad = append(bad, portal.LineError{Line: row.Line, Message: fmt.Sprintf(format, args...)})
	}
	team, err := scanTeam(t.queryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE name_key = ?`, portal.NameKey(row.Team)))
	switch {
	case err == nil && team.Name != row.Team:
		problem("the team %q looks like the team %q: write its name as it is, or choose another", row.Team, team.Name)
	case err == nil:
		p.team = team
		if team.Bracket != row.Bracket {
			problem("the team %q exists in the bracket %q, not %q", row.Team, team.Bracket, row.Bracket)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return p, nil, fmt.Errorf("store: reading the team %q: %w", row.Team, err)
	}
	members := 0
	if p.team.ID != 0 {
		var err error
		if members, err = t.countMembers(ctx, p.team.ID); err != nil {
			return p, nil, err
		}
	}
	for _, m := range row.Members {
		a, _, err := t.AccountByLogin(ctx, m.Login)
		switch {
		case portal.ErrorCode(err) == portal.CodeNotFound:
			p.members = append(p.members, m)
		case err != nil:
			return p, nil, err
		case p.team.ID == 0 || a.TeamID != p.team.ID:
			problem("the login %q is taken by an account that is not in the team %q", m.Login, row.Team)
		case a.Name != m.Name || a.Email != m.Email:
			problem("%s is known as %q <%s>, not %q <%s>", m.Login, a.Name, a.Email, m.Name, m.Email)
		}
	}
	if n := members + len(p.members); n > teamSize {
		problem("the team %q would have %d members, and a team holds %d", row.Team, n, teamSize)
	}
	for _, srv := range row.Servers {
		old, err := t.serverByHost(ctx, srv.Host)
		switch {
		case portal.ErrorCode(err) == portal.CodeNotFound:
			if err := t.hostFree(ctx, p.team.ID, srv.Host); portal.ErrorCode(err) == portal.CodeConflict {
				problem("%v", err)
			} else if err != nil {
				return p, nil, err
			}
			p.servers = append(p.servers, srv)
		case err != nil:
			return p, nil, err
		case p.team.ID == 0 || old.TeamID != p.team.ID:
			problem("%s is another team's server: a host is one team's", srv.Host)
		case old.URL != srv.URL || old.Label != srv.Label:
			problem("the team %q has %s as %s, not %s", row.Team, srv.Host, old.Name(), srv.Name())
		}
	}
	return p, bad, nil
}

// countMembers counts a team's accounts.
func (q *queries) countMembers(ctx context.Context, teamID int64) (int, error) {
	var n int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM accounts WHERE team_id = ?`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting team %d: %w", teamID, err)
	}
	return n, nil
}

// applyImport carries the plans out.
func (t *Tx) applyImport(ctx context.Context, plans []importPlan, linkTTL time.Duration) (portal.ImportReport, error) {
	var r portal.ImportReport
	for i := range plans {
		p := &plans[i]
		switch {
		case p.team.ID == 0:
			team, err := t.insertTeam(ctx, p.row.Team, "", portal.NewInviteCode(), p.row.Bracket)
			if err != nil {
				return r, err
			}
			p.team, p.created = team, true
			r.TeamsCreated++
		case len(p.members)+len(p.servers) > 0:
			r.TeamsUpdated++
		default:
			r.TeamsUnchanged++
		}
		for _, m := range p.members {
			link, err := t.importAccount(ctx, p.team, m, linkTTL)
			if err != nil {
				return r, err
			}
			r.Links = append(r.Links, link)
			r.AccountsCreated++
		}
		for _, srv := range p.servers {
			if _, err := t.insertServer(ctx, p.team.ID, srv); err != nil {
				return r, err
			}
			r.ServersCreated++
		}
	}
	return r, nil
}

// importAccount makes a member's account in a team, with no password, and
// its sign-in link.
func (t *Tx) importAccount(ctx context.Context, team portal.Team, m portal.Member, linkTTL time.Duration) (portal.SignInLink, error) {
	var id int64
	err := t.queryRow(ctx, `INSERT INTO accounts (login, password_hash, role, team_id, display_name, email, created_at)
		VALUES (?, '', ?, ?, ?, ?, ?) RETURNING id`,
		m.Login, string(portal.RoleContestant), team.ID, m.Name, m.Email, t.stamp()).Scan(&id)
	if err != nil {
		return portal.SignInLink{}, fmt.Errorf("store: adding account %q: %w", m.Login, err)
	}
	link := portal.SignInLink{Team: team.Name, Login: m.Login, Name: m.Name, Email: m.Email}
	link.Token, link.ExpiresAt, err = t.createSignInLink(ctx, id, linkTTL)
	return link, err
}

// importDetail is an import's audit entry: what it added, by team.
func importDetail(plans []importPlan) map[string]any {
	type added struct {
		Team    string   `json:"team"`
		Created bool     `json:"created,omitempty"`
		Members []string `json:"members,omitempty"`
		Servers []string `json:"servers,omitempty"`
	}
	var teams []added
	for _, p := range plans {
		if !p.created && len(p.members)+len(p.servers) == 0 {
			continue
		}
		a := added{Team: p.row.Team, Created: p.created}
		for _, m := range p.members {
			a.Members = append(a.Members, m.Login)
		}
		for _, s := range p.servers {
			a.Servers = append(a.Servers, s.URL)
		}
		teams = append(teams, a)
	}
	return map[string]any{"teams": teams}
}
