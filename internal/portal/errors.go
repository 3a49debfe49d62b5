package portal

import (
	"errors"
	"fmt"
)

// Code classifies an error for the layers above: the HTTP layer maps codes to
// statuses, the CLI to messages. Anything unclassified is CodeInternal.
type Code string

const (
	// CodeInvalid: bad input or configuration (a missing target, a bad DSN).
	CodeInvalid Code = "invalid"
	// CodeNotFound: no such contest, team or job.
	CodeNotFound Code = "not-found"
	// CodeConflict: the request conflicts with the current state (a team's
	// active job, an illegal state transition, a taken name).
	CodeConflict Code = "conflict"
	// CodeDenied: not allowed (a wrong password, another team's job).
	CodeDenied Code = "denied"
	// CodeUnsupported: something a later version will do.
	CodeUnsupported Code = "unsupported"
	// CodeInternal: the portal's own fault (a database error).
	CodeInternal Code = "internal"
)

// Error is a classified error with a message that can be shown as it is.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// ErrorCode returns e's class.
func (e *Error) ErrorCode() Code { return e.Code }

// Errorf returns a new *Error.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode classifies err: the code of the first error in its chain that
// has one, CodeInternal otherwise ("" for nil).
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var c interface{ ErrorCode() Code }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return CodeInternal
}

// TeamHasJobError is Enqueue's refusal: the team already has an active job,
// JobID (a team has at most one queued or running job).
type TeamHasJobError struct {
	TeamID int64
	JobID  int64
}

func (e *TeamHasJobError) Error() string {
	return fmt.Sprintf("team %d already has job %d queued or running", e.TeamID, e.JobID)
}

// ErrorCode is CodeConflict.
func (e *TeamHasJobError) ErrorCode() Code { return CodeConflict }

// TransitionError is a refused state change of a job.
type TransitionError struct {
	JobID    int64
	From, To JobState
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("job %d cannot go from %s to %s", e.JobID, e.From, e.To)
}

// ErrorCode is CodeConflict.
func (e *TransitionError) ErrorCode() Code { return CodeConflict }

// CheckTransition returns a *TransitionError unless from -> to is legal.
func CheckTransition(jobID int64, from, to JobState) error {
	if !CanTransition(from, to) {
		return &TransitionError{JobID: jobID, From: from, To: to}
	}
	return nil
}
