package engine

import (
	"context"
	"errors"
	"fmt"
)

// Class says whose fault an error is and what it costs.
type Class int

const (
	// ClassApplication is a wrong answer from the target: it costs points.
	ClassApplication Class = iota
	// ClassCritical is a correctness violation (stale data, leaked data,
	// modified assets): it fails the run.
	ClassCritical
	// ClassTimeout is a request the target did not answer in time: it costs
	// less than a wrong answer and tells the load controller to back off.
	ClassTimeout
	// ClassInternal is the benchmarker's own fault. It is reported to staff
	// and never charged to the contestant.
	ClassInternal
	numClasses
)

var classNames = [numClasses]string{"application", "critical", "timeout", "internal"}

func (c Class) String() string {
	if c < 0 || c >= numClasses {
		return fmt.Sprintf("class(%d)", int(c))
	}
	return classNames[c]
}

// Error is a failure as data: a stable code, a class, the request it is about
// (an endpoint name such as "GET /articles/{id}"), a plain-language message for
// contestants and, for staff only, the underlying detail.
type Error struct {
	Code    string
	Class   Class
	Request string
	Message string
	URL     string // the concrete request URL, for the staff log
	Detail  error
}

func (e *Error) Error() string {
	if e.Request == "" {
		return e.Message
	}
	return e.Request + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Detail }

// Errorf returns a new *Error of the given class.
func Errorf(class Class, code, format string, args ...any) *Error {
	return &Error{Code: code, Class: class, Message: fmt.Sprintf(format, args...)}
}

// Criticalf returns a correctness violation that fails the run.
func Criticalf(code, format string, args ...any) *Error {
	return Errorf(ClassCritical, code, format, args...)
}

// Applicationf returns a wrong answer that costs points.
func Applicationf(code, format string, args ...any) *Error {
	return Errorf(ClassApplication, code, format, args...)
}

// Internalf returns a fault of the benchmarker itself.
func Internalf(code, format string, args ...any) *Error {
	return Errorf(ClassInternal, code, format, args...)
}

// ErrCutOff marks a request that the end of its phase cut off. It is neither
// the contestant's fault nor the benchmarker's and is never charged.
var ErrCutOff = errors.New("cut off by the end of the phase")

// AsError classifies err: an *Error anywhere in its chain is returned as is;
// a context deadline becomes a timeout; anything else is internal.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: "timeout", Class: ClassTimeout, Message: "did not finish in time", Detail: err}
	}
	return &Error{Code: "internal", Class: ClassInternal, Message: "benchmarker error: " + err.Error(), Detail: err}
}

// Criticalf returns a correctness violation about this response's request
// (its endpoint and URL filled in): it fails the run.
func (r *Response) Criticalf(code, format string, args ...any) *Error {
	return r.errorf(ClassCritical, code, format, args...)
}

// Applicationf returns a wrong answer about this response's request (its
// endpoint and URL filled in): it costs points.
func (r *Response) Applicationf(code, format string, args ...any) *Error {
	return r.errorf(ClassApplication, code, format, args...)
}

func (r *Response) errorf(class Class, code, format string, args ...any) *Error {
	e := Errorf(class, code, format, args...)
	e.Request = r.Endpoint
	if r.URL != nil {
		e.URL = r.URL.String()
	}
	return e
}

// Critical raises a check's failures to ClassCritical.
func Critical(c Check) Check {
	return func(res *Response) error {
		err := c(res)
		if err == nil {
			return nil
		}
		e := *AsError(err)
		e.Class = ClassCritical
		return &e
	}
}
