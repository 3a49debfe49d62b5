//go:build !linux

package servers

import "syscall"

// dieWithParent does nothing where the kernel cannot signal a server when
// its parent dies.
func dieWithParent(*syscall.SysProcAttr) {}
