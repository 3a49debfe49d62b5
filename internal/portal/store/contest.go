package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// settingsJSON is portal.Settings as stored: durations in milliseconds.
type settingsJSON struct {
	InitializeMS int64  `json:"initialize_timeout_ms,omitempty"`
	PreCheckMS   int64  `json:"pre_check_timeout_ms,omitempty"`
	FinalCheckMS int64  `json:"final_check_timeout_ms,omitempty"`
	GraceMS      int64  `json:"grace_ms,omitempty"`
	SlackMS      int64  `json:"slack_ms,omitempty"`
	MaxAttempts  int    `json:"max_attempts,omitempty"`
	Seed         uint64 `json:"seed,omitempty"`
	WrapUpMS     int64  `json:"wrap_up_ms,omitempty"`
	MaxTeamSize  int    `json:"max_team_size,omitempty"`
	LocalTargets bool   `json:"local_targets,omitempty"`
}

func ms(d time.Duration) int64     { return d.Milliseconds() }
func fromMS(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// SetContest creates or replaces the contest.
func (q *queries) SetContest(ctx context.Context, c portal.Contest) error {
	if c.Problem == "" {
		return portal.Errorf(portal.CodeInvalid, "a contest needs a problem")
	}
	s := c.Settings
	if err := s.Check(); err != nil {
		return err
	}
	settings, err := json.Marshal(settingsJSON{
		InitializeMS: ms(s.InitializeTimeout), PreCheckMS: ms(s.PreCheckTimeout), FinalCheckMS: ms(s.FinalCheckTimeout),
		GraceMS: ms(s.Grace), SlackMS: ms(s.Slack), MaxAttempts: s.MaxAttempts, Seed: s.Seed, WrapUpMS: ms(s.WrapUp),
		MaxTeamSize: s.MaxTeamSize, LocalTargets: s.LocalTargets,
	})
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `INSERT INTO contest (id, problem, load_duration_ms, starts_at, ends_at, settings)
		VALUES (1, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET problem = excluded.problem, load_duration_ms = excluded.load_duration_ms,
			starts_at = excluded.starts_at, ends_at = excluded.ends_at, settings = excluded.settings`,
		c.Problem, ms(c.LoadDuration), nullTime(c.StartsAt), nullTime(c.EndsAt), string(settings))
	if err != nil {
		return fmt.Errorf("store: writing the contest: %w", err)
	}
	return nil
}

// Contest reads the contest (CodeNotFound before SetContest).
func (q *queries) Contest(ctx context.Context) (portal.Contest, error) {
	var (
		c          portal.Contest
		loadMS     int64
		start, end sql.NullTime
		settings   string
	)
	err := q.queryRow(ctx, `SELECT problem, load_duration_ms, starts_at, ends_at, settings FROM contest WHERE id = 1`).
		Scan(&c.Problem, &loadMS, &start, &end, &settings)
	if err != nil {
		return c, notFound(err, "the contest")
	}
	var s settingsJSON
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		return c, fmt.Errorf("store: the contest's settings: %w", err)
	}
	c.LoadDuration, c.StartsAt, c.EndsAt = fromMS(loadMS), start.Time, end.Time
	c.Settings = portal.Settings{
		InitializeTimeout: fromMS(s.InitializeMS), PreCheckTimeout: fromMS(s.PreCheckMS), FinalCheckTimeout: fromMS(s.FinalCheckMS),
		Grace: fromMS(s.GraceMS), Slack: fromMS(s.SlackMS), MaxAttempts: s.MaxAttempts, Seed: s.Seed,
		WrapUp: fromMS(s.WrapUpMS), MaxTeamSize: s.MaxTeamSize, LocalTargets: s.LocalTargets,
	}
	return c, nil
}

// CreateTeam adds a team without members or invite code (tests and tools;
// accounts make theirs with CreateTeamFor). Its name must be new
// (CodeConflict otherwise).
func (q *queries) CreateTeam(ctx context.Context, name, target string) (portal.Team, error) {
	return q.insertTeam(ctx, name, target, "")
}

func (q *queries) insertTeam(ctx context.Context, name, target, invite string) (portal.Team, error) {
	name, err := portal.CheckTeamName(name)
	if err != nil {
		return portal.Team{}, err
	}
	t := portal.Team{Name: name, Target: target, InviteCode: invite, CreatedAt: q.stamp()}
	err = q.queryRow(ctx, `INSERT INTO teams (name, target, invite_code, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
		t.Name, t.Target, sql.NullString{String: invite, Valid: invite != ""}, t.CreatedAt).Scan(&t.ID)
	if q.dialect.uniqueViolation(err) {
		return portal.Team{}, portal.Errorf(portal.CodeConflict, "a team named %q exists", name)
	}
	if err != nil {
		return portal.Team{}, fmt.Errorf("store: adding team %q: %w", name, err)
	}
	return t, nil
}

// SetTarget sets a team's target URL.
func (q *queries) SetTarget(ctx context.Context, teamID int64, target string) error {
	res, err := q.exec(ctx, `UPDATE teams SET target = ? WHERE id = ?`, target, teamID)
	if err != nil {
		return fmt.Errorf("store: setting team %d's target: %w", teamID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return portal.Errorf(portal.CodeNotFound, "team %d not found", teamID)
	}
	return nil
}

const teamColumns = `id, name, target, COALESCE(invite_code, ''), created_at`

func scanTeam(r scanner) (portal.Team, error) {
	var t portal.Team
	err := r.Scan(&t.ID, &t.Name, &t.Target, &t.InviteCode, &t.CreatedAt)
	return t, err
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
