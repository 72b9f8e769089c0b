package standin

import "syscall"

// sysProcAttr has the kernel end the stand-in when the process that started it dies, so that
// a local service killed outright leaves none behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
