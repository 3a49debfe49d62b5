//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// raiseFileLimit makes sure this process (and the target it starts) may
// open n files: each idle user holds a connection.
func raiseFileLimit(n uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("reading the file-descriptor limit: %w", err)
	}
	if lim.Cur >= n {
		return nil
	}
	want := lim
	want.Cur = n
	if want.Max < n {
		want.Max = n // only root may raise the hard limit
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		return fmt.Errorf("the idle-user measure needs %d file descriptors, RLIMIT_NOFILE is %d (hard %d) and cannot be raised (%v): "+
			"run `ulimit -n %d` first, or make perf as root", n, lim.Cur, lim.Max, err, n)
	}
	return nil
}
