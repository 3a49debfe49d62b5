package kit

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEnsureData checks what Serve does before it starts an app: it writes
// the dump and the data directory where the convention says, only through
// the problem's functions, and tells the app where they are.
func TestEnsureData(t *testing.T) {
	webapp := filepath.Join("root", "problems", "x", "webapp")
	var gotDump, gotDir string
	p := Problem{
		Name:    "x",
		Data:    func(path string) (bool, error) { gotDump = path; return true, nil },
		DataDir: func(dir string) (bool, error) { gotDir = dir; return false, nil },
	}
	var log bytes.Buffer
	env, err := p.ensureData(webapp, &log)
	if err != nil {
		t.Fatal(err)
	}
	dump, dir := filepath.Join(webapp, "data", "initial.sql"), filepath.Join(webapp, "data", "initial")
	if gotDump != dump || gotDir != dir {
		t.Errorf("Data got %q, DataDir got %q", gotDump, gotDir)
	}
	if want := []string{"X_INITIAL_SQL=" + dump, "X_INITIAL_DIR=" + dir}; !slices.Equal(env, want) {
		t.Errorf("env %q, want %q", env, want)
	}
	if !bytes.Contains(log.Bytes(), []byte("generated the initial data\n")) || bytes.Contains(log.Bytes(), []byte("generated the initial data files")) {
		t.Errorf("log:\n%s", log.String())
	}

	// A problem with a dump alone gets no PREFIX_INITIAL_DIR, and one with
	// neither only the dump's conventional path.
	p.DataDir = nil
	if env, _ := p.ensureData(webapp, &log); len(env) != 1 {
		t.Errorf("without DataDir: env %q", env)
	}
	failed := errors.New("disk full")
	p.Data, p.DataDir = nil, func(string) (bool, error) { return false, failed }
	if _, err := p.ensureData(webapp, &log); !errors.Is(err, failed) {
		t.Errorf("a failing DataDir: %v", err)
	}
}

// TestWorkingDataLock: two apps of one language on the embedded database of
// one checkout would undo each other's writes, so the second is refused
// until the first stops; another language, a database of its own, or a
// problem without data files takes no lock.
func TestWorkingDataLock(t *testing.T) {
	webapp := t.TempDir()
	p := Problem{Name: "x", Data: func(string) (bool, error) { return false, nil }}
	release, err := p.lockWorkingData(webapp, ServeConfig{Lang: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.lockWorkingData(webapp, ServeConfig{Lang: "go"}); err == nil || !strings.Contains(err.Error(), "another app is running") {
		t.Errorf("a second app on the same data: %v", err)
	}
	for _, cfg := range []ServeConfig{{Lang: "python"}, {Lang: "go", DB: "sqlite:/tmp/x.db"}, {Lang: "go", AppDir: "/tmp/patched"}} {
		other, err := p.lockWorkingData(webapp, cfg)
		if err != nil {
			t.Errorf("%+v: %v", cfg, err)
			continue
		}
		other()
	}
	if _, err := (Problem{Name: "y"}).lockWorkingData(webapp, ServeConfig{Lang: "go"}); err != nil {
		t.Errorf("a problem without data files: %v", err)
	}
	release()
	again, err := p.lockWorkingData(webapp, ServeConfig{Lang: "go"})
	if err != nil {
		t.Fatalf("after the first app stopped: %v", err)
	}
	again()
}
