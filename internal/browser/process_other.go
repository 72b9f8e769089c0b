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
