package problems_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tunecon/tunecon/problems"
)

// TestDescriptorsAreComplete: every registered problem says everything the
// command, the tools and the portal read, and its scenario carries its name.
func TestDescriptorsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range problems.All() {
		t.Run(p.Name, func(t *testing.T) {
			if !regexp.MustCompile(`^[a-z][a-z0-9]*$`).MatchString(p.Name) || seen[p.Name] {
				t.Errorf("name %q is not a unique lowercase word", p.Name)
			}
			seen[p.Name] = true
			if p.Title == "" || p.Summary == "" || len(p.Langs) == 0 || len(p.Stores) == 0 || p.NewScenario == nil {
				t.Errorf("incomplete descriptor: %+v", p)
			}
			if _, err := os.Stat(filepath.Join("..", p.Manual)); err != nil {
				t.Errorf("manual: %v", err)
			}
			for _, lang := range p.Langs {
				if p.Handler != nil {
					break
				}
				if _, err := os.Stat(filepath.Join(p.Name, "webapp", lang)); err != nil {
					t.Errorf("app of %s: %v", lang, err)
				}
			}
			if p.Tuned != "" {
				if _, err := os.Stat(filepath.Join(p.Name, "solutions", p.Tuned)); err != nil {
					t.Errorf("tuned solution: %v", err)
				}
			}
			s, err := p.Scenario()
			if err != nil {
				t.Fatal(err)
			}
			if m := s.Meta(); m.Problem != p.Name || m.Version == "" || len(m.Rules.Weights) == 0 {
				t.Errorf("scenario meta: problem %q version %q weights %v", m.Problem, m.Version, m.Rules.Weights)
			}
			if got, ok := problems.Lookup(p.Name); !ok || got.Name != p.Name {
				t.Errorf("Lookup(%q) = %v", p.Name, ok)
			}
		})
	}
	if _, ok := problems.Lookup("nosuch"); ok {
		t.Error("Lookup found a problem that does not exist")
	}
}

// TestNodeAppsShareOnePackageSet: every Node app's package.json,
// package-lock.json and tsconfig.json are the kit's (kit/launch/testdata/node),
// byte for byte, so that one npm install serves them all and every app
// compiles alike. A package one app needs is added to all.
func TestNodeAppsShareOnePackageSet(t *testing.T) {
	shared := filepath.Join("..", "kit", "launch", "testdata", "node")
	for _, p := range problems.All() {
		for _, lang := range p.Langs {
			dir := filepath.Join(p.Name, "webapp", lang)
			if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
				continue
			}
			for _, name := range []string{"package.json", "package-lock.json", "tsconfig.json"} {
				want, err := os.ReadFile(filepath.Join(shared, name))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s/%s is not %s/%s (%v)", dir, name, shared, name, err)
				}
			}
		}
	}
}
