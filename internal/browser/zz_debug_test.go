package browser

import ("testing"; "os"; "os/exec"; "syscall"; "time"; "strings"; "runtime")

func TestZZBisect2(t *testing.T) {
	for _, name := range []string{"base", "stdout", "dir", "marker", "lock"} {
		dir := t.TempDir()
		for _, d := range []string{"tmp","profile","config","cache"} { os.Mkdir(dir+"/"+d, 0o700) }
		cmd := exec.Command("/usr/lib/chromium/chromium", chromiumArgs("/usr/lib/chromium/chromium", dir+"/profile", "http://127.0.0.1:1")...)
		env := map[string]string{"TMPDIR": dir+"/tmp", "XDG_CONFIG_HOME": dir+"/config", "XDG_CACHE_HOME": dir+"/cache"}
		if name == "marker" { env["OPENVITALS_BROWSER_SESSION"] = dir }
		cmd.Env = chromiumEnv(os.Environ(), env)
		cmd.SysProcAttr = sysProcAttr()
		out := newOutputWatcher()
		cmd.Stderr = out
		if name == "stdout" { cmd.Stdout = out }
		if name == "dir" { cmd.Dir = dir+"/tmp" }
		done := make(chan error, 1)
		go func() {
			if name == "lock" { runtime.LockOSThread() }
			cmd.Start()
			done <- cmd.Wait()
		}()
		select {
		case err := <-done:
			t.Logf("%s: exited %v", name, err)
		case <-time.After(3 * time.Second):
			t.Logf("%s: alive, devtools=%v", name, strings.Contains(out.tail(), "DevTools listening") || out.found)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done
		}
	}
}
