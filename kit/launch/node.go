package launch

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Node apps run on one Node.js, NodeVersion, whatever the machine has: a
// score must not depend on which Node a distribution ships (Debian 12's is
// 18, too old for node:sqlite, which the apps use for SQLite). Node and npm
// come from the npm registry, the one place a machine that reaches only the
// registries can fetch them: the node-linux-ARCH packages hold Node's own
// release build, the npm package npm's. Both are checked against the
// integrity hashes the registry published for them.
const (
	NodeVersion = "24.21.0"
	npmVersion  = "11.21.2"
	npmSum      = "sha512-7HPApk+AflMUavSseL1Pm6CnYqMIHk53x+KmuhqmTDqPkjPMgxIpTPcTqsE91EKNw4gFBJV9fnXiSdGm1DXq9A=="
)

// nodeSum is the integrity hash of node-linux-ARCH at NodeVersion, for the
// architectures the registry has a package of.
func nodeSum(arch string) (string, bool) {
	switch arch {
	case "amd64":
		return "sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==", true
	case "arm64":
		return "sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==", true
	}
	return "", false
}

// IsNode reports whether the app in dir is a Node app: it has a
// package.json.
func IsNode(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "package.json"))
	return err == nil
}

// BuildNode makes the Node app in dir ready to run and returns the command
// that runs it (dist/main.js, in dir). It fetches Node and npm into build
// (once), installs the packages of the app's package-lock.json with npm ci
// into build/node-modules/HASH (once per lock: every problem's app lists the
// same packages, so one install serves all), links dir/node_modules to it,
// and compiles the app's TypeScript with its tsc into dir/dist. npm runs no
// package's install script: nothing may fetch from outside the registry.
func BuildNode(ctx context.Context, dir, build string, log io.Writer) (*exec.Cmd, error) {
	node, npm, err := ensureNode(ctx, build, log)
	if err != nil {
		return nil, err
	}
	key, err := lockHash(dir)
	if err != nil {
		return nil, err
	}
	modules := filepath.Join(build, "node-modules", key)
	unlock, err := lockFile(modules + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	run := func(wd string, args ...string) error {
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Dir = wd
		cmd.Env = Env("PATH=" + filepath.Dir(node) + string(os.PathListSeparator) + os.Getenv("PATH"))
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s in %s: %w (its output is above)", strings.Join(args, " "), wd, err)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(modules, ".installed")); err != nil {
		fmt.Fprintf(log, "installing %s's packages with npm ci into %s ...\n", dir, modules)
		if err := installPackages(dir, modules, func() error {
			return run(modules, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
		}); err != nil {
			return nil, err
		}
	}
	if err := linkModules(dir, filepath.Join(modules, "node_modules")); err != nil {
		return nil, err
	}
	if err := run(dir, filepath.Join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", "."); err != nil {
		return nil, err
	}
	cmd := exec.Command(node, filepath.Join("dist", "main.js"))
	cmd.Dir = dir
	return cmd, nil
}

// lockHash names an install by the app's package.json and package-lock.json.
func lockHash(dir string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("a Node app needs %s: %w", name, err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// installPackages copies the app's package files into modules and runs
// install there, marking the install done only when it succeeded.
func installPackages(dir, modules string, install func() error) error {
	if err := os.RemoveAll(modules); err != nil {
		return err
	}
	if err := os.MkdirAll(modules, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		if err := copyFile(filepath.Join(dir, name), filepath.Join(modules, name)); err != nil {
			return err
		}
	}
	if err := install(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(modules, ".installed"), nil, 0o644)
}

// linkModules points dir/node_modules at the shared install. A real
// node_modules directory (one a contestant installed by hand) is left as it
// is; a link to another install is replaced.
func linkModules(dir, target string) error {
	link := filepath.Join(dir, "node_modules")
	fi, err := os.Lstat(link)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink == 0:
		return nil
	case err == nil:
		if got, _ := os.Readlink(link); got == target {
			return nil
		}
		if err := os.Remove(link); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return os.Symlink(target, link)
}

// ensureNode returns the paths of the pinned node binary and npm's command,
// fetching them into build first if missing.
func ensureNode(ctx context.Context, build string, log io.Writer) (node, npm string, err error) {
	sum, ok := nodeSum(runtime.GOARCH)
	if !ok {
		return "", "", &MissingToolchain{Lang: "Node", Need: "Node.js " + NodeVersion,
			Hint: "the npm registry has no node-linux-" + runtime.GOARCH + " package to fetch"}
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	nodeDir := filepath.Join(build, "node-v"+NodeVersion+"-linux-"+arch)
	npmDir := filepath.Join(build, "npm-"+npmVersion)
	node, npm = filepath.Join(nodeDir, "bin", "node"), filepath.Join(npmDir, "bin", "npm-cli.js")
	unlock, err := lockFile(filepath.Join(build, "node.lock"))
	if err != nil {
		return "", "", err
	}
	defer unlock()
	for _, p := range []struct{ dir, name, version, sum string }{
		{nodeDir, "node-linux-" + arch, NodeVersion, sum},
		{npmDir, "npm", npmVersion, npmSum},
	} {
		if _, err := os.Stat(filepath.Join(p.dir, ".fetched")); err == nil {
			continue
		}
		fmt.Fprintf(log, "fetching %s %s from the npm registry into %s ...\n", p.name, p.version, p.dir)
		if err := fetchPackage(ctx, p.name, p.version, p.sum, p.dir); err != nil {
			return "", "", &MissingToolchain{Lang: "Node", Need: "Node.js " + NodeVersion + " and npm " + npmVersion,
				Hint: fmt.Sprintf("fetching %s %s from the npm registry (%s) failed: %v", p.name, p.version, registry(), err)}
		}
	}
	return node, npm, nil
}

// registry is the npm registry's URL, as npm reads it from the environment.
func registry() string {
	if r := os.Getenv("npm_config_registry"); r != "" {
		return strings.TrimSuffix(r, "/") + "/"
	}
	return "https://registry.npmjs.org/"
}

// fetchPackage downloads an unscoped package's tarball from the registry,
// checks it against its integrity hash and unpacks its files into dir.
func fetchPackage(ctx context.Context, name, version, integrity, dir string) error {
	url := registry() + name + "/-/" + name + "-" + version + ".tgz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dir), name+"-*.tgz")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha512.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if got := "sha512-" + base64.StdEncoding.EncodeToString(h.Sum(nil)); got != integrity {
		return fmt.Errorf("%s has integrity %s, not the pinned %s", url, got, integrity)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := untar(tmp, dir); err != nil {
		return fmt.Errorf("unpacking %s: %w", url, err)
	}
	return os.WriteFile(filepath.Join(dir, ".fetched"), nil, 0o644)
}

// untar unpacks an npm tarball's regular files into dir, without the
// package/ folder every npm tarball wraps them in.
func untar(r io.Reader, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name := filepath.Clean(hdr.Name)
		_, rel, _ := strings.Cut(name, "/")
		if !filepath.IsLocal(name) || rel == "" {
			return fmt.Errorf("unexpected path %q", hdr.Name)
		}
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, hdr.FileInfo().Mode().Perm()|0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}
