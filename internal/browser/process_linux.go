package browser

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts Chromium in a process group of its own, so that one signal reaches all its
// children, and has the kernel kill it if the worker dies first (the thread that starts it is
// locked for the browser's lifetime: Pdeathsig follows the thread, not the process).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// pdeathsigNeedsLockedThread says whether the launching goroutine must hold its OS thread.
const pdeathsigNeedsLockedThread = true

// sessionProcesses lists the live processes of a session: the members of Chromium's process
// group, and any process whose environment carries the session's marker. The second catches
// Chromium's crashpad handlers, which start a session and process group of their own; the
// first catches the zygote's children, whose environment Chromium rewrites. Zombies are dead and
// are left out: their parent (or init) reaps them.
func sessionProcesses(pgid int, marker string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		state, group, ok := procStat(pid)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		if (pgid > 0 && group == pgid) || procHasEnv(pid, marker) {
			out = append(out, pid)
		}
	}
	return out
}

// procStat reads a process's state and process group from /proc/PID/stat.
func procStat(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses, so cut at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgid, err = strconv.Atoi(fields[2])
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgid, true
}

func procHasEnv(pid int, entry string) bool {
	if entry == "" {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == entry {
			return true
		}
	}
	return false
}
