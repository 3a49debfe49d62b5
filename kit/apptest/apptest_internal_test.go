package apptest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
