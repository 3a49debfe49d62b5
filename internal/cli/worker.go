package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/problems"
)

const (
	// WorkerStopWait is how long a worker told to stop (SIGINT, SIGTERM)
	// lets its running jobs go on before it interrupts them. An interrupted
	// job goes back to the queue without using up an attempt, and a worker
	// runs it again from the start; the interrupted attempt then has
	// queue.WrapUp at most to record how it ended, so a worker exits within
	// about WorkerStopWait + queue.WrapUp of the signal.
	WorkerStopWait = 2 * time.Second
	// MaxWorkerConcurrency bounds --concurrency: each benchmark needs cores
	// of its own.
	MaxWorkerConcurrency = 64
)

// workerFlags are the worker's flags besides --db.
type workerFlags struct {
	name        string
	concurrency int
	list        string
	problems    []string
}

func (w *workerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.name, "name", "", "the worker's name, unique among the contest's workers (default: HOSTNAME-PID)")
	fs.IntVar(&w.concurrency, "concurrency", queue.DefaultConcurrency, "how many benchmarks to run at once")
	fs.StringVar(&w.list, "problems", "", "comma-separated problems this worker runs (default: every problem)")
}

func (w *workerFlags) check() error {
	if w.concurrency < 1 || w.concurrency > MaxWorkerConcurrency {
		return badUsage("worker: --concurrency must be between 1 and %d, got %d", MaxWorkerConcurrency, w.concurrency)
	}
	w.problems = nil
	for _, name := range strings.Split(w.list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || slices.Contains(w.problems, name) {
			continue
		}
		if _, ok := problems.Lookup(name); !ok {
			return badUsage("worker: unknown problem %q (one of: %s)", name, strings.Join(problems.Names(), ", "))
		}
		w.problems = append(w.problems, name)
	}
	if len(w.problems) == 0 {
		w.problems = problems.Names()
	}
	return nil
}

// defaultWorkerName is HOSTNAME-PID: unique on a machine and across them.
func defaultWorkerName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// cmdWorker runs benchmark jobs for a contest until the command is
// interrupted: it opens the contest's migrated database, takes the jobs of
// its problems from the queue, one line on stderr per job started and
// ended, and on SIGINT or SIGTERM stops within a bounded time, its running
// jobs going back to the queue.
func cmdWorker(ctx context.Context, args []string, env Env) (int, error) {
	db := dbFlag{cmd: "worker"}
	var wf workerFlags
	if err := parseFlags("worker", args, env, &db, &wf); err != nil {
		return 0, err
	}
	name := wf.name
	if name == "" {
		name = defaultWorkerName()
	}
	migrate := fmt.Sprintf("tunecon portal migrate --db %s", db.shown())
	s, err := store.Open(ctx, db.dsn, store.Options{MustExist: true})
	// Migrating creates a missing SQLite file; a missing PostgreSQL
	// database is the server's to create, which the error says.
	if portal.ErrorCode(err) == portal.CodeNotFound && strings.HasPrefix(db.dsn, "sqlite:") {
		return 0, badUsage("worker: %v: run `%s` first (it creates the database)", err, migrate)
	} else if err != nil {
		return 0, refused(err)
	}
	defer s.Close()
	if err := s.CheckSchema(ctx); err != nil {
		se, ok := errors.AsType[*store.SchemaError](err)
		switch {
		case ok && se.Behind():
			return 0, badUsage("worker: the database %s is not migrated (its schema is at version %d, this tunecon's at %d): run `%s` first",
				db.shown(), se.Have, se.Want, migrate)
		case ok:
			return 0, badUsage("worker: the database %s has schema version %d, newer than this tunecon's %d: upgrade tunecon on this machine",
				db.shown(), se.Have, se.Want)
		}
		return 0, err
	}

	// The queue's lines and River's share stderr, one whole line at a time.
	stderr := &syncWriter{w: env.Stderr}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	// River says little worth a line at Info; its warnings and errors show.
	riverLog := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("from", "river")
	q, err := queue.New(s, queue.Config{
		Worker: name, Problems: wf.problems, Concurrency: wf.concurrency, Logger: log, RiverLogger: riverLog,
	})
	if err != nil {
		return 0, refused(err)
	}
	if err := q.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return ExitPass, nil // stopped while starting: nothing ran
		}
		return 0, err
	}
	log.Info("worker started", "worker", name, "problems", strings.Join(wf.problems, ","), "concurrency", wf.concurrency, "db", db.shown())
	<-ctx.Done()

	log.Info(fmt.Sprintf("stopping: running jobs have %s to end, then go back to the queue", WorkerStopWait))
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), WorkerStopWait)
	defer cancel()
	if err := q.Stop(stop); err != nil {
		return 0, fmt.Errorf("worker: stopping: %w", err)
	}
	log.Info("worker stopped", "worker", name)
	return ExitPass, nil
}

// syncWriter serializes the writes of several loggers to one writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
