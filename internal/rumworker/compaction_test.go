package rumworker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// faults fails the requests a test names, as a lost connection does, until it is told to stop.
type faults struct {
	base http.RoundTripper
	mu   sync.Mutex
	when func(method, path, body string) bool
	hits int
}

func (f *faults) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	when := f.when
	f.mu.Unlock()
	if when != nil {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body.Close()
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		if when(r.Method, r.URL.Path, string(body)) {
			f.mu.Lock()
			f.hits++
			f.mu.Unlock()
			return nil, errors.New("injected: connection reset")
		}
	}
	return f.base.RoundTrip(r)
}

func (f *faults) set(when func(method, path, body string) bool) {
	f.mu.Lock()
	f.when, f.hits = when, 0
	f.mu.Unlock()
}

func (f *faults) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// faultyRig is a rig whose real-user data goes through connections that fail on demand: S3's
// and DynamoDB's (the rumstore's, and the aggregator's table).
func faultyRig(t *testing.T) (*rig, *faults) {
	r := newRig(t)
	f := &faults{base: http.DefaultTransport}
	fst := store.New(awstest.Via(awstest.Clients(t), f).DynamoDB, r.st.Table())
	bucket := awstest.BucketAt(t, awstest.S3Server(t), func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: f} })
	r.rums = rumstore.New(fst, bucket, 400*24*time.Hour, awstest.Log(t))
	r.rb = rumworker.NewRebatcherWith(r.rums, fst, r.flushes, geo.Country, awstest.Log(t))
	r.agg = rumworker.NewAggregatorWith(fst, r.rums, quota.NewKeeper(fst, time.Now), awstest.Log(t), geo.Country)
	r.reader = rum.NewReader(r.rums)
	return r, f
}

// rebatchAndFold hands the beacon queue's messages to the rebatcher and what it sends on to
// the aggregator, once, and returns the aggregator's deliveries and how many of their messages
// failed.
func (r *rig) rebatchAndFold(messages int) (flushes []events.SQSEvent, failed int) {
	r.t.Helper()
	before := r.flushes.count()
	awstest.Drain(r.t, r.beacons, 10, r.rb.HandleSQS, func(n int) bool { return n >= messages })
	want := r.flushes.count() - before
	var mu sync.Mutex
	flushes = awstest.Drain(r.t, r.q, 10, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, err := r.agg.HandleSQS(ctx, ev)
		mu.Lock()
		failed += len(resp.BatchItemFailures)
		mu.Unlock()
		// Taken off the queue whatever happened: the test delivers them again itself.
		return events.SQSEventResponse{}, err
	}, func(n int) bool { return n >= want })
	return flushes, failed
}

// A compaction stopped half way, at each step of its writes (a day's object, a day's pointer,
// the months' index, the log's mark), and delivered again, loses and doubles nothing: every
// report then is exact, and a late view of an earlier day is in that day's and every later
// day's running totals.
func TestCompactionInterruptedLosesAndDoublesNothing(t *testing.T) {
	for _, step := range []struct {
		name string
		when func(method, path, body string) bool
	}{
		{"the later day's object", func(m, p, _ string) bool { return m == http.MethodPut && strings.Contains(p, "/rum/20261103/") }},
		{"the later day's pointer", func(_, _, b string) bool {
			return strings.Contains(b, "RUM#F#20261103") && strings.Contains(b, `"Item"`)
		}},
		{"the months' index", func(_, _, b string) bool { return strings.Contains(b, "RUM#IX#") && strings.Contains(b, `"Item"`) }},
		{"the log's mark", func(_, _, b string) bool { return strings.Contains(b, "RUM#LM") && strings.Contains(b, `"Item"`) }},
	} {
		t.Run(step.name, func(t *testing.T) {
			r, f := faultyRig(t)
			// Day 2 first, then day 3 with a late view of day 2 (it goes into day 3's totals).
			r.send(view("20261102", "/", "DE", 1000), view("20261102", "/a", "FR", 2000))
			views := []rum.View{view("20261103", "/", "DE", 1500), view("20261103", "/b", "US", 2500), view("20261102", "/late", "IT", 4000)}
			for _, v := range views {
				if err := r.col.Add(context.Background(), r.site.Account, r.site.ID, v); err != nil {
					t.Fatal(err)
				}
				r.sent = append(r.sent, v)
			}
			f.set(step.when)
			flushes, failed := r.rebatchAndFold(len(views))
			if f.count() == 0 || failed == 0 {
				t.Fatalf("the fault hit %d requests and failed %d messages: the step was not reached", f.count(), failed)
			}
			f.set(nil)
			// SQS delivers the failed message again, and once more.
			for _, ev := range flushes {
				r.fold(ev)
			}
			r.fold(flushes...)
			for _, rng := range [][2]string{{"20261101", "20261130"}, {"20261102", "20261102"}, {"20261103", "20261103"}, {"20261102", "20261103"}} {
				r.check(rum.DimPages, []string{"lcp"}, rng[0], rng[1])
				r.check(rum.DimCountries, []string{"lcp", "cls"}, rng[0], rng[1])
			}
		})
	}
}

// The same page views, folded through the rebatcher, the log and compactions (several, in
// any grouping, some entries delivered twice), give the same reports as the tables the fold
// makes of all of them at once, stored one per item as before day objects and read from there:
// counts and ratings equal, percentiles equal (the same sketches), attributions' means within
// rounding. Days stored as items before are read, and moved into an object when a late view
// reaches them.
func TestNewPathEqualsTablesAsItems(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	// The reference website: the fold's tables of every view at once, stored as items.
	ref, _ := awstest.Website(t, r.st, model.Website{Account: "acme", Domain: "ref.example"}, nil)
	rng := rand.New(rand.NewPCG(7, 7))
	days := []string{"20261101", "20261102", "20261103"}
	byDay := map[string][]rum.View{}
	start := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	for i := range 1500 {
		day := days[i%3]
		v := rumworker.BenchView(rng, day, 40, 8)
		v.ID = rum.NewViewID(start.Add(time.Duration(i) * time.Second))
		byDay[day] = append(byDay[day], v)
	}
	// asItems stores a day's views of w as items, as before day objects: the day's tables and
	// totals' running ones (which take the views in), one item a table.
	asItems := func(w model.Website, totals *rumworker.RunningTotals, day string, views []rum.View) {
		t.Helper()
		daily := rumworker.NewDailyTables(day)
		for _, v := range views {
			totals.Add(v, rum.TimingNames)
		}
		daily.Add(views)
		tables, err := daily.Tables()
		if err != nil {
			t.Fatal(err)
		}
		for c, data := range totals.Tables(day) {
			tables[c] = data
		}
		for c, data := range tables {
			if err := r.st.PutRUMTable(ctx, w.Account, w.ID, c, model.RUMTable{Data: data}); err != nil {
				t.Fatal(err)
			}
		}
	}
	totals := rumworker.NewRunningTotals()
	for _, day := range days {
		asItems(ref, totals, day, byDay[day])
	}
	if err := r.st.PutRUMIndex(ctx, ref.Account, ref.ID, model.RUMIndex{Month: "202611", Days: days}, time.Time{}); err != nil {
		t.Fatal(err)
	}

	// The website under test: days 1 and 2 stored as items too (before day objects), then
	// day 3 and a tenth of day 2 (late) through the new path, in several compactions, some
	// messages delivered twice.
	var early, late []rum.View
	for _, day := range days[:2] {
		cut := len(byDay[day])
		if day == days[1] {
			cut = cut * 9 / 10
		}
		early = append(early, byDay[day][:cut]...)
		late = append(late, byDay[day][cut:]...)
	}
	late = append(late, byDay[days[2]]...)
	rng.Shuffle(len(late), func(i, j int) { late[i], late[j] = late[j], late[i] })
	totals = rumworker.NewRunningTotals()
	for _, day := range days[:2] {
		var mine []rum.View
		for _, v := range early {
			if v.Day == day {
				mine = append(mine, v)
			}
		}
		asItems(r.site, totals, day, mine)
	}
	if err := r.st.PutRUMIndex(ctx, r.site.Account, r.site.ID, model.RUMIndex{Month: "202611", Days: days[:2]}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for len(late) > 0 {
		n := min(len(late), 50+rng.IntN(150))
		for _, v := range late[:n] {
			if err := r.col.Add(ctx, r.site.Account, r.site.ID, v); err != nil {
				t.Fatal(err)
			}
		}
		beacons, _ := r.pass(n)
		if rng.IntN(2) == 0 {
			r.rebatch(beacons[0])
		}
		late = late[n:]
	}

	if legacy, _, err := r.st.RUMLegacyDay(ctx, r.site.Account, r.site.ID, days[0]); err != nil || len(legacy) == 0 {
		t.Fatalf("day 1's items: %d, %v; the test means them kept as items", len(legacy), err)
	}
	got, err := r.st.RUMDays(ctx, r.site.Account, r.site.ID, days, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[days[0]]; ok || len(got) != 2 {
		t.Fatalf("day objects %v: want days 2 (moved from its items by the late views) and 3 only", slices.Collect(maps.Keys(got)))
	}
	if legacy, distinct, err := r.st.RUMLegacyDay(ctx, r.site.Account, r.site.ID, days[1]); err != nil || len(legacy) != 0 || distinct != nil {
		t.Fatalf("day 2's items: %d and a distinct sketch %v (%v); want them gone once its object holds them", len(legacy), distinct != nil, err)
	}

	want, have := rum.NewReader(r.st), rum.NewReader(r.rums)
	wantSeg, haveSeg := rum.NewSegmentReader(r.st, r.st), rum.NewSegmentReader(r.rums, r.st)
	day := func(s string) time.Time { d, _ := time.Parse("20060102", s); return d }
	top := func(seg *rum.SegmentReader) func(context.Context, rum.SegmentQuery) (rum.Attributions, error) {
		return func(ctx context.Context, q rum.SegmentQuery) (rum.Attributions, error) {
			return seg.Attributions(ctx, q, 50)
		}
	}
	for _, rng := range [][2]string{{days[0], days[2]}, {days[1], days[1]}, {days[2], days[2]}, {days[1], days[2]}} {
		for _, dim := range []string{rum.DimPages, rum.DimCountries} {
			qa := rum.Query{Dim: dim, Metrics: rum.TimingNames, From: day(rng[0]), To: day(rng[1])}
			qb := qa
			qa.Account, qa.Website = ref.Account, ref.ID
			qb.Account, qb.Website = r.site.Account, r.site.ID
			a, b := both(t, want.Report, have.Report, qa, qb)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s %v: reports differ:\n items %+v\n new   %+v", dim, rng, a, b)
			}
		}
		for _, sq := range []rum.SegmentQuery{
			{Metric: "lcp"}, {Metric: "inp", By: rum.DimDevice}, {Metric: "cls", By: rum.DimCountry},
			{Metric: "lcp", Filters: []rum.Filter{{Dim: rum.DimDevice, Values: []string{"mobile"}}}, By: rum.DimBrowser},
			{Metric: "ttfb", Page: "page001"}, {Metric: "fcp", By: rum.DimNavigation},
		} {
			sq.From, sq.To = day(rng[0]), day(rng[1])
			a, b := sq, sq
			a.Account, a.Website, b.Account, b.Website = ref.Account, ref.ID, r.site.Account, r.site.ID
			ta, tb := both(t, wantSeg.Trend, haveSeg.Trend, a, b)
			if !reflect.DeepEqual(ta, tb) {
				t.Errorf("trend %+v %v differs:\n items %+v\n new   %+v", sq, rng, ta, tb)
			}
			if sq.By == nil {
				da, db := both(t, wantSeg.Distribution, haveSeg.Distribution, a, b)
				if !reflect.DeepEqual(da, db) {
					t.Errorf("distribution %+v %v differs", sq, rng)
				}
			}
		}
		for _, metric := range []string{"lcp", "inp", "cls"} {
			for _, page := range []string{"", "page002"} {
				sq := rum.SegmentQuery{Metric: metric, Page: page, From: day(rng[0]), To: day(rng[1])}
				a, b := sq, sq
				a.Account, a.Website, b.Account, b.Website = ref.Account, ref.ID, r.site.Account, r.site.ID
				xa, xb := both(t, top(wantSeg), top(haveSeg), a, b)
				sameAttributions(t, fmt.Sprintf("%s %q %v", metric, page, rng), xa, xb)
			}
		}
	}
}

// both asks a of the reference website's reader (ask) and b of the compacted website's (again),
// failing the test on an error.
func both[Q, A any](t *testing.T, ask, again func(context.Context, Q) (A, error), a, b Q) (A, A) {
	t.Helper()
	x, err := ask(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := again(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return x, y
}

// sameAttributions compares two answers: the same rows in the same order with the same views
// and percentiles; means and parts, sums added in another order, within their rounding.
func sameAttributions(t *testing.T, name string, a, b rum.Attributions) {
	t.Helper()
	if a.Views != b.Views || a.SlowViews != b.SlowViews || a.Partial != b.Partial || len(a.Kinds) != len(b.Kinds) {
		t.Errorf("%s: %d/%d views, %d kinds; want %d/%d, %d", name, b.Views, b.SlowViews, len(b.Kinds), a.Views, a.SlowViews, len(a.Kinds))
		return
	}
	for kind, rows := range a.Kinds {
		other := b.Kinds[kind]
		if len(other) != len(rows) {
			t.Errorf("%s %s: %d rows, want %d", name, kind, len(other), len(rows))
			continue
		}
		for i, x := range rows {
			y := other[i]
			if !reflect.DeepEqual(x.Fields, y.Fields) || x.Views != y.Views || x.SlowViews != y.SlowViews || x.Value != y.Value ||
				math.Abs(x.Mean-y.Mean) > 0.1 {
				t.Errorf("%s %s row %d: %+v, want %+v", name, kind, i, y, x)
				continue
			}
			for part, v := range x.Parts {
				if math.Abs(y.Parts[part]-v) > 0.1 {
					t.Errorf("%s %s row %d part %s: %v, want %v", name, kind, i, part, y.Parts[part], v)
				}
			}
		}
	}
}
