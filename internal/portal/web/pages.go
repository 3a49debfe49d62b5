package web

import (
	"bytes"
	"encoding/json"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// WorkerGone is how old a worker's heartbeat may be before the admin page
// calls it gone (workers beat every few seconds).
const WorkerGone = 30 * time.Second

// RecentJobs is how many of a worker's last jobs (since staff last cleared
// its quarantine) the admin page counts; a worker whose faults among them
// break the quarantine rule (portal.Faults) is unhealthy, and the portal
// quarantines it.
const RecentJobs = portal.QuarantineRecent

// contest reads the contest; a portal whose admin has not set one up yet
// has a contest with no problem.
func (s *Server) contest(r *http.Request) (portal.Contest, error) {
	c, err := s.store.Contest(r.Context())
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return portal.Contest{}, nil
	}
	return c, err
}

func (s *Server) contestPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	data := map[string]any{"Contest": c, "State": c.Phase(now, 0), "Frozen": c.Frozen(now), "Revealed": c.Revealed(now),
		"Registration": c.RegistrationOpen(now)}
	if p, ok := s.cfg.Lookup(c.Problem); ok {
		data["Problem"] = p
	}
	if v.TeamID != 0 {
		t, err := s.store.Team(r.Context(), v.TeamID)
		if err != nil {
			return err
		}
		data["Team"], data["TeamState"], data["TeamEnd"] = t, c.Phase(now, t.ExtraTime), c.EndFor(t.ExtraTime)
		if j, err := s.store.ActiveJob(r.Context(), v.TeamID); err == nil {
			data["Active"] = j.ForContestant()
			data["Position"] = s.live.position(j.ID)
		} else if portal.ErrorCode(err) != portal.CodeNotFound {
			return err
		}
	}
	if data["Announcements"], data["Latest"], err = s.announcements(r.Context(), ContestAnnouncements); err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "contest", v, data)
	return nil
}

func (s *Server) manualPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	p, ok := s.cfg.Lookup(c.Problem)
	if !ok {
		return portal.Errorf(portal.CodeNotFound, "the contest has no problem yet")
	}
	// goldmark leaves raw HTML out unless told otherwise: the manual's
	// Markdown becomes markup, and nothing else does.
	var b bytes.Buffer
	if err := goldmark.Convert([]byte(p.ManualText()), &b); err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "manual", v, map[string]any{"Problem": p, "Manual": template.HTML(b.String())}) //nolint:gosec // goldmark's safe output
	return nil
}

// leaderboardPage shows the viewer's board (?bracket=) as rendered once per
// change, the viewer's own line marked: the public board, frozen during a
// freeze (with the team's own live score beside it), or for admins the live
// one with a banner saying it is frozen for the others.
func (s *Server) leaderboardPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	b, view, err := s.boardFor(r, v)
	if err != nil {
		return err
	}
	var rows strings.Builder
	own, isOwn := view.index[v.TeamID]
	for i, row := range view.rows {
		if isOwn && i == own && v.TeamID != 0 {
			row = view.ownRows[i]
		}
		rows.WriteString(row)
	}
	bracket := r.URL.Query().Get("bracket")
	query := ""
	if bracket != "" {
		query = "?bracket=" + url.QueryEscape(bracket)
	}
	data := map[string]any{"Rows": template.HTML(rows.String()), "Teams": len(view.rows), //nolint:gosec // rendered by the boardrow template
		"Frozen": b.frozen, "Revealed": b.revealed, "Timeline": b.timeline, "Brackets": b.brackets, "Bracket": bracket,
		"Query": query, "Column": len(b.brackets) > 0 && bracket == ""}
	if line, ok := b.own[v.TeamID]; ok && b.frozen && v.TeamID != 0 {
		data["Own"] = line
	}
	// The live rows carry no team's reason (they are everyone's); the
	// script keeps the viewer's own from here.
	if isOwn && v.TeamID != 0 && view.standings[own].Disqualified {
		data["OwnDQ"] = view.standings[own].DQReason
	}
	s.render(w, r, http.StatusOK, "leaderboard", v, data)
	return nil
}

func (s *Server) teamPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	if v.Admin() {
		seeOther(w, r, "/admin")
		return nil
	}
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	data := map[string]any{"Brackets": c.Settings.Brackets, "Registration": c.RegistrationOpen(s.cfg.Now()),
		"RegistrationAt": c.RegistrationAt}
	if v.TeamID != 0 {
		t, err := s.store.Team(r.Context(), v.TeamID)
		if err != nil {
			return err
		}
		members, err := s.store.TeamMembers(r.Context(), v.TeamID)
		if err != nil {
			return err
		}
		data["Team"], data["Members"] = t, members
		if c.Settings.AssignedServers {
			if data["Servers"], err = s.store.TeamServers(r.Context(), v.TeamID); err != nil {
				return err
			}
			data["Assigned"] = true
		}
		if data["Tokens"], err = s.store.APITokens(r.Context(), v.TeamID); err != nil {
			return err
		}
		data["MaxTokens"] = portal.MaxAPITokens
	}
	s.render(w, r, http.StatusOK, "team", v, data)
	return nil
}

// registrationOpen refuses what registering does (signing up, making or
// joining a team) before the registration opens.
func (s *Server) registrationOpen(c portal.Contest) error {
	if !c.RegistrationOpen(s.cfg.Now()) {
		return portal.Errorf(portal.CodeConflict, "registration opens at %s", c.RegistrationAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return nil
}

func (s *Server) createTeam(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	if err := s.registrationOpen(c); err != nil {
		return err
	}
	if _, err := s.store.CreateTeamFor(r.Context(), v.ID, r.PostFormValue("name"), r.PostFormValue("bracket")); err != nil {
		return err
	}
	seeOther(w, r, "/team")
	return nil
}

func (s *Server) joinTeam(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	if err := s.registrationOpen(c); err != nil {
		return err
	}
	invite := strings.ToLower(strings.TrimSpace(r.PostFormValue("invite")))
	if _, err := s.store.JoinTeam(r.Context(), v.ID, invite, c.Settings.TeamSize()); err != nil {
		return err
	}
	seeOther(w, r, "/team")
	return nil
}

func (s *Server) setTarget(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	if c.Settings.AssignedServers {
		return portal.Errorf(portal.CodeConflict, "this contest's organisers assign each team its servers: pick one of your team's servers")
	}
	target := strings.TrimSpace(r.PostFormValue("target"))
	u, err := portal.CheckTarget(target, c.Settings.Targets())
	if err != nil {
		return err
	}
	team, err := s.store.Team(r.Context(), v.TeamID)
	if err == nil {
		err = c.CheckTargetChange(team, s.cfg.Now())
	}
	if err != nil {
		return err
	}
	// On one machine every team's app is on the same host; elsewhere a
	// host serves one team, lest a team be scored on another's app.
	host := ""
	if !c.Settings.LocalTargets {
		host = portal.TargetHost(u)
	}
	if err := s.store.SetTarget(r.Context(), v.TeamID, target, host); err != nil {
		return err
	}
	seeOther(w, r, "/team")
	return nil
}

// enqueue queues a benchmark of the viewer's team. The queue refuses one
// unless the contest runs for the team, in the transaction that adds it.
func (s *Server) enqueue(w http.ResponseWriter, r *http.Request, v viewer) error {
	j, err := s.cfg.Jobs.Enqueue(r.Context(), v.TeamID)
	if err != nil {
		return err
	}
	seeOther(w, r, "/jobs/"+strconv.FormatInt(j.ID, 10))
	return nil
}

func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	jobs, err := s.store.TeamJobs(r.Context(), v.TeamID)
	if err != nil {
		return err
	}
	for i := range jobs {
		jobs[i] = jobs[i].ForContestant()
	}
	s.render(w, r, http.StatusOK, "jobs", v, map[string]any{"Jobs": jobs})
	return nil
}

// teamJob reads a job of the viewer's team: another team's job is not found,
// exactly as a job that does not exist.
func (s *Server) teamJob(r *http.Request, v viewer) (portal.Job, error) {
	id, err := pathID(r)
	if err != nil {
		return portal.Job{}, err
	}
	j, err := s.store.Job(r.Context(), id)
	if err != nil || j.TeamID != v.TeamID || j.Kind == portal.KindValidation { // teams never see validation runs
		if err == nil || portal.ErrorCode(err) == portal.CodeNotFound {
			return portal.Job{}, portal.Errorf(portal.CodeNotFound, "no such job")
		}
		return portal.Job{}, err
	}
	return j.ForContestant(), nil
}

func (s *Server) jobPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	j, err := s.teamJob(r, v)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "job", v, jobData(j, s.live.position(j.ID), nil))
	return nil
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

func (s *Server) adminPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	ctx := r.Context()
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	teams, err := s.store.Teams(ctx)
	if err != nil {
		return err
	}
	accounts, err := s.store.Accounts(ctx)
	if err != nil {
		return err
	}
	members := map[int64][]string{}
	for _, a := range accounts {
		if a.TeamID != 0 {
			members[a.TeamID] = append(members[a.TeamID], a.Login)
		}
	}
	workers, err := s.workers(r)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	s.render(w, r, http.StatusOK, "admin", v, map[string]any{
		"Contest": c, "State": c.Phase(now, 0), "Frozen": c.Frozen(now), "Revealed": c.Revealed(now),
		"Problems": s.cfg.Problems, "Teams": teams, "Members": members, "Workers": workers, "Accounts": len(accounts),
		"Events": portal.Events(), "Rules": []portal.RankRule{portal.RankLatest, portal.RankBest},
		"Brackets": strings.Join(c.Settings.Brackets, ", "), "NoHealthyWorker": !anyHealthy(workers),
		"Networks":       strings.Join(portal.CIDRs(c.Settings.TargetNetworks), ", "),
		"MaxLoadSeconds": maxLoadSeconds,
		// A contest not set up yet is proposed assigned servers.
		"Assigned": c.Settings.AssignedServers || c.Problem == "",
	})
	return nil
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
		wv.Recent = len(recent[w.Name])
		wv.Errored, _, wv.Unhealthy = portal.Faults(recent[w.Name])
		out = append(out, wv)
	}
	return out, nil
}

// anyHealthy reports whether a worker is live and not quarantined: one
// that can take the queued jobs.
func anyHealthy(ws []workerView) bool {
	for _, w := range ws {
		if !w.Gone && !w.Quarantined() {
			return true
		}
	}
	return false
}

// maxLoadSeconds is the longest load the settings form takes, in seconds
// (its shortest, 1 s, is engine.MinLoadDuration too).
const maxLoadSeconds = int(engine.MaxLoadDuration / time.Second)

// setContest is the admin's settings form: the problem, the load's
// length, the team size, whose targets (assigned servers or self-registered),
// local targets, the ranking rule and the brackets.
// The times have a form of their own (setTimeline).
func (s *Server) setContest(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	problem := r.PostFormValue("problem")
	if !slices.Contains(s.cfg.Problems, problem) {
		return portal.Errorf(portal.CodeInvalid, "no problem %q", problem)
	}
	load, settings := c.LoadDuration, c.Settings
	if secs := strings.TrimSpace(r.PostFormValue("load_seconds")); secs != "" {
		n, err := strconv.Atoi(secs)
		if err != nil || n < 0 || n > maxLoadSeconds {
			return portal.Errorf(portal.CodeInvalid, "the load lasts 0 (the engine's default) to %d seconds", maxLoadSeconds)
		}
		load = time.Duration(n) * time.Second
	}
	if size := strings.TrimSpace(r.PostFormValue("team_size")); size != "" {
		n, err := strconv.Atoi(size)
		if err != nil || n < 1 || n > 100 {
			return portal.Errorf(portal.CodeInvalid, "a team has 1 to 100 members")
		}
		settings.MaxTeamSize = n
	}
	settings.LocalTargets = r.PostFormValue("local_targets") == "on"
	switch targets := r.PostFormValue("targets"); targets {
	case "assigned", "self":
		settings.AssignedServers = targets == "assigned"
	case "": // a form without the choice keeps it
	default:
		return portal.Errorf(portal.CodeInvalid, "targets are assigned or self-registered, not %q", targets)
	}
	if rule := r.PostFormValue("ranking"); rule != "" {
		settings.Ranking = portal.RankRule(rule)
	}
	if r.PostForm.Has("brackets") {
		settings.Brackets = nil
		for b := range strings.SplitSeq(r.PostFormValue("brackets"), ",") {
			if b = strings.TrimSpace(b); b != "" {
				settings.Brackets = append(settings.Brackets, b)
			}
		}
	}
	if r.PostForm.Has("target_networks") {
		if settings.TargetNetworks, err = portal.ParseNetworks(r.PostFormValue("target_networks")); err != nil {
			return err
		}
	}
	if err := s.store.SetSettings(r.Context(), portal.ActorOf(v.Account), problem, load, settings); err != nil {
		return err
	}
	seeOther(w, r, "/admin")
	return nil
}

// parseTime reads a time of a form: empty for none, else UTC as a
// datetime-local input sends it (seconds optional) or RFC 3339.
func parseTime(r *http.Request, field string) (time.Time, error) {
	in := strings.TrimSpace(r.PostFormValue(field))
	if in == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, in, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, portal.Errorf(portal.CodeInvalid, "%s: %q is not a time like 2026-12-01T10:00 (UTC)", field, in)
}

// timeFields are the timeline form's fields, by event.
var timeFields = map[portal.Event]string{
	portal.EventRegistration: "registration_at", portal.EventStart: "starts_at", portal.EventFreeze: "freezes_at",
	portal.EventEnd: "ends_at", portal.EventReveal: "reveals_at",
}

// setTimeline is the admin's timeline form: the five times, in UTC. A
// field that shows a time as the form showed it (to the second) keeps the
// time as it is, so saving the form changes only what was edited.
func (s *Server) setTimeline(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	t := c.Timeline
	for _, e := range portal.Events() {
		at, _ := t.At(e)
		in, err := parseTime(r, timeFields[e])
		if err != nil {
			return err
		}
		if !in.Equal(at.Truncate(time.Second)) {
			*at = in
		}
	}
	if err := s.store.SetTimeline(r.Context(), portal.ActorOf(v.Account), t); err != nil {
		return err
	}
	seeOther(w, r, "/admin")
	return nil
}

// setNow is the timeline's buttons: one event (registration, start,
// freeze, end, reveal) now.
func (s *Server) setNow(w http.ResponseWriter, r *http.Request, v viewer) error {
	e := portal.Event(r.PostFormValue("event"))
	if _, err := s.store.SetNow(r.Context(), portal.ActorOf(v.Account), e); err != nil {
		return err
	}
	seeOther(w, r, "/admin")
	return nil
}

// setTeamPlace is a team's line on the admin page: its bracket, whether it
// is hidden, its extra time in minutes.
func (s *Server) setTeamPlace(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "team")
	if err != nil {
		return err
	}
	var extra time.Duration
	if mins := strings.TrimSpace(r.PostFormValue("extra_minutes")); mins != "" {
		n, err := strconv.Atoi(mins)
		if err != nil {
			return portal.Errorf(portal.CodeInvalid, "extra time: %q is not a number of minutes", mins)
		}
		extra = time.Duration(n) * time.Minute
	}
	place := store.TeamPlace{Bracket: r.PostFormValue("bracket"), Hidden: r.PostFormValue("hidden") == "on", ExtraTime: extra}
	if err := s.store.SetTeamPlace(r.Context(), portal.ActorOf(v.Account), id, place); err != nil {
		return err
	}
	seeOther(w, r, "/admin#team-"+strconv.FormatInt(id, 10))
	return nil
}

// auditPage lists the admin actions, the newest first.
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	entries, err := s.store.AuditLog(r.Context())
	if err != nil {
		return err
	}
	slices.Reverse(entries)
	type line struct {
		portal.AuditEntry
		What []string
	}
	lines := make([]line, len(entries))
	for i, e := range entries {
		lines[i] = line{AuditEntry: e, What: describeDetail(e.Detail)}
	}
	s.render(w, r, http.StatusOK, "admin_audit", v, map[string]any{"Entries": lines})
	return nil
}

// describeDetail is an audit entry's detail in lines for people: "field:
// before → after" for each change, "key: value" otherwise.
func describeDetail(detail json.RawMessage) []string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(detail, &fields); err != nil {
		return []string{string(detail)}
	}
	show := func(raw json.RawMessage) string {
		var s string
		if string(raw) == "null" {
			return "unset"
		}
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		// A change is {"before": ..., "after": ...}, either of them null.
		var c map[string]json.RawMessage
		_ = json.Unmarshal(fields[k], &c)
		before, hasBefore := c["before"]
		after, hasAfter := c["after"]
		if len(c) == 2 && hasBefore && hasAfter {
			out = append(out, k+": "+show(before)+" → "+show(after))
		} else {
			out = append(out, k+": "+show(fields[k]))
		}
	}
	return out
}

// auditExport is the audit log as a JSON file, oldest first.
func (s *Server) auditExport(w http.ResponseWriter, r *http.Request, v viewer) error {
	entries, err := s.store.AuditLog(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="tunecon-audit.json"`)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(entries)
	return nil
}

// ceremonyPage reveals the final board (live, without hidden teams) team by
// team from the bottom: ?shown=N shows the last N lines, and its button
// shows one more. It changes nothing: the public board is revealed by the
// timeline's reveal.
func (s *Server) ceremonyPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	b, err := s.live.current(r.Context())
	if err != nil {
		return err
	}
	bracket := r.URL.Query().Get("bracket")
	if _, err := b.view(bracket, true); err != nil {
		return err
	}
	board := portal.Board(b.final, bracket, false)
	shown, _ := strconv.Atoi(r.URL.Query().Get("shown"))
	shown = max(0, min(shown, len(board)))
	type line struct {
		portal.Standing
		Shown bool
	}
	lines := make([]line, len(board))
	for i, st := range board {
		lines[i] = line{Standing: st, Shown: i >= len(board)-shown}
	}
	next := url.Values{"shown": {strconv.Itoa(shown + 1)}}
	all := url.Values{"shown": {strconv.Itoa(len(board))}}
	if bracket != "" {
		next.Set("bracket", bracket)
		all.Set("bracket", bracket)
	}
	s.render(w, r, http.StatusOK, "admin_ceremony", v, map[string]any{"Lines": lines, "Shown": shown, "Total": len(board),
		"Bracket": bracket, "Brackets": b.brackets, "Next": "?" + next.Encode(), "All": "?" + all.Encode()})
	return nil
}

func (s *Server) adminJobsPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	jobs, err := s.store.Jobs(r.Context())
	if err != nil {
		return err
	}
	teams, err := s.store.Teams(r.Context())
	if err != nil {
		return err
	}
	names := map[int64]string{}
	for _, t := range teams {
		names[t.ID] = t.Name
	}
	slices.Reverse(jobs)
	s.render(w, r, http.StatusOK, "admin_jobs", v, map[string]any{"Jobs": jobs, "Teams": names})
	return nil
}

func (s *Server) adminJobPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	j, err := s.store.Job(r.Context(), id)
	if err != nil {
		return err
	}
	attempts, err := s.store.JobAttempts(r.Context(), id)
	if err != nil {
		return err
	}
	t, err := s.store.Team(r.Context(), j.TeamID)
	if err != nil {
		return err
	}
	data := jobData(j, s.live.position(j.ID), attempts)
	data["Team"] = t
	s.render(w, r, http.StatusOK, "admin_job", v, data)
	return nil
}

func (s *Server) rerun(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	j, err := s.cfg.Jobs.Rerun(r.Context(), id, portal.ActorOf(v.Account))
	if err != nil {
		return err
	}
	seeOther(w, r, "/admin/jobs/"+strconv.FormatInt(j.ID, 10))
	return nil
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Jobs.Cancel(r.Context(), id, portal.ActorOf(v.Account)); err != nil {
		return err
	}
	seeOther(w, r, "/admin/jobs/"+strconv.FormatInt(id, 10))
	return nil
}
