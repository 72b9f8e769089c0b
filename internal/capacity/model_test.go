package capacity

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/model"
)

// The fan-out's workers take the websites as the listing's pages queue them: two workers,
// five websites two to a page, a page a second and a share of 3 s end at 10 s (the fifth
// website waits for a worker until 7 s).
func TestFanoutTook(t *testing.T) {
	if got := fanoutTook(5, 2, time.Second, 3*time.Second, 2); got != 10*time.Second {
		t.Errorf("took %v, want 10s", got)
	}
	// Enough workers: the last page's arrival and one share.
	if got := fanoutTook(5, 2, time.Second, 3*time.Second, 50); got != 6*time.Second {
		t.Errorf("took %v with 50 workers, want 6s", got)
	}
}

func measuredForTest() Measured {
	work := func(writes, reads float64, hot string, took time.Duration, units int) Work {
		return Work{Usage: awsmeter.Usage{WriteUnits: writes, ReadUnits: reads, SQSStandard: 10 * units,
			WriteUnitsByKey: map[string]float64{hot: writes * 0.75, "other": writes * 0.25},
			ReadUnitsByKey:  map[string]float64{hot: reads}}, Took: took, Units: units}
	}
	return Measured{
		Scheduler: work(0, 1, "sched", 10*time.Millisecond, 1),
		Listing:   work(2, 1, "listing", 300*time.Millisecond, 1), ListingWebsites: 100,
		Shares: map[int]Work{50: work(8, 8, "site", 200*time.Millisecond, 2), 1000: work(44, 8, "site", 700*time.Millisecond, 2)},
		Audit:  work(40, 20, "site", 2*time.Second, 2), DynamoDBBytes: 3000, S3Bytes: 200_000,
		RUM: []RUMMonth{
			{ViewsPerMonth: 1e6, Bill: awsmeter.Bill{SQS: 0.5, S3Requests: 0.3}, WriteUnits: 1e5, StoredGB: 0.2},
			{ViewsPerMonth: 100e6, Bill: awsmeter.Bill{SQS: 48.5, S3Requests: 0.3}, WriteUnits: 1e5, StoredGB: 20},
		},
	}
}

func TestEstimate(t *testing.T) {
	m := measuredForTest()
	d := DefaultDeployment()
	d.AuditSeconds = 30 // the figures below are for audits of 30 s
	e, err := m.Estimate(Size{Websites: 10000, PagesPerWebsite: 1000, ViewsPerMonth: 10000 * 10e6}, d, awsmeter.ListPrices)
	if err != nil {
		t.Fatal(err)
	}
	if e.AuditsPerDay != 20_000_000 || e.AuditWorkers != 8334 || e.ListingPages != 10 {
		t.Errorf("%d audits a day, %d workers, %d listing pages; want 20M, 8,334, 10", e.AuditsPerDay, e.AuditWorkers, e.ListingPages)
	}
	// A page of the listing of 1,000 websites costs ten times the measured one of 100.
	want := 10*time.Millisecond + fanoutTook(10000, 1000, 3*time.Second, 350*time.Millisecond, 20)
	if e.Fanout != want {
		t.Errorf("fan-out %v, want %v", e.Fanout, want)
	}
	// The audits of a 1,000-page website run together (2,000 of them, fewer than the
	// workers): 66.7 a second, 15 write units each into its partition.
	if got := 2000.0 / 30 * 15; math.Abs(e.HottestWrites-got) > 1e-6 {
		t.Errorf("hottest %.1f during the audits, want %.1f", e.HottestWrites, got)
	}
	// The fan-out's: a share's 33 units (of 44 in 2 shares, 3/4 in its partition) within its
	// 0.35 s, more than the listing's 15 (of 2 a page of 100, times 10, in 3 s).
	if math.Abs(e.FanoutHottestWrites-16.5) > 1e-6 || e.FanoutHottestBy != "a website's share" {
		t.Errorf("hottest %.1f during the fan-out (%s), want 16.5 by a website's share", e.FanoutHottestWrites, e.FanoutHottestBy)
	}
	lambda := 20e6 * 30 * (30*3008.0/1024*awsmeter.ListPrices.LambdaGBSecond + awsmeter.ListPrices.LambdaRequest)
	if math.Abs(e.AuditLambda-lambda) > 1e-6*lambda || e.Month[0].Dollars != e.AuditLambda {
		t.Errorf("audit Lambda $%.2f, want $%.2f first", e.AuditLambda, lambda)
	}
	// Real users at 10M views a website: a tenth of the way from 1M to 100M, per website.
	for _, l := range e.Month {
		if strings.HasPrefix(l.Item, "real users: entry") {
			if want := 10000 * (0.3 + 0.5 + 48*(9.0/99)); math.Abs(l.Dollars-want) > 1e-6*want {
				t.Errorf("real users $%.2f, want $%.2f", l.Dollars, want)
			}
		}
	}
	sum := 0.0
	for _, l := range e.Month {
		sum += l.Dollars
	}
	if math.Abs(sum-e.Total) > 1e-9*sum || e.Total <= e.AuditLambda {
		t.Errorf("total $%.2f, lines $%.2f, audit Lambda $%.2f", e.Total, sum, e.AuditLambda)
	}
	raise := map[string]bool{}
	for _, q := range e.Quotas {
		raise[q.Name] = q.Raise()
	}
	if !raise["Lambda concurrent executions"] || raise["SQS messages in flight, the audit queue"] {
		t.Errorf("quotas to raise %v: want Lambda's concurrency and not SQS's in-flight messages", raise)
	}

	// Websites of 200 pages take the share measured at 1,000 (the nearest above).
	small, err := m.Estimate(Size{Websites: 10, PagesPerWebsite: 200, ViewsPerMonth: 0}, d, awsmeter.ListPrices)
	if err != nil || small.AuditWorkers != 2 { // 4,000 audits of 30 s in 20 hours
		t.Errorf("10 × 200: %d workers (%v), want 2", small.AuditWorkers, err)
	}
	if _, err := m.Estimate(Size{Websites: 10, PagesPerWebsite: 5000}, d, awsmeter.ListPrices); err == nil {
		t.Error("websites of 5,000 pages were estimated from shares of at most 1,000")
	}
}

// The default deployment is the stack's: its figures are read from the CDK app's source.
func TestDefaultDeploymentIsTheStacks(t *testing.T) {
	consts := infraConstants(t)
	d := DefaultDeployment()
	for name, got := range map[string]float64{
		"defaultAuditSeconds":        d.AuditSeconds,
		"defaultAuditMemoryMB":       float64(d.AuditMemoryMB),
		"defaultAuditWindowHours":    d.AuditWindowHours,
		"fanoutWorkerMaxConcurrency": float64(d.FanoutWorkers),
		"defaultMemoryMB":            float64(d.FanoutMemoryMB),
		"defaultReportRetentionDays": float64(d.ReportRetentionDays),
		"defaultRUMRetentionDays":    float64(d.RUMRetentionDays),
	} {
		want, ok := consts[name]
		if !ok {
			t.Errorf("infra/ declares no constant %s", name)
		} else if got != want {
			t.Errorf("%s is %v in infra/, %v here", name, want, got)
		}
	}
	if d.HistoryDays != model.HistoryDays {
		t.Errorf("history kept %d days, the store keeps %d", d.HistoryDays, model.HistoryDays)
	}
}

// infraConstants are the integer constants the CDK app declares.
func infraConstants(t *testing.T) map[string]float64 {
	files, err := filepath.Glob("../../infra/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the CDK app's source: %v", err)
	}
	out := map[string]float64{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range spec.Names {
				if i < len(spec.Values) {
					if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.INT {
						if v, err := strconv.ParseFloat(lit.Value, 64); err == nil {
							out[name.Name] = v
						}
					}
				}
			}
			return true
		})
	}
	return out
}
