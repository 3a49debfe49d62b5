// Package tunecon_test holds the tests of the source tree's shape: its floors
// (each package imports only from the floors below its own, or from its own
// unit) and its functions' length. CONTRIBUTING.md says why.
package tunecon_test

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tunecon/tunecon"

// floors lists the tree's units from the lowest floor up, once. A unit is a
// path prefix within the module; "problems/*" makes each problem a unit of
// its own, so that no problem imports another.
var floors = [][]string{
	{"engine"},
	{"kit", "internal/report"},
	{"problems/*"},
	{"problems"},
	{"internal/portal"},
	{"internal/cli", "tools"},
	{"cmd"},
}

// unit returns the unit of the package at path (relative to the module) and
// its floor, or ok false for a package no floor names.
func unit(path string) (name string, floor int, ok bool) {
	best := ""
	for f, units := range floors {
		for _, u := range units {
			var match string
			if prefix, each := strings.CutSuffix(u, "/*"); each {
				rest, found := strings.CutPrefix(path, prefix+"/")
				if !found {
					continue
				}
				first, _, _ := strings.Cut(rest, "/")
				match = prefix + "/" + first
			} else if path == u || strings.HasPrefix(path, u+"/") {
				match = u
			}
			if len(match) > len(best) {
				best, floor = match, f
			}
		}
	}
	return best, floor, best != ""
}

// fixture is the one package that tests on any floor may import: the
// worked example, a whole problem small enough to drive the engine and the
// kit end to end. The code under test never imports it.
const fixture = "problems/example"

// pkg is one package, what it imports, and what its tests import besides.
type pkg struct {
	path        string
	imports     []string
	testImports []string
}

// violations lists each import of a package from a higher floor, or from
// another unit of its own floor, and each package that no floor names.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		from, fromFloor, ok := unit(p.path)
		if !ok {
			out = append(out, fmt.Sprintf("%s is on no floor: add its unit to floors", p.path))
			continue
		}
		check := func(imp, by string) {
			to, toFloor, ok := unit(imp)
			if !ok || to == from || toFloor < fromFloor {
				return
			}
			out = append(out, fmt.Sprintf("%s%s (floor %d, %s) imports %s (floor %d, %s)",
				p.path, by, fromFloor, from, imp, toFloor, to))
		}
		for _, imp := range p.imports {
			check(imp, "")
		}
		for _, imp := range p.testImports {
			if imp != fixture {
				check(imp, "'s tests")
			}
		}
	}
	return out
}

// listPackages asks go list for every package of the module and what it and
// its tests import from the module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-f",
		`{{.ImportPath}} {{join .Imports " "}} | {{join .TestImports " "}} {{join .XTestImports " "}}`,
		"./...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	var pkgs []pkg
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		rel := func(path string) (string, bool) {
			if path == module {
				return "", true
			}
			return strings.CutPrefix(path, module+"/")
		}
		path, ok := rel(fields[0])
		if !ok || path == "" {
			continue // the root holds only this test
		}
		p := pkg{path: path}
		into := &p.imports
		for _, imp := range fields[1:] {
			if imp == "|" {
				into = &p.testImports
			} else if r, ok := rel(imp); ok && r != "" && !slices.Contains(*into, r) {
				*into = append(*into, r)
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestNoPackageImportsAHigherFloor(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; expected the whole tree", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestTheFloorsCatchUpwardImports: the check itself can fail.
func TestTheFloorsCatchUpwardImports(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		bad      bool
	}{
		{"engine", "kit/launch", true},
		{"kit/apptest", "problems/blog", true},
		{"problems/blog", "problems/memo", true},
		{"problems/blog/data", "internal/portal/store", true},
		{"tools/perf", "internal/cli", true},
		{"internal/cli", "tools/internal/measure", true},
		{"internal/portal/web", "internal/cli", true},
		{"kit", "engine", false},
		{"internal/report", "kit", true},
		{"internal/report", "engine", false},
		{"internal/portal/web", "internal/report", false},
		{"problems/blog", "problems/blog/data", false},
		{"problems", "problems/memo", false},
		{"internal/cli", "internal/portal/queue", false},
		{"tools/scores", "kit/apptest/servers", false},
		{"cmd/tunecon", "internal/cli", false},
		{"engine", "engine/internal/wire", false},
	} {
		got := violations([]pkg{{path: tc.from, imports: []string{tc.to}}})
		if bad := len(got) > 0; bad != tc.bad {
			t.Errorf("%s imports %s: violations %q, want bad=%v", tc.from, tc.to, got, tc.bad)
		}
	}
	if got := violations([]pkg{{path: "engine", testImports: []string{fixture}}}); len(got) != 0 {
		t.Errorf("engine's tests run the worked example: violations %q, want none", got)
	}
	if got := violations([]pkg{{path: "engine", imports: []string{fixture}}}); len(got) != 1 {
		t.Errorf("engine's code imports the worked example: violations %q, want one", got)
	}
	if got := violations([]pkg{{path: "kit", testImports: []string{"problems/blog"}}}); len(got) != 1 {
		t.Errorf("kit's tests import a problem: violations %q, want one", got)
	}
	if got := violations([]pkg{{path: "scripts/x"}}); len(got) != 1 {
		t.Errorf("a package on no floor: %q, want one violation", got)
	}
}
