package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// settingsJSON is portal.Settings as stored: durations in milliseconds.
type settingsJSON struct {
	InitializeMS int64           `json:"initialize_timeout_ms,omitempty"`
	PreCheckMS   int64           `json:"pre_check_timeout_ms,omitempty"`
	FinalCheckMS int64           `json:"final_check_timeout_ms,omitempty"`
	GraceMS      int64           `json:"grace_ms,omitempty"`
	SlackMS      int64           `json:"slack_ms,omitempty"`
	MaxAttempts  int             `json:"max_attempts,omitempty"`
	Seed         uint64          `json:"seed,omitempty"`
	WrapUpMS     int64           `json:"wrap_up_ms,omitempty"`
	MaxTeamSize  int             `json:"max_team_size,omitempty"`
	LocalTargets bool            `json:"local_targets,omitempty"`
	Networks     []netip.Prefix  `json:"target_networks,omitempty"`
	Assigned     bool            `json:"assigned_servers,omitempty"`
	Ranking      portal.RankRule `json:"ranking,omitempty"`
	Brackets     []string        `json:"brackets,omitempty"`
	Threshold    int             `json:"validation_threshold,omitempty"`
	SignupLimit  int             `json:"signup_limit,omitempty"`
}

func ms(d time.Duration) int64     { return d.Milliseconds() }
func fromMS(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func settingsOf(s portal.Settings) settingsJSON {
	return settingsJSON{
		InitializeMS: ms(s.InitializeTimeout), PreCheckMS: ms(s.PreCheckTimeout), FinalCheckMS: ms(s.FinalCheckTimeout),
		GraceMS: ms(s.Grace), SlackMS: ms(s.Slack), MaxAttempts: s.MaxAttempts, Seed: s.Seed, WrapUpMS: ms(s.WrapUp),
		MaxTeamSize: s.MaxTeamSize, LocalTargets: s.LocalTargets, Ranking: s.Ranking, Brackets: s.Brackets,
		Threshold: s.ValidationThreshold, Networks: s.TargetNetworks, Assigned: s.AssignedServers,
		SignupLimit: s.SignupLimit,
	}
}

func (s settingsJSON) settings() portal.Settings {
	return portal.Settings{
		InitializeTimeout: fromMS(s.InitializeMS), PreCheckTimeout: fromMS(s.PreCheckMS), FinalCheckTimeout: fromMS(s.FinalCheckMS),
		Grace: fromMS(s.GraceMS), Slack: fromMS(s.SlackMS), MaxAttempts: s.MaxAttempts, Seed: s.Seed,
		WrapUp: fromMS(s.WrapUpMS), MaxTeamSize: s.MaxTeamSize, LocalTargets: s.LocalTargets, Ranking: s.Ranking,
		Brackets: s.Brackets, ValidationThreshold: s.Threshold, TargetNetworks: s.Networks,
		AssignedServers: s.Assigned, SignupLimit: s.SignupLimit,
	}
}

// checkContest refuses a contest no job could run with.
func checkContest(c portal.Contest) error {
	if c.Problem == "" {
		return portal.Errorf(portal.CodeInvalid, "a contest needs a problem")
	}
	if err := portal.CheckLoad(c.LoadDuration); err != nil {
		return err
	}
	if err := c.Settings.Check(); err != nil {
		return err
	}
	return c.Timeline.Check()
}

// SetContest creates or replaces the contest, its times included (tests
// and tools; the admin's pages change it with SetSettings, SetTimeline and
// SetNow, which record who did).
func (q *queries) SetContest(ctx context.Context, c portal.Contest) error {
	if err := checkContest(c); err != nil {
		return err
	}
	settings, err := json.Marshal(settingsOf(c.Settings))
	if err != nil {
		return err
	}
	t := c.Timeline
	_, err = q.exec(ctx, `INSERT INTO contest (id, problem, load_duration_ms, registration_at, starts_at, freezes_at, ends_at,
			reveals_at, settings, revision)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, 1)
		ON CONFLICT (id) DO UPDATE SET problem = excluded.problem, load_duration_ms = excluded.load_duration_ms,
			registration_at = excluded.registration_at, starts_at = excluded.starts_at, freezes_at = excluded.freezes_at,
			ends_at = excluded.ends_at, reveals_at = excluded.reveals_at, settings = excluded.settings,
			revision = contest.revision + 1`,
		c.Problem, ms(c.LoadDuration), nullTime(t.RegistrationAt), nullTime(t.StartsAt), nullTime(t.FreezesAt),
		nullTime(t.EndsAt), nullTime(t.RevealsAt), string(settings))
	if err != nil {
		return fmt.Errorf("store: writing the contest: %w", err)
	}
	return nil
}

// Contest reads the contest (CodeNotFound before SetContest).
func (q *queries) Contest(ctx context.Context) (portal.Contest, error) { return q.contest(ctx, "") }

// ContestForShare reads the contest and, on PostgreSQL, holds a share lock
// on it until the transaction ends: no change of its times or settings
// commits between this read and the end of the transaction (SQLite's
// immediate transactions hold its one write lock anyway). An enqueue checks
// the times this way.
func (t *Tx) ContestForShare(ctx context.Context) (portal.Contest, error) {
	return t.contest(ctx, t.dialect.forShare)
}

func (q *queries) contest(ctx context.Context, lock string) (portal.Contest, error) {
	var (
		c                               portal.Contest
		loadMS                          int64
		reg, start, freeze, end, reveal sql.NullTime
		settings                        string
	)
	err := q.queryRow(ctx, `SELECT problem, load_duration_ms, registration_at, starts_at, freezes_at, ends_at, reveals_at,
			settings, revision
		FROM contest WHERE id = 1`+lock).
		Scan(&c.Problem, &loadMS, &reg, &start, &freeze, &end, &reveal, &settings, &c.Revision)
	if err != nil {
		return c, notFound(err, "the contest")
	}
	var s settingsJSON
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		return c, fmt.Errorf("store: the contest's settings: %w", err)
	}
	c.LoadDuration = fromMS(loadMS)
	c.Timeline = portal.Timeline{RegistrationAt: reg.Time, StartsAt: start.Time, FreezesAt: freeze.Time, EndsAt: end.Time,
		RevealsAt: reveal.Time}
	c.Settings = s.settings()
	return c, nil
}

// lockedContest reads the contest for a change: on PostgreSQL the row is
// locked until the transaction ends, so that changes take turns and an
// enqueue holding its share lock finishes first. A contest not set up yet
// is CodeNotFound.
func (t *Tx) lockedContest(ctx context.Context) (portal.Contest, error) {
	c, err := t.contest(ctx, t.dialect.forUpdate)
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return c, portal.Errorf(portal.CodeNotFound, "the contest is not set up: choose its problem first")
	}
	return c, err
}

// SetSettings sets the contest's problem, load and settings (its times
// stay) for by, and records what changed in the audit log. A contest not
// set up yet is made.
func (s *Store) SetSettings(ctx context.Context, by portal.Actor, problem string, load time.Duration, settings portal.Settings) error {
	return s.InTx(ctx, func(tx *Tx) error {
		before, err := tx.contest(ctx, tx.dialect.forUpdate)
		if err != nil && portal.ErrorCode(err) != portal.CodeNotFound {
			return err
		}
		after := before
		after.Problem, after.LoadDuration, after.Settings = problem, load, settings
		if err := checkContest(after); err != nil {
			return err
		}
		changes := map[string]portal.Change{}
		if before.Problem != after.Problem {
			changes["problem"] = portal.Change{Before: before.Problem, After: after.Problem}
		}
		if before.LoadDuration != after.LoadDuration {
			changes["load"] = portal.Change{Before: before.LoadDuration.String(), After: after.LoadDuration.String()}
		}
		if err := diffJSON(changes, settingsOf(before.Settings), settingsOf(after.Settings)); err != nil {
			return err
		}
		if len(changes) == 0 {
			return nil // a save that changes nothing is no action
		}
		if err := tx.SetContest(ctx, after); err != nil {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditSettings, "contest", changes)
	})
}

// diffJSON adds to changes each field that differs between a and b, as
// their JSON shows them.
func diffJSON(changes map[string]portal.Change, a, b any) error {
	var ma, mb map[string]any
	for _, x := range []struct {
		v any
		m *map[string]any
	}{{a, &ma}, {b, &mb}} {
		raw, err := json.Marshal(x.v)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, x.m); err != nil {
			return err
		}
	}
	for k, v := range mb {
		if !reflect.DeepEqual(ma[k], v) {
			changes[k] = portal.Change{Before: ma[k], After: v}
		}
	}
	for k, v := range ma {
		if _, ok := mb[k]; !ok {
			changes[k] = portal.Change{Before: v, After: nil}
		}
	}
	return nil
}

// SetTimeline sets the contest's five times for by, and records those that
// changed in the audit log.
func (s *Store) SetTimeline(ctx context.Context, by portal.Actor, t portal.Timeline) error {
	return s.InTx(ctx, func(tx *Tx) error {
		c, err := tx.lockedContest(ctx)
		if err != nil {
			return err
		}
		changes := map[string]portal.Change{}
		for _, e := range portal.Events() {
			before, _ := c.Timeline.At(e)
			after, _ := t.At(e)
			if !before.Equal(*after) {
				changes[string(e)] = portal.Change{Before: auditTime(*before), After: auditTime(*after)}
			}
		}
		if len(changes) == 0 {
			return nil
		}
		c.Timeline = t
		if err := tx.SetContest(ctx, c); err != nil {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditTimeline, "contest", changes)
	})
}

// SetNow sets one time of the timeline to now for by (the admin's
// buttons), and records it in the audit log. The clock is read once the
// contest's row is held: an enqueue that committed before sees the old
// times, one that commits after sees this one.
func (s *Store) SetNow(ctx context.Context, by portal.Actor, e portal.Event) (time.Time, error) {
	var now time.Time
	err := s.InTx(ctx, func(tx *Tx) error {
		c, err := tx.lockedContest(ctx)
		if err != nil {
			return err
		}
		at, err := c.Timeline.At(e)
		if err != nil {
			return err
		}
		now = tx.stamp()
		if err := c.Timeline.CanSetNow(e, now); err != nil {
			return err
		}
		before := *at
		*at = now
		if err := tx.SetContest(ctx, c); err != nil {
			return err
		}
		return tx.Audit(ctx, by, portal.AuditNow+string(e), "contest",
			map[string]portal.Change{string(e): {Before: auditTime(before), After: auditTime(now)}})
	})
	return now, err
}

// auditTime is a time in the audit log: RFC 3339 in UTC, null when unset.
func auditTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// CreateTeam adds a team without members or invite code (tests and tools;
// accounts make theirs with CreateTeamFor). Its name must be new
// (CodeConflict otherwise).
func (q *queries) CreateTeam(ctx context.Context, name, target string) (portal.Team, error) {
	return q.insertTeam(ctx, name, target, "", "")
}

// errNameTaken refuses a team name that is, or looks like, another team's.
func errNameTaken(name string) error {
	return portal.Errorf(portal.CodeConflict, "a team named %q, or a name that looks like it, exists", name)
}

func (q *queries) insertTeam(ctx context.Context, name, target, invite, bracket string) (portal.Team, error) {
	name, err := portal.CheckTeamName(name)
	if err != nil {
		return portal.Team{}, err
	}
	t := portal.Team{Name: name, Target: target, InviteCode: invite, CreatedAt: q.stamp(), Bracket: bracket}
	err = q.queryRow(ctx, `INSERT INTO teams (name, name_key, target, invite_code, created_at, bracket)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		t.Name, portal.NameKey(name), t.Target, sql.NullString{String: invite, Valid: invite != ""}, t.CreatedAt, bracket).Scan(&t.ID)
	if q.dialect.uniqueViolation(err) {
		return portal.Team{}, errNameTaken(name)
	}
	if err != nil {
		return portal.Team{}, fmt.Errorf("store: adding team %q: %w", name, err)
	}
	return t, nil
}

// SetTarget sets a team's target URL and, unless empty, its host
// (portal.TargetHost), which no other team's target may have.
func (q *queries) SetTarget(ctx context.Context, teamID int64, target, host string) error {
	res, err := q.exec(ctx, `UPDATE teams SET target = ?, target_host = ? WHERE id = ?`, target,
		sql.NullString{String: host, Valid: host != ""}, teamID)
	if q.dialect.uniqueViolation(err) {
		return portal.Errorf(portal.CodeConflict, "another team's target is on %s: a host serves one team", host)
	}
	if err != nil {
		return fmt.Errorf("store: setting team %d's target: %w", teamID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return portal.Errorf(portal.CodeNotFound, "team %d not found", teamID)
	}
	return nil
}

const teamColumns = `id, name, target, COALESCE(invite_code, ''), created_at, bracket, hidden, extra_time_ms, disqualified,
	dq_reason`

func scanTeam(r scanner) (portal.Team, error) {
	var t portal.Team
	var extraMS int64
	err := r.Scan(&t.ID, &t.Name, &t.Target, &t.InviteCode, &t.CreatedAt, &t.Bracket, &t.Hidden, &extraMS, &t.Disqualified,
		&t.DQReason)
	t.ExtraTime = fromMS(extraMS)
	return t, err
}

// TeamForShare reads a team and, on PostgreSQL, holds a share lock on its
// row until the transaction ends (see ContestForShare): an enqueue reads
// the team's extra time this way.
func (t *Tx) TeamForShare(ctx context.Context, id int64) (portal.Team, error) {
	team, err := scanTeam(t.queryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = ?`+t.dialect.forShare, id))
	if err != nil {
		return team, notFound(err, "team %d", id)
	}
	return team, nil
}

// checkBracket refuses a bracket the contest does not have: with brackets
// a team is in one of them, without it is in none.
func checkBracket(c portal.Contest, bracket string) error {
	switch {
	case len(c.Settings.Brackets) == 0 && bracket != "":
		return portal.Errorf(portal.CodeInvalid, "this contest has no brackets")
	case len(c.Settings.Brackets) > 0 && !slices.Contains(c.Settings.Brackets, bracket):
		return portal.Errorf(portal.CodeInvalid, "choose one of the brackets: %s", strings.Join(c.Settings.Brackets, ", "))
	}
	return nil
}

// TeamPlace is where a team stands on the board, as the admin sets it.
type TeamPlace struct {
	Bracket   string
	Hidden    bool
	ExtraTime time.Duration
}

// SetTeamPlace sets a team's bracket, hidden flag and extra time for by,
// and records what changed in the audit log.
func (s *Store) SetTeamPlace(ctx context.Context, by portal.Actor, teamID int64, p TeamPlace) error {
	if err := portal.CheckExtraTime(p.ExtraTime); err != nil {
		return err
	}
	return s.InTx(ctx, func(tx *Tx) error {
		c, err := tx.lockedContest(ctx)
		if err != nil {
			return err
		}
		team, err := scanTeam(tx.queryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = ?`+tx.dialect.forUpdate, teamID))
		if err != nil {
			return notFound(err, "team %d", teamID)
		}
		changes := map[string]portal.Change{}
		if team.Bracket != p.Bracket {
			if err := checkBracket(c, p.Bracket); err != nil {
				return err
			}
			changes["bracket"] = portal.Change{Before: team.Bracket, After: p.Bracket}
		}
		if team.Hidden != p.Hidden {
			changes["hidden"] = portal.Change{Before: team.Hidden, After: p.Hidden}
		}
		if team.ExtraTime != p.ExtraTime {
			changes["extra_time"] = portal.Change{Before: team.ExtraTime.String(), After: p.ExtraTime.String()}
		}
		if len(changes) == 0 {
			return nil
		}
		if _, err := tx.exec(ctx, `UPDATE teams SET bracket = ?, hidden = ?, extra_time_ms = ? WHERE id = ?`,
			p.Bracket, p.Hidden, ms(p.ExtraTime), teamID); err != nil {
			return fmt.Errorf("store: team %d's place: %w", teamID, err)
		}
		if _, err := tx.exec(ctx, `UPDATE contest SET revision = revision + 1 WHERE id = 1`); err != nil {
			return fmt.Errorf("store: the contest's revision: %w", err)
		}
		return tx.Audit(ctx, by, portal.AuditTeam, fmt.Sprintf("team %d (%s)", team.ID, team.Name), changes)
	})
}

// Team reads one team.
func (q *queries) Team(ctx context.Context, id int64) (portal.Team, error) {
	t, err := scanTeam(q.queryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = ?`, id))
	if err != nil {
		return t, notFound(err, "team %d", id)
	}
	return t, nil
}

// Teams lists the teams in the order they were created.
func (q *queries) Teams(ctx context.Context) ([]portal.Team, error) {
	rows, err := q.query(ctx, `SELECT `+teamColumns+` FROM teams ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: listing teams: %w", err)
	}
	defer rows.Close()
	var out []portal.Team
	for rows.Next() {
		t, err := scanTeam(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing teams: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
