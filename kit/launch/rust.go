package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// MinCargoMinor is the oldest cargo, 1.MinCargoMinor, that builds the Rust
// apps: they are edition 2024, their crates (axum 0.8, sqlx 0.8) need a
// recent compiler, and leagues' app locks its tenants' files with the
// standard library's File::lock (1.89). Debian 12's cargo is 1.63, too old.
const MinCargoMinor = 89

// MissingToolchain is returned when the compiler a language needs is not
// installed or too old; it says what to install.
type MissingToolchain struct {
	Lang, Need, Found, Hint string
}

func (m *MissingToolchain) Error() string {
	found := "none was found"
	if m.Found != "" {
		found = "found " + m.Found
	}
	return fmt.Sprintf("%s apps need %s (%s); %s", m.Lang, m.Need, found, m.Hint)
}

// IsRust reports whether the app in dir is a Rust app: it has a Cargo.toml.
func IsRust(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "Cargo.toml"))
	return err == nil
}

// BuildRust builds the Cargo package in dir with its committed Cargo.lock
// (--locked: the build uses exactly the crates it names) into the binary
// out. Every Rust app builds into the one target directory given, so that
// the crates they share, at the same versions and features, compile once for
// all of them. Builds take turns on a lock beside it, each copying its
// binary out before the next may overwrite it.
//
// A patched build (a test's copy of an app with a defect, built to be seen
// failing, never measured) compiles the package's own crate without
// optimisation: 7 s rather than 37 s for leagues' app on 2 CPUs. Its
// dependencies keep the release profile, so they are the reference build's,
// compiled once.
func BuildRust(ctx context.Context, dir, out, target string, patched bool, log io.Writer) error {
	cargo, err := findCargo()
	if err != nil {
		return err
	}
	args := []string{"build", "--release", "--locked", "--message-format=json-render-diagnostics"}
	if patched {
		name, err := cargoPackage(dir)
		if err != nil {
			return err
		}
		args = append(args, "--config", fmt.Sprintf("profile.release.package.%s.opt-level=0", name))
	}
	unlock, err := lockFile(target + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	fmt.Fprintf(log, "building %s with cargo (the first build compiles the crates: minutes) ...\n", dir)
	cmd := exec.CommandContext(ctx, cargo, args...)
	cmd.Dir = dir
	cmd.Env = Env("CARGO_TARGET_DIR="+target, "PATH="+filepath.Dir(cargo)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("building %s: %w", dir, err)
	}
	exe, parseErr := builtExecutable(stdout)
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("building %s: %w (cargo's output is above)", dir, err)
	}
	if parseErr != nil {
		return fmt.Errorf("building %s: %w", dir, parseErr)
	}
	return copyFile(exe, out)
}

// packageName finds the name key among the lines after [package] that open
// no other table.
var packageName = regexp.MustCompile(`(?m)^\[package\][ \t]*\n(?:(?:[^\[\n][^\n]*)?\n)*?[ \t]*name[ \t]*=[ \t]*"([A-Za-z0-9_-]+)"`)

// cargoPackage returns the name in the [package] table of dir's Cargo.toml.
func cargoPackage(dir string) (string, error) {
	manifest, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if err != nil {
		return "", err
	}
	m := packageName.FindSubmatch(manifest)
	if m == nil {
		return "", fmt.Errorf("%s: no name in its [package] table", filepath.Join(dir, "Cargo.toml"))
	}
	return string(m[1]), nil
}

// findCargo finds cargo on PATH or where rustup puts it ($CARGO_HOME/bin,
// ~/.cargo/bin), and checks its version.
func findCargo() (string, error) {
	candidates := []string{"cargo"}
	if home := os.Getenv("CARGO_HOME"); home != "" {
		candidates = append(candidates, filepath.Join(home, "bin", "cargo"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".cargo", "bin", "cargo"))
	}
	var found string
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		version, err := exec.Command(path, "--version").Output()
		if err != nil {
			continue
		}
		if err := checkCargo(string(version)); err != nil {
			found = strings.TrimSpace(string(version)) + " at " + path
			continue
		}
		return path, nil
	}
	return "", &MissingToolchain{
		Lang: "Rust", Need: fmt.Sprintf("cargo >= 1.%d", MinCargoMinor), Found: found,
		Hint: "install it with rustup (https://rustup.rs; Debian's cargo is too old)",
	}
}

var cargoVersion = regexp.MustCompile(`^cargo 1\.(\d+)\.`)

// checkCargo checks the output of `cargo --version`.
func checkCargo(version string) error {
	m := cargoVersion.FindStringSubmatch(version)
	if m == nil {
		return fmt.Errorf("cannot read cargo's version from %q", version)
	}
	if minor, _ := strconv.Atoi(m[1]); minor < MinCargoMinor {
		return fmt.Errorf("cargo 1.%d is older than 1.%d", minor, MinCargoMinor)
	}
	return nil
}

// builtExecutable reads cargo's JSON messages and returns the path of the
// last binary it built (or found fresh).
func builtExecutable(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	var exe string
	for sc.Scan() {
		var msg struct {
			Reason     string  `json:"reason"`
			Executable *string `json:"executable"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Reason == "compiler-artifact" && msg.Executable != nil {
			exe = *msg.Executable
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if exe == "" {
		return "", errors.New("cargo built no binary")
	}
	return exe, nil
}

// copyFile copies the executable src to dst, through a temporary file so
// that a running copy of dst is never overwritten in place.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
