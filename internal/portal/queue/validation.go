package queue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// Errors of an attempt's start that send the job back to River's queue
// without an attempt: the worker is quarantined, or the job's team has
// another job running.
var (
	errQuarantined = errors.New("the worker is quarantined")
	errTeamBusy    = errors.New("the team has another job running")
)

// Bulk is what an action on many teams did: the jobs it queued, and why it
// left the others out, by team id.
type Bulk struct {
	Queued  []portal.Job
	Skipped map[int64]string
}

// Validate queues a validation job (portal.KindValidation) of every team
// with a target, hidden and disqualified teams too (staff judge them all;
// neither takes a rank anyway), for staff (by), once the contest has ended:
// a post-contest check that each team's app still scores what it scored.
// Each runs the target of the team's last passed job (the app its last
// score came from; its current target if none passed) like any job,
// ignoring the end; a
// team whose validation job is still queued or running is left out. The
// jobs and one audit entry are written in one transaction: nothing queued
// leaves no entry (CodeConflict).
func (q *Queue) Validate(ctx context.Context, by portal.Actor) (Bulk, error) {
	out := Bulk{Skipped: map[int64]string{}}
	err := q.store.InTx(ctx, func(tx *store.Tx) error {
		out = Bulk{Skipped: map[int64]string{}}
		c, err := q.contestForEnqueue(ctx, tx)
		if err != nil {
			return err
		}
		now := tx.Now()
		switch {
		case c.EndsAt.IsZero():
			return portal.Errorf(portal.CodeConflict, "validation runs start after the contest's end, and it has none: set it first")
		case now.Before(c.EndsAt):
			return portal.Errorf(portal.CodeConflict, "validation runs start after the contest's end (%s)",
				c.EndsAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		}
		teams, err := tx.Teams(ctx)
		if err != nil {
			return err
		}
		for _, t := range teams {
			last, err := tx.LastPassedJob(ctx, t.ID)
			switch {
			case err == nil:
				t.Target = last.Target
			case portal.ErrorCode(err) != portal.CodeNotFound:
				return err
			}
			if t.Target == "" {
				out.Skipped[t.ID] = "no target"
				continue
			}
			if j, err := tx.ActiveJobOf(ctx, t.ID, portal.KindValidation); err == nil {
				out.Skipped[t.ID] = fmt.Sprintf("its validation job %d is queued or running", j.ID)
				continue
			} else if portal.ErrorCode(err) != portal.CodeNotFound {
				return err
			}
			j, _, err := q.insertTx(ctx, tx, c, t, portal.KindValidation, 0)
			switch {
			case errors.Is(err, errDuplicate):
				out.Skipped[t.ID] = "its validation job is queued or running"
				continue
			case portal.ErrorCode(err) == portal.CodeInvalid, errors.As(err, new(*portal.NotTeamServerError)):
				out.Skipped[t.ID] = err.Error() // a target refused
				continue
			case err != nil:
				return err
			}
			out.Queued = append(out.Queued, j)
		}
		if len(out.Queued) == 0 {
			return portal.Errorf(portal.CodeConflict, "no team to validate: %s", describeSkipped(out.Skipped))
		}
		return tx.Audit(ctx, by, portal.AuditValidate, "contest", bulkDetail(out, nil))
	})
	if err != nil {
		return Bulk{}, err
	}
	q.cfg.Logger.Info("validation", "queued", len(out.Queued), "skipped", len(out.Skipped))
	return out, nil
}

// RerunErrored runs again, for staff (by), every errored job that no job
// re-runs yet: for each team, the latest of each kind (a team has one
// active job of a kind), unless the team has an active job of that kind
// already. Like Rerun, it ignores the timeline. The jobs and one audit entry
// are written in one transaction: nothing queued leaves no entry
// (CodeConflict).
func (q *Queue) RerunErrored(ctx context.Context, by portal.Actor) (Bulk, error) {
	out := Bulk{Skipped: map[int64]string{}}
	rerunOf := map[int64]int64{} // new job -> errored job
	err := q.store.InTx(ctx, func(tx *store.Tx) error {
		out = Bulk{Skipped: map[int64]string{}}
		clear(rerunOf)
		c, err := q.contestForEnqueue(ctx, tx)
		if err != nil {
			return err
		}
		errored, err := tx.ErroredToRerun(ctx)
		if err != nil {
			return err
		}
		type key struct {
			team int64
			kind portal.JobKind
		}
		seen := map[key]bool{}
		for _, old := range errored { // the newest first
			k := key{old.TeamID, old.Kind}
			if seen[k] {
				continue
			}
			seen[k] = true
			if a, err := tx.ActiveJobOf(ctx, old.TeamID, old.Kind); err == nil {
				out.Skipped[old.TeamID] = fmt.Sprintf("job %d is queued or running", a.ID)
				continue
			} else if portal.ErrorCode(err) != portal.CodeNotFound {
				return err
			}
			team, err := tx.TeamForShare(ctx, old.TeamID)
			if err != nil {
				return err
			}
			j, _, err := q.insertTx(ctx, tx, c, team, old.Kind, old.ID)
			switch {
			case errors.Is(err, errDuplicate):
				out.Skipped[old.TeamID] = "a job of the team is queued or running"
				continue
			case portal.ErrorCode(err) == portal.CodeInvalid, errors.As(err, new(*portal.NotTeamServerError)):
				out.Skipped[old.TeamID] = err.Error()
				continue
			case err != nil:
				return err
			}
			out.Queued = append(out.Queued, j)
			rerunOf[j.ID] = old.ID
		}
		if len(out.Queued) == 0 {
			why := "no errored job waits to be run again"
			if len(out.Skipped) > 0 {
				why = describeSkipped(out.Skipped)
			}
			return portal.Errorf(portal.CodeConflict, "nothing to run again: %s", why)
		}
		return tx.Audit(ctx, by, portal.AuditRerunErrored, "jobs", bulkDetail(out, rerunOf))
	})
	if err != nil {
		return Bulk{}, err
	}
	q.cfg.Logger.Info("rerun errored", "queued", len(out.Queued), "skipped", len(out.Skipped))
	return out, nil
}

// bulkDetail is a bulk action's audit detail: the jobs queued by team (or,
// with rerunOf, by the errored job they re-run) and the teams left out.
func bulkDetail(b Bulk, rerunOf map[int64]int64) map[string]any {
	queued := map[string]int64{}
	for _, j := range b.Queued {
		if rerunOf != nil {
			queued["job "+strconv.FormatInt(rerunOf[j.ID], 10)] = j.ID
		} else {
			queued["team "+strconv.FormatInt(j.TeamID, 10)] = j.ID
		}
	}
	detail := map[string]any{"queued": queued}
	if len(b.Skipped) > 0 {
		skipped := map[string]string{}
		for id, why := range b.Skipped {
			skipped["team "+strconv.FormatInt(id, 10)] = why
		}
		detail["skipped"] = skipped
	}
	return detail
}

func describeSkipped(skipped map[int64]string) string {
	if len(skipped) == 0 {
		return "the contest has no team"
	}
	s := ""
	for _, id := range slices.Sorted(maps.Keys(skipped)) {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("team %d: %s", id, skipped[id])
	}
	return s
}

// Quarantine: a worker whose recent jobs break portal's quarantine rule is
// quarantined in the transaction that ends the job that broke it. From
// then on it takes no job, in two layers:
//
//   - it stops fetching: its River client's queues are removed (River's
//     Queues().Remove stops this client's producers only; the other
//     workers' go on), so River never hands it a job;
//   - a job it fetched in the moment before is not run: the attempt's
//     start reads the flag in its transaction and sends the job back with
//     River's JobSnooze(0), which uses up no attempt, and the row stays
//     queued with no attempt recorded; another worker takes it.
//
// The quarantine loop looks at the flag at each heartbeat (and at once when
// the worker quarantines itself) and adds the queues back when staff clear
// it. Pausing River's queue itself would not do: a River queue is shared by
// every worker of the problem.

// kickQuarantine asks the quarantine loop to look at the flag now.
func (q *Queue) kickQuarantine() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

func (q *Queue) quarantineLoop(ctx context.Context) {
	t := time.NewTicker(q.cfg.HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-q.kick:
		}
		if err := q.checkQuarantine(ctx); err != nil && ctx.Err() == nil {
			q.cfg.Logger.Warn("quarantine", "error", err)
		}
	}
}

// checkQuarantine removes the worker's River queues while it is
// quarantined and adds them back once it is cleared. paused (and with it
// the heartbeat's "quarantined") is set only once the queues are gone, and
// cleared only once they are back: a worker that says it is quarantined
// fetches no job. The loop is its only caller after Start.
func (q *Queue) checkQuarantine(ctx context.Context) error {
	quarantined, err := q.store.WorkerQuarantined(ctx, q.cfg.Worker)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(q.problems))
	if quarantined {
		// Every time: a removal cut short (by a stop) is finished later.
		for _, name := range names {
			if err := q.client.Queues().Remove(ctx, QueueName(name)); err != nil && !errors.Is(err, &river.QueueNotFoundError{}) {
				return fmt.Errorf("queue: removing River queue %s: %w", QueueName(name), err)
			}
		}
		if !q.paused.Swap(true) {
			q.cfg.Logger.Warn("quarantined: this worker takes no job until staff clear it", "worker", q.cfg.Worker)
		}
		return nil
	}
	if !q.paused.Load() {
		return nil
	}
	for _, name := range names {
		err := q.client.Queues().Add(QueueName(name), river.QueueConfig{MaxWorkers: q.cfg.Concurrency})
		if err != nil && !errors.Is(err, &river.QueueAlreadyAddedError{}) {
			return fmt.Errorf("queue: adding River queue %s back: %w", QueueName(name), err) // again at the next look
		}
	}
	q.paused.Store(false)
	q.cfg.Logger.Info("quarantine cleared: this worker takes jobs again", "worker", q.cfg.Worker)
	return nil
}
