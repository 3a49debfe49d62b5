package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// portalUsage is `tunecon portal`'s help: what exists now and what is to
// come, so that nobody looks for a flag that is not there yet.
const portalUsage = `Usage:
  tunecon portal migrate --db DSN   create the contest database, or bring its schema up to date

DSN is sqlite:PATH (PostgreSQL comes in a later version). Run migrate before
starting workers (tunecon worker --db DSN): they refuse a database that is not
migrated. Still to come: tunecon portal --db DSN --addr HOST:PORT (serve the
contest) and tunecon portal admin create (its first admin account).
`

// cmdPortal runs the portal's subcommands; only migrate exists yet.
func cmdPortal(ctx context.Context, args []string, env Env) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, portalUsage)
		return ExitUsage, nil
	}
	switch args[0] {
	case "migrate":
		return cmdPortalMigrate(ctx, args[1:], env)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, portalUsage)
		return ExitPass, nil
	}
	return 0, badUsage("portal: unknown command %q (only migrate exists yet; serving the contest comes later)", args[0])
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
		fmt.Fprintf(env.Stdout, "%s: the schema is up to date (version %d)\n", db.dsn, v)
	} else {
		fmt.Fprintf(env.Stdout, "%s: migrated to schema version %d (applied %d step(s)); River's tables are up to date\n",
			db.dsn, v, len(applied))
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
	fs.StringVar(&d.dsn, "db", "", "the contest database, sqlite:PATH (required)")
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
