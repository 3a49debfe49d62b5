//go:build linux

package servers

import "syscall"

// dieWithParent has the kernel send the server SIGTERM when the process
// that started it dies, so that a test killed by its timeout leaves no
// server running (holding its port, its files and any lock it inherited).
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
