//go:build linux

package lighthouse

// These tests run real Lighthouse 13.5 (layers/browser) against real Chromium on the fixture site
// in testdata/site, served on 127.0.0.1. Each Lighthouse run takes several seconds here, so the
// whole file makes four: desktop, mobile, an unreachable URL and the page whose content moves
// (shift.html). They are skipped with -short.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// chromiumFlags are the flags every openvitals Chromium runs with, as browser.Options launches
// it: headless without sandbox or GPU, nothing in the background, and /dev/shm left alone
// (Debian's wrapper never adds --disable-dev-shm-usage itself).
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage",
}

// startChromium launches a fresh headless Chromium and returns its DevTools port and a stop
// function (also run at the test's end). A small stand-in for internal/browser, which launches
// the production one: a new process group so every Chromium child dies with it, and a
// user-data-dir, TMPDIR and XDG_CONFIG_HOME (where Debian's Chromium puts its crashpad
// database, whatever the user-data-dir) all inside one directory removed afterwards. extraFlags
// are added to chromiumFlags.
func startChromium(t *testing.T, extraFlags ...string) (port int, stop func()) {
	t.Helper()
	bin := os.Getenv("OPENVITALS_CHROMIUM")
	if bin == "" {
		bin = "/usr/lib/chromium/chromium"
	}
	requireFile(t, bin)
	dir, err := os.MkdirTemp("", "openvitals-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	profile, tmp := filepath.Join(dir, "profile"), filepath.Join(dir, "tmp")
	for _, d := range []string{profile, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	args := append(slices.Concat(chromiumFlags, extraFlags), "--user-data-dir="+profile, "--remote-debugging-port=0", "about:blank")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			err := os.RemoveAll(dir)
			if err != nil {
				// The crashpad handler runs in its own process group and leaves on its own
				// once the browser is gone; give it a moment if it was still writing.
				time.Sleep(500 * time.Millisecond)
				err = os.RemoveAll(dir)
			}
			if err != nil {
				t.Errorf("remove Chromium's directory: %v", err)
			}
		})
	}
	t.Cleanup(stop)

	// Chromium writes the port it picked to DevToolsActivePort once DevTools listens. The
	// deadline only bounds a broken start; it asserts nothing about speed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err == nil {
			if line, _, ok := strings.Cut(string(b), "\n"); ok {
				if port, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && port > 0 {
					return port, stop
				}
			}
		}
		select {
		case <-exited:
			t.Fatalf("Chromium exited at start: %s", stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop() // before reading stderr, which Chromium writes until it exits
			t.Fatalf("Chromium wrote no DevToolsActivePort: %s", stderr.String())
		}
	}
}

// newTestRunner starts nothing yet: the process starts on the first call, as in production.
func newTestRunner(t *testing.T) *Runner {
	t.Helper()
	if testing.Short() {
		t.Skip("real Lighthouse runs take several seconds each")
	}
	cfg := DefaultRunnerConfig(moduleRoot(t))
	requireFile(t, cfg.Node)
	requireFile(t, cfg.Script)
	cfg.Log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := NewRunner(cfg)
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// testWriter sends the runner's log to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func serveFixture(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("testdata", "site"))))
	t.Cleanup(srv.Close)
	return srv
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join("testdata", "site", name))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// fixtureDOM counts the fixture's elements (all, and from <body> down) and its greatest depth
// below <body> (body's children at 1), by parsing it as a browser would.
func fixtureDOM(t *testing.T) (all, body, depth int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "site", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *html.Node, inBody bool, d int)
	walk = func(n *html.Node, inBody bool, d int) {
		if n.Type == html.ElementNode {
			all++
			if n.Data == "body" {
				inBody, d = true, 0
			}
			if inBody {
				body++
				depth = max(depth, d)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody, d+1)
		}
	}
	walk(doc, false, 0)
	return all, body, depth
}

// audit runs one audit on a fresh browser and parses the report.
func audit(t *testing.T, r *Runner, url, device string) (Meta, *Report) {
	t.Helper()
	meta, _, _, rep := auditFiles(t, r, url, device)
	return meta, rep
}

// auditFiles is audit, with where the report was written and its bytes.
func auditFiles(t *testing.T, r *Runner, url, device string) (meta Meta, out string, lhr []byte, rep *Report) {
	t.Helper()
	// A fresh browser per audit: a reused one carries state (caches) from run to run.
	port, stop := startChromium(t)
	defer stop()
	out = filepath.Join(t.TempDir(), device+".json")
	start := time.Now()
	meta, err := r.Audit(context.Background(), AuditRequest{URL: url, Port: port, Device: device, ReportPath: out})
	if err != nil {
		t.Fatalf("Audit(%s, %s): %v", url, device, err)
	}
	t.Logf("%s audit of %s: %s", device, url, time.Since(start).Round(time.Millisecond))
	lhr, err = os.ReadFile(out)
	if err != nil {
		t.Fatalf("no report written: %v", err)
	}
	rep, err = parse(lhr)
	if err != nil {
		t.Fatal(err)
	}
	if meta.LighthouseVersion == "" || meta.LighthouseVersion != rep.LighthouseVersion {
		t.Errorf("Meta version %q, report version %q", meta.LighthouseVersion, rep.LighthouseVersion)
	}
	return meta, out, lhr, rep
}

// checkFixtureReport checks what the fixture makes certain.
func checkFixtureReport(t *testing.T, rep *Report, device string) {
	t.Helper()
	if rep.RuntimeError != nil {
		t.Fatalf("runtime error: %v", rep.RuntimeError)
	}
	if rep.FormFactor != device {
		t.Errorf("configSettings.formFactor = %q, want %q", rep.FormFactor, device)
	}
	if len(rep.Missing) != 0 {
		t.Errorf("missing values: %v", rep.Missing)
	}
	if rep.FCP == nil || *rep.FCP <= 0 || rep.LCP == nil || *rep.LCP < *rep.FCP {
		t.Errorf("FCP %v, LCP %v: want 0 < FCP <= LCP", deref(rep.FCP), deref(rep.LCP))
	}
	if rep.TTI == nil || *rep.TTI <= 0 || rep.SpeedIndex == nil || *rep.SpeedIndex <= 0 {
		t.Errorf("TTI %v, Speed Index %v", deref(rep.TTI), deref(rep.SpeedIndex))
	}
	// The banner app.js inserts after load shifts the page.
	if rep.CLS == nil || *rep.CLS <= 0 {
		t.Errorf("CLS %v, want > 0", deref(rep.CLS))
	}
	if rep.TBT == nil || *rep.TBT < 0 || rep.TTFB == nil || *rep.TTFB < 0 || rep.ServerTime == nil || *rep.ServerTime < 0 {
		t.Errorf("TBT %v, TTFB %v, server time %v", deref(rep.TBT), deref(rep.TTFB), deref(rep.ServerTime))
	}
	if rep.CPUTotal == nil || *rep.CPUTotal <= 0 {
		t.Errorf("CPU total %v", deref(rep.CPUTotal))
	}
	if rep.DOMReady == nil || rep.OnLoad == nil || *rep.OnLoad < *rep.DOMReady {
		t.Errorf("DOM ready %v, on load %v", deref(rep.DOMReady), deref(rep.OnLoad))
	}
	for name, s := range map[string]*float64{"performance": rep.Performance, "accessibility": rep.Accessibility,
		"best-practices": rep.BestPractices, "seo": rep.SEO} {
		if s == nil || *s < 0 || *s > 100 {
			t.Errorf("%s score %v, want 0..100", name, deref(s))
		}
	}

	hero, css, js, doc := fileSize(t, "hero.jpg"), fileSize(t, "style.css"), fileSize(t, "app.js"), fileSize(t, "index.html")
	if rep.KBTotal == nil || *rep.KBTotal*1024 < float64(hero+css+js+doc) {
		t.Errorf("KBTotal %v does not cover the fixture's %d bytes", deref(rep.KBTotal), hero+css+js+doc)
	}
	n := rep.Network
	if n == nil {
		t.Fatal("no network bytes")
	}
	// Transfer sizes include response headers, so each is at least its file's size.
	if n.Image < hero || n.CSS < css || n.Script < js || n.Document < doc || n.Total < n.Image+n.CSS+n.Script+n.Document {
		t.Errorf("network bytes %+v; files: image %d, css %d, script %d, document %d", *n, hero, css, js, doc)
	}
	if n.Font != 0 || n.Media != 0 || n.ThirdParty != 0 {
		t.Errorf("network bytes %+v: the fixture has no fonts, media or third parties", *n)
	}

	// Lighthouse counts the elements it saw in the trace (the body's subtree and <html> here, the
	// late banner possibly included): between the body's count and everything plus the banner.
	all, body, depth := fixtureDOM(t)
	if rep.DOMElements == nil || *rep.DOMElements < body || *rep.DOMElements > all+1 {
		t.Errorf("DOM elements %v, want %d..%d", derefInt(rep.DOMElements), body, all+1)
	}
	if rep.DOMMaxDepth == nil || *rep.DOMMaxDepth < depth-1 || *rep.DOMMaxDepth > depth+1 {
		t.Errorf("DOM max depth %v, want about %d", derefInt(rep.DOMMaxDepth), depth)
	}

	// The render-blocking stylesheet and script, and the <li> outside a list.
	cats := map[string]string{}
	for _, o := range rep.Opportunities {
		cats[o.ID] = o.Category
		if !slices.Contains([]string{CategoryPerformance, CategoryAccessibility, CategoryBestPractices, CategorySEO}, o.Category) {
			t.Errorf("opportunity %s has category %q", o.ID, o.Category)
		}
	}
	if cats["render-blocking-insight"] != CategoryPerformance || cats["listitem"] != CategoryAccessibility {
		t.Errorf("opportunities %v: want render-blocking-insight (performance) and listitem (accessibility)", cats)
	}
}

// TestRunnerAudits runs the fixture on desktop and mobile with one runner, killing the runner
// between the two: the second audit must restart it without the caller noticing.
func TestRunnerAudits(t *testing.T) {
	r := newTestRunner(t)
	srv := serveFixture(t)

	_, desktop := audit(t, r, srv.URL+"/", DeviceDesktop)
	checkFixtureReport(t, desktop, DeviceDesktop)

	// html-validate, "html-validate:standard": the four errors marked in index.html.
	page, err := os.ReadFile(filepath.Join("testdata", "site", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.ValidateHTML(context.Background(), page)
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, m := range v.Messages {
		rules = append(rules, m.RuleID)
		if m.Message == "" || m.Line <= 0 {
			t.Errorf("message %+v lacks text or line", m)
		}
	}
	slices.Sort(rules)
	want := []string{"element-permitted-content", "element-permitted-content", "element-permitted-parent", "no-dup-id"}
	if v.Errors != 4 || !slices.Equal(rules, want) {
		t.Errorf("validation: %d errors %v, want 4 %v", v.Errors, rules, want)
	}

	pid := r.pid()
	killAndWait(t, r)
	_, mobile := audit(t, r, srv.URL+"/", DeviceMobile)
	checkFixtureReport(t, mobile, DeviceMobile)
	if got := r.pid(); got == 0 || got == pid {
		t.Errorf("runner pid %d after kill, was %d: want a new process", got, pid)
	}
	// Lighthouse's mobile default throttles (simulated slow 4G, 4x CPU); desktop barely does.
	if *mobile.FCP <= *desktop.FCP {
		t.Errorf("mobile FCP %v <= desktop FCP %v", *mobile.FCP, *desktop.FCP)
	}
}

// killAndWait kills the runner's process as a crash would, and waits until it is reaped so the
// next call finds it dead rather than dying under it.
func killAndWait(t *testing.T, r *Runner) {
	t.Helper()
	r.mu.Lock()
	p := r.proc
	r.mu.Unlock()
	if p == nil {
		t.Fatal("no runner process to kill")
	}
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

func TestRunnerRestartsAfterKill(t *testing.T) {
	r := newTestRunner(t)
	ctx := context.Background()
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	first := r.pid()
	// Killed and reaped between calls: the next call starts a new process.
	killAndWait(t, r)
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("Ping after kill: %v", err)
	}
	second := r.pid()
	if second == 0 || second == first {
		t.Fatalf("pid %d after kill, was %d", second, first)
	}
	// Killed with no wait at all: whether the call finds it dead, cannot write to it, or sees
	// it exit while waiting, a validation still succeeds.
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	v, err := r.ValidateHTML(ctx, []byte(`<!doctype html><html lang="en"><head><title>t</title></head><body><p id="a"></p><p id="a"></p></body></html>`))
	if err != nil {
		t.Fatalf("ValidateHTML right after kill: %v", err)
	}
	if v.Errors != 1 || len(v.Messages) != 1 || v.Messages[0].RuleID != "no-dup-id" {
		t.Errorf("validation %+v, want one no-dup-id", v)
	}
	if third := r.pid(); third == second || third == 0 {
		t.Errorf("pid %d, want a process other than %d", third, second)
	}
}

// TestAuditCancel cancels an audit while Lighthouse waits for the page: the runner is killed,
// the call returns the context's error, and the next call gets a new runner.
func TestAuditCancel(t *testing.T) {
	r := newTestRunner(t)
	arrived := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		once.Do(func() { close(arrived) })
		select { // hold the page until the test ends
		case <-release:
		case <-req.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	port, _ := startChromium(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-arrived
		cancel()
	}()
	before := time.Now()
	_, err := r.Audit(ctx, AuditRequest{URL: srv.URL + "/", Port: port, Device: DeviceDesktop, ReportPath: filepath.Join(t.TempDir(), "r.json")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Audit with cancelled context: err = %v", err)
	}
	t.Logf("cancelled after %s", time.Since(before).Round(time.Millisecond))
	if r.pid() != 0 {
		t.Error("runner still registered after a cancelled audit")
	}
	if err := r.Ping(context.Background()); err != nil {
		t.Fatalf("Ping after cancel: %v", err)
	}
}

// An unreachable URL is Lighthouse's runtime error, reported in Meta and in the report.
func TestAuditUnreachable(t *testing.T) {
	r := newTestRunner(t)
	// A port that was just listening and is now closed: connection refused.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/"
	srv.Close()

	meta, rep := audit(t, r, url, DeviceDesktop)
	if meta.RuntimeError == nil || meta.RuntimeError.Code == "" {
		t.Fatalf("Meta.RuntimeError = %+v, want a code", meta.RuntimeError)
	}
	t.Logf("runtime error %s: %s", meta.RuntimeError.Code, meta.RuntimeError.Message)
	if rep.RuntimeError == nil || *rep.RuntimeError != *meta.RuntimeError {
		t.Errorf("report runtime error %+v, Meta %+v", rep.RuntimeError, meta.RuntimeError)
	}
	if rep.FCP != nil || rep.Performance != nil || !slices.Contains(rep.Missing, "fcp") {
		t.Errorf("values from a failed load: FCP %v, performance %v", deref(rep.FCP), deref(rep.Performance))
	}
}

// A runner whose browser is gone answers with an error, not a hang or a crash.
func TestAuditNoBrowser(t *testing.T) {
	r := newTestRunner(t)
	// A port nothing listens on: httptest picked it, then released it.
	srv := httptest.NewServer(http.NotFoundHandler())
	port, err := strconv.Atoi(srv.URL[strings.LastIndex(srv.URL, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	_, err = r.Audit(context.Background(), AuditRequest{URL: "http://127.0.0.1/", Port: port, Device: DeviceMobile, ReportPath: filepath.Join(t.TempDir(), "r.json")})
	if err == nil {
		t.Fatal("Audit without a browser succeeded")
	}
	t.Logf("error: %v", err)
	// The runner survives a failed request.
	if err := r.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestAuditLayoutShifts audits the fixture's shift.html, whose content moves twice as it loads
// (an unsized image, a tall banner inserted after load) and whose stylesheet and script each
// load another: the report's opportunities hold the layout shift culprits and the network
// dependency tree, with details a reader can show and the savings Lighthouse estimates.
func TestAuditLayoutShifts(t *testing.T) {
	r := newTestRunner(t)
	srv := serveFixture(t)
	port, stop := startChromium(t)
	defer stop()
	out := filepath.Join(t.TempDir(), "shift.json")
	if _, err := r.Audit(context.Background(), AuditRequest{URL: srv.URL + "/shift.html", Port: port, Device: DeviceDesktop, ReportPath: out}); err != nil {
		t.Fatal(err)
	}
	lhr, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := parse(lhr)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CLS == nil || *rep.CLS < 0.1 {
		t.Errorf("CLS %v, want a poor one (0.1 and more)", deref(rep.CLS))
	}
	opps := map[string]Opportunity{}
	for _, o := range rep.Opportunities {
		opps[o.ID] = o
		t.Logf("%s (score %v): %v ms, %v bytes, %v", o.ID, o.Score, o.SavingsMs, o.SavingsBytes, o.MetricSavings)
	}
	for _, id := range []string{"cls-culprits-insight", "network-dependency-tree-insight"} {
		if _, ok := opps[id]; !ok {
			t.Errorf("%s is no opportunity", id)
		}
	}
	// The uncached hero: cache-insight's bytes are the wasted bytes its details carry.
	if c := opps["cache-insight"]; c.SavingsBytes < float64(fileSize(t, "hero.jpg")) || c.MetricSavings == nil {
		t.Errorf("cache-insight savings %v bytes, %v: want at least the hero's %d bytes", c.SavingsBytes, c.MetricSavings, fileSize(t, "hero.jpg"))
	}

	// The culprits: a list holding a table whose rows are elements (node values), the unsized
	// image a sub-row with its cause.
	var culprits struct {
		Details struct {
			Type  string `json:"type"`
			Items []struct {
				Type  string `json:"type"`
				Items []struct {
					Node     struct{ Type, Selector string } `json:"node"`
					SubItems struct {
						Items []struct {
							Extra struct{ Type, Selector string } `json:"extra"`
							Cause string                          `json:"cause"`
						} `json:"items"`
					} `json:"subItems"`
				} `json:"items"`
			} `json:"items"`
		} `json:"details"`
	}
	decodeAudit(t, lhr, "cls-culprits-insight", &culprits)
	found := false
	for _, list := range culprits.Details.Items {
		for _, row := range list.Items {
			for _, sub := range row.SubItems.Items {
				found = found || (row.Node.Type == "node" && sub.Extra.Type == "node" && strings.Contains(sub.Extra.Selector, "img.late") && sub.Cause != "")
			}
		}
	}
	if culprits.Details.Type != "list" || !found {
		t.Errorf("cls-culprits-insight details %+v: want a list with a table naming the unsized image and its cause", culprits.Details)
	}

	// The tree: shift.html holds shift.css, which holds shift-base.css it imports, each with
	// its time and size (which chain is the longest varies from run to run: the script's or the
	// stylesheets').
	var tree struct {
		Details struct {
			Type  string `json:"type"`
			Items []struct {
				Type  string `json:"type"`
				Value struct {
					Type   string               `json:"type"`
					Chains map[string]chainNode `json:"chains"`
				} `json:"value"`
			} `json:"items"`
		} `json:"details"`
	}
	decodeAudit(t, lhr, "network-dependency-tree-insight", &tree)
	found = false
	for _, sec := range tree.Details.Items {
		if sec.Type == "list-section" && sec.Value.Type == "network-tree" {
			found = found || hasPath(sec.Value.Chains, "/shift.html", "/shift.css", "/shift-base.css")
		}
	}
	if !found {
		t.Errorf("network-dependency-tree-insight details %+v: no shift.html > shift.css > shift-base.css with times and sizes", tree.Details)
	}
}

// chainNode is a request of Lighthouse's network-tree details.
type chainNode struct {
	URL               string               `json:"url"`
	NavStartToEndTime float64              `json:"navStartToEndTime"`
	TransferSize      float64              `json:"transferSize"`
	Children          map[string]chainNode `json:"children"`
}

// hasPath tells whether the chains hold requests ending in paths, each the child of the one
// before, with their times and sizes.
func hasPath(chains map[string]chainNode, paths ...string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, n := range chains {
		if strings.HasSuffix(n.URL, paths[0]) && n.TransferSize > 0 && n.NavStartToEndTime > 0 && hasPath(n.Children, paths[1:]...) {
			return true
		}
	}
	return false
}

// decodeAudit decodes one audit of a report into v.
func decodeAudit(t *testing.T, lhr []byte, id string, v any) {
	t.Helper()
	var l struct {
		Audits map[string]json.RawMessage `json:"audits"`
	}
	if err := json.Unmarshal(lhr, &l); err != nil {
		t.Fatal(err)
	}
	raw, ok := l.Audits[id]
	if !ok {
		t.Fatalf("no audit %s", id)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", id, err)
	}
}

// TestRunnerBenchmark: the runner measures a browser's speed with Lighthouse's own benchmark,
// on the scale of the reports' environment.benchmarkIndex (hundreds to a few thousands on
// anything that runs Chromium), and leaves the browser open for the run that follows.
func TestRunnerBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	r := newTestRunner(t)
	port, _ := startChromium(t)
	index, err := r.Benchmark(context.Background(), port)
	if err != nil {
		t.Fatal(err)
	}
	if index < 50 || index > 10000 {
		t.Errorf("benchmark index %v, want a machine's (50 to 10,000)", index)
	}
	t.Logf("benchmark index %v", index)
	if _, err := r.Benchmark(context.Background(), port); err != nil {
		t.Errorf("second benchmark on the same browser: %v", err)
	}
}

// TestRunnerReusesConfig: the runner resolves Lighthouse's config once per device and settings
// and gives each run fresh gatherers. Two audits of the fixture in a row with one runner: the
// second resolves no config (no lh:config mark), and its load is its own: as many requests
// and DevTools messages as the first (a gatherer kept from the first run would hold both
// loads'), its categories titled as the first's.
func TestRunnerReusesConfig(t *testing.T) {
	r := newTestRunner(t)
	srv := serveFixture(t)
	type run struct {
		marks    []string
		requests int
		messages int
		titles   map[string]string
	}
	runs := make([]run, 2)
	for i := range runs {
		_, out, lhr, rep := auditFiles(t, r, srv.URL+"/", DeviceDesktop)
		checkFixtureReport(t, rep, DeviceDesktop)
		var l struct {
			Timing struct {
				Entries []struct{ Name string } `json:"entries"`
			} `json:"timing"`
			Categories map[string]struct{ Title string } `json:"categories"`
		}
		if err := json.Unmarshal(lhr, &l); err != nil {
			t.Fatal(err)
		}
		runs[i].titles = map[string]string{}
		for id, c := range l.Categories {
			runs[i].titles[id] = c.Title
		}
		for _, e := range l.Timing.Entries {
			runs[i].marks = append(runs[i].marks, e.Name)
		}
		var requests struct {
			Details struct {
				Items []json.RawMessage `json:"items"`
			} `json:"details"`
		}
		decodeAudit(t, lhr, "network-requests", &requests)
		runs[i].requests = len(requests.Details.Items)
		var log []json.RawMessage
		b, err := os.ReadFile(DevtoolsLogPath(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &log); err != nil {
			t.Fatal(err)
		}
		runs[i].messages = len(log)
	}
	first, second := runs[0], runs[1]
	if !slices.Contains(first.marks, "lh:config") || slices.Contains(second.marks, "lh:config") {
		t.Errorf("lh:config in the first run %v, in the second %v: want the first only", slices.Contains(first.marks, "lh:config"), slices.Contains(second.marks, "lh:config"))
	}
	if first.requests == 0 || second.requests != first.requests {
		t.Errorf("requests: first run %d, second %d: want the same, not 0", first.requests, second.requests)
	}
	// A load's DevTools messages vary a little (timers, frames), but not twofold.
	if first.messages == 0 || second.messages > first.messages*3/2 || second.messages < first.messages*2/3 {
		t.Errorf("DevTools messages: first run %d, second %d", first.messages, second.messages)
	}
	if len(first.titles) != 4 || !maps.Equal(first.titles, second.titles) {
		t.Errorf("categories: first run %v, second %v", first.titles, second.titles)
	}
	t.Logf("requests %d, %d; DevTools messages %d, %d; categories %v", first.requests, second.requests, first.messages, second.messages, second.titles)
}
