// Command newproblem creates problems/NAME from the problem skeleton and
// registers it in problems/problems.go. Run it with `make new-problem NAME=x`
// or `go run ./tools/newproblem -name x` from inside the source tree.
//
// Exit status: 0 created, 1 failed, 2 bad usage or a bad name (a one-line
// error on stderr). Nothing is written unless everything can be.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tunecon/tunecon/kit"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the whole command: it parses args, creates the problem and says
// what it wrote and what comes next. It returns the exit status.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("newproblem", flag.ContinueOnError)
	flags.SetOutput(stderr)
	name := flags.String("name", "", "the new problem's name: lowercase letters and digits, starting with a letter")
	root := flags.String("root", "", "the source tree's root (default: $TUNECON_ROOT, or the tree holding the current directory)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *name == "" || flags.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: newproblem -name NAME (lowercase letters and digits, starting with a letter)")
		return 2
	}
	if *root == "" {
		*root = getenv("TUNECON_ROOT")
	}
	if *root == "" {
		r, err := kit.FindRoot(".")
		if err != nil {
			fmt.Fprintf(stderr, "newproblem: %v\n", err)
			return 2
		}
		*root = r
	}
	written, err := Create(*root, *name)
	if err != nil {
		fmt.Fprintf(stderr, "newproblem: %v\n", err)
		if errors.As(err, new(*UsageError)) {
			return 2
		}
		return 1
	}
	fmt.Fprintf(stdout, "created problems/%s from the skeleton:\n", *name)
	for _, p := range written {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	fmt.Fprintf(stdout, "registered %s in %s\n\n", *name, Registry)
	fmt.Fprint(stdout, NextSteps(*name))
	return 0
}

// NextSteps is what the author does after the skeleton is made.
func NextSteps(name string) string {
	d := "problems/" + name
	return fmt.Sprintf(`Next steps:
  1. %[1]s/MANUAL.md: write the contract first, every check with its numbers.
  2. %[1]s/data: the initial data (bump Version whenever the dump's bytes change).
  3. %[1]s/webapp/go, webapp/python (and webapp/sql, webapp/public): the reference apps;
     after changing a public file, regenerate %[1]s/assets.sha256.
  4. %[1]s/scenario.go, users.go, pages.go, model.go, checks.go: the scenario.
  5. go test ./%[1]s/...   (conformance, manifest and defect tests; -short skips the apps)
  6. make build && bin/tunecon try %[2]s   (--lang python for the Python app)
`, d, name)
}
