//go:build !unix

package wire

import "net"

// socketQuiet cannot peek at a socket here: a connection the server closed
// is found when a request fails on it.
func socketQuiet(*net.TCPConn) bool { return true }
