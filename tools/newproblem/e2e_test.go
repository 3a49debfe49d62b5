package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEndToEnd does in a copy of the source tree what an author does: it
// makes problems/demo2 with the command, vets the tree and runs the new
// problem's tests as generated (its reference apps included), then checks
// that a second run for the same name fails and changes nothing. The copy
// shares the Go module and build caches; its Python virtualenv is its own.
// On a shared machine run it under `flock /tmp/tunecon-heavy.lock`.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the tree and starts the new problem's apps: not in -short")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git to list the tree's files")
	}
	const name = "demo2"
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "problems", name)); err == nil {
		t.Fatalf("problems/%s exists in the source tree: remove it and its two lines in %s first", name, Registry)
	}
	dir := t.TempDir()
	step := func(what string, f func()) {
		t.Helper()
		start := time.Now()
		f()
		t.Logf("%s: %.1fs", what, time.Since(start).Seconds())
	}
	step("copy the tree", func() { copyTree(t, root, dir) })
	bin := filepath.Join(dir, "build", "newproblem")
	step("build the command", func() { runIn(t, dir, "go", "build", "-o", bin, "./tools/newproblem") })
	step("make "+name, func() {
		if out := runIn(t, dir, bin, "-name", name); !strings.Contains(out, "bin/tunecon try "+name) {
			t.Errorf("the command's output lacks the next steps:\n%s", out)
		}
	})
	step("go vet", func() { runIn(t, dir, "go", "vet", "./problems/...", "./tools/...") })
	step("go test ./problems/"+name+"/...", func() { runIn(t, dir, "go", "test", "-count=1", "./problems/"+name+"/...") })
	if t.Failed() {
		return
	}

	before := snapshot(t, filepath.Join(dir, "problems"))
	cmd := exec.Command(bin, "-name", name)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !bytes.Contains(out, []byte("problems/"+name+" already exists")) {
		t.Errorf("a second run for %s: %v, want exit status 2 saying it exists:\n%s", name, err, out)
	}
	if !sameSnapshot(before, snapshot(t, filepath.Join(dir, "problems"))) {
		t.Error("the second run changed problems/")
	}
}

// copyTree copies the files of the tree at root that git tracks or would
// track (untracked files not ignored included, deleted ones left out) to dir.
func copyTree(t *testing.T, root, dir string) {
	t.Helper()
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, p := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, p)
		st, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) || (err == nil && !st.Mode().IsRegular()) {
			continue // deleted in the working tree, or not a file
		} else if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// runIn runs a command in dir, with TUNECON_ROOT naming dir, and returns
// its output; a failure fails the test with the output.
func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TUNECON_ROOT="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
