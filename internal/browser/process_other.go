//go:build unix && !linux

package browser

import "syscall"

// sysProcAttr puts Chromium in a process group of its own, so that one signal reaches all its
// children. Outside Linux there is no parent-death signal: a crashed worker can orphan a
// browser there, which matters only on developers' machines.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

const pdeathsigNeedsLockedThread = false

// sessionProcesses cannot list processes without /proc; the process group kill stands alone.
func sessionProcesses(pgid int, marker string) []int { return nil }

func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func killPID(pid int) {
	if pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
