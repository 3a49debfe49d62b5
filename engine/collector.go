package engine

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for the error collector.
const (
	// DefaultMaxMessages caps the distinct messages shown to contestants.
	DefaultMaxMessages = 30
	// DefaultStaffLogPerMessage caps how many times the staff log repeats the
	// details of one distinct message.
	DefaultStaffLogPerMessage = 20
)

// ErrorCounts counts errors by class, plus requests that the end of a phase
// cut off (never charged).
type ErrorCounts struct {
	Critical    int64 `json:"critical"`
	Application int64 `json:"application"`
	Timeout     int64 `json:"timeout"`
	Internal    int64 `json:"internal"`
	CutOff      int64 `json:"cut_off"`
}

// Charged is the number of errors that count against the contestant.
func (c ErrorCounts) Charged() int64 { return c.Critical + c.Application + c.Timeout }

// Of returns the count for one class.
func (c ErrorCounts) Of(class Class) int64 {
	switch class {
	case ClassCritical:
		return c.Critical
	case ClassApplication:
		return c.Application
	case ClassTimeout:
		return c.Timeout
	case ClassInternal:
		return c.Internal
	}
	return 0
}

type message struct {
	text  string
	class Class
	count int64
	first time.Duration
}

// collector keeps counts by class, deduplicated contestant messages with
// counts, and writes details to the staff log. It is safe for concurrent use.
type collector struct {
	counts   [numClasses]atomic.Int64
	cutOff   atomic.Int64
	start    time.Time
	now      func() time.Time
	staff    io.Writer
	maxShown int

	mu        sync.Mutex
	messages  map[string]*message
	byCode    map[string]int64
	byRequest map[string]int64 // charged errors by their Request
}

func newCollector(staff io.Writer, now func() time.Time) *collector {
	if staff == nil {
		staff = io.Discard
	}
	return &collector{staff: staff, now: now, start: now(), maxShown: DefaultMaxMessages,
		messages: map[string]*message{}, byCode: map[string]int64{}, byRequest: map[string]int64{}}
}

// add records err, returns its class, and whether it was charged at all.
func (c *collector) add(phase string, err error) (*Error, bool) {
	if err == nil {
		return nil, false
	}
	if errors.Is(err, ErrCutOff) {
		c.cutOff.Add(1)
		return nil, false
	}
	e := AsError(err)
	c.counts[e.Class].Add(1)
	text := e.Error()
	if e.Class == ClassInternal {
		// Contestants learn that the benchmarker had a problem, not its
		// details.
		text = "the benchmarker had an internal error (reported to staff; not charged)"
	}
	key := e.Class.String() + "\x00" + text
	c.mu.Lock()
	m := c.messages[key]
	if m == nil {
		m = &message{text: text, class: e.Class, first: c.now().Sub(c.start)}
		c.messages[key] = m
	}
	m.count++
	n := m.count
	c.byCode[e.Code]++
	if e.Class != ClassInternal {
		c.byRequest[e.Request]++
	}
	if n <= DefaultStaffLogPerMessage {
		fmt.Fprintf(c.staff, "%s %-8s %-11s %-14s %s", c.now().UTC().Format("15:04:05.000"), phase, e.Class, e.Code, e.Error())
		if e.URL != "" {
			fmt.Fprintf(c.staff, " [%s]", e.URL)
		}
		if e.Detail != nil {
			fmt.Fprintf(c.staff, " (%v)", e.Detail)
		}
		if n == DefaultStaffLogPerMessage {
			fmt.Fprint(c.staff, " [further repeats of this message are only counted]")
		}
		fmt.Fprintln(c.staff)
	}
	c.mu.Unlock()
	return e, true
}

// byCodeCounts returns how many errors of each code were recorded (internal
// ones included; cut-off requests are not errors).
func (c *collector) byCodeCounts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byCode)
}

// byRequestCounts returns how many charged errors each request (an
// endpoint's name, "" for none) had.
func (c *collector) byRequestCounts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byRequest)
}

func (c *collector) snapshot() ErrorCounts {
	return ErrorCounts{
		Critical:    c.counts[ClassCritical].Load(),
		Application: c.counts[ClassApplication].Load(),
		Timeout:     c.counts[ClassTimeout].Load(),
		Internal:    c.counts[ClassInternal].Load(),
		CutOff:      c.cutOff.Load(),
	}
}

// contestantMessages returns the deduplicated messages, critical first, then
// by count, each with its count, capped at maxShown plus a summary line.
func (c *collector) contestantMessages() []string {
	c.mu.Lock()
	all := make([]*message, 0, len(c.messages))
	for _, m := range c.messages {
		all = append(all, m)
	}
	c.mu.Unlock()
	rank := func(cl Class) int {
		switch cl {
		case ClassCritical:
			return 0
		case ClassApplication:
			return 1
		case ClassTimeout:
			return 2
		}
		return 3
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if rank(a.class) != rank(b.class) {
			return rank(a.class) < rank(b.class)
		}
		if a.count != b.count {
			return a.count > b.count
		}
		return a.text < b.text
	})
	out := make([]string, 0, min(len(all), c.maxShown)+1)
	var hidden int64
	for i, m := range all {
		if i >= c.maxShown {
			hidden += m.count
			continue
		}
		s := fmt.Sprintf("[%s] %s", m.class, m.text)
		if m.count > 1 {
			s += fmt.Sprintf(" (x%d)", m.count)
		}
		out = append(out, s)
	}
	if hidden > 0 {
		out = append(out, fmt.Sprintf("... and %d more errors in %d other messages", hidden, len(all)-c.maxShown))
	}
	return out
}
