package auditworker_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
)

// Lambda's list price (us-east-1, arm64) and the audit worker's memory (infra/audit.go,
// auditWorkerMemoryMB), for the cost of a page.
const (
	lambdaUSDPerGBs   = 0.0000133334
	auditWorkerMemory = 3008.0 / 1024 // GB
)

// BenchmarkAuditMethod measures what the measurement method costs and how steady it is: whole
// audits of one Lighthouse run each (the worker's own path: browser, Lighthouse, HTML report,
// diagnostics, validation, storage) of the fixture page, by simulated and by applied
// throttling, on desktop and mobile, one after another on one warm worker. It reports the
// audit's wall time and Lighthouse's own timing.total (mean, s), the coefficient of variation
// (%) of LCP, FCP, TBT, CLS, Speed Index and the score over the audits, the benchmark index
// and CPU multiplier of the applied runs, and the Lambda price of a page on one device a
// month at three runs a day (3 × an audit's wall time, an upper bound: the audit's own work
// beyond its run is paid once, not three times) at the audit worker's memory. -audits sets
// how many each (default 5); with -short, one applied mobile audit.
func BenchmarkAuditMethod(b *testing.B) {
	e := newBenchEnv(b)
	ctx := context.Background()
	// The same page on a website of each method (one account per website: a domain is unique
	// in its account).
	sites := map[string]model.Website{model.MethodSimulated: e.site}
	pages := map[string]model.Page{model.MethodSimulated: e.page}
	applied := model.Website{Account: "acme-applied", Domain: e.site.Domain, Method: model.MethodApplied}
	if err := e.store.CreateWebsite(ctx, &applied); err != nil {
		b.Fatal(err)
	}
	ap := []model.Page{{URL: "/", Alias: "Home"}}
	if err := e.store.CreatePages(ctx, applied, ap); err != nil {
		b.Fatal(err)
	}
	sites[model.MethodApplied], pages[model.MethodApplied] = applied, ap[0]
	w := e.worker(b, 1)
	e.warmUp(b)

	type methodCase struct{ method, device string }
	var cases []methodCase
	for _, m := range []string{model.MethodSimulated, model.MethodApplied} {
		for _, d := range []string{"desktop", "mobile"} {
			cases = append(cases, methodCase{m, d})
		}
	}
	audits := *methodAudits
	if testing.Short() {
		audits, cases = 1, []methodCase{{model.MethodApplied, "mobile"}}
	}
	for _, c := range cases {
		b.Run(c.method+"/"+c.device, func(b *testing.B) {
			site, page := sites[c.method], pages[c.method]
			var wall, total []float64
			values := map[string][]float64{}
			var res model.LabResult
			for b.Loop() {
				for i := range audits {
					job := audit.Job{Account: site.Account, Website: site.ID, Page: page.ID, Device: c.device, Queued: time.Now().UTC()}
					start := time.Now()
					if err := w.Audit(ctx, job, 1); err != nil {
						b.Fatalf("audit: %v", err)
					}
					took := time.Since(start)
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
					for _, name := range []string{"lcp", "fcp", "tbt", "cls", "speed_index", "performance_score"} {
						if v, ok := res.Metrics[name]; ok {
							values[name] = append(values[name], v)
						}
					}
					b.Logf("audit %d: %.1f s (Lighthouse %.1f s), score %.0f lcp %.0f fcp %.0f tbt %.0f cls %.4f si %.0f; benchmark index %.0f, CPU %.1f×",
						i+1, took.Seconds(), lhTotal.Seconds(), res.Metrics["performance_score"], res.Metrics["lcp"], res.Metrics["fcp"],
						res.Metrics["tbt"], res.Metrics["cls"], res.Metrics["speed_index"], res.BenchmarkIndex, res.CPUMultiplier)
				}
			}
			b.ReportMetric(meanOf(wall), "wall-s")
			b.ReportMetric(meanOf(total), "lh-total-s")
			for name, v := range values {
				if len(v) > 1 {
					b.ReportMetric(cv(v), name+"-cv-%")
				}
			}
			b.ReportMetric(res.CPUMultiplier, "cpu-x")
			b.ReportMetric(res.BenchmarkIndex, "benchmark-index")
			// A page on this device a month: 30 daily audits of 3 runs.
			b.ReportMetric(30*3*meanOf(wall)*auditWorkerMemory*lambdaUSDPerGBs, "usd-page-device-month")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// methodAudits is how many audits BenchmarkAuditMethod makes of each method and device.
var methodAudits = flag.Int("audits", 5, "audits of each method and device in BenchmarkAuditMethod")

// timingTotal is Lighthouse's timing.total of the report stored at key.
func timingTotal(b *testing.B, e *benchEnv, key string) time.Duration {
	b.Helper()
	var lhr struct {
		Timing struct{ Total float64 } `json:"timing"`
	}
	raw := storedObject(b, e.objects, key)
	if err := json.Unmarshal(raw, &lhr); err != nil {
		b.Fatal(err)
	}
	if lhr.Timing.Total <= 0 {
		b.Fatal(fmt.Errorf("report %s has no timing.total", key))
	}
	return time.Duration(lhr.Timing.Total * float64(time.Millisecond))
}
