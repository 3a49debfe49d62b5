package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/tunecon/tunecon/problems"
)

// cmdProblems lists the problems, or prints their descriptors as JSON.
func cmdProblems(args []string, env Env) (int, error) {
	fs := flag.NewFlagSet("problems", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print the problems' descriptors as a JSON array")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0, err
		}
		return 0, badUsage("problems: %v", err)
	}
	if fs.NArg() > 0 {
		return 0, badUsage("problems takes no arguments")
	}
	if *asJSON {
		data, err := json.MarshalIndent(problems.All(), "", "  ")
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(env.Stdout, "%s\n", data)
		return ExitPass, nil
	}
	for _, p := range problems.All() {
		fmt.Fprintf(env.Stdout, "%-10s %s [%s]\n           %s\n", p.Name, p.Title, strings.Join(p.ServeLangs(), ", "), p.Summary)
	}
	return ExitPass, nil
}
