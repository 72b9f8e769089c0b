package journey

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/model/step"
)

// chromium returns the Chromium to test with, or skips the test when the machine has none.
func chromium(t *testing.T) string {
	t.Helper()
	bin, err := browser.LookBin()
	if err != nil {
		t.Skipf("no Chromium: %v", err)
	}
	return bin
}

// tempRoot returns a short temporary directory for the session: Chromium's socket path under
// it must fit in 107 bytes, which t.TempDir's long names can break.
func tempRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ovj")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// fixture serves testdata and a few dynamic pages on 127.0.0.1.
type fixture struct {
	*httptest.Server
	noise, frameNoise []byte

	mu     sync.Mutex
	agents []string // User-Agent of each /submit
	order  []string // "/slow done" and "/done.html" as they happen
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{noise: noisePNG(t, 200, 1), frameNoise: noisePNG(t, 120, 2)}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("testdata")))
	mux.HandleFunc("/done.html", func(w http.ResponseWriter, r *http.Request) {
		f.record("/done.html")
		http.ServeFile(w, r, filepath.Join("testdata", "done.html"))
	})
	mux.HandleFunc("/submit", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.agents = append(f.agents, r.UserAgent())
		f.mu.Unlock()
		q := r.URL.Query()
		// The values come back as attributes: a later waitForSelector matches them exactly.
		fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><p id="greeting" data-name="%s" data-size="%s" data-colour="%s">Hello</p>`,
			html.EscapeString(q.Get("name")), html.EscapeString(q.Get("size")), html.EscapeString(q.Get("colour")))
	})
	png := func(b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(b)
		}
	}
	mux.HandleFunc("/noise.png", png(f.noise))
	mux.HandleFunc("/frame-noise.png", png(f.frameNoise))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Write([]byte("slow"))
		f.record("/slow done")
	})
	mux.HandleFunc("/missing", http.NotFound)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fixture) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.order = append(f.order, s)
}

// noisePNG makes a PNG of random pixels: incompressible, so its size on the wire is its size.
func noisePNG(t *testing.T, side int, seed uint64) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			img.Set(x, y, color.RGBA{uint8(rng.UintN(256)), uint8(rng.UintN(256)), uint8(rng.UintN(256)), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// options returns run options against f, with the guard open to loopback.
func options(t *testing.T, base string) Options {
	return Options{
		Browser: browser.Options{Bin: chromium(t), Guard: browser.Guard{AllowPrivate: true}, TempRoot: tempRoot(t)},
		BaseURL: base,
	}
}

func run(t *testing.T, opts Options, steps ...step.Step) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, opts, steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("duration %v, INP %.0f ms, TBT %.0f ms, CLS %.4f, CPU %.0f ms, %d bytes, failed step %d %q, screenshot %d bytes",
		res.Duration.Round(time.Millisecond), res.INP, res.TBT, res.CLS, res.CPUTotal, res.BytesTotal,
		res.FailedStep, res.Error, len(res.Screenshot))
	return res
}

func passed(t *testing.T, res Result) {
	t.Helper()
	if res.FailedStep != -1 || res.Error != "" || res.Screenshot != nil {
		t.Fatalf("the run failed at step %d: %s", res.FailedStep, res.Error)
	}
}

func navigate(target string) step.Step { return step.Step{Type: "navigate", Target: target} }

func TestSlowClickThatNavigates(t *testing.T) {
	f := newFixture(t)
	opts := options(t, f.URL)
	var rss, pss int64
	opts.beforeClose = func(s *browser.Session) {
		rss, pss = memory(s, opts.Browser.TempRoot)
	}
	res := run(t, opts,
		navigate("/slow-click.html"),
		step.Step{Type: "click", Target: "#buy", WaitForNavigation: true, WaitUntil: "load"},
		step.Step{Type: "waitForSelector", Target: "#done"},
	)
	passed(t, res)
	t.Logf("memory of the session's processes at the end: sum of peak RSS (VmHWM) %d MB, sum of PSS %d MB", rss>>20, pss>>20)
	// The handler busy-waits 200 ms: the interaction lasts at least that, and so does a long
	// task (150 ms of it beyond 50 ms).
	if res.INP < 200 {
		t.Errorf("INP %.1f ms, want at least the 200 ms the handler blocks", res.INP)
	}
	if res.TBT <= 100 {
		t.Errorf("TBT %.1f ms, want more than 100", res.TBT)
	}
	if res.CPUTotal < 200 {
		t.Errorf("CPU %.1f ms, want at least the 200 ms busy-wait of the document that navigated", res.CPUTotal)
	}
	if res.BytesTotal <= 0 || res.Duration <= 0 {
		t.Errorf("bytes %d, duration %v: want both positive", res.BytesTotal, res.Duration)
	}
}

func TestFormTypedSelectedAndSubmitted(t *testing.T) {
	f := newFixture(t)
	opts := options(t, f.URL)
	opts.Device = DeviceMobile
	// "ë" and "–" are not on rod's keyboard: they go in as inserted text, the rest as key presses.
	name := `Zoë "Ada" – O'Neil`
	res := run(t, opts,
		navigate("/form.html"),
		step.Step{Type: "type", Target: "#name", Value: name},
		step.Step{Type: "select", Target: "#size", Value: "Large"},  // by text
		step.Step{Type: "select", Target: "#colour", Value: "blue"}, // by value
		step.Step{Type: "click", Target: "#send", WaitForNavigation: true, WaitUntil: "domcontentloaded"},
		step.Step{Type: "waitForSelector", Target: `#greeting[data-name="Zoë \"Ada\" – O'Neil"][data-size="l"][data-colour="blue"]`},
	)
	passed(t, res)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.agents) != 1 || !strings.Contains(f.agents[0], "Mobile") || strings.Contains(f.agents[0], "Headless") {
		t.Errorf("user agents of /submit: %q, want one mobile, not headless", f.agents)
	}
	// Typing is key presses: interactions that Event Timing may or may not find long enough
	// to report (16 ms), so INP is only logged.
}

func TestLateLayoutShift(t *testing.T) {
	f := newFixture(t)
	res := run(t, options(t, f.URL),
		navigate("/shift.html"),
		step.Step{Type: "waitForSelector", Target: "#banner"},
		step.Step{Type: "wait", Value: "200"},
	)
	passed(t, res)
	if res.CLS <= 0 {
		t.Errorf("CLS %v, want above 0", res.CLS)
	}
}

func TestMissingSelectorFailsTheStep(t *testing.T) {
	f := newFixture(t)
	opts := options(t, f.URL)
	opts.StepTimeout = 2 * time.Second
	res := run(t, opts,
		navigate("/done.html"),
		step.Step{Type: "click", Target: "#nope"},
		step.Step{Type: "waitForSelector", Target: "#done"},
	)
	failedAt(t, res, 1, "step 2 (click #nope): no element matches the selector within 2 s")
	if !bytes.HasPrefix(res.Screenshot, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot is not a PNG (%d bytes)", len(res.Screenshot))
	} else if _, err := png.Decode(bytes.NewReader(res.Screenshot)); err != nil {
		t.Errorf("screenshot: %v", err)
	}
}

func TestBytesAndCPU(t *testing.T) {
	f := newFixture(t)
	res := run(t, options(t, f.URL),
		step.Step{Type: "navigate", Target: f.URL + "/heavy.html", WaitUntil: "networkidle0"},
		step.Step{Type: "scroll"},
	)
	passed(t, res)
	t.Logf("images: %d + %d bytes", len(f.noise), len(f.frameNoise))
	// The iframe is cross-site (localhost under 127.0.0.1): its image is counted only if the
	// iframe's own session is.
	if min := int64(len(f.noise) + len(f.frameNoise)); res.BytesTotal < min {
		t.Errorf("bytes %d, want at least the two images' %d (%d + %d)", res.BytesTotal, min, len(f.noise), len(f.frameNoise))
	}
	if res.CPUTotal <= 0 {
		t.Errorf("CPU %v, want above 0", res.CPUTotal)
	}
}

func TestInvalidSelector(t *testing.T) {
	f := newFixture(t)
	res := run(t, options(t, f.URL), navigate("/done.html"), step.Step{Type: "click", Target: "h1[["})
	if res.FailedStep != 1 || !strings.HasPrefix(res.Error, "step 2 (click h1[[): invalid selector: ") {
		t.Errorf("failed step %d, error %q: want step 1, invalid selector", res.FailedStep, res.Error)
	}
}

func TestCoveredElement(t *testing.T) {
	f := newFixture(t)
	opts := options(t, f.URL)
	opts.StepTimeout = 2 * time.Second
	res := run(t, opts, navigate("/overlay.html"), step.Step{Type: "click", Target: "#buy"})
	failedWith(t, res, "step 2 (click #buy): the element was not ready within 2 s: it is covered by <div#overlay>")
}

// TestClickThatNavigates: a click's navigation is followed to the next page whether the click
// opens a dialog first (accepted) or follows a link (until the network is idle).
func TestClickThatNavigates(t *testing.T) {
	for _, c := range []struct {
		name, page string
		click      step.Step
	}{
		{"dialog", "/dialog.html", step.Step{Type: "click", Target: "#buy", WaitForNavigation: true}},
		{"link", "/link.html", step.Step{Type: "click", Target: "#next", WaitForNavigation: true, WaitUntil: "networkidle2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			passed(t, run(t, options(t, f.URL), navigate(c.page), c.click, step.Step{Type: "waitForSelector", Target: "#done"}))
		})
	}
}

func TestNetworkIdleWaitsForLateRequests(t *testing.T) {
	f := newFixture(t)
	res := run(t, options(t, f.URL),
		step.Step{Type: "navigate", Target: "/idle.html", WaitUntil: "networkidle0"},
		navigate("/done.html"),
	)
	passed(t, res)
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Join(f.order, ",") != "/slow done,/done.html" {
		t.Errorf("requests %q: the next step went before the page's network was idle", f.order)
	}
}

func TestNothingOutlivesTheRun(t *testing.T) {
	f := newFixture(t)
	opts := options(t, f.URL)
	root := opts.Browser.TempRoot
	var during []int
	opts.onLaunch = func(s *browser.Session) { during = sessionProcesses(s.PID(), root) }
	res := run(t, opts, navigate("/done.html"), step.Step{Type: "click", Target: "#done"})
	passed(t, res)
	if len(during) == 0 {
		t.Fatal("found no process of the session while it ran: the check below would prove nothing")
	}
	if left := sessionProcesses(0, root); len(left) > 0 {
		t.Errorf("processes %v of the session outlived the run", left)
	}
	for _, pid := range during {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			if st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !bytes.Contains(st, []byte(") Z ")) {
				t.Errorf("process %d, seen during the run, still lives", pid)
			}
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("the temp root still holds %d entries, such as %s", len(entries), entries[0].Name())
	}
}

func TestNavigateToRefusedHost(t *testing.T) {
	f := newFixture(t)
	opts := options(t, f.URL)
	opts.Browser.Guard = browser.Guard{} // production policy: no loopback
	res := run(t, opts, navigate(f.URL+"/done.html"))
	failedAt(t, res, 0, "step 1 (navigate "+f.URL+"/done.html): could not load "+f.URL+"/done.html: refused: 127.0.0.1 is a loopback address")
}

// failedAt checks that a run failed at its step i (from 0) with the error want.
func failedAt(t *testing.T, res Result, i int, want string) {
	t.Helper()
	if res.FailedStep != i {
		t.Fatalf("failed step %d, want %d", res.FailedStep, i)
	}
	failedWith(t, res, want)
}

// failedWith checks that a run's error is want.
func failedWith(t *testing.T, res Result, want string) {
	t.Helper()
	if res.Error != want {
		t.Errorf("error %q, want %q", res.Error, want)
	}
}

func TestClickToRefusedHost(t *testing.T) {
	f := newFixture(t)
	// Loopback is allowed, link-local never: the click's navigation goes to the proxy, which
	// refuses it; the step says so rather than "HTTP 403".
	res := run(t, options(t, f.URL),
		navigate("/metadata.html"),
		step.Step{Type: "click", Target: "#meta", WaitForNavigation: true},
	)
	failedAt(t, res, 1, "step 2 (click #meta): could not load http://169.254.169.254/latest/meta-data/: refused: 169.254.169.254 is a link-local address")
}

func TestHTTPErrorFailsTheNavigation(t *testing.T) {
	f := newFixture(t)
	res := run(t, options(t, f.URL), navigate("/missing"))
	failedWith(t, res, "step 1 (navigate /missing): "+f.URL+"/missing answered HTTP 404")
}

func TestRunTimeout(t *testing.T) {
	f := newFixture(t)
	opts := options(t, f.URL)
	opts.RunTimeout = 8 * time.Second
	res := run(t, opts, navigate("/done.html"), step.Step{Type: "wait", Value: "60000"})
	failedWith(t, res, "step 2 (wait 60000 ms): the run took longer than its limit of 8 s")
	if len(res.Screenshot) == 0 {
		t.Error("no screenshot of a run that timed out")
	}
}

// sessionProcesses lists live processes of a session: members of process group pgid (when not
// 0) and processes whose environment marks them as a session's under root (Launch sets
// OPENVITALS_BROWSER_SESSION to the session's directory, which is under root).
func sessionProcesses(pgid int, root string) []int {
	entries, _ := os.ReadDir("/proc")
	marker := []byte("OPENVITALS_BROWSER_SESSION=" + root + "/")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		group, _ := strconv.Atoi(fields[2])
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if (pgid > 0 && group == pgid) || bytes.Contains(env, marker) {
			out = append(out, pid)
		}
	}
	return out
}

// memory sums, over the session's processes, the peak resident set (VmHWM) and the current
// proportional set (Pss). Pages shared between the processes (the binary, shared memory) count
// once per process in the first, which overstates the real peak; the second splits them.
func memory(s *browser.Session, root string) (peakRSS, pss int64) {
	field := func(path, name string) int64 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, name+":"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				return kb << 10
			}
		}
		return 0
	}
	for _, pid := range sessionProcesses(s.PID(), root) {
		proc := "/proc/" + strconv.Itoa(pid)
		peakRSS += field(proc+"/status", "VmHWM")
		pss += field(proc+"/smaps_rollup", "Pss")
	}
	return peakRSS, pss
}
