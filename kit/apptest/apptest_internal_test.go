package apptest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/kit"
)

// TestRenameCargoPackage: a copy of a Rust app gets a name of its own in
// both its manifest and its lock file, and a dependency whose name begins
// with the app's keeps its own.
func TestRenameCargoPackage(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, lock string
		ok                   bool
	}{
		{"app", "[package]\nname = \"tunecon-bank\"\n", "[[package]]\nname = \"tunecon-bank\"\n\n[[package]]\nname = \"tunecon-bank-x\"\n", true},
		{"no package name", "[workspace]\n", "", false},
		{"lock of another app", "[package]\nname = \"tunecon-bank\"\n", "[[package]]\nname = \"tunecon-blog\"\n", false},
	} {
		dir := t.TempDir()
		for name, text := range map[string]string{"Cargo.toml": tc.manifest, "Cargo.lock": tc.lock} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		err := renameCargoPackage(dir)
		if (err == nil) != tc.ok {
			t.Errorf("%s: renameCargoPackage = %v, want ok %v", tc.name, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		manifest, _ := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
		lock, _ := os.ReadFile(filepath.Join(dir, "Cargo.lock"))
		renamed := strings.TrimPrefix(strings.TrimSpace(string(manifest)), "[package]\n")
		if renamed == `name = "tunecon-bank"` || !strings.Contains(string(lock), renamed+"\n") ||
			!strings.Contains(string(lock), `name = "tunecon-bank-x"`) {
			t.Errorf("%s: manifest %q, lock %q", tc.name, manifest, lock)
		}
	}
	if err := renameCargoPackage(t.TempDir()); err != nil {
		t.Errorf("a directory without Cargo.toml: %v", err)
	}
}

// TestPatchedNodeApp patches a TypeScript file and leaves out what the build
// remakes: the link to the shared packages and the compiled dist/.
func TestPatchedNodeApp(t *testing.T) {
	src := t.TempDir()
	for name, text := range map[string]string{
		"package.json": "{}", "src/main.ts": `const answer = 42;`, "dist/main.js": "old",
	} {
		path := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(src, "node_modules")); err != nil {
		t.Fatal(err)
	}
	dst := Patched(t, src, [2]string{"= 42", "= 41"})
	if got, _ := os.ReadFile(filepath.Join(dst, "src", "main.ts")); string(got) != `const answer = 41;` {
		t.Errorf("patched main.ts = %q", got)
	}
	for _, name := range []string{"node_modules", "dist"} {
		if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
			t.Errorf("the copy holds %s", name)
		}
	}
}

// TestConformanceRunsAlternate: Conformance's runs on the shared MariaDB,
// which may go one at a time (ServerWidth), alternate with the others from the start, and
// the tuned solution runs once, on the first store.
func TestConformanceRunsAlternate(t *testing.T) {
	a := New(kit.Problem{Langs: []string{"go", "python", "rust"}, Stores: []string{kit.StoreSQLite, kit.StoreMariaDB}, Tuned: "solutions"})
	want := []conformanceRun{
		{"go", kit.StoreMariaDB}, {"go", kit.StoreSQLite},
		{"python", kit.StoreMariaDB}, {"python", kit.StoreSQLite},
		{"rust", kit.StoreMariaDB}, {"rust", kit.StoreSQLite},
		{kit.TunedLang, kit.StoreSQLite},
	}
	if got := a.conformanceRuns(); !slices.Equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
}

// TestSideBySideKeepsItsWidths: sideBySide runs every run once, never more
// than width at a time nor more than server on MariaDB, and fills both.
func TestSideBySideKeepsItsWidths(t *testing.T) {
	var runs []conformanceRun
	for _, lang := range []string{"go", "python", "rust", "node"} {
		runs = append(runs, conformanceRun{lang, kit.StoreMariaDB}, conformanceRun{lang, kit.StoreSQLite})
	}
	var mu sync.Mutex
	var going, maria, mostGoing, mostMaria int
	ran := map[conformanceRun]int{}
	full := make(chan struct{}) // closed once three go side by side
	sideBySide(slices.Clone(runs), 3, 1, func(x conformanceRun) {
		mu.Lock()
		ran[x]++
		going++
		if going == 3 && mostGoing < 3 {
			close(full)
		}
		mostGoing = max(mostGoing, going)
		if x.store == kit.StoreMariaDB {
			maria++
			mostMaria = max(mostMaria, maria)
		}
		mu.Unlock()
		select {
		case <-full:
		case <-time.After(10 * time.Second):
			t.Error("three runs never went side by side")
		}
		mu.Lock()
		going--
		if x.store == kit.StoreMariaDB {
			maria--
		}
		mu.Unlock()
	})
	for _, x := range runs {
		if ran[x] != 1 {
			t.Errorf("%v ran %d times, want once", x, ran[x])
		}
	}
	if mostGoing != 3 || mostMaria != 1 {
		t.Errorf("at most %d side by side and %d on MariaDB, want 3 and 1", mostGoing, mostMaria)
	}
}
