package proc

import (
	"runtime"
	"testing"
)

// TestOpenFiles: on Linux this process has its standard streams open, at
// least, and no more files than its limit.
func TestOpenFiles(t *testing.T) {
	t.Parallel()
	if open, limit := OpenFiles(); runtime.GOOS == "linux" && (open < 3 || limit < open) {
		t.Errorf("this process's open files: %d of %d", open, limit)
	}
}
