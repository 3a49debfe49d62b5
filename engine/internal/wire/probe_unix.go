//go:build unix

package wire

import (
	"net"
	"syscall"
)

// socketQuiet reports whether an idle connection's socket is still open and
// has nothing to read: a peek that does not wait.
func socketQuiet(c *net.TCPConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	quiet := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		quiet = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true // never wait for the socket to become readable
	})
	return err == nil && quiet
}
