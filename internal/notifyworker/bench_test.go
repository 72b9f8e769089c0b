package notifyworker

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/benchtest"
)

// BenchmarkChangeToWebhook measures, as the local service runs it (the notifier polling the
// SQS stand-in, a receiver on loopback), the time from a budget's status change being
// recorded to its webhook request arriving (the goal: p99 under 2 s).
func BenchmarkChangeToWebhook(b *testing.B) {
	f := newBenchFixture(b)
	arrived := make(chan time.Time, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
	}))
	b.Cleanup(recv.Close)
	f.addChannel(b, channel.Webhook, recv.URL+"/hook")
	stop := f.poll(b)
	defer stop()

	statuses := []string{budget.Exceeded, budget.OK}
	var samples []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if err := recordBudgets(context.Background(), f.rec, f.site, statuses[i%2]); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-arrived:
			samples = append(samples, at.Sub(start))
		case <-time.After(30 * time.Second):
			b.Fatal("no webhook request 30 s after the change")
		}
	}
	b.ReportMetric(benchtest.PercentileMS(samples, 0.50), "ms/p50")
	b.ReportMetric(benchtest.PercentileMS(samples, 0.99), "ms/p99")
}

// BenchmarkNotifierThroughput measures how many events a second one notifier (one poller of
// batches of 10, as an SQS event source hands them to one Lambda) delivers to a webhook: the
// events of 500 budgets (20 with -short) are recorded and queued first, then the notifier
// drains the queue.
func BenchmarkNotifierThroughput(b *testing.B) {
	events := 500
	if testing.Short() {
		events = 20
	}
	f := newBenchFixture(b)
	var got atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	b.Cleanup(recv.Close)
	f.addChannel(b, channel.Webhook, recv.URL+"/hook")
	ctx := context.Background()
	for i := range events - 1 { // and the fixture's own
		bu := model.Budget{Metric: "lcp", Operator: "lt", Value: float64(1000 + i), Device: "all"}
		if err := f.st.CreateBudget(ctx, f.site, &bu); err != nil {
			b.Fatal(err)
		}
	}
	var rate float64
	for i := 0; b.Loop(); i++ {
		got.Store(0)
		if err := recordBudgets(ctx, f.rec, f.site, []string{budget.Exceeded, budget.OK}[i%2]); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		stop := f.poll(b)
		for got.Load() < int64(events) {
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("%d of %d delivered after 5 minutes", got.Load(), events)
			}
			time.Sleep(10 * time.Millisecond)
		}
		rate = float64(events) / time.Since(start).Seconds()
		stop()
	}
	b.ReportMetric(rate, "events/s")
}

// newBenchFixture is newFixture logging nothing: a line a delivery would drown the figures.
func newBenchFixture(b *testing.B) *fixture {
	f := newFixture(b)
	quiet := slog.New(slog.DiscardHandler)
	f.w = NewWorker(f.st, f.keys, f.w.sender, f.w.queue, quiet)
	f.rec = event.NewRecorder(f.st, f.w.queue, quiet)
	return f
}

// poll runs the notifier on the queue until the returned function is called.
func (f *fixture) poll(tb testing.TB) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f.q.Poll(ctx, 10, f.w.HandleSQS, f.w.log) }()
	return func() { cancel(); wg.Wait() }
}
