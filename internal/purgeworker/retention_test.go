package purgeworker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestRetentionShortened: a website keeps everything at the defaults; once an admin shortens
// its retention, the next daily pass (a retention message on the purge queue, as the fan-out
// queues it) removes what is past it, of every kind, and nothing of another website or within
// it. A bad retention is a 422 that changes nothing.
func TestRetentionShortened(t *testing.T) {
	ctx := context.Background()
	e := newPurgeEnv(t)
	exports := awstest.Bucket(t)
	e.worker.WithExports(exports, model.Bounds(90, 400, 731))
	// The pass runs three days from now: what was written now is three days old.
	now := time.Now().UTC().AddDate(0, 0, 3)
	e.worker.SetNow(func() time.Time { return now })
	day := func(ago int) string { return now.AddDate(0, 0, -ago).Format(model.DayLayout) }
	old, recent := day(40), day(1)

	s := e.populate(apitest.AdminKey, "acme", "example.com")
	other := e.populate(apitest.OtherKey, "globex", "example.org")
	sw, err := e.Store.Website(ctx, s.account, s.id)
	if err != nil {
		t.Fatal(err)
	}
	reports := artifact.PageReportsPrefix(s.account, s.id, s.pages[0])
	oldReport, recentReport := reports+old+"-mobile.json.gz", reports+recent+"-mobile.json.gz"
	oldHAR := artifact.HARKey(oldReport)
	for _, k := range []string{oldReport, oldHAR, recentReport, artifact.ImageKey(oldReport, "frame-1.jpg")} {
		if err := e.objects.Put(ctx, k, []byte("x"), "application/gzip"); err != nil {
			t.Fatal(err)
		}
	}
	sess := e.rum.Session(s.account, s.id)
	for _, d := range []string{old, recent} {
		if err := sess.PutTable(ctx, model.RUMCell{Day: d, Dim: "p", Metric: "_n"}, []byte{0, 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i, d := range []string{old, recent} {
		at, _ := time.Parse(model.DayLayout, d)
		from, err := e.Store.WatchedState(ctx, sw, store.PageState(s.pages[i], "audit#mobile"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.ChangeState(ctx, sw, from, "failing", d, &model.Event{Type: "audit.failed", Page: s.pages[i], Occurred: at.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	exporter := export.New(e.Store, e.objects, rum.NewSegmentReader(e.rum, e.Store), exports)
	for _, d := range []string{old, recent} {
		if _, err := exporter.Website(ctx, sw, d); err != nil {
			t.Fatal(err)
		}
	}

	pass := func() {
		t.Helper()
		for _, w := range []site{s, other} {
			if err := e.worker.Purge(ctx, model.PurgeJob{Account: w.account, Website: w.id, Requested: now, Retention: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	objects := func(b *blobstore.Bucket, prefix string) []string {
		t.Helper()
		keys, err := b.Keys(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	events := func() int {
		t.Helper()
		evs, _, err := e.Store.Events(ctx, sw, model.EventFilter{}, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	rumDays := func() []string {
		t.Helper()
		var days []string
		for _, k := range objects(e.rumObj, blobstore.WebsitePrefix(s.account, s.id)+"rum/") {
			if d := k[len(blobstore.WebsitePrefix(s.account, s.id)+"rum/"):][:8]; !slices.Contains(days, d) {
				days = append(days, d)
			}
		}
		return days
	}

	// At the defaults (reports 90 days, events 90, real users' 400, exports 731) all stays.
	pass()
	if got := objects(e.objects, reports); len(got) != 5 { // with populate's report
		t.Fatalf("reports at the defaults: %v", got)
	}
	if n := events(); n != 2 {
		t.Fatalf("%d events at the defaults, want 2", n)
	}
	if got := rumDays(); !slices.Contains(got, old) {
		t.Fatalf("real users' days at the defaults: %v", got)
	}
	if got := objects(exports, ""); len(got) != 2*len(export.Datasets) {
		t.Fatalf("exports at the defaults: %v", got)
	}
	if got := objects(e.objects, s.seriesObject); len(got) != 1 {
		t.Fatalf("series artifacts at the defaults: %v", got)
	}

	// A bad retention is refused and changes nothing.
	e.as(apitest.AdminKey).Call(e.t, "PUT", "/"+s.id+"/data-settings", `{"retention":{"reports":5,"events":-1}}`, 422, nil)
	e.as(apitest.AdminKey).Call(e.t, "PUT", "/"+s.id+"/data-settings", `{"retention":{"reports":"long"}}`, 400, nil)
	var got struct {
		Retention, Effective model.Retention
	}
	e.as(apitest.AdminKey).Call(e.t, "GET", "/"+s.id+"/data-settings", "", 200, &got)
	if got.Retention != (model.Retention{}) || got.Effective.Reports != 90 {
		t.Fatalf("settings after bad requests: %+v", got)
	}

	e.as(apitest.AdminKey).Call(e.t, "PUT", "/"+s.id+"/data-settings", `{"retention":{"reports":31,"series":2,"rum":10,"events":10,"exports":10}}`, 200, &got)
	if got.Effective != (model.Retention{Reports: 31, Series: 2, RUM: 10, Events: 10, Exports: 10}) {
		t.Fatalf("effective retention %+v", got.Effective)
	}
	otherBefore := len(objects(e.objects, blobstore.WebsitePrefix(other.account, other.id)))
	// The next daily pass goes through the purge queue, as the fan-out's retention job sends it.
	if err := purge.NewQueue(e.queue).Enqueue(ctx, model.PurgeJob{Account: s.account, Website: s.id, Requested: now, Retention: true}); err != nil {
		t.Fatal(err)
	}
	if n := awstest.DrainAll(t, e.queue, 1, 10, e.worker.HandleSQS); n != 1 {
		t.Fatalf("%d messages handled, want 1", n)
	}
	kept := []string{s.pageObjects[s.pages[0]], recentReport}
	slices.Sort(kept)
	if got := objects(e.objects, reports); !slices.Equal(got, kept) {
		t.Fatalf("reports after shortening: %v, want only %v", got, kept)
	}
	if got := objects(e.objects, s.seriesObject); len(got) != 0 {
		t.Fatalf("series artifacts three days old with 2 days' retention: %v", got)
	}
	if n := events(); n != 1 {
		t.Fatalf("%d events after shortening, want 1", n)
	}
	if got := rumDays(); slices.Contains(got, old) || !slices.Contains(got, recent) {
		t.Fatalf("real users' days after shortening: %v, want %s and not %s", got, recent, old)
	}
	want := []string{}
	for _, ds := range export.Datasets {
		want = append(want, export.Key(ds, s.id, recent))
	}
	slices.Sort(want)
	if got := objects(exports, ""); !slices.Equal(got, want) {
		t.Fatalf("exports after shortening: %v, want %v", got, want)
	}
	if n := len(objects(e.objects, blobstore.WebsitePrefix(other.account, other.id))); n != otherBefore {
		t.Fatalf("the other website has %d objects, had %d", n, otherBefore)
	}
	// A second pass finds nothing more to remove.
	pass()
	if got := objects(e.objects, reports); !slices.Equal(got, kept) {
		t.Fatalf("reports after a second pass: %v", got)
	}

	// Deleting the website removes its remaining exports with the rest.
	e.as(apitest.AdminKey).Call(e.t, "DELETE", "/"+s.id, "", 204, nil)
	if err := e.worker.Purge(ctx, model.PurgeJob{Account: s.account, Website: s.id, Requested: now}); err != nil {
		t.Fatal(err)
	}
	if got := objects(exports, ""); len(got) != 0 {
		t.Fatalf("exports after the website's purge: %v", got)
	}
}
