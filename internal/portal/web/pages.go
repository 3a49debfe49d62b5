package web

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
)

// WorkerGone is how old a worker's heartbeat may be before the admin page
// calls it gone (workers beat every few seconds).
const WorkerGone = 30 * time.Second

// UnhealthyErrors is how many of a worker's last RecentJobs jobs may error
// through the benchmarker's fault before it is shown as unhealthy.
const (
	RecentJobs      = 10
	UnhealthyErrors = 3
)

// contestState is where the contest stands now.
func contestState(c portal.Contest, now time.Time) string {
	switch {
	case c.Problem == "":
		return "not set up"
	case !c.StartsAt.IsZero() && now.Before(c.StartsAt):
		return "not started"
	case !c.EndsAt.IsZero() && !now.Before(c.EndsAt):
		return "over"
	}
	return "running"
}

// contest reads the contest; a portal whose admin has not set one up yet
// has a contest with no problem.
func (s *Server) contest(r *http.Request) (portal.Contest, error) {
	c, err := s.store.Contest(r.Context())
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return portal.Contest{}, nil
	}
	return c, err
}

func (s *Server) contestPage(w http.ResponseWriter, r *http.Request, v viewer) {
	c, err := s.contest(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	data := map[string]any{"Contest": c, "State": contestState(c, s.cfg.Now())}
	if p, ok := s.cfg.Lookup(c.Problem); ok {
		data["Problem"] = p
	}
	if v.TeamID != 0 {
		t, err := s.store.Team(r.Context(), v.TeamID)
		if err != nil {
			s.fail(w, r, v, err)
			return
		}
		data["Team"] = t
		if j, err := s.store.ActiveJob(r.Context(), v.TeamID); err == nil {
			data["Active"] = j.ForContestant()
			data["Position"] = s.live.position(j.ID)
		} else if portal.ErrorCode(err) != portal.CodeNotFound {
			s.fail(w, r, v, err)
			return
		}
	}
	s.render(w, r, http.StatusOK, "contest", v, data)
}

func (s *Server) manualPage(w http.ResponseWriter, r *http.Request, v viewer) {
	c, err := s.contest(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	p, ok := s.cfg.Lookup(c.Problem)
	if !ok {
		s.fail(w, r, v, portal.Errorf(portal.CodeNotFound, "the contest has no problem yet"))
		return
	}
	// goldmark leaves raw HTML out unless told otherwise: the manual's
	// Markdown becomes markup, and nothing else does.
	var b bytes.Buffer
	if err := goldmark.Convert([]byte(p.ManualText), &b); err != nil {
		s.fail(w, r, v, err)
		return
	}
	s.render(w, r, http.StatusOK, "manual", v, map[string]any{"Problem": p, "Manual": template.HTML(b.String())}) //nolint:gosec // goldmark's safe output
}

// leaderboardPage shows the table's lines as rendered once per change, the
// viewer's own line marked.
func (s *Server) leaderboardPage(w http.ResponseWriter, r *http.Request, v viewer) {
	view, err := s.live.board(r.Context())
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	var b strings.Builder
	own, isOwn := view.index[v.TeamID]
	for i, row := range view.rows {
		if isOwn && i == own && v.TeamID != 0 {
			row = view.ownRows[i]
		}
		b.WriteString(row)
	}
	s.render(w, r, http.StatusOK, "leaderboard", v, map[string]any{
		"Rows": template.HTML(b.String()), "Teams": len(view.rows)}) //nolint:gosec // rendered by the boardrow template
}

func (s *Server) teamPage(w http.ResponseWriter, r *http.Request, v viewer) {
	if v.Admin() {
		seeOther(w, r, "/admin")
		return
	}
	data := map[string]any{}
	if v.TeamID != 0 {
		t, err := s.store.Team(r.Context(), v.TeamID)
		if err != nil {
			s.fail(w, r, v, err)
			return
		}
		members, err := s.store.TeamMembers(r.Context(), v.TeamID)
		if err != nil {
			s.fail(w, r, v, err)
			return
		}
		data["Team"], data["Members"] = t, members
	}
	s.render(w, r, http.StatusOK, "team", v, data)
}

func (s *Server) createTeam(w http.ResponseWriter, r *http.Request, v viewer) {
	if _, err := s.store.CreateTeamFor(r.Context(), v.ID, r.PostFormValue("name")); err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/team")
}

func (s *Server) joinTeam(w http.ResponseWriter, r *http.Request, v viewer) {
	c, err := s.contest(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	invite := strings.ToLower(strings.TrimSpace(r.PostFormValue("invite")))
	if _, err := s.store.JoinTeam(r.Context(), v.ID, invite, c.Settings.TeamSize()); err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/team")
}

func (s *Server) setTarget(w http.ResponseWriter, r *http.Request, v viewer) {
	c, err := s.contest(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	target := strings.TrimSpace(r.PostFormValue("target"))
	if _, err := portal.CheckTarget(target, c.Settings.LocalTargets); err != nil {
		s.fail(w, r, v, err)
		return
	}
	if err := s.store.SetTarget(r.Context(), v.TeamID, target); err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/team")
}

// enqueue queues a benchmark of the viewer's team while the contest runs.
func (s *Server) enqueue(w http.ResponseWriter, r *http.Request, v viewer) {
	c, err := s.contest(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	if st := contestState(c, s.cfg.Now()); st != "running" {
		s.fail(w, r, v, portal.Errorf(portal.CodeConflict, "the contest is %s: no benchmarks now", st))
		return
	}
	j, err := s.cfg.Jobs.Enqueue(r.Context(), v.TeamID)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/jobs/"+strconv.FormatInt(j.ID, 10))
}

func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request, v viewer) {
	jobs, err := s.store.TeamJobs(r.Context(), v.TeamID)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	for i := range jobs {
		jobs[i] = jobs[i].ForContestant()
	}
	s.render(w, r, http.StatusOK, "jobs", v, map[string]any{"Jobs": jobs})
}

// teamJob reads a job of the viewer's team: another team's job is not found,
// exactly as a job that does not exist.
func (s *Server) teamJob(r *http.Request, v viewer) (portal.Job, error) {
	id, err := pathID(r)
	if err != nil {
		return portal.Job{}, err
	}
	j, err := s.store.Job(r.Context(), id)
	if err != nil || j.TeamID != v.TeamID {
		if err == nil || portal.ErrorCode(err) == portal.CodeNotFound {
			return portal.Job{}, portal.Errorf(portal.CodeNotFound, "no such job")
		}
		return portal.Job{}, err
	}
	return j.ForContestant(), nil
}

func (s *Server) jobPage(w http.ResponseWriter, r *http.Request, v viewer) {
	j, err := s.teamJob(r, v)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	s.render(w, r, http.StatusOK, "job", v, jobData(j, s.live.position(j.ID), nil))
}

// jobData is what the job pages show: the summary of the engine's result
// (its verdict, scores, errors, per-endpoint table and messages; never the
// staff log, which the result does not hold).
func jobData(j portal.Job, position int, attempts []portal.Attempt) map[string]any {
	data := map[string]any{"Job": j, "Position": position, "Attempts": attempts}
	if len(j.Result) > 0 {
		var res engine.Result
		var b strings.Builder
		if err := json.Unmarshal(j.Result, &res); err == nil && res.WriteSummary(&b) == nil {
			data["Summary"] = b.String()
		}
	}
	return data
}

func (s *Server) adminPage(w http.ResponseWriter, r *http.Request, v viewer) {
	ctx := r.Context()
	c, err := s.contest(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	teams, err := s.store.Teams(ctx)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	accounts, err := s.store.Accounts(ctx)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	members := map[int64][]string{}
	for _, a := range accounts {
		if a.TeamID != 0 {
			members[a.TeamID] = append(members[a.TeamID], a.Login)
		}
	}
	workers, err := s.workers(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	s.render(w, r, http.StatusOK, "admin", v, map[string]any{
		"Contest": c, "State": contestState(c, s.cfg.Now()), "Problems": s.cfg.Problems, "Teams": teams,
		"Members": members, "Workers": workers, "Accounts": len(accounts),
	})
}

// workerView is a worker on the admin page.
type workerView struct {
	portal.Worker
	Gone      bool
	Recent    int // its last jobs, up to RecentJobs
	Errored   int // of them, errored through the benchmarker
	Unhealthy bool
}

func (s *Server) workers(r *http.Request) ([]workerView, error) {
	ws, err := s.store.Workers(r.Context())
	if err != nil {
		return nil, err
	}
	recent, err := s.store.RecentWorkerJobs(r.Context(), RecentJobs)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	out := make([]workerView, 0, len(ws))
	for _, w := range ws {
		wv := workerView{Worker: w, Gone: now.Sub(w.HeartbeatAt) > WorkerGone}
		for _, j := range recent[w.Name] {
			wv.Recent++
			if j.State == portal.JobErrored && j.ErrorCode != portal.ReasonWorkerLost && j.ErrorCode != portal.ReasonCancelled {
				wv.Errored++
			}
		}
		wv.Unhealthy = wv.Errored >= UnhealthyErrors
		out = append(out, wv)
	}
	return out, nil
}

// setContest is the admin's contest form: the problem, the load's length,
// the times (UTC) and the team size.
func (s *Server) setContest(w http.ResponseWriter, r *http.Request, v viewer) {
	c, err := s.contest(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	problem := r.PostFormValue("problem")
	if !slices.Contains(s.cfg.Problems, problem) {
		s.fail(w, r, v, portal.Errorf(portal.CodeInvalid, "no problem %q", problem))
		return
	}
	c.Problem = problem
	parseTime := func(field string) (time.Time, error) {
		in := strings.TrimSpace(r.PostFormValue(field))
		if in == "" {
			return time.Time{}, nil
		}
		for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339} {
			if t, err := time.ParseInLocation(layout, in, time.UTC); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, portal.Errorf(portal.CodeInvalid, "%s: %q is not a time like 2026-12-01T10:00 (UTC)", field, in)
	}
	if c.StartsAt, err = parseTime("starts_at"); err != nil {
		s.fail(w, r, v, err)
		return
	}
	if c.EndsAt, err = parseTime("ends_at"); err != nil {
		s.fail(w, r, v, err)
		return
	}
	if !c.StartsAt.IsZero() && !c.EndsAt.IsZero() && !c.EndsAt.After(c.StartsAt) {
		s.fail(w, r, v, portal.Errorf(portal.CodeInvalid, "the contest must end after it starts"))
		return
	}
	if secs := strings.TrimSpace(r.PostFormValue("load_seconds")); secs != "" {
		n, err := strconv.Atoi(secs)
		if err != nil || n < 0 || n > 3600 {
			s.fail(w, r, v, portal.Errorf(portal.CodeInvalid, "the load lasts 0 (the engine's default) to 3600 seconds"))
			return
		}
		c.LoadDuration = time.Duration(n) * time.Second
	}
	if size := strings.TrimSpace(r.PostFormValue("team_size")); size != "" {
		n, err := strconv.Atoi(size)
		if err != nil || n < 1 || n > 100 {
			s.fail(w, r, v, portal.Errorf(portal.CodeInvalid, "a team has 1 to 100 members"))
			return
		}
		c.Settings.MaxTeamSize = n
	}
	c.Settings.LocalTargets = r.PostFormValue("local_targets") == "on"
	if err := s.store.SetContest(r.Context(), c); err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/admin")
}

func (s *Server) adminJobsPage(w http.ResponseWriter, r *http.Request, v viewer) {
	jobs, err := s.store.Jobs(r.Context())
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	teams, err := s.store.Teams(r.Context())
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	names := map[int64]string{}
	for _, t := range teams {
		names[t.ID] = t.Name
	}
	slices.Reverse(jobs)
	s.render(w, r, http.StatusOK, "admin_jobs", v, map[string]any{"Jobs": jobs, "Teams": names})
}

func (s *Server) adminJobPage(w http.ResponseWriter, r *http.Request, v viewer) {
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	j, err := s.store.Job(r.Context(), id)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	attempts, err := s.store.JobAttempts(r.Context(), id)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	t, err := s.store.Team(r.Context(), j.TeamID)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	data := jobData(j, s.live.position(j.ID), attempts)
	data["Team"] = t
	s.render(w, r, http.StatusOK, "admin_job", v, data)
}

func (s *Server) rerun(w http.ResponseWriter, r *http.Request, v viewer) {
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	j, err := s.cfg.Jobs.Rerun(r.Context(), id)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/admin/jobs/"+strconv.FormatInt(j.ID, 10))
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, v viewer) {
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	if _, err := s.cfg.Jobs.Cancel(r.Context(), id); err != nil {
		s.fail(w, r, v, err)
		return
	}
	seeOther(w, r, "/admin/jobs/"+strconv.FormatInt(id, 10))
}
