//go:build unix

package kit

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockData takes the lock on the working data of an app in its webapp
// directory, on its embedded database: two apps on the same files would
// undo each other's writes (one's /initialize under the other's run), and
// their benchmarkers would report that as the app's errors. The lock is the
// file's flock: the kernel drops it when this process exits, however it
// ends. release lets it go.
func lockData(path, what string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", what, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("another app is running on %s (another `tunecon try`, headroom or stability on this checkout?): stop it first, or give this one a database of its own with --db", what)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", what, err)
	}
	return func() { f.Close() }, nil
}
