package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/report"
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
	data, c, err := s.jobPageView(r, j)
	if err != nil {
		return err
	}
	if j.State.Final() {
		t, err := s.store.Team(r.Context(), v.TeamID)
		if err != nil {
			return err
		}
		if data.Enqueue, err = s.enqueueState(r, t, c); err != nil {
			return err
		}
	}
	return s.render(w, r, http.StatusOK, "job", v, data)
}

// jobPageView is what both job pages, the team's and staff's, show of job j:
// its place in the queue, its times and its run's charts, with the
// contest's freeze marked, which it returns too.
func (s *Server) jobPageView(r *http.Request, j portal.Job) (*jobView, portal.Contest, error) {
	c, err := s.contest(r)
	if err != nil {
		return nil, c, err
	}
	pos := s.live.position(j.ID)
	data := newJobView(j, pos)
	data.Times, data.Now = s.live.times(j, pos), s.cfg.Now()
	if data.result != nil {
		key := chartKey{job: j.ID, freeze: c.FreezesAt.UnixNano()}
		data.Charts, err = s.charts.draw(key, func() (template.HTML, error) {
			return report.HTML(data.result, report.Options{Freeze: c.FreezesAt})
		})
	}
	return data, c, err
}

// jobView is what the job pages show: the job, its place in the queue and
// its times, and its result: the verdict, why it failed (said once), the
// run's charts and the summary of the engine's result (its scores, errors,
// per-endpoint table; never the staff log, which the result does not
// hold). The team's page adds whether it may enqueue again; staff's the
// team and the attempts.
type jobView struct {
	layout
	Job         portal.Job
	Position    int
	Times       jobTimes
	Now         time.Time // the server's clock, for the page's own count
	FailReasons []string
	Messages    []string // the job's messages less its reasons to fail
	Charts      template.HTML
	Summary     string
	Enqueue     enqueueState
	Team        portal.Team
	Attempts    []portal.Attempt
	result      *engine.Result
}

func newJobView(j portal.Job, position int) *jobView {
	data := &jobView{Job: j, Position: position, Messages: j.Messages}
	if len(j.Result) == 0 {
		return data
	}
	var res engine.Result
	if err := json.Unmarshal(j.Result, &res); err != nil {
		return data
	}
	data.result, data.FailReasons, data.Messages = &res, res.FailReasons, res.Messages
	// The reasons and the messages are on the page above the summary:
	// it does not say them again.
	brief := res
	brief.FailReasons, brief.Messages = nil, nil
	var b strings.Builder
	if brief.WriteSummary(&b) == nil {
		data.Summary = b.String()
	}
	return data
}

// chartCache keeps the charts of the last job pages drawn: a job's result
// never changes once it has one, and drawing its charts takes a few
// milliseconds, more than the rest of its page.
type chartCache struct {
	mu   sync.Mutex
	html map[chartKey]template.HTML
}

// chartKey is a job's charts, with the contest's freeze that they mark.
type chartKey struct {
	job    int64
	freeze int64
}

// chartCacheSize bounds the cache: a page's charts are some tens of KB.
const chartCacheSize = 128

// draw returns the charts of key, drawn now if they are not kept.
func (c *chartCache) draw(key chartKey, draw func() (template.HTML, error)) (template.HTML, error) {
	c.mu.Lock()
	h, ok := c.html[key]
	c.mu.Unlock()
	if ok {
		return h, nil
	}
	h, err := draw()
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.html == nil {
		c.html = make(map[chartKey]template.HTML, chartCacheSize)
	}
	if len(c.html) >= chartCacheSize {
		for k := range c.html { // any one
			delete(c.html, k)
			break
		}
	}
	c.html[key] = h
	return h, nil
}

// enqueueState is whether the viewer's team may enqueue a benchmark now,
// and if not, why; and its job in the queue or running, if any.
type enqueueState struct {
	OK       bool
	Why      string
	Active   *portal.Job
	Position int
}

// enqueueState reads what enqueueing depends on for team t: the contest's
// state for it, its target, its disqualification and its active job. (The
// queue checks them again when a job is enqueued.)
func (s *Server) enqueueState(r *http.Request, t portal.Team, c portal.Contest) (enqueueState, error) {
	var e enqueueState
	if j, err := s.store.ActiveJob(r.Context(), t.ID); err == nil {
		j = j.ForContestant()
		e.Active, e.Position = &j, s.live.position(j.ID)
	} else if portal.ErrorCode(err) != portal.CodeNotFound {
		return e, err
	}
	switch phase := c.Phase(s.cfg.Now(), t.ExtraTime); {
	case t.Disqualified:
		e.Why = "your team is disqualified"
	case phase != portal.PhaseRunning:
		e.Why = "the contest is " + string(phase)
	case t.Target == "":
		e.Why = "your team has no target yet"
	case e.Active != nil:
		e.Why = fmt.Sprintf("job #%d is %s", e.Active.ID, e.Active.State)
	default:
		e.OK = true
	}
	return e, nil
}
