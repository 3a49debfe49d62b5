// Command dist writes, for each problem with reference apps, the tarball a
// team server is installed from (deploy/'s team playbook unpacks it into the
// contestant's home): dist/problem-NAME.tar.gz, holding webapp/ with the
// apps in every language, the Go app's modules vendored (so that it builds
// with no network), the public files, the schemas, the initial data
// generated, the sample nginx configuration, the manual, and for leagues
// the public key the apps verify tokens with (never the private one). Run
// it with `make dist`, which also builds the tunecon binaries and
// SHA256SUMS.
package main

import (
	"archive/tar"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems"
)

func main() {
	out := flag.String("out", "dist", "the folder to write the tarballs in")
	only := flag.String("problems", "", "comma-separated problems (default: every problem with reference apps)")
	flag.Parse()
	if err := run(*out, *only); err != nil {
		fmt.Fprintf(os.Stderr, "dist: %v\n", err)
		os.Exit(1)
	}
}

func run(out, only string) error {
	var names []string
	if only != "" {
		names = strings.Split(only, ",")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, p := range problems.All() {
		if p.Handler != nil || (names != nil && !slices.Contains(names, p.Name)) {
			continue
		}
		start := time.Now()
		path := filepath.Join(out, "problem-"+p.Name+".tar.gz")
		if err := tarball(p, path); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		fmt.Printf("dist: %s in %.1f s\n", path, time.Since(start).Seconds())
	}
	return nil
}

// tarball stages the problem's webapp in a temporary folder, then packs it.
func tarball(p kit.Problem, path string) error {
	stage, err := os.MkdirTemp("", "tunecon-dist-"+p.Name)
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	src := filepath.Join("problems", p.Name)
	web := filepath.Join(stage, "webapp")
	for _, dir := range []string{"go", "python", "public", "sql"} {
		if err := copyTree(filepath.Join(src, "webapp", dir), filepath.Join(web, dir)); err != nil {
			return err
		}
	}
	for from, to := range map[string]string{"nginx": "nginx", "MANUAL.md": "MANUAL.md", "keys/public.pem": "keys/public.pem"} {
		if err := copyTree(filepath.Join(src, from), filepath.Join(web, to)); err != nil {
			return err
		}
	}
	if err := generate(p, filepath.Join(web, "data")); err != nil {
		return err
	}
	if err := vendor(filepath.Join(web, "go")); err != nil {
		return err
	}
	return pack(stage, path)
}

// generate writes the initial data where the apps look for it by default:
// data/initial.sql, and data/initial/ for a problem with a directory of it.
func generate(p kit.Problem, data string) error {
	if p.Data != nil {
		if _, err := p.Data(filepath.Join(data, "initial.sql")); err != nil {
			return err
		}
	}
	if p.DataDir != nil {
		if _, err := p.DataDir(filepath.Join(data, "initial")); err != nil {
			return err
		}
	}
	return nil
}

// vendor copies the Go app's modules beside it, so that the team server
// builds it with no network (GOFLAGS=-mod=vendor is Go's default then).
func vendor(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return nil
	}
	cmd := exec.Command("go", "mod", "vendor")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	return cmd.Run()
}

// copyTree copies a file or a folder; a source that does not exist is
// nothing to copy. Generated and local files are left out.
func copyTree(from, to string) error {
	if _, err := os.Stat(from); os.IsNotExist(err) {
		return nil
	}
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "__pycache__" || d.Name() == "venv" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(path, target)
	})
}

func copyFile(from, to string) error {
	info, err := os.Stat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// epoch is every packed file's time: the same sources make the same bytes,
// so that a second `make dist` changes no checksum and a second apply of
// the playbooks unpacks nothing.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pack writes the stage's files, sorted, as a gzipped tarball.
func pack(stage, path string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(path + ".tmp")
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	err = filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == stage {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(stage, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(info.Mode().Perm()), ModTime: epoch, Format: tar.FormatPAX}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
			return tw.WriteHeader(hdr)
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = io.Copy(tw, in)
		return err
	})
	for _, c := range []io.Closer{tw, zw, f} {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
