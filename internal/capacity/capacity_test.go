package capacity_test

// BenchmarkCapacity measures the units of work the capacity model composes, by running the
// real code over the stand-ins (DynamoDB Local, the SQS stand-in, gofakes3) through clients
// that count what AWS bills (internal/awsmeter) and that wait, before each request, as long as
// AWS takes to answer one inside its region (awsLatency), so that a unit's time is the one it
// would take in AWS rather than on loopback:
//   - the day's start: the scheduler's handler, starting the audits;
//   - a page of the websites' listing (1,000 websites; 100 under -short);
//   - websites' shares of the day's audits, at each size's pages (three websites each; five
//     of 50 pages under -short);
//   - real audits, Chromium and Lighthouse included, of a product page of a website with two
//     budgets and 30 days of results, queued by the fan-out like any other: what each stores
//     and reads (not its Lighthouse time, which auditSeconds prices as the stack sizes it);
//   - a website's month of real users at several traffics: BenchmarkRUMCost's (the real
//     rebatcher and aggregator), read from testdata/rum.json, which `make bench-capacity`
//     writes again before this runs.
// It then prints the model's table at each size (the smallest only, under -short).
//
//	go test -run '^$' -bench Capacity -benchtime 1x ./internal/capacity/

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/capacity"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/fanoutworkerfn"
	"github.com/openvitals/openvitals/internal/service/schedulefn"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// awsLatency is how long AWS takes to answer a request from a Lambda function in its region,
// by service and kind: single-digit milliseconds for DynamoDB's key reads and writes, tens for
// SQS's batches and S3's objects (typical figures, not guarantees).
func awsLatency(r *http.Request) time.Duration {
	target := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(target, "DynamoDB"):
		return 5 * time.Millisecond
	case strings.HasSuffix(target, "SendMessageBatch"):
		return 20 * time.Millisecond
	case strings.HasPrefix(target, "AmazonSQS"):
		return 10 * time.Millisecond
	case r.Method == http.MethodPut || r.Method == http.MethodPost:
		return 30 * time.Millisecond
	}
	return 15 * time.Millisecond // S3 reads
}

// slowed waits awsLatency before each request.
type slowed struct{ base http.RoundTripper }

func (s slowed) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(awsLatency(r))
	return s.base.RoundTrip(r)
}

var slowClient = &http.Client{Transport: slowed{base: http.DefaultTransport}}

func BenchmarkCapacity(b *testing.B) {
	sizes := capacity.Sizes
	listed, sampled := fanout.ListingPageSize, 3
	if testing.Short() {
		sizes, listed, sampled = sizes[:1], 100, 5
	}
	for b.Loop() {
		m := measure(b, sizes, listed, sampled)
		var out strings.Builder
		var ests []capacity.Estimate
		for _, size := range sizes {
			e, err := m.Estimate(size, capacity.DefaultDeployment(), awsmeter.ListPrices)
			if err != nil {
				b.Fatal(err)
			}
			ests = append(ests, e)
		}
		capacity.WriteTable(&out, ests)
		a := m.Audit.Usage
		fmt.Fprintf(&out, "\nAn audit (of %d measured): %.1f write units, %.1f read units; S3 %d writes, %.0f KB; DynamoDB calls %v; stored %.0f bytes in DynamoDB\n",
			m.Audit.Units, a.WriteUnits/float64(m.Audit.Units), a.ReadUnits/float64(m.Audit.Units), a.S3Writes/m.Audit.Units, m.S3Bytes/1000, a.DynamoDBCalls, m.DynamoDBBytes)
		for pages, w := range m.Shares {
			fmt.Fprintf(&out, "A website's share of %d pages: %.0f ms with AWS's latencies, %.1f write units, %.1f read units, calls %v\n",
				pages, float64(w.Took.Milliseconds())/float64(w.Units), w.Usage.WriteUnits/float64(w.Units), w.Usage.ReadUnits/float64(w.Units), w.Usage.DynamoDBCalls)
		}
		// Printed rather than logged: a benchmark's log is cut short.
		fmt.Print(out.String())
		last := ests[len(ests)-1]
		b.ReportMetric(last.Fanout.Seconds(), "s/fan-out")
		b.ReportMetric(last.HottestWrites, "WCU/s-hottest")
		b.ReportMetric(last.Total, "$/month")
		b.ReportMetric(last.Total/last.AuditLambda, "total/audit-lambda")
	}
}

// measure runs the real code for each kind of work the sizes need.
func measure(b *testing.B, sizes []capacity.Size, listed, sampled int) capacity.Measured {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	clients := awstest.Clients(b)
	plain := awstest.Store(b, clients)
	meter := awsmeter.New()
	metered := awstest.Metered(awstest.Via(clients, slowClient.Transport), meter)
	cfg := service.Config{Table: plain.Table(), Bucket: "openvitals-capacity"}
	cfg.NameQueues(awstest.Queues(b, clients))
	svc, err := service.New(cfg, metered, quiet)
	if err != nil {
		b.Fatal(err)
	}
	objects := awstest.BucketAt(b, awstest.S3Server(b), meter.S3, func(o *s3.Options) { o.HTTPClient = slowClient })

	// The websites: a page of the listing's worth without pages, the samples of each size's
	// pages, and the audited website (the fixture page on loopback).
	for i := range listed {
		awstest.Website(b, plain, model.Website{Account: fmt.Sprintf("acct%03d", i%50), Domain: fmt.Sprintf("listed%d.example", i)}, nil)
	}
	samples := map[int][]model.Website{}
	for _, size := range sizes {
		n := size.PagesPerWebsite
		if samples[n] != nil {
			continue
		}
		for i := range sampled {
			pages := make([]model.Page, n)
			for j := range pages {
				pages[j] = model.Page{URL: fmt.Sprintf("/products/%d", j)}
			}
			site, _ := awstest.Website(b, plain, model.Website{Account: fmt.Sprintf("acct%03d", i), Domain: fmt.Sprintf("p%d-%d.example", n, i)}, pages)
			samples[n] = append(samples[n], site)
		}
	}
	audited, page := auditedWebsite(b, plain)

	var m capacity.Measured
	day := time.Now().UTC()
	measured := func(units int, fn func()) capacity.Work {
		meter.Reset()
		start := time.Now()
		fn()
		return capacity.Work{Usage: meter.Usage(), Took: time.Since(start), Units: units}
	}

	// The day's start, then the listing's first page.
	sched := schedulefn.New(svc)
	m.Scheduler = measured(1, func() {
		if _, err := sched.Handle(ctx, events.CloudWatchEvent{Time: day, Detail: []byte(`{"jobs":["audits"]}`)}); err != nil {
			b.Fatal(err)
		}
	})
	w, err := fanoutworkerfn.New(context.Background(), svc)
	if err != nil {
		b.Fatal(err)
	}
	first := fanout.Job{Day: model.Day(day), Job: fanout.JobAudits}
	m.Listing = measured(1, func() {
		if err := w.Handle(ctx, first); err != nil {
			b.Fatal(err)
		}
	})
	m.ListingWebsites = min(listed+len(samples)*sampled+1, fanout.ListingPageSize)

	// The audited website's share, unmeasured: its audits' messages are the audits measured.
	if err := w.Handle(ctx, fanout.Job{Day: model.Day(day), Job: fanout.JobAudits, Account: audited.Account, Website: audited.ID}); err != nil {
		b.Fatal(err)
	}
	var jobs []audit.Job
	for _, body := range awstest.Receive(b, svc.Queues.Audit, 2) {
		var j audit.Job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			b.Fatal(err)
		}
		if j.Website == audited.ID && (!testing.Short() || j.Device == "desktop") {
			jobs = append(jobs, j)
		}
	}

	// The samples' shares, one after another.
	m.Shares = map[int]capacity.Work{}
	for pages, sites := range samples {
		m.Shares[pages] = measured(len(sites), func() {
			for _, site := range sites {
				if err := w.Handle(ctx, fanout.Job{Day: model.Day(day), Job: fanout.JobAudits, Account: site.Account, Website: site.ID}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}

	// The audits, and what they leave in the website's partition and in S3.
	worker := auditWorker(b, svc, objects, quiet)
	before := partitionBytes(b, awstest.TableOf(b, clients, plain), audited)
	m.Audit = measured(len(jobs), func() {
		for _, j := range jobs {
			if err := worker.Audit(ctx, j, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	if len(jobs) == 0 {
		b.Fatal("the fan-out queued no audit of the audited website")
	}
	if got, err := plain.LabResults(ctx, audited, page.ID, jobs[0].Device, jobs[0].Day, jobs[0].Day); err != nil || len(got) != 1 {
		b.Fatalf("the audit stored %d results of its day (%v), want 1", len(got), err)
	}
	m.DynamoDBBytes = float64(partitionBytes(b, awstest.TableOf(b, clients, plain), audited)-before) / float64(len(jobs))
	m.S3Bytes = float64(m.Audit.Usage.S3BytesIn) / float64(len(jobs))

	body, err := os.ReadFile("testdata/rum.json")
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(body, &m.RUM); err != nil || len(m.RUM) < 2 {
		b.Fatalf("testdata/rum.json: %d months (%v); want two traffics or more", len(m.RUM), err)
	}
	return m
}

// auditedWebsite is a website of one product page with two budgets and 30 days of results
// on both devices, served on loopback.
func auditedWebsite(b *testing.B, st *store.Store) (model.Website, model.Page) {
	ctx := context.Background()
	html, err := os.ReadFile("testdata/page.html")
	if err != nil {
		b.Fatal(err)
	}
	// A noisy image compresses badly: the page's bytes are those of a real product photo.
	img := image.NewRGBA(image.Rect(0, 0, 600, 400))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.IntN(256))
	}
	var hero bytes.Buffer
	if err := png.Encode(&hero, img); err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(html)
	})
	mux.HandleFunc("GET /hero.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(hero.Bytes())
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)

	pages := []model.Page{{URL: "/", Alias: "Garden shears"}}
	site, _ := awstest.Website(b, st, model.Website{Account: "audited", Domain: strings.TrimPrefix(srv.URL, "http://")}, pages)
	for _, bud := range []model.Budget{
		{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"},
		{Metric: "performance_score", Operator: "gt", Value: 50, Device: "mobile"},
	} {
		if err := st.CreateBudget(ctx, site, &bud); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now().UTC()
	for d := 30; d >= 1; d-- {
		for _, device := range audit.Devices {
			lcp := 1200 + 10*float64(d%7)
			res := model.LabResult{Page: pages[0].ID, Device: device, Day: model.Day(now.AddDate(0, 0, -d)), Audited: now.AddDate(0, 0, -d), Runs: 3,
				LighthouseVersion: "13.5.0", Metrics: map[string]float64{"lcp": lcp, "fcp": lcp * 0.7, "cls": 0.01, "tbt": 40, "ttfb": 90, "performance_score": 95}}
			if err := st.PutLabResult(ctx, site, pages[0], res); err != nil {
				b.Fatal(err)
			}
		}
	}
	return site, pages[0]
}

// auditWorker is the audit worker as its function builds it (auditworker.New), over the
// metered store and bucket, one Lighthouse run an audit (what an audit stores does not depend
// on its runs).
func auditWorker(b *testing.B, svc *service.Service, objects *blobstore.Bucket, log *slog.Logger) *auditworker.Worker {
	events := event.NewRecorder(svc.Store, notify.NewQueue(svc.Queues.Notify), log)
	return auditworker.NewWorker(auditworker.WorkerConfig{
		Runs: 1, Scheme: "http",
		Browser:     browsertest.Options(b, true),
		Events:      events,
		Regressions: regression.NewWatcher(svc.Store, artifact.New(objects), events, log),
	}, svc.Store, objects, browsertest.Runner(b), log)
}

// partitionBytes is what a website's partition holds, as DynamoDB bills items.
func partitionBytes(b *testing.B, table *awstest.Table, site model.Website) int {
	total := 0
	for _, size := range table.Sizes(awstest.WebsitePK(site.Account, site.ID), "") {
		total += size
	}
	if total == 0 {
		b.Fatal("the website's partition is empty: its key is not the store's")
	}
	return total
}
