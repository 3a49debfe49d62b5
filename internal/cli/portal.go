package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/queue"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/web"
	"github.com/tunecon/tunecon/problems"
)

// portalUsage is `tunecon portal`'s help.
const portalUsage = `Usage:
  tunecon portal [--db DSN] [--addr HOST:PORT] [--workers N] [--secure-cookies] [--trust-proxy]
      serve the contest: its pages, its queue, and N benchmark workers in
      this process (0: only separate workers run benchmarks)
  tunecon portal migrate --db DSN
      create the contest database, or bring its schema up to date
  tunecon portal admin create --db DSN --login NAME
      add an admin account; its password is read from stdin (asked for
      without echo on a terminal, the first line otherwise)
  tunecon portal admin import --db DSN --file TEAMS.csv [--url https://portal.example]
      import teams, their members' accounts and their servers from a CSV
      file (all or nothing; again, it changes nothing): the new accounts'
      one-time sign-in links go to stdout as CSV, this once

DSN is sqlite:PATH (a file, created when missing) or postgres://USER@HOST/DB
(also postgresql://; a database that exists, as createdb makes; a password
is best in PGPASSWORD or ~/.pgpass, the commands showing the DSN). The portal
migrates its database when it starts; separate workers (tunecon worker --db
DSN) need a migrated one. Sign in as an admin to choose the contest's problem
and times.
`

// Defaults of `tunecon portal`.
const (
	DefaultPortalDB   = "sqlite:tunecon-contest.db"
	DefaultPortalAddr = "127.0.0.1:8000"
	// PortalStopWait bounds a portal's stop: its pages' connections close at
	// once, its in-process workers have WorkerStopWait.
	PortalStopWait = 5 * time.Second
)

// cmdPortal serves the contest, or runs one of the portal's subcommands.
func cmdPortal(ctx context.Context, args []string, env Env) (int, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		return cmdPortalServe(ctx, args, env)
	}
	switch args[0] {
	case "migrate":
		return cmdPortalMigrate(ctx, args[1:], env)
	case "admin":
		switch {
		case len(args) >= 2 && args[1] == "create":
			return cmdAdminCreate(ctx, args[2:], env)
		case len(args) >= 2 && args[1] == "import":
			return cmdAdminImport(ctx, args[2:], env)
		}
		return 0, badUsage("portal admin: the commands are `tunecon portal admin create --db DSN --login NAME` and `tunecon portal admin import --db DSN --file TEAMS.csv`")
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, portalUsage)
		return ExitPass, nil
	}
	return 0, badUsage("portal: unknown command %q (serve with flags only, or: migrate, admin create, admin import)", args[0])
}

// serveFlags are `tunecon portal`'s flags besides --db.
type serveFlags struct {
	addr          string
	workers       int
	secureCookies bool
	trustProxy    bool
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", DefaultPortalAddr, "the address to serve the contest on")
	fs.IntVar(&f.workers, "workers", 1, "benchmarks this process runs at once (0: none; separate workers run them)")
	fs.BoolVar(&f.secureCookies, "secure-cookies", false, "mark the session cookie Secure (the portal is behind HTTPS)")
	fs.BoolVar(&f.trustProxy, "trust-proxy", false, "take clients' addresses from X-Forwarded-For's last hop (the portal is reached only through a proxy)")
}

func (f *serveFlags) check() error {
	if f.workers < 0 || f.workers > MaxWorkerConcurrency {
		return badUsage("portal: --workers must be between 0 and %d, got %d", MaxWorkerConcurrency, f.workers)
	}
	return nil
}

// cmdPortalServe serves the contest until interrupted: it migrates the
// database, starts the queue (with in-process workers unless --workers 0)
// and the pages, and prints the address it serves on.
func cmdPortalServe(ctx context.Context, args []string, env Env) (int, error) {
	db := dbFlag{cmd: "portal", dsn: DefaultPortalDB}
	var sf serveFlags
	if err := parseFlags("portal", args, env, &db, &sf); err != nil {
		return 0, err
	}
	s, err := openMigrated(ctx, db.dsn, env.Now)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	stderr := &syncWriter{w: env.Stderr}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	riverLog := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("from", "river")
	cfg := queue.Config{Logger: log, RiverLogger: riverLog}
	if sf.workers > 0 {
		cfg.Worker, cfg.Problems, cfg.Concurrency = "portal-"+defaultWorkerName(), problems.Names(), sf.workers
	}
	q, err := queue.New(s, cfg)
	if err != nil {
		return 0, refused(err)
	}
	srv, err := web.New(web.Config{Store: s, Jobs: q, Lookup: problems.Lookup, Problems: problems.Names(),
		Now: env.Now, SecureCookies: sf.secureCookies, TrustProxy: sf.trustProxy,
		Logger: log})
	if err != nil {
		return 0, err
	}
	ln, err := net.Listen("tcp", sf.addr)
	if err != nil {
		return 0, badUsage("portal: %v", err)
	}
	if err := q.Start(ctx); err != nil {
		ln.Close()
		if ctx.Err() != nil {
			return ExitPass, nil
		}
		return 0, err
	}
	// The pages' event streams end with base: Shutdown waits for idle
	// connections, and a stream is never idle.
	base, endStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer endStreams()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return base }}
	go srv.Run(base)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("portal started", "url", "http://"+ln.Addr().String()+"/", "db", db.shown(), "workers", sf.workers)

	select {
	case <-ctx.Done():
	case err := <-served:
		return 0, fmt.Errorf("portal: serving: %w", err)
	}
	log.Info("portal stopping")
	endStreams()
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), PortalStopWait)
	defer cancel()
	if err := hs.Shutdown(stop); err != nil {
		log.Warn("portal: closing connections", "err", err)
	}
	qstop, qcancel := context.WithTimeout(context.WithoutCancel(ctx), WorkerStopWait)
	defer qcancel()
	if err := q.Stop(qstop); err != nil {
		return 0, fmt.Errorf("portal: stopping the queue: %w", err)
	}
	log.Info("portal stopped")
	return ExitPass, nil
}

// openMigrated opens the contest database, on the clock now, and brings
// its schema up to date.
func openMigrated(ctx context.Context, dsn string, now func() time.Time) (*store.Store, error) {
	s, err := store.Open(ctx, dsn, store.Options{Now: now})
	if err != nil {
		return nil, refused(err)
	}
	if _, err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// adminFlags is `portal admin create`'s --login.
type adminFlags struct{ login string }

func (f *adminFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.login, "login", "", "the admin's login (required)")
}

func (f *adminFlags) check() error {
	if f.login == "" {
		return badUsage("portal admin create: --login NAME is required")
	}
	return nil
}

// cmdAdminCreate adds an admin account. The password never comes from the
// command line (other users see it there) and has no default.
func cmdAdminCreate(ctx context.Context, args []string, env Env) (int, error) {
	db := dbFlag{cmd: "portal admin create"}
	var af adminFlags
	if err := parseFlags("portal admin create", args, env, &db, &af); err != nil {
		return 0, err
	}
	login, err := portal.CheckLogin(af.login)
	if err != nil {
		return 0, badUsage("portal admin create: %v", err)
	}
	password, err := readPassword(env)
	if err != nil {
		return 0, err
	}
	var passwords portal.Passwords
	hash, err := passwords.Hash(password)
	if err != nil {
		return 0, badUsage("portal admin create: %v", err)
	}
	s, err := openMigrated(ctx, db.dsn, env.Now)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if _, err := s.CreateAccount(ctx, login, hash, portal.RoleAdmin); err != nil {
		if portal.ErrorCode(err) == portal.CodeConflict {
			return 0, badUsage("portal admin create: %v", err)
		}
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "%s: admin %s created\n", db.shown(), login)
	return ExitPass, nil
}

// readPassword asks for a password twice on a terminal, or reads stdin's
// first line.
func readPassword(env Env) (string, error) {
	if env.ReadSecret != nil {
		p, err := env.ReadSecret("Password: ")
		if err != nil {
			return "", err
		}
		again, err := env.ReadSecret("Again: ")
		if err != nil {
			return "", err
		}
		if p != again {
			return "", badUsage("portal admin create: the two passwords differ")
		}
		return p, nil
	}
	if env.Stdin == nil {
		return "", badUsage("portal admin create: give the password on stdin")
	}
	line, err := bufio.NewReader(env.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// cmdPortalMigrate creates or upgrades the contest database: the portal's
// own schema and River's tables.
func cmdPortalMigrate(ctx context.Context, args []string, env Env) (int, error) {
	db := dbFlag{cmd: "portal migrate"}
	if err := parseFlags("portal migrate", args, env, &db); err != nil {
		return 0, err
	}
	s, err := store.Open(ctx, db.dsn, store.Options{})
	if err != nil {
		return 0, refused(err)
	}
	defer s.Close()
	applied, err := s.Migrate(ctx)
	if err != nil {
		return 0, err
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return 0, err
	}
	if len(applied) == 0 {
		fmt.Fprintf(env.Stdout, "%s: the schema is up to date (version %d)\n", db.shown(), v)
	} else {
		fmt.Fprintf(env.Stdout, "%s: migrated to schema version %d (applied %d step(s)); River's tables are up to date\n",
			db.shown(), v, len(applied))
	}
	return ExitPass, nil
}

// dbFlag is --db, the contest database's DSN, which the portal's commands
// and the worker share.
type dbFlag struct {
	cmd string
	dsn string
}

func (d *dbFlag) register(fs *flag.FlagSet) {
	def, usage := d.dsn, "the contest database, sqlite:PATH or postgres://USER@HOST/DB (required)"
	if def != "" {
		usage = "the contest database, sqlite:PATH or postgres://USER@HOST/DB"
	}
	fs.StringVar(&d.dsn, "db", def, usage)
}

// shown is the DSN as the commands print it: a password in it is hidden.
func (d *dbFlag) shown() string {
	if u, err := url.Parse(d.dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return d.dsn
}

func (d *dbFlag) check() error {
	if d.dsn == "" {
		return badUsage("%s: --db DSN is required (for example --db sqlite:contest.db)", d.cmd)
	}
	return nil
}

// parseFlags parses the command line of a subcommand that takes flags only,
// and checks every group.
func parseFlags(name string, args []string, env Env, groups ...flagGroup) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	for _, g := range groups {
		g.register(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return badUsage("%s: %v", name, err)
	}
	if fs.NArg() > 0 {
		return badUsage("%s: unexpected argument %q", name, fs.Arg(0))
	}
	for _, g := range groups {
		if err := g.check(); err != nil {
			return err
		}
	}
	return nil
}

// refused makes the portal's refusal of what the command line named (a
// malformed, unsupported or missing database, a bad worker name) a bad
// command line; anything else stays an internal error.
func refused(err error) error {
	switch portal.ErrorCode(err) {
	case portal.CodeInvalid, portal.CodeUnsupported, portal.CodeNotFound:
		return badUsage("%v", err)
	}
	return err
}
