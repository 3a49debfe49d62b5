package queue

import (
	"sync"
	"time"
)

// WithOnWrite is cfg with f as its test hook (Config.onWrite).
func WithOnWrite(cfg Config, f func()) Config {
	cfg.onWrite = f
	return cfg
}

// Writes is what a test's waits wait on: the writes of its queues, each of
// which calls Wrote (their Config.onWrite). A wait reads again what it waits
// for after each, and never sleeps.
type Writes struct {
	mu   sync.Mutex
	next chan struct{} // closed at the next write
}

// NewWrites makes a Writes.
func NewWrites() *Writes { return &Writes{next: make(chan struct{})} }

// Wrote is a queue's Config.onWrite: it wakes every wait.
func (w *Writes) Wrote() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.next)
	w.next = make(chan struct{})
}

// Until calls ok at once and again after each write until it returns true,
// and then reports true; false if timeout passes first. The timeout bounds
// a wait that fails; it is never waited for when ok comes true.
func (w *Writes) Until(timeout time.Duration, ok func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		// The channel is taken before ok reads: a write in between
		// is not missed.
		w.mu.Lock()
		next := w.next
		w.mu.Unlock()
		if ok() {
			return true
		}
		select {
		case <-next:
		case <-deadline.C:
			return false
		}
	}
}
