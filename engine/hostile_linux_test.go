package engine_test

import (
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// neverAccepts listens with the smallest backlog and never accepts; once its
// queue holds a connection the kernel drops new connection attempts, as it
// does for a target whose listen queue overflows: the client's connect times
// out.
func neverAccepts(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	for range 3 { // fill the queue; the attempts past it time out
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	return "http://" + addr + "/"
}
