package launch

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCargo(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"cargo 1.95.0 (f2d3ce0bd 2026-03-21)\n", true},
		{"cargo 1.89.0 (c24e10642 2025-06-23)", true},
		{"cargo 1.63.0", false}, // Debian 12's
		{"cargo 1.88.0 (873a06493 2025-05-10)", false},
		{"cargo-deb 2.0", false},
		{"", false},
	} {
		if err := checkCargo(tc.version); (err == nil) != tc.ok {
			t.Errorf("checkCargo(%q) = %v, want ok %v", tc.version, err, tc.ok)
		}
	}
}

func TestBuiltExecutable(t *testing.T) {
	lib := `{"reason":"compiler-artifact","target":{"kind":["lib"]},"executable":null}`
	bin := `{"reason":"compiler-artifact","target":{"kind":["bin"]},"executable":"/t/release/tunecon-blog"}`
	done := `{"reason":"build-finished","success":true}`
	for _, tc := range []struct {
		name, messages, want string
	}{
		{"built", lib + "\n" + bin + "\n" + done, "/t/release/tunecon-blog"},
		{"fresh", bin + "\n" + done, "/t/release/tunecon-blog"},
		{"no binary", lib + "\n" + done, ""},
		{"not JSON", "warning: something\n" + bin, "/t/release/tunecon-blog"},
		{"empty", "", ""},
	} {
		got, err := builtExecutable(strings.NewReader(tc.messages))
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%s: builtExecutable = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestMissingToolchainSaysWhatToInstall(t *testing.T) {
	err := (&MissingToolchain{Lang: "Rust", Need: "cargo >= 1.89", Found: "cargo 1.63.0 at /usr/bin/cargo",
		Hint: "install it with rustup"}).Error()
	for _, want := range []string{"cargo >= 1.89", "1.63.0", "rustup"} {
		if !strings.Contains(err, want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// TestBuildRust builds a package with no dependencies into a shared target
// directory and copies its binary out.
func TestBuildRust(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cargo: not in -short")
	}
	if _, err := findCargo(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"Cargo.toml":  "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
		"Cargo.lock":  "version = 4\n\n[[package]]\nname = \"hello\"\nversion = \"0.1.0\"\n",
		"src/main.rs": "fn main() { println!(\"listening on http://127.0.0.1:1\"); }\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !IsRust(dir) || IsRust(t.TempDir()) {
		t.Fatal("IsRust does not tell a Cargo package")
	}
	target := filepath.Join(t.TempDir(), "target")
	for _, patched := range []bool{false, true} {
		var log bytes.Buffer
		out := filepath.Join(t.TempDir(), "bin", "hello")
		if err := BuildRust(context.Background(), dir, out, target, patched, &log); err != nil {
			t.Fatalf("patched %v: %v\n%s", patched, err, log.String())
		}
		got, err := exec.Command(out).Output()
		if err != nil || !strings.Contains(string(got), "listening on") {
			t.Fatalf("patched %v: the built binary says %q, %v", patched, got, err)
		}
	}
}

// TestCargoPackage reads the package's name, not a dependency's.
func TestCargoPackage(t *testing.T) {
	for _, c := range []struct{ manifest, want string }{
		{"[package]\nname = \"tunecon-memo\"\nversion = \"0.1.0\"\n", "tunecon-memo"},
		{"# app\n[package]\nedition = \"2024\"\nname=\"a_b\"\n\n[dependencies]\nname = \"x\"\n", "a_b"},
		{"[dependencies]\nname = \"x\"\n[package]\nversion = \"1\"\n", ""},
		{"[package]\nauthors = [\"a\", \"b\"]\n\nname = \"c\"\n", "c"},
		{"[package]\nversion = \"1\"\n[dependencies]\nname = \"x\"\n", ""},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte(c.manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := cargoPackage(dir)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("cargoPackage(%q) = %q, %v; want %q", c.manifest, got, err, c.want)
		}
	}
}
