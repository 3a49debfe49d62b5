package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// The admin's jobs and workers: every job, re-runs and cancellations, the
// workers' quarantine, and the validation runs after the end.

// WorkerGone is how old a worker's heartbeat may be before the admin page
// calls it gone (workers beat every few seconds).
const WorkerGone = 30 * time.Second

// RecentJobs is how many of a worker's last jobs (since staff last cleared
// its quarantine) the admin page counts; a worker whose faults among them
// break the quarantine rule (portal.Faults) is unhealthy, and the portal
// quarantines it.
const RecentJobs = portal.QuarantineRecent

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

// ClearPath is the route that clears the worker's quarantine, its name
// escaped as one path segment.
func (w workerView) ClearPath() string { return "/admin/workers/" + url.PathEscape(w.Name) + "/clear" }

// clearWorker clears a worker's quarantine: it takes jobs again.
func (s *Server) clearWorker(w http.ResponseWriter, r *http.Request, v viewer) error {
	name := r.PathValue("name")
	if err := s.store.ClearQuarantine(r.Context(), portal.ActorOf(v.Account), name); err != nil {
		return err
	}
	return seeOther(w, r, "/admin#workers")
}

// AdminJobsPage is how many jobs a page of /admin/jobs lists.
const AdminJobsPage = 50

// adminJobsView is a page of the jobs the filter picks, the newest first,
// with the teams' names by id, the queue's summary, and the next page's
// link ("" on the last).
type adminJobsView struct {
	layout
	Jobs   []portal.Job
	Teams  []portal.Team
	Names  map[int64]string
	Filter jobsFilter
	States []portal.JobState
	Queue  queueSummary
	Next   string
}

// jobsFilter is /admin/jobs's query: ?state=&team=&worker=&before=.
type jobsFilter struct {
	State  portal.JobState
	TeamID int64
	Worker string
	Before int64
}

// jobStates are the states the filter offers.
func jobStates() []portal.JobState {
	return []portal.JobState{portal.JobQueued, portal.JobRunning, portal.JobFinished, portal.JobErrored, portal.JobCancelled}
}

// readJobsFilter reads the filter, refusing what no job could match.
func readJobsFilter(r *http.Request) (jobsFilter, error) {
	q := r.URL.Query()
	f := jobsFilter{State: portal.JobState(q.Get("state")), Worker: strings.TrimSpace(q.Get("worker"))}
	if f.State != "" && !slices.Contains(jobStates(), f.State) {
		return f, portal.Errorf(portal.CodeInvalid, "no job state %q", f.State)
	}
	if len(f.Worker) > portal.MaxLogin*4 {
		return f, portal.Errorf(portal.CodeInvalid, "no worker has so long a name")
	}
	for field, to := range map[string]*int64{"team": &f.TeamID, "before": &f.Before} {
		if in := q.Get(field); in != "" {
			n, err := strconv.ParseInt(in, 10, 64)
			if err != nil || n < 1 {
				return f, portal.Errorf(portal.CodeInvalid, "%s: an id, not %q", field, in)
			}
			*to = n
		}
	}
	return f, nil
}

// query is the filter as a URL query, with before.
func (f jobsFilter) query(before int64) string {
	v := url.Values{}
	if f.State != "" {
		v.Set("state", string(f.State))
	}
	if f.TeamID != 0 {
		v.Set("team", strconv.FormatInt(f.TeamID, 10))
	}
	if f.Worker != "" {
		v.Set("worker", f.Worker)
	}
	v.Set("before", strconv.FormatInt(before, 10))
	return "?" + v.Encode()
}

// queueSummary is the queue now: how many jobs wait and run, the running
// ones by worker, and how long the oldest queued job has waited.
type queueSummary struct {
	Queued, Running int
	ByWorker        []workerCount
	OldestWait      time.Duration
}

type workerCount struct {
	Worker string
	Jobs   int
}

// summarize makes the queue's summary of the active jobs.
func summarize(active []portal.Job, now time.Time) queueSummary {
	var q queueSummary
	counts := map[string]int{}
	for _, j := range active {
		switch j.State {
		case portal.JobQueued:
			q.Queued++
			q.OldestWait = max(q.OldestWait, now.Sub(j.CreatedAt).Round(time.Second))
		case portal.JobRunning:
			q.Running++
			counts[j.Worker]++
		}
	}
	for w, n := range counts {
		q.ByWorker = append(q.ByWorker, workerCount{w, n})
	}
	slices.SortFunc(q.ByWorker, func(a, b workerCount) int { return strings.Compare(a.Worker, b.Worker) })
	return q
}

func (s *Server) queueNow(r *http.Request) (queueSummary, error) {
	active, err := s.store.Jobs(r.Context(), portal.JobQueued, portal.JobRunning)
	if err != nil {
		return queueSummary{}, err
	}
	return summarize(active, s.cfg.Now()), nil
}

// queueJSON is the queue's summary for the admin pages' script, which
// keeps it live.
func (s *Server) queueJSON(w http.ResponseWriter, r *http.Request, v viewer) error {
	q, err := s.queueNow(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(map[string]any{"queued": q.Queued, "running": q.Running,
		"by_worker": q.ByWorker, "oldest_wait": q.OldestWait.String()})
}

// adminJobsPage lists the jobs, AdminJobsPage at a time, the newest first,
// filtered by state, team and worker, under the queue's summary.
func (s *Server) adminJobsPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	f, err := readJobsFilter(r)
	if err != nil {
		return err
	}
	jobs, err := s.store.JobsPage(r.Context(), store.JobFilter{State: f.State, TeamID: f.TeamID, Worker: f.Worker,
		Before: f.Before, Limit: AdminJobsPage + 1})
	if err != nil {
		return err
	}
	teams, err := s.store.Teams(r.Context())
	if err != nil {
		return err
	}
	view := &adminJobsView{Jobs: jobs, Teams: teams, Names: map[int64]string{}, Filter: f, States: jobStates()}
	for _, t := range teams {
		view.Names[t.ID] = t.Name
	}
	if len(jobs) > AdminJobsPage {
		view.Jobs = jobs[:AdminJobsPage]
		view.Next = f.query(view.Jobs[AdminJobsPage-1].ID)
	}
	if view.Queue, err = s.queueNow(r); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "admin_jobs", v, view)
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
	data, _, err := s.jobPageView(r, j)
	if err != nil {
		return err
	}
	data.Team, data.Attempts = t, attempts
	return s.render(w, r, http.StatusOK, "admin_job", v, data)
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
	return seeOther(w, r, "/admin/jobs/"+strconv.FormatInt(j.ID, 10))
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Jobs.Cancel(r.Context(), id, portal.ActorOf(v.Account)); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/jobs/"+strconv.FormatInt(id, 10))
}

// rerunErrored runs every errored job not run again yet once more.
func (s *Server) rerunErrored(w http.ResponseWriter, r *http.Request, v viewer) error {
	val, err := s.validator()
	if err != nil {
		return err
	}
	if _, err := val.RerunErrored(r.Context(), portal.ActorOf(v.Account)); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/jobs")
}

// Validator is what the validation page and "re-run all errored" ask of
// the job queue, an optional capability of Jobs (the queue has it).
type Validator interface {
	Validate(ctx context.Context, by portal.Actor) (queue.Bulk, error)
	RerunErrored(ctx context.Context, by portal.Actor) (queue.Bulk, error)
}

var _ Validator = (*queue.Queue)(nil)

func (s *Server) validator() (Validator, error) {
	v, ok := s.cfg.Jobs.(Validator)
	if !ok {
		return nil, portal.Errorf(portal.CodeUnsupported, "this portal's queue runs no validation")
	}
	return v, nil
}

// validationView is the validation page's: each team's line, how many
// are flagged, the rule and threshold they were judged by, whether the
// contest has ended, and how many runs were just queued ("": none).
type validationView struct {
	layout
	Lines     []portal.ValidationLine
	Flagged   int
	Threshold int
	Rule      portal.RankRule
	Ended     bool
	Contest   portal.Contest
	Done      string
}

// validationPage shows each team's final score (by the contest's ranking
// rule, live: the board as it will be revealed) beside its latest
// validation run, the ratio of the two, and flags those under the
// threshold, failed or errored.
func (s *Server) validationPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	ctx := r.Context()
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	all, err := s.store.Leaderboard(ctx, store.BoardOptions{Rule: c.Settings.Rule()})
	if err != nil {
		return err
	}
	latest, err := s.store.LatestValidations(ctx)
	if err != nil {
		return err
	}
	threshold := c.Settings.Threshold()
	lines := make([]portal.ValidationLine, 0, len(all))
	flagged := 0
	for _, st := range portal.Board(all, "", true) {
		l := portal.Validate(st, latest[st.TeamID], threshold)
		if l.Flagged() {
			flagged++
		}
		lines = append(lines, l)
	}
	now := s.cfg.Now()
	return s.render(w, r, http.StatusOK, "admin_validation", v, &validationView{
		Lines: lines, Flagged: flagged, Threshold: threshold, Rule: c.Settings.Rule(),
		Ended: !c.EndsAt.IsZero() && !now.Before(c.EndsAt), Contest: c,
		Done: r.URL.Query().Get("queued"),
	})
}

// startValidation queues a validation job of every team with a target.
func (s *Server) startValidation(w http.ResponseWriter, r *http.Request, v viewer) error {
	val, err := s.validator()
	if err != nil {
		return err
	}
	b, err := val.Validate(r.Context(), portal.ActorOf(v.Account))
	if err != nil {
		return err
	}
	return seeOther(w, r, "/admin/validation?"+url.Values{"queued": {strconv.Itoa(len(b.Queued))}}.Encode())
}

// setThreshold sets the contest's validation threshold, in percent, as a
// change of its settings (audited as one).
func (s *Server) setThreshold(w http.ResponseWriter, r *http.Request, v viewer) error {
	r.PostForm.Set("threshold", strings.TrimSuffix(strings.TrimSpace(r.PostFormValue("threshold")), "%"))
	n, set, err := formNumber(r, "threshold", 1, 100, "the validation threshold, in percent,")
	if err != nil {
		return err
	} else if !set {
		return portal.Errorf(portal.CodeInvalid, "the validation threshold is a whole number from 1 to 100 (percent)")
	}
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	settings := c.Settings
	settings.ValidationThreshold = n
	if err := s.store.SetSettings(r.Context(), portal.ActorOf(v.Account), c.Problem, c.LoadDuration, settings); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/validation")
}
