package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
)

// A team's benchmarks: enqueueing one, the list, and a job's page.

// enqueue queues a benchmark of the viewer's team. The queue refuses one
// unless the contest runs for the team, in the transaction that adds it.
func (s *Server) enqueue(w http.ResponseWriter, r *http.Request, v viewer) error {
	j, err := s.cfg.Jobs.Enqueue(r.Context(), v.TeamID)
	if err != nil {
		return err
	}
	return seeOther(w, r, "/jobs/"+strconv.FormatInt(j.ID, 10))
}

// jobsView is the team's list of jobs.
type jobsView struct {
	layout
	Jobs []portal.Job
}

func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	jobs, err := s.store.TeamJobs(r.Context(), v.TeamID)
	if err != nil {
		return err
	}
	for i := range jobs {
		jobs[i] = jobs[i].ForContestant()
	}
	return s.render(w, r, http.StatusOK, "jobs", v, &jobsView{Jobs: jobs})
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
	return s.render(w, r, http.StatusOK, "job", v, newJobView(j, s.live.position(j.ID)))
}

// jobView is what the job pages show: the job, its place in the queue,
// and the summary of the engine's result (its verdict, scores, errors,
// per-endpoint table and messages; never the staff log, which the result
// does not hold). Staff's page adds the team and the attempts.
type jobView struct {
	layout
	Job      portal.Job
	Position int
	Summary  string
	Team     portal.Team
	Attempts []portal.Attempt
}

func newJobView(j portal.Job, position int) *jobView {
	data := &jobView{Job: j, Position: position}
	if len(j.Result) > 0 {
		var res engine.Result
		var b strings.Builder
		if err := json.Unmarshal(j.Result, &res); err == nil && res.WriteSummary(&b) == nil {
			data.Summary = b.String()
		}
	}
	return data
}
