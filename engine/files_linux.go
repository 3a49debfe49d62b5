package engine

import (
	"math"
	"os"
	"syscall"
)

// openFiles returns how many files this process has open and how many it
// may (its RLIMIT_NOFILE); 0, 0 when either is unknown.
func openFiles() fileUse {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fileUse{}
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return fileUse{}
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fileUse{}
	}
	return fileUse{open: len(names), limit: int(min(lim.Cur, math.MaxInt32))}
}
