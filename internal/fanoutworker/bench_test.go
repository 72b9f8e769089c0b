package fanoutworker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/schedulefn"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// calls counts the AWS requests of each kind (the X-Amz-Target of DynamoDB's and SQS's JSON
// protocols, "DynamoDB_20120810.UpdateItem") that pass through it.
type calls struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func (c *calls) RoundTrip(r *http.Request) (*http.Response, error) {
	target := r.Header.Get("X-Amz-Target")
	c.mu.Lock()
	c.n[target[strings.LastIndex(target, ".")+1:]]++
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// take returns the counts since the last take.
func (c *calls) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// dynamoWrites and dynamoReads are the DynamoDB requests that write and that read.
var (
	dynamoWrites = []string{"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}
	dynamoReads  = []string{"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}
)

func sum(n map[string]int, kinds []string) int {
	total := 0
	for _, k := range kinds {
		total += n[k]
	}
	return total
}

// BenchmarkDailyFanout measures a day's fan-out of the audits on DynamoDB Local and the SQS
// stand-in: websites of 1, 50, 200 and 1,000 pages (1,000 websites in all; 3 of a few pages
// under -short), walked by one worker, one message after another, so that each message's time
// and its AWS requests are its own. Each iteration is a new day. It reports the scheduler's
// time, a page of the listing's, the whole day's work (the scheduler's and every message's,
// one after another), and per website of each size its time, DynamoDB writes and reads, and
// SQS sends, and the size of its largest shard's claim.
func BenchmarkDailyFanout(b *testing.B) {
	sizes := map[int]int{1: 957, 50: 20, 200: 20, 1000: 3} // pages: websites
	pageSize := fanout.ListingPageSize
	if testing.Short() {
		sizes, pageSize = map[int]int{1: 1, 20: 1, 120: 1}, 2
	}
	counted := &calls{base: http.DefaultTransport, n: map[string]int{}}
	clients := awstest.Via(awstest.Clients(b), counted)
	st := awstest.Store(b, clients)
	cfg := service.Config{Table: st.Table(), Bucket: "openvitals-bench"}
	cfg.NameQueues(awstest.Queues(b, clients))
	svc, err := service.New(cfg, clients, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	w := newWorker(svc)
	w.pageSize = pageSize
	sched := schedulefn.New(svc)
	ctx := context.Background()

	pagesOf := map[string]int{} // website ID: pages
	for n, count := range sizes {
		for i := range count {
			add := make([]model.Page, n)
			for j := range add {
				add[j] = model.Page{URL: fmt.Sprintf("/%d", j)}
			}
			site, _ := awstest.Website(b, st, model.Website{Account: fmt.Sprintf("acct%03d", i%50), Domain: fmt.Sprintf("p%d-%d.example", n, i)}, add)
			pagesOf[site.ID] = n
		}
	}

	type perSize struct {
		websites                 int
		ms, writes, reads, sends float64
		slowestMS                float64
	}
	var schedMS, listingMS, workMS float64
	var listings, days int
	listingCalls := map[string]int{}
	bySize := map[int]*perSize{}
	day := time.Date(2030, 1, 1, 3, 0, 0, 0, time.UTC)
	shardBytes := map[int]int{} // the largest shard claim of a website of so many pages
	scanned := false
	for b.Loop() {
		day = day.Add(24 * time.Hour)
		counted.take()
		start := time.Now()
		detail := []byte(`{"jobs":["audits"]}`)
		if _, err := sched.Handle(ctx, events.CloudWatchEvent{Time: day, Detail: detail}); err != nil {
			b.Fatal(err)
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		schedMS += ms
		workMS += ms
		days++
		counted.take()
		awstest.DrainAll(b, svc.Queues.Fanout, 1, 1, queue1(func(ctx context.Context, j fanout.Job) error {
			counted.take()
			start := time.Now()
			if err := w.Handle(ctx, j); err != nil {
				return err
			}
			ms := float64(time.Since(start).Microseconds()) / 1000
			workMS += ms
			n := counted.take()
			if j.Website == "" {
				listingMS += ms
				listings++
				for k, v := range n {
					listingCalls[k] += v
				}
				return nil
			}
			pages := pagesOf[j.Website]
			s := bySize[pages]
			if s == nil {
				s = &perSize{}
				bySize[pages] = s
			}
			s.websites++
			s.ms += ms
			s.slowestMS = max(s.slowestMS, ms)
			s.writes += float64(sum(n, dynamoWrites))
			s.reads += float64(sum(n, dynamoReads))
			s.sends += float64(n["SendMessageBatch"])
			return nil
		}))
		counted.take()
		if !scanned { // the shard claims, as DynamoDB holds them (a scan: untimed)
			scanned = true
			for key, size := range awstest.TableOf(b, clients, st).Sizes("", "FANOUT#"+model.Day(day)+"#audits#") {
				pk, _, _ := strings.Cut(key, "|")
				pages := pagesOf[pk[strings.LastIndex(pk, "#")+1:]]
				shardBytes[pages] = max(shardBytes[pages], size)
			}
			counted.take()
		}
	}
	b.StopTimer()
	b.ReportMetric(schedMS/float64(days), "ms/scheduler")
	b.ReportMetric(workMS/float64(days)/1000, "s/day-work")
	if listings > 0 {
		n := float64(listings)
		b.ReportMetric(listingMS/n, "ms/listing-page")
		b.ReportMetric(float64(sum(listingCalls, dynamoWrites))/n, "ddb-writes/listing-page")
		b.ReportMetric(float64(sum(listingCalls, dynamoReads))/n, "ddb-reads/listing-page")
		b.ReportMetric(float64(listingCalls["SendMessageBatch"])/n, "sqs-batches/listing-page")
	}
	sorted := slices.Sorted(maps.Keys(bySize))
	for _, pages := range sorted {
		s := bySize[pages]
		n := float64(s.websites)
		unit := fmt.Sprintf("/website-%dp", pages)
		b.ReportMetric(s.ms/n, "ms"+unit)
		b.ReportMetric(s.slowestMS, "ms-max"+unit)
		b.ReportMetric(s.writes/n, "ddb-writes"+unit)
		b.ReportMetric(s.reads/n, "ddb-reads"+unit)
		b.ReportMetric(s.sends/n, "sqs-batches"+unit)
		if bytes := shardBytes[pages]; bytes > 0 {
			b.ReportMetric(float64(bytes), "bytes-max-shard-claim"+unit)
		}
	}
	b.ReportMetric(0, "ns/op")
}

// queue1 adapts a handler of one fan-out message to the poller's batches, as the worker's
// own consumer does.
func queue1(handle func(context.Context, fanout.Job) error) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			var j fanout.Job
			if err := json.Unmarshal([]byte(m.Body), &j); err != nil || handle(ctx, j) != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	}
}
