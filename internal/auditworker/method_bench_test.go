package auditworker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// Lambda's list price (us-east-1, arm64) and the audit worker's memory (infra/audit.go,
// defaultAuditMemoryMB), for the cost of a page.
const (
	lambdaUSDPerGBs   = 0.0000133334
	auditWorkerMemory = 3008.0 / 1024 // GB
)

// BenchmarkAuditMethod measures what the measurement method costs and how steady it is: whole
// audits as the deployed worker makes them (-runs Lighthouse runs each, 3 by default: the
// worker's own path, browser, Lighthouse, HTML report, diagnostics, frames, validation,
// storage), by simulated and by applied throttling, on desktop and mobile, one after another
// on one warm worker, of three pages: the demo shop's home and products pages as version 2.4
// serves them (internal/demoshop, a 700 KB hero on the home page) and the fixture page, a
// heavier one (render-blocking script and stylesheet, a third-party script, a late banner, a
// 700 KB hero), and the diagnostics' long-task fixture (a script that blocks the main thread
// 300 ms: what TBT measures). Per method, device and page it reports the audit's wall time (mean, s),
// Lighthouse's own timing.total of the median run, the audit's wall time over that total
// times the runs, the coefficient of variation (%) of every run's LCP, FCP, TBT, CLS and Speed
// Index over all the audits' runs, the applied runs' benchmark index and CPU multiplier, the
// bytes stored for the day (reports; frames and diagnostics) and the Lambda price of the page
// on that device for a month: 30 audits × the audit's wall time × the audit worker's memory ×
// Lambda's GB-second price. -audits sets how many audits each (default 2); with -short, one
// applied mobile audit of one run of the shop's home page.
func BenchmarkAuditMethod(b *testing.B) {
	e := newBenchEnv(b)
	ctx := context.Background()
	shop, err := demoshop.New()
	if err != nil {
		b.Fatal(err)
	}
	shop.Deploy()
	shopServer := httptest.NewServer(shop)
	b.Cleanup(shopServer.Close)
	shopHost := strings.TrimPrefix(shopServer.URL, "http://")

	type target struct {
		name string
		site model.Website
		page model.Page
	}
	// A website of each method on each host (one account per website: a domain is unique in
	// its account).
	targets := map[string][]target{}
	longTaskHost := serveAgreementFixtures(b)
	for _, m := range []string{model.MethodSimulated, model.MethodApplied} {
		for _, host := range []string{shopHost, e.site.Domain, longTaskHost} {
			site, _ := awstest.Website(b, e.store, model.Website{Account: "acme-" + m + "-" + host, Domain: host, Method: m}, nil)
			var pages []model.Page
			switch host {
			case shopHost:
				pages = []model.Page{{URL: demoshop.Paths[0], Alias: "shop-home"}, {URL: demoshop.Paths[1], Alias: "shop-products"}}
			case longTaskHost:
				pages = []model.Page{{URL: "/longtask.html", Alias: "fixture-longtask"}}
			default:
				pages = []model.Page{{URL: "/", Alias: "fixture-heavy"}}
			}
			if err := e.store.CreatePages(ctx, site, pages); err != nil {
				b.Fatal(err)
			}
			for _, p := range pages {
				targets[m] = append(targets[m], target{p.Alias, site, p})
			}
		}
	}
	memoryGB := auditWorkerMemory
	// The memory a case peaked at in the function's cgroup (nil: not limited), and how often
	// the processes' PSS is sampled: less often in a CPU share, which the sampling takes from.
	var cgroupPeak func() int64
	sampleEvery := 200 * time.Millisecond
	if *lambdaMemory > 0 {
		lambdaCPU(b, *lambdaMemory)
		cgroupPeak = lambdaMemoryLimit(b, *lambdaMemory)
		memoryGB = float64(*lambdaMemory) / 1024
		sampleEvery = time.Second
	}
	runs := *methodRuns
	w := e.worker(b, runs)
	e.warmUp(b)

	type methodCase struct {
		method, device string
		target         target
	}
	var cases []methodCase
	for _, m := range []string{model.MethodSimulated, model.MethodApplied} {
		for _, d := range []string{"desktop", "mobile"} {
			for _, t := range targets[m] {
				if methodPages.MatchString(t.name) {
					cases = append(cases, methodCase{m, d, t})
				}
			}
		}
	}
	audits := *methodAudits
	if testing.Short() {
		audits, runs = 1, 1
		w = e.worker(b, 1)
		cases = []methodCase{{model.MethodApplied, "mobile", targets[model.MethodApplied][0]}}
	}
	for _, c := range cases {
		b.Run(c.method+"/"+c.device+"/"+c.target.name, func(b *testing.B) {
			site, page := c.target.site, c.target.page
			var wall, total []float64
			values := map[string][]float64{}
			stepTook := map[string]time.Duration{} // over every audit
			var res model.LabResult
			if cgroupPeak != nil {
				cgroupPeak() // from this case on
			}
			peak := sampleTreePSS(sampleEvery)
			for b.Loop() {
				for i := range audits {
					job := audit.Job{Account: site.Account, Website: site.ID, Page: page.ID, Device: c.device, Queued: time.Now().UTC()}
					start := time.Now()
					actx, steps := auditworker.WithSteps(ctx)
					if err := w.Audit(actx, job, 1); err != nil {
						b.Fatalf("audit: %v", err)
					}
					took := time.Since(start)
					for name, d := range steps.Took() {
						stepTook[name] += d
					}
					results, err := e.store.LabResults(ctx, site, page.ID, c.device, model.Day(start), model.Day(time.Now()))
					if err != nil || len(results) == 0 {
						b.Fatalf("results %v, %v", results, err)
					}
					res = results[len(results)-1]
					if model.MethodOr(res.Method, "") != c.method {
						b.Fatalf("result measured by %q, want %s", res.Method, c.method)
					}
					lhTotal := timingTotal(b, e, res.ReportKey)
					wall, total = append(wall, took.Seconds()), append(total, lhTotal.Seconds())
					for name, v := range res.Samples {
						values[name] = append(values[name], v...)
					}
					b.Logf("audit %d: %.1f s (the median run's Lighthouse %.1f s), load %s; score %.0f lcp %.0f fcp %.0f tbt %.0f cls %.4f si %.0f; runs' lcp %v tbt %v; benchmark index %.0f, CPU %.1f×",
						i+1, took.Seconds(), lhTotal.Seconds(), machineState(e.temp), res.Metrics["performance_score"], res.Metrics["lcp"], res.Metrics["fcp"],
						res.Metrics["tbt"], res.Metrics["cls"], res.Metrics["speed_index"], res.Samples["lcp"], res.Samples["tbt"], res.BenchmarkIndex, res.CPUMultiplier)
				}
			}
			b.ReportMetric(meanOf(wall), "wall-s")
			b.ReportMetric(meanOf(total), "lh-total-s")
			b.ReportMetric(meanOf(wall)/(float64(runs)*meanOf(total)), "wall/lh-total")
			// Where an audit's time goes, a mean an audit: the runner's call ("lighthouse", of
			// which Lighthouse's own timing.total is part), the browser's launch, the rest.
			for name, d := range stepTook {
				b.ReportMetric(d.Seconds()/float64(len(wall)), "step-"+name+"-s")
			}
			// The whole audit against its runs in the warm runner (the runner's calls).
			if runner := stepTook["lighthouse"].Seconds(); runner > 0 {
				b.ReportMetric(meanOf(wall)*float64(len(wall))/runner, "wall/runner")
			}
			for _, name := range []string{"lcp", "fcp", "tbt", "cls", "speed_index", "ttfb", "performance_score"} {
				if v := values[name]; len(v) > 1 {
					b.ReportMetric(cv(v), name+"-cv-%")
				}
			}
			// Every run's values, sorted, for the regression detector's noise model, in one line
			// (a benchmark's log keeps only its first 10 lines).
			var runsLine []string
			for _, name := range []string{"lcp", "fcp", "speed_index", "tbt", "ttfb", "cls", "performance_score"} {
				runsLine = append(runsLine, fmt.Sprintf("%s %v", name, slices.Sorted(slices.Values(values[name]))))
			}
			b.Logf("every run, sorted: %s", strings.Join(runsLine, "; "))
			if c.method == model.MethodApplied {
				b.ReportMetric(res.CPUMultiplier, "cpu-x")
				b.ReportMetric(res.BenchmarkIndex, "benchmark-index")
			}
			b.ReportMetric(float64(peak())/(1<<20), "peak-pss-MiB")
			if cgroupPeak != nil {
				// The cgroup's own count: every page charged to it, the page cache of the
				// files the runs wrote included, so at least the PSS.
				b.ReportMetric(float64(cgroupPeak())/(1<<20), "peak-cgroup-MiB")
			}
			e.reportDayBytes(b, site, page, c.device)
			// A page on this device a month: 30 daily audits of this many runs.
			b.ReportMetric(30*meanOf(wall)*memoryGB*lambdaUSDPerGBs, "usd-page-device-month")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// reportDayBytes reports the bytes the day's audit of page on device stored: its reports
// (JSON and HTML) and the rest (frames, diagnostics, images, HAR).
func (e *benchEnv) reportDayBytes(b *testing.B, site model.Website, page model.Page, device string) {
	b.Helper()
	ctx := context.Background()
	keys, err := e.objects.Keys(ctx, blobstore.PagePrefix(site.Account, site.ID, page.ID))
	if err != nil {
		b.Fatal(err)
	}
	var reports, rest int
	var restKeys []string
	for _, k := range keys {
		if !strings.Contains(k, "-"+device+".") && !strings.Contains(k, "-"+device+"/") {
			continue
		}
		body, err := e.objects.Get(ctx, k)
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasSuffix(k, "-"+device+".json.gz") || strings.HasSuffix(k, "-"+device+".html.gz") {
			reports += len(body)
		} else {
			rest += len(body)
			restKeys = append(restKeys, fmt.Sprintf("%s %d", k[strings.LastIndex(k, "-"+device)+1:], len(body)))
		}
	}
	b.Logf("stored for the day: reports %d bytes; frames and diagnostics %d bytes: %s", reports, rest, strings.Join(restKeys, ", "))
	b.ReportMetric(float64(reports), "report-bytes")
	b.ReportMetric(float64(rest), "frames+diagnostics-bytes")
	if reports > 0 {
		// What the frames and diagnostics add to the day's reports.
		b.ReportMetric(100*float64(rest)/float64(reports), "frames+diagnostics-%-of-reports")
	}
}

// methodAudits and methodRuns are how many audits BenchmarkAuditMethod makes of each method,
// device and page, and how many Lighthouse runs each.
var (
	methodAudits = flag.Int("audits", 2, "audits of each method, device and page in BenchmarkAuditMethod")
	methodRuns   = flag.Int("runs", 3, "Lighthouse runs an audit in BenchmarkAuditMethod")
	methodMarks  = flag.Bool("marks", false, "log Lighthouse's longest timing marks of each audit in BenchmarkAuditMethod")
	lambdaMemory = flag.Int("lambda-memory", 0, "the audit worker's memory (MB) BenchmarkAuditMethod prices and whose CPU share (1 vCPU a 1,769 MB) it limits itself and its browsers to, in a cgroup (needs root); 0: the deployed 3,008 MB, unlimited")
	methodPages  = regexpFlag("pages", ".", "the pages BenchmarkAuditMethod measures (a regular expression over shop-home, shop-products, fixture-heavy, fixture-longtask)")
)

// regexpFlag defines a flag holding a regular expression.
func regexpFlag(name, value, usage string) *regexp.Regexp {
	re := regexp.MustCompile(value)
	flag.Func(name, usage, func(s string) error {
		r, err := regexp.Compile(s)
		if err == nil {
			*re = *r
		}
		return err
	})
	return re
}

// timingTotal is Lighthouse's timing.total of the report stored at key.
func timingTotal(b *testing.B, e *benchEnv, key string) time.Duration {
	b.Helper()
	var lhr struct {
		Timing struct {
			Total   float64
			Entries []struct {
				Name     string
				Duration float64
			}
		} `json:"timing"`
	}
	raw := storedReport(b, e.objects, key)
	if err := json.Unmarshal(raw, &lhr); err != nil {
		b.Fatal(err)
	}
	if lhr.Timing.Total <= 0 {
		b.Fatal(fmt.Errorf("report %s has no timing.total", key))
	}
	// Where Lighthouse's time went: its longest marks (they nest, so they overlap).
	entries := lhr.Timing.Entries
	sort.Slice(entries, func(i, j int) bool { return entries[i].Duration > entries[j].Duration })
	var top []string
	for _, en := range entries[:min(12, len(entries))] {
		top = append(top, fmt.Sprintf("%s %.0f ms", en.Name, en.Duration))
	}
	if *methodMarks {
		b.Logf("Lighthouse's longest marks: %s", strings.Join(top, "; "))
	}
	return time.Duration(lhr.Timing.Total * float64(time.Millisecond))
}

// sampleTreePSS samples, every interval until the returned function is called, the memory of
// this process and all its descendants (the browser and the Lighthouse runner): the sum of
// their proportional set sizes, shared pages split among their sharers, as a Lambda function's
// memory holds them. The function returns the largest sample, in bytes.
func sampleTreePSS(interval time.Duration) func() int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if v := treePSS(os.Getpid()); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

// treePSS is the summed PSS (bytes) of process root and its descendants, from /proc.
func treePSS(root int) int64 {
	parents := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		parents[pid] = ppid
	}
	var total int64
	for pid := range parents {
		for a, hops := pid, 0; a > 1 && hops < 64; a, hops = parents[a], hops+1 {
			if a != root {
				continue
			}
			raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
			if err != nil {
				break
			}
			for _, line := range strings.Split(string(raw), "\n") {
				if kb, ok := strings.CutPrefix(line, "Pss:"); ok {
					n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
					total += n << 10
				}
			}
			break
		}
	}
	return total
}

// lambdaMemoryLimit limits this process, and every process it starts from now on, to memoryMB
// MiB, as a Lambda function's memory is (a browser over it is killed, and its audit fails), in
// a memory cgroup of its own (cgroup v1's memory controller or v2's memory.max), undone when
// the benchmark ends. It returns a function that answers the most the cgroup held since it was
// last called, in bytes (0 when the kernel does not say).
func lambdaMemoryLimit(b *testing.B, memoryMB int) func() int64 {
	b.Helper()
	root, limitFile, peakFile := "/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.max_usage_in_bytes"
	if _, err := os.Stat(filepath.Join(root, limitFile)); err != nil {
		root, limitFile, peakFile = "/sys/fs/cgroup", "memory.max", "memory.peak"
	}
	dir := joinCgroup(b, root, limitFile, strconv.Itoa(memoryMB<<20))
	b.Logf("limited to %d MiB, a %d MB Lambda function's memory", memoryMB, memoryMB)
	return func() int64 {
		raw, err := os.ReadFile(filepath.Join(dir, peakFile))
		if err != nil {
			return 0
		}
		_ = os.WriteFile(filepath.Join(dir, peakFile), []byte("0"), 0o644) // a reset, where the kernel takes one
		n, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		return n
	}
}

// lambdaVCPUMB is the memory at which a Lambda function has one vCPU; its CPU share is
// proportional to its memory (AWS Lambda's documentation, "Memory and computing power").
const lambdaVCPUMB = 1769

// lambdaCPU limits this process, and every process it starts from now on (the Lighthouse
// runner, Chromium), to the CPU share a Lambda function of memoryMB has, with a CFS quota in a
// cgroup of its own (cgroup v1's cpu controller or v2's cpu.max), undone when the benchmark
// ends. The stand-ins stay outside it, as AWS's services are. It needs root; without a
// writable cgroup the benchmark fails, saying so.
func lambdaCPU(b *testing.B, memoryMB int) {
	b.Helper()
	quota := int(float64(memoryMB) / lambdaVCPUMB * 100000) // µs of CPU per 100 ms period
	root, file, value := "/sys/fs/cgroup/cpu", "cpu.cfs_quota_us", strconv.Itoa(quota)
	if _, err := os.Stat(filepath.Join(root, file)); err != nil {
		root, file, value = "/sys/fs/cgroup", "cpu.max", fmt.Sprintf("%d 100000", quota)
	}
	joinCgroup(b, root, file, value)
	b.Logf("limited to %.2f vCPU, the CPU share of a %d MB Lambda function", float64(quota)/100000, memoryMB)
}

// joinCgroup moves this process, and every process it starts from now on, into this
// benchmark's cgroup under root (one hierarchy in cgroup v2, so the CPU and the memory limit
// share it), with value written to its file, and undoes it when the benchmark ends. It needs
// root; without a writable cgroup the benchmark fails, saying so.
func joinCgroup(b *testing.B, root, file, value string) string {
	b.Helper()
	dir := filepath.Join(root, fmt.Sprintf("openvitals-bench-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		b.Fatalf("-lambda-memory needs a cgroup of its own (root, a controller for %s): %v", file, err)
	}
	b.Cleanup(func() { leaveCgroup(b, root, dir) })
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		b.Fatalf("-lambda-memory: %s: %v", file, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		b.Fatalf("-lambda-memory: moving the benchmark into %s: %v", dir, err)
	}
	return dir
}

// leaveCgroup moves every process in the cgroup dir (this one, the runner still open, a
// browser's watchdog still ending) back to root, then removes it: again for a few seconds
// while processes it lists are still exiting.
func leaveCgroup(b *testing.B, root, dir string) {
	var err error
	for range 10 {
		procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, p := range strings.Fields(string(procs)) {
			_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(p), 0o644)
		}
		if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	b.Logf("the benchmark's cgroup %s stays: %v", dir, err)
}
