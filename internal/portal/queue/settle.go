package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river/rivertype"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// Settle brings the rows of active jobs in line with what River decided
// when no worker of ours was there to write it, and reports the first error
// it met. Every queue runs it every SettleEvery; it is idempotent, and its
// changes are compare-and-sets on the state and attempt it saw, so queues of
// several processes may run it at once.
//
//   - River has the job waiting again (its rescuer took the attempt from a
//     dead worker) while the row says running: the row goes back to queued,
//     the attempt marked lost.
//   - River discarded the job (the worker died on the last attempt): the row
//     ends errored, portal.ReasonWorkerLost.
//   - River cancelled the job (staff cancelled it and its worker was dead):
//     the row ends cancelled.
//   - River completed the job, or no longer has it, while the row is active:
//     nothing will ever end it, so it ends errored.
//
// A job River runs, or has waiting with a queued row, is left alone.
func (q *Queue) Settle(ctx context.Context) error {
	views, err := q.store.ActiveWithRiver(ctx)
	if err != nil {
		return err
	}
	var first error
	for _, v := range views {
		if err := q.settle(ctx, v); err != nil && portal.ErrorCode(err) != portal.CodeConflict && first == nil {
			first = err
		}
	}
	return first
}

func (q *Queue) settle(ctx context.Context, v store.RiverView) error {
	var end *portal.Ending
	switch rivertype.JobState(v.RiverState) {
	case rivertype.JobStateRunning, rivertype.JobStatePending:
		return nil
	case rivertype.JobStateAvailable, rivertype.JobStateRetryable, rivertype.JobStateScheduled:
		if v.State != portal.JobRunning {
			return nil
		}
		q.cfg.Logger.Warn("settle: attempt lost", "job", v.JobID, "attempt", v.Attempts)
		return q.store.InTx(ctx, func(tx *store.Tx) error {
			return tx.RequeueJob(ctx, v.JobID, v.Attempts, portal.ReasonLost,
				"River rescued the attempt from a worker that stopped answering; it runs again",
				fmt.Sprintf("=== attempt %d lost: its worker stopped answering; River runs the job again\n", v.Attempts))
		})
	case rivertype.JobStateDiscarded:
		why := fmt.Sprintf("the worker stopped answering on the last attempt (River attempt %d)", v.RiverAttempt)
		if v.State == portal.JobQueued {
			why = fmt.Sprintf("River gave up on the job before a worker started it (River attempt %d)", v.RiverAttempt)
		}
		end = &portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonWorkerLost, Error: why, Messages: []string{msgLost}}
	case rivertype.JobStateCancelled:
		end = &portal.Ending{State: portal.JobCancelled, ErrorCode: portal.ReasonCancelled,
			Error: "cancelled by staff; River ended it without its worker", Messages: []string{msgCancelled}}
	default: // completed, or gone
		what := "River completed the job without an outcome"
		if v.RiverState == "" {
			what = "River no longer has the job"
		}
		end = &portal.Ending{State: portal.JobErrored, ErrorCode: portal.ReasonWorkerLost, Error: what, Messages: []string{msgLost}}
	}
	end.StaffLog = "=== settled: " + end.Error + "\n"
	q.cfg.Logger.Warn("settle", "job", v.JobID, "state", end.State, "why", end.Error)
	err := q.store.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.EndJob(ctx, v.JobID, v.Attempts, *end)
		return err
	})
	var te *portal.TransitionError
	if errors.As(err, &te) {
		return nil // a worker or another settler got there first
	}
	return err
}
