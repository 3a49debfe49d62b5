//go:build unix

package kit

import (
	"fmt"
	"syscall"
)

// RaiseFileLimit lets this process, and the apps it starts, open n files:
// each user of a large load holds a connection or more, at both ends. Only
// root may raise the hard limit; for another user the error says how far it
// got.
func RaiseFileLimit(n uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("reading the open-files limit: %w", err)
	}
	if lim.Cur >= n {
		return nil
	}
	want := syscall.Rlimit{Cur: n, Max: max(lim.Max, n)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		return fmt.Errorf("the open-files limit is %d (hard %d) and cannot be raised to %d: %w", lim.Cur, lim.Max, n, err)
	}
	return nil
}
