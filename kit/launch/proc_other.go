//go:build !linux

package launch

import "syscall"

// procAttr puts an app in a process group of its own.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
