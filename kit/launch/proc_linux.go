package launch

import "syscall"

// procAttr puts an app in a process group of its own (so stopping it stops
// its workers too) and has Linux stop it if the process that started it
// dies without stopping it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
