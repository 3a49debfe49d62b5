package proc

import (
	"math"
	"os"
	"syscall"
)

// OpenFiles returns how many files this process has open and how many it
// may (its RLIMIT_NOFILE); 0, 0 when either is unknown.
func OpenFiles() (open, limit int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, 0
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, 0
	}
	return len(names), int(min(lim.Cur, math.MaxInt32))
}
