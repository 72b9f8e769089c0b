//go:build unix

package browser

import "syscall"

// killGroup sends SIGKILL to a whole process group.
func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// killPID sends SIGKILL to one process.
func killPID(pid int) {
	if pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
