package launch_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tunecon/tunecon/kit/launch"
)

// TestEnsureVenvTakesTurns: apps started side by side make one virtualenv,
// not two over each other; before the lock, the second ran pip in a
// virtualenv the first had not finished making.
func TestEnsureVenvTakesTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a Python virtualenv: not in -short")
	}
	if exec.Command("python3", "-c", "import venv, ensurepip").Run() != nil {
		t.Skip("python3 with the venv module is missing (Debian: python3-venv)")
	}
	work := t.TempDir()
	req := filepath.Join(work, "requirements.txt")
	if err := os.WriteFile(req, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "venv")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	logs := make([]bytes.Buffer, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = launch.EnsureVenv(context.Background(), dir, req, &logs[i]) })
	}
	wg.Wait()
	made := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v\n%s", i+1, err, logs[i].String())
		}
		if strings.Contains(logs[i].String(), "creating a Python virtualenv") {
			made++
		}
	}
	if made != 1 {
		t.Errorf("the virtualenv was made %d times, want once", made)
	}
}
