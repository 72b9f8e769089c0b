package rumworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

type rig struct {
	t      *testing.T
	st     *store.Store
	rums   *rumstore.Store
	col    *rum.Collector // sends to the beacon queue, as collect does
	rb     *rumworker.Rebatcher
	agg    *rumworker.Aggregator
	reader *rum.Reader
	site   model.Website
	sent   []rum.View // every view sent, for exact answers
	// beacons is the beacon queue; q the aggregator's FIFO queue, flushes what was sent to it.
	beacons *queue.Queue
	q       *queue.Queue
	flushes *countingSender
	// batches are the aggregator batches batchEvent made, by ID.
	batches map[string][]rum.View
}

// countingSender is the aggregator's queue, counting the distinct messages sent to it (those
// the FIFO queue delivers).
type countingSender struct {
	*queue.Queue
	mu   sync.Mutex
	sent map[string]bool
}

func (c *countingSender) SendGroups(ctx context.Context, msgs []queue.GroupMessage) []error {
	errs := c.Queue.SendGroups(ctx, msgs)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range msgs {
		if errs[i] == nil {
			c.sent[m.DedupID] = true
		}
	}
	return errs
}

func (c *countingSender) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sent)
}

func newRig(t *testing.T) *rig {
	e := awstest.NewEnv(t)
	st := e.Store
	rums := awstest.RUM(t, st)
	q := e.FIFOQueue(service.RUMQueueSettings)
	beacons := e.Queue(service.BeaconQueueSettings)
	site, _ := e.Website(model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"})
	flushes := &countingSender{Queue: q, sent: map[string]bool{}}
	return &rig{t: t, st: st, rums: rums, col: rum.NewCollector(beacons), beacons: beacons, q: q, flushes: flushes,
		rb:     rumworker.NewRebatcherWith(rums, st, flushes, geo.Country, e.Log),
		agg:    rumworker.NewAggregatorWith(st, rums, quota.NewKeeper(st, time.Now), e.Log, geo.Country),
		reader: rum.NewReader(rums), site: site}
}

// send queues views one at a time (one message each), as collect does, and passes them
// through the rebatcher and the aggregator. It returns the beacon queue's deliveries to the
// rebatcher and the aggregator queue's to the aggregator.
func (r *rig) send(views ...rum.View) (beacons, flushes []events.SQSEvent) {
	r.t.Helper()
	for _, v := range views {
		if err := r.col.Add(context.Background(), r.site.Account, r.site.ID, v); err != nil {
			r.t.Fatal(err)
		}
		if v.Country == "" {
			v.Country = geo.Country(v.IP)
			v.IP = ""
		}
		r.sent = append(r.sent, v)
	}
	return r.pass(len(views))
}

// pass hands messages beacon messages (at least) to the rebatcher, then every message the
// aggregator's queue got since to the aggregator.
func (r *rig) pass(messages int) (beacons, flushes []events.SQSEvent) {
	r.t.Helper()
	before := r.flushes.count()
	beacons = awstest.Drain(r.t, r.beacons, 10, r.rb.HandleSQS, func(n int) bool { return n >= messages })
	want := r.flushes.count() - before
	flushes = awstest.Drain(r.t, r.q, 10, r.agg.HandleSQS, func(n int) bool { return n >= want })
	return beacons, flushes
}

func (r *rig) report(dim string, metrics []string, from, to string) rum.Report {
	r.t.Helper()
	f, _ := time.Parse("20060102", from)
	l, _ := time.Parse("20060102", to)
	rep, err := r.reader.Report(context.Background(), rum.Query{Account: r.site.Account, Website: r.site.ID,
		Dim: dim, Metrics: metrics, From: f, To: l})
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}

// check compares a report with the exact answer computed from the views sent: counts exactly,
// 75th percentiles within the sketches' relative accuracy.
func (r *rig) check(dim string, metrics []string, from, to string) rum.Report {
	r.t.Helper()
	got := r.report(dim, metrics, from, to)
	counts := map[string]uint64{}
	values := map[string]map[string][]float64{}
	var total uint64
	for _, v := range r.sent {
		if v.Day < from || v.Day > to {
			continue
		}
		key := v.Page
		if dim == rum.DimCountries {
			key = v.Country
		}
		counts[key]++
		total++
		for _, m := range metrics {
			if x, ok := v.Metrics[m]; ok {
				if values[key] == nil {
					values[key] = map[string][]float64{}
				}
				values[key][m] = append(values[key][m], x)
			}
		}
	}
	if got.Views != total || len(got.Rows) != len(counts) {
		r.t.Fatalf("%s %s-%s: %d views in %d rows, want %d in %d", dim, from, to, got.Views, len(got.Rows), total, len(counts))
	}
	for _, row := range got.Rows {
		if row.Views != counts[row.Key] {
			r.t.Errorf("%s %s-%s %q: %d views, want %d", dim, from, to, row.Key, row.Views, counts[row.Key])
		}
		for _, m := range metrics {
			vals := values[row.Key][m]
			if len(vals) == 0 {
				if _, ok := row.P75[m]; ok {
					r.t.Errorf("%q %s: a value without data", row.Key, m)
				}
				continue
			}
			slices.Sort(vals)
			want := vals[int(0.75*float64(len(vals)-1))]
			if math.Abs(row.P75[m]-want) > rollup.RelativeAccuracy*want+1e-9 {
				r.t.Errorf("%s %s-%s %q %s p75 %v, exact %v", dim, from, to, row.Key, m, row.P75[m], want)
			}
		}
	}
	return got
}

func view(day, page, country string, lcp float64) rum.View {
	return rum.View{Day: day, Page: page, Country: country, Metrics: map[string]float64{"lcp": lcp, "cls": lcp / 20000}}
}

func TestRollupsAnswerAnyRange(t *testing.T) {
	r := newRig(t)
	r.send(
		view("20261030", "/", "DE", 1200), view("20261030", "/a", "FR", 2400),
		view("20261031", "/", "DE", 1800),
		view("20261101", "/", "US", 900), view("20261101", "/b", "DE", 3100),
		view("20261102", "/b", "US", 2000),
		// No country header: the aggregator places the address (8.8.8.8 is in the US).
		rum.View{Day: "20261102", Page: "/a", IP: "8.8.8.8", Metrics: map[string]float64{"lcp": 1500}},
		rum.View{Day: "20261102", Page: "/a", IP: "127.0.0.1", Metrics: map[string]float64{"inp": 80}},
	)
	metrics := []string{"lcp", "cls", "inp"}
	for _, rng := range [][2]string{
		{"20261001", "20261130"}, {"20261030", "20261030"}, {"20261031", "20261101"},
		{"20261101", "20261102"}, {"20261102", "20261102"}, {"20261103", "20261110"}, {"20261015", "20261031"},
	} {
		r.check(rum.DimPages, metrics, rng[0], rng[1])
		r.check(rum.DimCountries, metrics, rng[0], rng[1])
		r.check(rum.DimPages, nil, rng[0], rng[1])
	}
	countries := r.report(rum.DimCountries, nil, "20261102", "20261102")
	var seen []string
	for _, row := range countries.Rows {
		seen = append(seen, row.Key)
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"US", "XX"}) {
		t.Errorf("countries on Nov 2: %v, want US (header and 8.8.8.8) and XX (loopback)", seen)
	}

	// A view arriving late for Oct 31 counts there and in the later running totals of October,
	// but not in November.
	r.send(view("20261031", "/late", "IT", 4000))
	r.check(rum.DimPages, metrics, "20261031", "20261031")
	r.check(rum.DimPages, metrics, "20261030", "20261102")
	if rep := r.check(rum.DimPages, nil, "20261101", "20261102"); slices.ContainsFunc(rep.Rows, func(row rum.Row) bool { return row.Key == "/late" }) {
		t.Error("the late October view shows in November")
	}
}

// SQS delivers at least once: the beacon queue's messages handed to the rebatcher again (it
// appends their views to the log again, as new entries) and the aggregator's handed to it
// again; each view still counts once.
func TestRedeliveredBatchCountsOnce(t *testing.T) {
	r := newRig(t)
	beacons, flushes := r.send(view("20261110", "/", "DE", 1000), view("20261110", "/x", "DE", 1100))
	before := r.check(rum.DimPages, []string{"lcp"}, "20261101", "20261130")
	for _, ev := range flushes {
		r.fold(ev)
	}
	for _, ev := range beacons {
		r.rebatch(ev)
	}
	after := r.check(rum.DimPages, []string{"lcp"}, "20261101", "20261130")
	if after.Views != before.Views || after.Views != 2 {
		t.Errorf("views %d after redeliveries, %d before; want 2", after.Views, before.Views)
	}

	// One of them again with a new one, in one delivery to the rebatcher: only the new one
	// counts.
	if err := r.col.Add(context.Background(), r.site.Account, r.site.ID, view("20261110", "/y", "FR", 1200)); err != nil {
		t.Fatal(err)
	}
	r.sent = append(r.sent, view("20261110", "/y", "FR", 1200))
	later := awstest.Drain(t, r.beacons, 10, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		return events.SQSEventResponse{}, nil // taken off the queue, rebatched below
	}, func(n int) bool { return n >= 1 })
	var again events.SQSEvent
	for _, ev := range append(beacons[len(beacons)-1:], later...) {
		again.Records = append(again.Records, ev.Records...)
	}
	r.rebatch(again)
	if got := r.check(rum.DimPages, []string{"lcp"}, "20261101", "20261130"); got.Views != 3 {
		t.Errorf("views %d, want 3", got.Views)
	}
	r.check(rum.DimCountries, []string{"lcp"}, "20261110", "20261110")
}

// rebatch hands one delivery of the beacon queue to the rebatcher and what it sends on to the
// aggregator.
func (r *rig) rebatch(ev events.SQSEvent) {
	r.t.Helper()
	before := r.flushes.count()
	if resp, err := r.rb.HandleSQS(context.Background(), ev); err != nil || len(resp.BatchItemFailures) > 0 {
		r.t.Fatalf("rebatch: %v, %v", err, resp.BatchItemFailures)
	}
	want := r.flushes.count() - before
	awstest.Drain(r.t, r.q, 10, r.agg.HandleSQS, func(n int) bool { return n >= want })
}

// Concurrent beacons share queue messages (group commit) and still all count.
func TestConcurrentBeaconsAreBatched(t *testing.T) {
	r := newRig(t)
	rng := rand.New(rand.NewPCG(3, 4))
	views := make([]rum.View, 300)
	for i := range views {
		views[i] = view("20261112", fmt.Sprintf("/p%d", i%25), []string{"DE", "US", "FR"}[i%3], 500+rng.Float64()*4000)
	}
	var wg sync.WaitGroup
	for _, v := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.col.Add(context.Background(), r.site.Account, r.site.ID, v); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	r.sent = views
	messages, appended := 0, 0
	var mu sync.Mutex
	before := r.flushes.count()
	awstest.Drain(t, r.beacons, 10, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, err := r.rb.HandleSQS(ctx, ev)
		mu.Lock()
		defer mu.Unlock()
		messages += len(ev.Records)
		for _, m := range ev.Records {
			var b rum.WireBatch
			if err := json.Unmarshal([]byte(m.Body), &b); err != nil {
				t.Error(err)
			}
			appended += len(b.Views)
		}
		return resp, err
	}, func(int) bool { mu.Lock(); defer mu.Unlock(); return appended >= 300 })
	want := r.flushes.count() - before
	awstest.Drain(t, r.q, 10, r.agg.HandleSQS, func(n int) bool { return n >= want })
	if messages >= len(views) {
		t.Errorf("%d messages for %d concurrent views: not batched", messages, len(views))
	}
	t.Logf("%d views in %d messages", len(views), messages)
	r.check(rum.DimPages, []string{"lcp", "cls"}, "20261101", "20261130")
	r.check(rum.DimCountries, []string{"lcp"}, "20261112", "20261112")
}

// A website with more distinct pages than the tables keep: the extra pages count under
// /(other), and the distinct count comes from the days' HyperLogLogs.
func TestPagesBeyondTheCapCountUnderOther(t *testing.T) {
	r := newRig(t)
	const pages = 9000
	var msgs []queue.GroupMessage
	batch := rum.Batch{ID: "b0", Account: r.site.Account, Website: r.site.ID}
	for i := range pages {
		day := "20261105"
		if i%2 == 1 {
			day = "20261106"
		}
		batch.Views = append(batch.Views, rum.View{Day: day, Page: fmt.Sprintf("/item/%d", i), Country: "DE", Metrics: map[string]float64{"lcp": 1000}})
		if len(batch.Views) == 40 || i == pages-1 {
			body, err := json.Marshal(batch)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, queue.GroupMessage{Group: r.site.ID, DedupID: batch.ID, Body: body})
			batch = rum.Batch{ID: fmt.Sprintf("b%d", len(msgs)), Account: r.site.Account, Website: r.site.ID}
		}
	}
	for _, err := range r.beacons.SendGroups(context.Background(), msgs) {
		if err != nil {
			t.Fatal(err)
		}
	}
	r.pass(len(msgs))

	rep := r.report(rum.DimPages, nil, "20261101", "20261130")
	var other uint64
	for _, row := range rep.Rows {
		if row.Key == "/(other)" {
			other = row.Views
		}
	}
	if rep.Views != pages || other == 0 || len(rep.Rows) > 8001 || uint64(len(rep.Rows)-1)+other != pages {
		t.Fatalf("%d views in %d rows, %d under /(other); want %d views, at most 8,000 pages and the rest under /(other)", rep.Views, len(rep.Rows), other, pages)
	}
	if rel := math.Abs(float64(rep.Pages)-pages) / pages; rel > 0.03 {
		t.Errorf("distinct pages %d, want about %d (HyperLogLog)", rep.Pages, pages)
	}
	one := r.report(rum.DimPages, nil, "20261106", "20261106")
	if rel := math.Abs(float64(one.Pages)-pages/2) / (pages / 2); rel > 0.03 {
		t.Errorf("distinct pages of one day %d, want about %d", one.Pages, pages/2)
	}
	t.Logf("%d pages: %d stored keys, %d views under /(other), estimate %d (one day %d)", pages, len(rep.Rows)-1, other, rep.Pages, one.Pages)
}

// Single-view messages on the standard beacon queue (what collect sends from Lambda) are
// appended per website to the logs, and the aggregator gets fewer messages than beacons; all
// count once.
func TestRebatcherRegroupsSingleViews(t *testing.T) {
	r := newRig(t)
	other, _ := awstest.Website(t, r.st, model.Website{Account: "globex", Domain: "globex.example"}, nil)
	for i := range 30 {
		site := r.site
		if i%3 == 0 {
			site = other
		}
		v := view("20261115", fmt.Sprintf("/p%d", i%7), "DE", float64(1000+i*10))
		if err := r.col.Add(context.Background(), site.Account, site.ID, v); err != nil { // one message each
			t.Fatal(err)
		}
		if site.ID == r.site.ID {
			r.sent = append(r.sent, v)
		}
	}
	beacons, flushes := r.pass(30)
	regrouped, folded := 0, 0
	for _, ev := range beacons {
		regrouped += len(ev.Records)
	}
	for _, ev := range flushes {
		folded += len(ev.Records)
	}
	if folded >= regrouped {
		t.Errorf("%d beacon messages became %d aggregator messages: not regrouped", regrouped, folded)
	}
	r.check(rum.DimPages, []string{"lcp"}, "20261101", "20261130")
	rep, err := r.reader.Report(context.Background(), rum.Query{Account: other.Account, Website: other.ID, Dim: rum.DimPages,
		From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil || rep.Views != 10 {
		t.Errorf("the other website: %d views (%v), want 10", rep.Views, err)
	}
	t.Logf("%d beacon messages, %d aggregator messages", regrouped, folded)
}

// An unreadable message on either RUM queue is reported failed, so that it ends in the
// dead-letter queue, and does not hold back the readable ones beside it.
func TestUnreadableMessagesGoToTheDeadLetterQueue(t *testing.T) {
	r := newRig(t)
	v := view("20261115", "/", "DE", 1200)
	v.ID = rum.NewViewID(time.Now()) // the rebatcher's entry and the aggregator's count once
	good, err := json.Marshal(rum.Batch{ID: "b1", Account: r.site.Account, Website: r.site.ID, Views: []rum.View{v}})
	if err != nil {
		t.Fatal(err)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "bad-json", Body: "{not json"},
		{MessageId: "no-website", Body: `{"id":"x","a":"acme","v":[]}`},
		{MessageId: "good", Body: string(good)},
	}}
	for name, handle := range map[string]func(context.Context, events.SQSEvent) (events.SQSEventResponse, error){
		"rebatcher":  r.rb.HandleSQS,
		"aggregator": r.agg.HandleSQS,
	} {
		resp, err := handle(context.Background(), ev)
		var failed []string
		for _, f := range resp.BatchItemFailures {
			failed = append(failed, f.ItemIdentifier)
		}
		if err != nil || !slices.Equal(failed, []string{"bad-json", "no-website"}) {
			t.Errorf("%s: failures %v (%v), want the two unreadable messages", name, failed, err)
		}
	}
	if rep := r.report(rum.DimPages, nil, "20261115", "20261115"); rep.Views != 1 {
		t.Errorf("%d views folded, want the readable message's 1", rep.Views)
	}
}

// The views of a website deleted since its beacons came in are dropped by the rebatcher:
// nothing is written into its partition, which its purge emptied.
func TestRebatcherDropsDeletedWebsites(t *testing.T) {
	r := newRig(t)
	gone, _ := awstest.Website(t, r.st, model.Website{Account: "acme", Domain: "gone.example"}, nil)
	for _, site := range []model.Website{gone, r.site} {
		if err := r.col.Add(context.Background(), site.Account, site.ID, view("20261115", "/", "DE", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	r.sent = append(r.sent, view("20261115", "/", "DE", 1000))
	if _, err := r.st.DeleteWebsite(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	r.pass(2)
	r.check(rum.DimPages, []string{"lcp"}, "20261115", "20261115")
	log, _, err := r.rums.Pending(context.Background(), gone.Account, gone.ID)
	if err != nil || len(log) != 0 {
		t.Errorf("the deleted website's log: %d entries (%v), want none", len(log), err)
	}
}
