package launch

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Problem says where a problem's apps live and how they are configured. Every
// app of every problem follows one convention: it lives in a directory below
// problems/NAME, reads PREFIX_ADDR, PREFIX_ROOT (the webapp directory),
// PREFIX_DB and PREFIX_INITIAL_SQL, loads the dump on its first start, and
// logs "listening on URL" when ready. Go apps are built into build/NAME-LANG;
// Python apps run under gunicorn from a virtualenv in build/venv-NAME-LANG.
type Problem struct {
	Name      string
	EnvPrefix string
	// Dirs maps a language to its app's directory below problems/NAME.
	Dirs map[string]string
	// Python lists the languages whose apps are Python (gunicorn) apps.
	Python []string
	// EnsureData writes the initial dump at path unless it is current, and
	// reports whether it wrote.
	EnsureData func(path string) (bool, error)
}

// Serve generates the initial data if needed, builds or sets up the app of
// cfg.Lang, and starts it.
func (p Problem) Serve(ctx context.Context, cfg Config) (*App, error) {
	dir, ok := p.Dirs[cfg.Lang]
	if !ok {
		return nil, fmt.Errorf("%s has no %q app", p.Name, cfg.Lang)
	}
	problem := filepath.Join(cfg.Root, "problems", p.Name)
	webapp := filepath.Join(problem, "webapp")
	dump := filepath.Join(webapp, "data", "initial.sql")
	fmt.Fprintf(cfg.Log, "%s: checking the initial data in %s ...\n", p.Name, dump)
	wrote, err := p.EnsureData(dump)
	if err != nil {
		return nil, fmt.Errorf("generating the initial data: %w", err)
	}
	if wrote {
		fmt.Fprintf(cfg.Log, "%s: generated the initial data\n", p.Name)
	}
	appDir := filepath.Join(problem, dir)
	name := p.Name + "-" + cfg.Lang
	bin := filepath.Join(cfg.Root, "build", name)
	if cfg.AppDir != "" {
		appDir, bin = cfg.AppDir, filepath.Join(cfg.AppDir, name)
	}
	var cmd *exec.Cmd
	if slices.Contains(p.Python, cfg.Lang) {
		venv := filepath.Join(cfg.Root, "build", "venv-"+name)
		if err := EnsureVenv(ctx, venv, filepath.Join(appDir, "requirements.txt"), cfg.Log); err != nil {
			return nil, err
		}
		cmd = exec.Command(filepath.Join(venv, "bin", "gunicorn"), "--config", "gunicorn.conf.py")
	} else {
		if err := BuildGo(ctx, appDir, bin, cfg.Log); err != nil {
			return nil, err
		}
		cmd = exec.Command(bin)
	}
	cmd.Dir = appDir
	e := strings.ToUpper(p.EnvPrefix)
	cmd.Env = Env(e+"_ADDR="+cfg.Addr, e+"_ROOT="+webapp, e+"_DB="+cfg.DB, e+"_INITIAL_SQL="+dump)
	fmt.Fprintf(cfg.Log, "%s: starting the app (a first start loads the initial data) ...\n", p.Name)
	return Start(ctx, cmd, name, cfg.Log)
}
