// Package blog is tunecon's first problem, after ISUCON1 (2011): a blog whose
// every page carries a "recently commented" sidebar. It holds the scenario
// (the benchmarker's side) and starts the reference apps; MANUAL.md is the
// contestant's side of the same contract.
package blog

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/launch"
	"github.com/tunecon/tunecon/problems/blog/data"
)

// assetSums is `sha256sum` of webapp/public as the problem ships it: the
// benchmarker's manifest, fixed here so that a contestant's edit of the
// public files is caught rather than adopted.
//
//go:embed assets.sha256
var assetSums string

// Manifest maps each static file's URL path to its SHA-256.
func Manifest() engine.Manifest {
	m := engine.Manifest{}
	sc := bufio.NewScanner(strings.NewReader(assetSums))
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if ok {
			m["/static/"+file] = sum
		}
	}
	return m
}

// Langs are the reference apps `tunecon serve blog --lang` starts. "tuned"
// is the spoiler solution in solutions/go.
var Langs = []string{"go", "python", "tuned"}

// appDirs maps a language to its app's directory below problems/blog.
var appDirs = map[string]string{"go": "webapp/go", "python": "webapp/python", "tuned": "solutions/go"}

// Serve generates the initial data if needed, builds the app and starts it.
func Serve(ctx context.Context, cfg launch.Config) (*launch.App, error) {
	dir, ok := appDirs[cfg.Lang]
	if !ok {
		return nil, fmt.Errorf("blog has no %q app", cfg.Lang)
	}
	problem := filepath.Join(cfg.Root, "problems", "blog")
	webapp := filepath.Join(problem, "webapp")
	dump := filepath.Join(webapp, "data", "initial.sql")
	fmt.Fprintf(cfg.Log, "blog: checking the initial data in %s ...\n", dump)
	wrote, err := data.EnsureSQL(dump, data.Default())
	if err != nil {
		return nil, fmt.Errorf("generating the initial data: %w", err)
	}
	if wrote {
		fmt.Fprintln(cfg.Log, "blog: generated the initial data")
	}
	appDir := filepath.Join(problem, dir)
	var cmd *exec.Cmd
	if cfg.Lang == "python" {
		venv := filepath.Join(cfg.Root, "build", "venv-blog-python")
		if err := launch.EnsureVenv(ctx, venv, filepath.Join(appDir, "requirements.txt"), cfg.Log); err != nil {
			return nil, err
		}
		cmd = exec.Command(filepath.Join(venv, "bin", "gunicorn"), "--config", "gunicorn.conf.py")
	} else {
		bin := filepath.Join(cfg.Root, "build", "blog-"+cfg.Lang)
		if err := launch.BuildGo(ctx, appDir, bin, cfg.Log); err != nil {
			return nil, err
		}
		cmd = exec.Command(bin)
	}
	cmd.Dir = appDir
	cmd.Env = launch.Env("BLOG_ADDR="+cfg.Addr, "BLOG_ROOT="+webapp, "BLOG_DB="+cfg.DB, "BLOG_INITIAL_SQL="+dump)
	fmt.Fprintln(cfg.Log, "blog: starting the app (a first start loads the initial data) ...")
	return launch.Start(ctx, cmd, "blog-"+cfg.Lang, cfg.Log)
}
