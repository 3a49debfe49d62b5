package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
)

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
	s.render(w, r, http.StatusOK, "admin_validation", v, map[string]any{
		"Lines": lines, "Flagged": flagged, "Threshold": threshold, "Rule": c.Settings.Rule(),
		"Ended": !c.EndsAt.IsZero() && !now.Before(c.EndsAt), "Contest": c,
		"Done": r.URL.Query().Get("queued"),
	})
	return nil
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
	seeOther(w, r, "/admin/validation?"+url.Values{"queued": {strconv.Itoa(len(b.Queued))}}.Encode())
	return nil
}

// setThreshold sets the contest's validation threshold, in percent, as a
// change of its settings (audited as one).
func (s *Server) setThreshold(w http.ResponseWriter, r *http.Request, v viewer) error {
	in := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(r.PostFormValue("threshold")), "%"))
	n, err := strconv.Atoi(in)
	if err != nil || n < 1 || n > 100 {
		return portal.Errorf(portal.CodeInvalid, "the validation threshold is 1 to 100 (percent), not %q", in)
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
	seeOther(w, r, "/admin/validation")
	return nil
}

// disqualify disqualifies a team with a reason, or changes the reason.
func (s *Server) disqualify(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.setDisqualified(w, r, v, true)
}

// reinstate lifts a team's disqualification.
func (s *Server) reinstate(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.setDisqualified(w, r, v, false)
}

func (s *Server) setDisqualified(w http.ResponseWriter, r *http.Request, v viewer, dq bool) error {
	id, err := pathID(r, "team")
	if err != nil {
		return err
	}
	if err := s.store.SetDisqualified(r.Context(), portal.ActorOf(v.Account), id, dq, r.PostFormValue("reason")); err != nil {
		return err
	}
	seeOther(w, r, "/admin#team-"+strconv.FormatInt(id, 10))
	return nil
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
	seeOther(w, r, "/admin#workers")
	return nil
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
	seeOther(w, r, "/admin/jobs")
	return nil
}
