package cli

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// importFlags are `portal admin import`'s flags besides --db.
type importFlags struct {
	file string
	base string
}

func (f *importFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "file", "", "the team file, CSV (- for stdin; required)")
	fs.StringVar(&f.base, "url", "", "the portal's address, to write the sign-in links in full (https://portal.example)")
}

func (f *importFlags) check() error {
	if f.file == "" {
		return badUsage("portal admin import: --file TEAMS.csv is required")
	}
	if f.base != "" && !strings.HasPrefix(f.base, "http://") && !strings.HasPrefix(f.base, "https://") {
		return badUsage("portal admin import: --url %q: want the portal's http:// or https:// address", f.base)
	}
	f.base = strings.TrimSuffix(f.base, "/")
	return nil
}

// cmdAdminImport imports a team file, as the admin page's import does:
// all or nothing, every problem by line on stderr (exit 1); the new
// accounts' one-time sign-in links go to stdout as CSV, this once, and
// what it did to stderr.
func cmdAdminImport(ctx context.Context, args []string, env Env) (int, error) {
	db := dbFlag{cmd: "portal admin import"}
	var f importFlags
	if err := parseFlags("portal admin import", args, env, &db, &f); err != nil {
		return 0, err
	}
	in := env.Stdin
	if f.file != "-" {
		file, err := os.Open(f.file)
		if err != nil {
			return 0, badUsage("portal admin import: %v", err)
		}
		defer file.Close()
		in = file
	} else if in == nil {
		in = strings.NewReader("")
	}
	imp, err := portal.ParseImport(in)
	if err != nil {
		return 0, badUsage("portal admin import: %s: %v", f.file, err)
	}
	s, err := openMigrated(ctx, db.dsn, env.Now)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	report, err := s.ImportTeams(ctx, portal.Actor{}, imp, portal.DefaultSignInLinkTTL)
	if ie, ok := errors.AsType[*portal.ImportError](err); ok {
		fmt.Fprintf(env.Stderr, "tunecon: portal admin import: %s: nothing was imported; %d problem(s):\n", f.file, len(ie.Problems))
		for _, p := range ie.Problems {
			fmt.Fprintf(env.Stderr, "  line %d: %s\n", p.Line, p.Message)
		}
		return ExitFail, nil
	}
	if err != nil {
		return 0, refused(err)
	}
	if err := writeLinks(env.Stdout, f.base, report.Links); err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", db.shown(), report.Summary())
	if len(report.Links) > 0 && f.base == "" {
		fmt.Fprintf(env.Stderr, "the links are paths: put the portal's address before each (or give --url)\n")
	}
	return ExitPass, nil
}

// writeLinks writes sign-in links as CSV, with base before their paths.
func writeLinks(w io.Writer, base string, links []portal.SignInLink) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"team", "login", "name", "email", "link", "expires"})
	for _, l := range links {
		_ = cw.Write([]string{l.Team, l.Login, l.Name, l.Email, base + l.Path(), l.ExpiresAt.UTC().Format(time.RFC3339)})
	}
	cw.Flush()
	return cw.Error()
}
