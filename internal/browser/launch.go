package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
)

// EnvChromiumBin names the environment variable [LookBin] reads first.
const EnvChromiumBin = "OPENVITALS_CHROMIUM_BIN"

// envSession is set, to the session's directory, in the environment of every browser Launch
// starts. It tells a session's processes apart from every other process, including those that
// leave its process group (Chromium's crashpad handlers).
const envSession = "OPENVITALS_BROWSER_SESSION"

// LookBin finds a Chromium executable: [EnvChromiumBin] if set, else Debian's binary itself
// (/usr/lib/chromium/chromium, not the /usr/bin/chromium shell wrapper, which adds flags of its
// own), else chromium, chromium-browser or google-chrome on PATH.
func LookBin() (string, error) {
	if bin := os.Getenv(EnvChromiumBin); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s: %w", EnvChromiumBin, err)
		}
		return bin, nil
	}
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		return "/usr/lib/chromium/chromium", nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin, nil
		}
	}
	return "", errors.New("no Chromium found: set " + EnvChromiumBin)
}

// Options configures a browser session.
type Options struct {
	// Bin is the Chromium executable. Required: rod would otherwise download a browser.
	Bin string
	// Guard decides where the browser may connect; every connection goes through it.
	Guard Guard
	// TempRoot is where the session's temporary directory is made; empty means os.TempDir().
	TempRoot string
	// Log receives the session's events; nil discards them.
	Log *slog.Logger
}

// Session is one running Chromium, its guarded proxy and its temporary directory. Close it.
type Session struct {
	log      *slog.Logger
	dir      string
	marker   string
	proxy    *Proxy
	pid      int
	exited   chan struct{}
	output   *outputWatcher
	browser  *rod.Browser
	port     int
	cancel   context.CancelFunc
	watchdog *watchdog

	closeOnce sync.Once
	closeErr  error
}

// launchTimeout bounds a launch whatever ctx says: a Chromium that never prints its DevTools
// address must not hold a worker forever.
const launchTimeout = 60 * time.Second

// Launch starts a fresh headless Chromium that reaches the network only through a guarded
// proxy, and connects rod to it. The session gets its own temporary directory (holding
// Chromium's TMPDIR, profile and XDG directories) and its own process group; [Session.Close]
// removes both. ctx bounds the launch only, not the session's life.
func Launch(ctx context.Context, opts Options) (*Session, error) {
	if opts.Bin == "" {
		return nil, errors.New("browser: Options.Bin is required")
	}
	if _, err := os.Stat(opts.Bin); err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root := opts.TempRoot
	if root == "" {
		root = os.TempDir()
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("browser: temp root: %w", err)
	}
	dir, err := os.MkdirTemp(root, "openvitals-browser-")
	if err != nil {
		return nil, fmt.Errorf("browser: temp dir: %w", err)
	}
	s := &Session{log: log, dir: dir, marker: envSession + "=" + dir, exited: make(chan struct{})}
	if err := s.start(ctx, opts); err != nil {
		if cerr := s.close(); cerr != nil {
			log.Warn("clean up after failed launch", "err", cerr)
		}
		return nil, err
	}
	log.Debug("browser launched", "pid", s.pid, "port", s.port, "dir", dir)
	return s, nil
}

// maxSocketPath is the longest path a Unix socket can have (sun_path holds 108 bytes with the
// terminating NUL). Chromium puts its SingletonSocket under TMPDIR and dies of a failed CHECK
// (SIGTRAP, no message) when the path is longer.
const maxSocketPath = 107

// singletonSocket is the length of what Chromium appends to TMPDIR for its socket.
var singletonSocket = len("/org.chromium.Chromium.XXXXXX/SingletonSocket")

// start launches Chromium in the session's directory, behind the guard's proxy, and connects
// to it.
func (s *Session) start(ctx context.Context, opts Options) error {
	dirs, err := s.makeDirs()
	if err != nil {
		return err
	}
	s.proxy, err = StartProxy(opts.Guard, s.log)
	if err != nil {
		return fmt.Errorf("browser: %w", err)
	}
	if err := s.launch(opts.Bin, dirs); err != nil {
		return err
	}
	return s.connect(ctx)
}

// sessionDirs are Chromium's directories of a session, each under the session's own.
type sessionDirs struct {
	tmp, profile, config, cache string
}

// makeDirs creates the session's directories for Chromium.
func (s *Session) makeDirs() (sessionDirs, error) {
	var dirs sessionDirs
	if n := len(filepath.Join(s.dir, "tmp")) + singletonSocket; n > maxSocketPath {
		return dirs, fmt.Errorf("browser: temp root %q is too deep: Chromium's socket path would be %d bytes, over the %d a Unix socket allows", filepath.Dir(s.dir), n, maxSocketPath)
	}
	for _, d := range []struct {
		dst  *string
		name string
	}{{&dirs.tmp, "tmp"}, {&dirs.profile, "profile"}, {&dirs.config, "config"}, {&dirs.cache, "cache"}} {
		*d.dst = filepath.Join(s.dir, d.name)
		if err := os.Mkdir(*d.dst, 0o700); err != nil {
			return dirs, fmt.Errorf("browser: temp dir: %w", err)
		}
	}
	return dirs, nil
}

// launch starts Chromium (bin) with the session's directories and proxy, and its watchdog;
// s.exited is closed once Chromium has exited.
func (s *Session) launch(bin string, dirs sessionDirs) error {
	args := chromiumArgs(bin, dirs.profile, s.proxy.URL(), inLambda())
	cmd := exec.Command(bin, args...)
	cmd.Env = chromiumEnv(os.Environ(), map[string]string{
		"TMPDIR": dirs.tmp,
		// Chromium's crashpad handler keeps its database under the XDG config directory (by
		// default ~/.config/chromium/Crash Reports), whatever the profile is.
		"XDG_CONFIG_HOME": dirs.config,
		"XDG_CACHE_HOME":  dirs.cache,
		envSession:        s.dir,
	})
	cmd.Dir = dirs.tmp
	cmd.SysProcAttr = sysProcAttr()
	s.output = newOutputWatcher()
	cmd.Stdout = s.output
	cmd.Stderr = s.output
	// Chromium's helpers may hold its stderr open after it dies; don't wait for them long.
	cmd.WaitDelay = 2 * time.Second

	started := make(chan error, 1)
	go func() {
		if pdeathsigNeedsLockedThread {
			// Never unlocked: the thread ends with this goroutine, after Chromium has exited.
			runtime.LockOSThread()
		}
		if err := cmd.Start(); err != nil {
			started <- err
			close(s.exited)
			return
		}
		started <- nil
		err := cmd.Wait()
		s.log.Debug("browser exited", "pid", cmd.Process.Pid, "err", err)
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("browser: start %s: %w", bin, err)
	}
	s.pid = cmd.Process.Pid
	var err error
	if s.watchdog, err = startWatchdog(s.pid, s.dir); err != nil {
		// Close still kills everything; only a crash of the worker itself could now orphan
		// Chromium's children (the parent-death signal reaches the browser process only).
		s.log.Warn("browser watchdog not started", "err", err)
	}
	return nil
}

// connect waits, within launchTimeout, for Chromium's DevTools address and connects rod to it.
func (s *Session) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, launchTimeout)
	defer cancel()
	// Until the launch succeeds, ending ctx kills the browser, which fails whatever step is
	// waiting on it (rod's WebSocket handshake takes no deadline of its own).
	stop := context.AfterFunc(ctx, func() { killGroup(s.group()) })
	defer stop()

	var wsURL string
	select {
	case wsURL = <-s.output.url:
	case <-s.exited:
		return fmt.Errorf("browser: chromium exited before it was ready: %s", s.output.tail())
	case <-ctx.Done():
		return fmt.Errorf("browser: waiting for chromium: %w", ctx.Err())
	}
	u, err := url.Parse(wsURL)
	if err != nil {
		return fmt.Errorf("browser: DevTools address %q: %w", wsURL, err)
	}
	s.port, err = strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("browser: DevTools address %q: no port", wsURL)
	}

	// The connection lives as long as the session: rod's event loop is bound to this context.
	sessCtx, sessCancel := context.WithCancel(context.Background())
	s.cancel = sessCancel
	b := rod.New().ControlURL(wsURL).Context(sessCtx).
		// rod otherwise takes these from a "rod" environment variable; the workers never want
		// tracing, slow motion or a monitor.
		Trace(false).SlowMotion(0).Monitor("")
	if err := b.Connect(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("browser: connect: %w", ctx.Err())
		}
		return fmt.Errorf("browser: connect: %w", err)
	}
	s.browser = b
	return nil
}

// inLambda reports whether this process runs as a Lambda function (Lambda sets
// AWS_LAMBDA_FUNCTION_NAME and AWS_LAMBDA_RUNTIME_API in every function's environment).
func inLambda() bool {
	return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" || os.Getenv("AWS_LAMBDA_RUNTIME_API") != ""
}

// chromiumArgs builds Chromium's command line with rod's launcher, starting from rod's
// defaults minus those that would make the browser differ from the one Lighthouse expects.
// lambda adds what Lambda's execution environment needs (see below).
//
// The flags for Lambda, where the browser runs as an unprivileged user with /tmp the only
// writable place and neither user namespaces nor a setuid helper:
//   - --no-sandbox (everywhere): Chromium's sandbox needs one of those two; the guard (a proxy
//     every connection goes through, and the SSRF policy) is what confines the browser.
//   - --disable-dev-shm-usage (everywhere): Lambda's /dev/shm is tiny or missing; shared
//     memory goes to /tmp instead.
//   - --no-zygote (in Lambda): the zygote exists to pre-fork renderers that it then sandboxes;
//     without a sandbox it isolates nothing, and it is what the usual Lambda recipes turn off
//     when Chromium fails to start renderers there. Renderers are started directly instead.
//     The tests that run a function as Lambda does (lambdatest, and the image test) run the
//     browser this way; on development machines the zygote stays, so that the measurements
//     made there keep the browser they were made with.
//   - Not --single-process, which Lambda recipes often add: Chromium supports it for
//     debugging only, and it would run each page's renderer inside the browser process, so
//     that Lighthouse's main-thread timings (Total Blocking Time, Time to Interactive) would
//     measure a different browser than Chrome users have. The audit worker's 3008 MB hold the
//     usual multi-process browser.
func chromiumArgs(bin, profile, proxyURL string, lambda bool) []string {
	l := launcher.New().Bin(bin).Leakless(false).Headless(true).NoSandbox(true).UserDataDir(profile).
		RemoteDebuggingPort(0).Proxy(proxyURL)
	for _, f := range []flags.Flag{
		// navigator.webdriver and the automation infobar: pages may treat the browser as a bot.
		"enable-automation",
		// Without a startup window Chromium has no tab until someone creates one; a plain
		// about:blank tab is what Lighthouse's own launcher leaves.
		"no-startup-window",
		// rod turns off site isolation (an old puppeteer workaround); real Chrome has it on.
		"disable-site-isolation-trials", "disable-features",
		// Running the network service in the browser process is not how Chrome runs.
		"enable-features",
		// Leftovers of rod's defaults that only apply to its own launch path.
		flags.Leakless, "auto-open-devtools-for-tabs",
	} {
		l.Delete(f)
	}
	for _, f := range []string{
		"disable-gpu", "disable-quic", "no-first-run", "disable-background-networking",
		"disable-component-update", "disable-sync", "disable-dev-shm-usage",
	} {
		l.Set(flags.Flag(f))
	}
	if lambda {
		l.Set("no-zygote")
	}
	// Chromium bypasses a proxy for loopback by default; "<-loopback>" removes that rule, so
	// that 127.0.0.1 and localhost go through the proxy and its guard like any host.
	l.Set("proxy-bypass-list", "<-loopback>")
	// WebRTC may send UDP straight from the browser, around the proxy: forbid it.
	l.Set("force-webrtc-ip-handling-policy", "disable_non_proxied_udp")
	return l.FormatArgs()
}

// chromiumEnv returns env with the given variables set (replacing any earlier value).
func chromiumEnv(env []string, set map[string]string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// Port is the browser's DevTools port, for Lighthouse's --port.
func (s *Session) Port() int { return s.port }

// PID is the browser process's id, which is also its process group's.
func (s *Session) PID() int { return s.pid }

// Browser is the rod connection to the browser.
func (s *Session) Browser() *rod.Browser { return s.browser }

// RefusedConnections lists the connections the guard refused during the session, oldest first,
// each as "host:port: refused: host resolves to a private address (10.0.0.1)".
func (s *Session) RefusedConnections() []string {
	if s.proxy == nil {
		return nil
	}
	return s.proxy.Refused()
}

// Unreached returns why the session's proxy could not reach the host and port of target (a
// URL) since t, as a *LoadError whose Err is the dial error (a *RefusedError for a refusal);
// nil when every connection to it since t was made. Behind the proxy, Chromium and Lighthouse
// see such a failure only as the proxy's answer (a 502, a failed tunnel); this says what
// happened.
func (s *Session) Unreached(target string, since time.Time) error {
	if s.proxy == nil {
		return nil
	}
	f, ok := s.proxy.failureSince(hostPort(target), since)
	if !ok {
		return nil
	}
	return &LoadError{URL: target, Reason: netReason(f.Err), Err: f.Err}
}

// Close kills Chromium and every process it started, stops the proxy and removes the session's
// temporary directory. It is safe to call more than once; later calls return the first result.
func (s *Session) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

// Bounds on Close's waits. A SIGKILLed process is gone in milliseconds; these only keep a
// worker from hanging on a kernel that misbehaves.
const (
	sweepTimeout = 5 * time.Second
	exitTimeout  = 5 * time.Second
)

func (s *Session) close() error {
	var errs []error
	if s.cancel != nil {
		s.cancel()
	}
	if s.watchdog != nil {
		// First, so that it can never act on a process group number that a later process
		// reuses once this one is gone.
		s.watchdog.stop()
	}
	if s.pid > 0 {
		// No graceful Browser.close: the profile is thrown away, and a kill cannot hang.
		killGroup(s.group())
		if left := s.sweep(); len(left) > 0 {
			errs = append(errs, fmt.Errorf("browser: processes %v survived SIGKILL", left))
		}
		select {
		case <-s.exited:
		case <-time.After(exitTimeout):
			errs = append(errs, fmt.Errorf("browser: chromium %d was not reaped", s.pid))
		}
	}
	if s.proxy != nil {
		if err := s.proxy.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeAll(s.dir); err != nil {
		errs = append(errs, fmt.Errorf("browser: remove temp dir: %w", err))
	}
	return errors.Join(errs...)
}

// group returns the browser's process group id, or 0 once that number may belong to someone
// else. The kernel does not hand out a PID while a process group of that number has members,
// so the group is ours as long as the browser is unreaped or no process has its PID; only a
// browser that died and was reaped along with its whole group frees the number for reuse.
func (s *Session) group() int {
	select {
	case <-s.exited:
		if _, err := os.Stat("/proc/" + strconv.Itoa(s.pid)); err == nil {
			return 0
		}
	default:
	}
	return s.pid
}

// sweep kills whatever of the session still lives, until nothing does or sweepTimeout passes,
// and returns the survivors.
func (s *Session) sweep() []int {
	deadline := time.Now().Add(sweepTimeout)
	for {
		left := sessionProcesses(s.group(), s.marker)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		for _, pid := range left {
			killPID(pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// removeAll retries briefly: a process that was writing into the directory as it died can
// make the first attempt see a directory that is not yet empty.
func removeAll(dir string) error {
	var err error
	for range 5 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// outputWatcher receives Chromium's stdout and stderr: it hands over the DevTools address
// Chromium prints when ready and keeps the end of the output for error messages.
type outputWatcher struct {
	url chan string

	mu    sync.Mutex
	line  []byte
	last  []byte
	found bool
}

func newOutputWatcher() *outputWatcher { return &outputWatcher{url: make(chan string, 1)} }

const outputTail = 4 << 10

func (o *outputWatcher) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last = append(o.last, p...)
	if len(o.last) > outputTail {
		o.last = append(o.last[:0], o.last[len(o.last)-outputTail:]...)
	}
	if o.found {
		return len(p), nil
	}
	o.line = append(o.line, p...)
	for {
		i := bytes.IndexByte(o.line, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(o.line[:i]))
		o.line = o.line[i+1:]
		if rest, ok := strings.CutPrefix(line, "DevTools listening on "); ok && strings.HasPrefix(rest, "ws://") {
			o.found = true
			o.line = nil
			o.url <- rest
			break
		}
	}
	if len(o.line) > outputTail {
		o.line = o.line[len(o.line)-outputTail:]
	}
	return len(p), nil
}

func (o *outputWatcher) tail() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.TrimSpace(string(o.last))
}

// watchdog is a small shell process that cleans up after the worker if the worker dies with the
// session open: it blocks reading a pipe whose only writer is the worker, and the kernel closes
// that pipe when the worker exits, however it exits. The parent-death signal alone is not
// enough: it reaches the browser process, but its children (the network service among them)
// live on for a while after it, and Chromium's disk cache has been seen recreating a removed
// profile directory 20 seconds later. rod's leakless helper does the same job but unpacks a
// binary into the worker's TMPDIR, serializes launches on a fixed TCP port and panics on errors.
type watchdog struct {
	cmd *exec.Cmd
	w   *os.File
}

// watchdogScript kills the process group $1 (the kernel lets no fork escape a signal sent to
// a group), gives the killed processes a moment to be gone, then removes the session directory
// $2. It signals once only: the longer it waited, the likelier a freed group number would
// belong to someone else.
const watchdogScript = `read _; kill -9 -"$1" 2>/dev/null; sleep 1; rm -rf -- "$2"`

func startWatchdog(pgid int, dir string) (*watchdog, error) {
	// os.Pipe opens both ends close-on-exec, so neither Chromium nor any other child of the
	// worker inherits the write end and keeps the pipe open after the worker dies.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "openvitals-browser-watchdog", strconv.Itoa(pgid), dir)
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	// A group of its own: a Ctrl-C to the worker's group must not kill the watchdog first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = r.Close() // the watchdog has its copy
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	return &watchdog{cmd: cmd, w: w}, nil
}

// stop ends the watchdog without letting it act.
func (wd *watchdog) stop() {
	_ = wd.cmd.Process.Kill()
	_ = wd.cmd.Wait()
	_ = wd.w.Close()
}
