package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// chromium returns the Chromium to test with, or skips the test when the machine has none
// (`make test` installs it).
func chromium(t *testing.T) string {
	t.Helper()
	bin, err := LookBin()
	if err != nil {
		t.Skipf("no Chromium: %v", err)
	}
	return bin
}

// tempRoot returns a short temporary directory for sessions: t.TempDir's paths, named after the
// test, can make Chromium's socket path too long.
func tempRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ovt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// launch starts a session for a test and closes it when the test ends.
func launch(t *testing.T, g Guard) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Launch(ctx, Options{Bin: chromium(t), Guard: g, TempRoot: tempRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// procStart is a process's start time in clock ticks since boot (field 22 of /proc/PID/stat),
// which tells a process from a later one that reuses its PID.
func procStart(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	i := strings.LastIndexByte(string(b), ')')
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return "", false
	}
	return fields[19], true
}

// alive says whether the process that had pid and start time still runs (a zombie is dead).
func alive(pid int, start string) bool {
	now, ok := procStart(pid)
	if !ok || now != start {
		return false
	}
	state, _, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}

func TestCloseLeavesNoProcessOrDirectory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process checks read /proc")
	}
	root := tempRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Launch(ctx, Options{Bin: chromium(t), Guard: Guard{AllowPrivate: true}, TempRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // should the test stop early; Close is idempotent
	if s.Port() <= 0 {
		t.Errorf("port %d", s.Port())
	}
	// Load a page, so that renderer and network processes exist.
	srv := testSite(t)
	if err := load(t, s, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Fatalf("temp root holds %d entries, want the session's directory", len(entries))
	}
	dir := filepath.Join(root, entries[0].Name())
	if _, err := os.Stat(filepath.Join(dir, "profile")); err != nil {
		t.Errorf("no profile in the session directory: %v", err)
	}

	pids := sessionProcesses(s.PID(), s.marker)
	if !slices.Contains(pids, s.PID()) || len(pids) < 3 {
		t.Fatalf("session processes %v, want the browser (%d) and its children", pids, s.PID())
	}
	starts := map[int]string{}
	var outsideGroup []int
	for _, pid := range pids {
		if st, ok := procStart(pid); ok {
			starts[pid] = st
		}
		if _, pgid, ok := procStat(pid); ok && pgid != s.PID() {
			outsideGroup = append(outsideGroup, pid)
		}
	}
	t.Logf("session: %d processes, %d outside the process group (crashpad): %v", len(pids), len(outsideGroup), outsideGroup)

	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for pid, st := range starts {
		if alive(pid, st) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
	if left := sessionProcesses(s.PID(), s.marker); len(left) > 0 {
		t.Errorf("session processes left: %v", left)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("session directory left behind: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("temp root not empty: %v", entries)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestLaunchRefusesADeepTempRoot(t *testing.T) {
	root := filepath.Join(tempRoot(t), strings.Repeat("d", 60))
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Launch(context.Background(), Options{Bin: fakeBrowser(t, "exit 1"), TempRoot: root})
	if err == nil || !strings.Contains(err.Error(), "too deep") {
		t.Errorf("launch: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("temp root not empty: %v", entries)
	}
}

func TestLaunchNeedsABinary(t *testing.T) {
	if _, err := Launch(context.Background(), Options{}); err == nil {
		t.Error("launched without Bin")
	}
	root := t.TempDir()
	if _, err := Launch(context.Background(), Options{Bin: filepath.Join(root, "missing"), TempRoot: root}); err == nil {
		t.Error("launched a missing binary")
	}
}

// fakeBrowser writes an executable script standing in for Chromium.
func fakeBrowser(t *testing.T, script string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// envProcesses lists live processes whose environment has an entry starting with prefix.
func envProcesses(prefix string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if state, _, ok := procStat(pid); !ok || state == 'Z' {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if strings.HasPrefix(kv, prefix) {
				out = append(out, pid)
			}
		}
	}
	return out
}

func TestFailedLaunchCleansUp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process checks read /proc")
	}
	t.Run("browser exits", func(t *testing.T) {
		root := tempRoot(t)
		bin := fakeBrowser(t, `echo "cannot open display" >&2; exit 1`)
		_, err := Launch(context.Background(), Options{Bin: bin, TempRoot: root})
		if err == nil || !strings.Contains(err.Error(), "cannot open display") {
			t.Errorf("launch: %v, want the browser's own words", err)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("temp root not empty: %v", entries)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		root := tempRoot(t)
		// Never prints a DevTools address; its child keeps the session's environment.
		bin := fakeBrowser(t, `sleep 300 & exec sleep 301`)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Launch(ctx, Options{Bin: bin, TempRoot: root})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("launch: %v, want context.Canceled", err)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("temp root not empty: %v", entries)
		}
		if left := envProcesses("OPENVITALS_BROWSER_SESSION=" + root + "/"); len(left) > 0 {
			t.Errorf("processes left: %v", left)
		}
	})
}

func TestChromiumArgs(t *testing.T) {
	args := chromiumArgs("/usr/lib/chromium/chromium", "/tmp/x/profile", "http://127.0.0.1:1234", false)
	for _, want := range []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=/tmp/x/profile", "--remote-debugging-port=0",
		"--proxy-server=http://127.0.0.1:1234", "--proxy-bypass-list=<-loopback>",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("missing %s in %v", want, args)
		}
	}
	for _, arg := range args {
		for _, unwanted := range []string{"--enable-automation", "--no-startup-window", "--rod-", "--disable-site-isolation-trials", "--disable-features", "--no-zygote", "--single-process"} {
			if strings.HasPrefix(arg, unwanted) {
				t.Errorf("unwanted %s", arg)
			}
		}
	}
	lambda := chromiumArgs("/usr/lib/chromium/chromium", "/tmp/x/profile", "http://127.0.0.1:1234", true)
	if !slices.Contains(lambda, "--no-zygote") || slices.Contains(lambda, "--single-process") || len(lambda) != len(args)+1 {
		t.Errorf("in Lambda: %v, want the same flags and --no-zygote", lambda)
	}
}

// TestLaunchWithLambdaFlags runs a session as in Lambda (no zygote) and renders a page in it.
func TestLaunchWithLambdaFlags(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "openvitals-test")
	s, err := Launch(context.Background(), Options{Bin: chromium(t), Guard: Guard{AllowPrivate: true}, TempRoot: tempRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID()))
	if err != nil || !strings.Contains(string(cmdline), "--no-zygote") {
		t.Errorf("browser command line %q (%v): want --no-zygote", cmdline, err)
	}
	p, err := s.Browser().Page(proto.TargetCreateTarget{URL: "data:text/html,<title>lambda</title><p>ok"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WaitLoad(); err != nil {
		t.Fatal(err)
	}
	if v, err := p.Eval("() => document.title + document.querySelector('p').textContent"); err != nil || v.Value.Str() != "lambdaok" {
		t.Errorf("page: %v (%v)", v, err)
	}
}

// envOrphanHelper makes the test binary, run again by TestWorkerDeathCleansUp, launch a session
// under the given root, print the session's process group and marker, and exit without closing
// it, the way a crashed worker would.
const envOrphanHelper = "OPENVITALS_TEST_ORPHAN_ROOT"

func TestOrphanHelper(t *testing.T) {
	root := os.Getenv(envOrphanHelper)
	if root == "" {
		t.Skip("helper process for TestWorkerDeathCleansUp")
	}
	s, err := Launch(context.Background(), Options{Bin: chromium(t), Guard: Guard{AllowPrivate: true}, TempRoot: root})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	// Let the browser start its children, as a worker mid-audit would have.
	if p, err := s.Browser().Page(proto.TargetCreateTarget{URL: "about:blank"}); err == nil {
		_, _ = p.Eval("() => 1")
	}
	fmt.Println("session", s.PID(), s.marker)
	os.Exit(0) // no Close: the worker died
}

func TestWorkerDeathCleansUp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process checks read /proc")
	}
	chromium(t)
	root := tempRoot(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envOrphanHelper+"="+root)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var pgid int
	var marker string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "session "); ok {
			pid, m, _ := strings.Cut(rest, " ")
			pgid, _ = strconv.Atoi(pid)
			marker = m
		}
	}
	if pgid == 0 || marker == "" {
		t.Fatalf("helper printed no session:\n%s", out)
	}
	// The watchdog acts within about a second; the deadline only bounds a failure.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := sessionProcesses(pgid, marker)
		entries, _ := os.ReadDir(root)
		if len(left) == 0 && len(entries) == 0 {
			return
		}
		if time.Now().After(deadline) {
			killGroup(pgid)
			for _, pid := range left {
				killPID(pid)
			}
			t.Fatalf("30 s after the worker died: processes %v, temp root %v", left, entries)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
