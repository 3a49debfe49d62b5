// Package problems is the registry of tunecon's problems: a list of their
// descriptors, nothing else. `make new-problem` adds a problem's line here.
package problems

import (
	"slices"

	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/bank"
	"github.com/tunecon/tunecon/problems/blog"
	"github.com/tunecon/tunecon/problems/dashboard"
	"github.com/tunecon/tunecon/problems/example"
	"github.com/tunecon/tunecon/problems/leagues"
	"github.com/tunecon/tunecon/problems/memo"
	// new-problem: imports
)

// All returns every problem, in the order `tunecon problems` lists them.
func All() []kit.Problem {
	return []kit.Problem{
		blog.Problem,
		bank.Problem,
		example.Problem,
		memo.Problem,
		dashboard.Problem,
		leagues.Problem,
		// new-problem: list
	}
}

// Lookup finds a problem by name.
func Lookup(name string) (kit.Problem, bool) {
	all := All()
	i := slices.IndexFunc(all, func(p kit.Problem) bool { return p.Name == name })
	if i < 0 {
		return kit.Problem{}, false
	}
	return all[i], true
}

// Names lists the problems' names.
func Names() []string {
	var out []string
	for _, p := range All() {
		out = append(out, p.Name)
	}
	return out
}
