package purgeworker_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/purgeworker"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/poll"
)

type purgeEnv struct {
	*awstest.Env
	t       *testing.T
	objects *blobstore.Bucket
	rum     *rumstore.Store
	rumObj  *blobstore.Bucket // the real-user bucket rum keeps its objects in
	queue   *queue.Queue
	worker  *purgeworker.Worker
	handler http.Handler
}

// newPurgeEnv's worker ends a purge in one pass; newSettlingPurgeEnv's passes again until
// settle has passed since the deletion.
func newPurgeEnv(t *testing.T) *purgeEnv { return newSettlingPurgeEnv(t, 0) }

func newSettlingPurgeEnv(t *testing.T, settle time.Duration) *purgeEnv {
	env := awstest.NewEnv(t)
	e := &purgeEnv{Env: env, t: t, objects: env.Bucket(), rumObj: env.Bucket(),
		queue: env.Queue(queue.Settings{VisibilityTimeout: 30 * time.Second, MaxReceives: 3})}
	log := env.Log
	e.rum = rumstore.New(e.Store, e.rumObj, 400*24*time.Hour, log)
	e.worker = purgeworker.NewWorker(e.Store, e.objects, e.rum, purge.NewQueue(e.queue), settle, log)
	e.handler = api.New(api.Deps{Store: e.Store, Purger: purge.NewQueue(e.queue), Log: log}).Handler()
	apitest.Provision(t, e.Store, apitest.Admin, apitest.Other)
	return e
}

// as is the API as the holder of key calls it.
func (e *purgeEnv) as(key string) apitest.Client {
	return apitest.Client{Handler: e.handler, Key: key}
}

// site is a website with everything that can belong to one: pages with results and stored
// reports, a budget, a multistep test with runs.
type site struct {
	account, id    string
	pages          []string
	test           string
	pageObjects    map[string]string
	experiments    map[string]string // page -> its experiment
	testObject     string
	websiteObjects string
	seriesObject   string
}

func (e *purgeEnv) populate(key, account, domain string) site {
	e.t.Helper()
	var w struct{ ID string }
	e.as(key).Call(e.t, "POST", "/account/websites", `{"domain":"`+domain+`"}`, 201, &w)
	var pages []struct{ ID string }
	e.as(key).Call(e.t, "POST", "/"+w.ID+"/settings/pages", `[{"url":"/"},{"url":"/pricing"}]`, 200, &pages)
	e.as(key).Call(e.t, "POST", "/"+w.ID+"/budgets", `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`, 201, nil)
	var test struct{ ID string }
	e.as(key).Call(e.t, "POST", "/"+w.ID+"/multistep", `{"alias":"t","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`, 201, &test)
	s := site{account: account, id: w.ID, test: test.ID, pageObjects: map[string]string{}, experiments: map[string]string{}}
	ctx := context.Background()
	sw, err := e.Store.Website(ctx, account, w.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	// Results of later stages: per-page items and reports, per-test runs, website-wide items.
	for _, p := range pages {
		s.pages = append(s.pages, p.ID)
		for _, sk := range []string{"LAB#desktop#20261120", "LAB#mobile#20261120", "OPP#uses-http2"} {
			e.putRaw(account, w.ID, store.PageItemsPrefix(p.ID)+sk)
		}
		s.pageObjects[p.ID] = blobstore.PagePrefix(account, w.ID, p.ID) + "lighthouse/20261120-desktop.json.gz"
		if err := e.objects.Put(ctx, s.pageObjects[p.ID], []byte("report"), "application/gzip"); err != nil {
			e.t.Fatal(err)
		}
		// An experiment on the page, with its control's diagnostics and one of their images,
		// stored as the audit worker stores them (under the website's prefix).
		x := model.Experiment{ID: "exp_" + model.NewID(), Page: p.ID, Device: "mobile", Status: model.RunCompleted,
			Changes: model.ExperimentChanges{Block: []string{"*://ads.example/*"}}}
		if err := e.Store.CreateExperiment(ctx, sw, &x); err != nil {
			e.t.Fatal(err)
		}
		s.experiments[p.ID] = x.ID
		report := artifact.ExperimentReportKey(account, w.ID, x.ID, "control")
		for _, k := range []string{artifact.DiagnosticsKey(report), artifact.ImageKey(report, "frame-1.jpg")} {
			if err := e.objects.Put(ctx, k, []byte("x"), "application/octet-stream"); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	e.putRaw(account, w.ID, store.TestItemsPrefix(test.ID)+"RUN#20261120T000000")
	s.testObject = blobstore.TestPrefix(account, w.ID, test.ID) + "run1/screenshot.png"
	s.websiteObjects = blobstore.WebsitePrefix(account, w.ID) + "rum/20261120.bin"
	e.putRaw(account, w.ID, "RUM#20261120#/")
	// Real users' views: a log entry in S3, then folded into the day's object.
	rumLog := []model.RUMChunk{{Account: account, Website: w.ID, Key: rumstore.LogKey(time.Now(), "x"), Views: 1, Data: make([]byte, 5000)}}
	if err := e.rum.Append(ctx, rumLog); err != nil {
		e.t.Fatal(err)
	}
	sess := e.rum.Session(account, w.ID)
	if err := sess.PutTable(ctx, model.RUMCell{Day: "20261120", Dim: "p", Metric: "_n"}, []byte{0, 0}); err != nil {
		e.t.Fatal(err)
	}
	if err := sess.Commit(ctx, nil); err != nil {
		e.t.Fatal(err)
	}
	// A test series of the first page, with its test's report.
	series := model.TestSeries{ID: model.NewSeriesID(time.Now()), Created: time.Now(), Description: "Deploy"}
	tt := model.SeriesTest{ID: model.SeriesTestID(series.ID, 0), Series: series.ID, Page: s.pages[0], Device: "mobile", Status: model.RunQueued}
	if err := e.Store.CreateTestSeries(ctx, sw, series, []model.SeriesTest{tt}); err != nil {
		e.t.Fatal(err)
	}
	s.seriesObject = artifact.SeriesReportKey(account, w.ID, series.ID, tt.ID)
	for _, k := range []string{s.testObject, s.websiteObjects, s.seriesObject} {
		if err := e.objects.Put(ctx, k, []byte("x"), "application/octet-stream"); err != nil {
			e.t.Fatal(err)
		}
	}
	return s
}

// putRaw writes an item the way later stages will: in the website's partition.
func (e *purgeEnv) putRaw(account, website, sk string) {
	e.t.Helper()
	e.Table().Put(map[string]any{"PK": awstest.WebsitePK(account, website), "SK": sk})
}

// runWorker consumes the purge queue, as the purge Lambda would, until no purge is pending.
func (e *purgeEnv) runWorker() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.queue.Poll(ctx, 10, e.worker.HandleSQS, awstest.Log(e.t)); close(done) }()
	defer func() { cancel(); <-done }()
	poll.Until(e.t, "the pending purges' end", time.Minute, func() bool {
		pending, err := e.Store.PendingPurges(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		return len(pending) == 0 && awstest.Depth(e.t, e.queue) == 0
	})
}

// rumObjects counts a website's real-user objects (its day objects and log entries).
func (e *purgeEnv) rumObjects(account, website string) int {
	e.t.Helper()
	keys, err := e.rumObj.Keys(context.Background(), blobstore.WebsitePrefix(account, website))
	if err != nil {
		e.t.Fatal(err)
	}
	return len(keys)
}

func (e *purgeEnv) objectCount(prefix string) int {
	e.t.Helper()
	keys, err := e.objects.Keys(context.Background(), prefix)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(keys)
}

func TestPurgeLeavesNothing(t *testing.T) {
	e := newPurgeEnv(t)
	acme := e.populate(apitest.AdminKey, "acme", "example.com")
	globex := e.populate(apitest.OtherKey, "globex", "example.com")
	globexBefore := filter(e.Table().Keys(), "globex")

	// A deleted page: its results and reports go; the other page's stay.
	e.as(apitest.AdminKey).Call(e.t, "DELETE", "/"+acme.id+"/settings/"+acme.pages[0], "", 204, nil)
	e.runWorker()
	items := e.Table().Keys()
	if n := len(filter(items, store.PageItemsPrefix(acme.pages[0]))); n != 0 {
		t.Errorf("%d items of the deleted page remain", n)
	}
	// Its 3 results and the pointer from its ID to its URL.
	if n := len(filter(items, store.PageItemsPrefix(acme.pages[1]))); n != 4 {
		t.Errorf("the other page has %d items, want its 4", n)
	}
	if e.objectCount(blobstore.PagePrefix("acme", acme.id, acme.pages[0])) != 0 || e.objectCount(acme.pageObjects[acme.pages[1]]) != 1 {
		t.Error("page purge removed the wrong objects")
	}
	// Its experiment goes, objects and all; the other page's stays.
	if n := len(filter(filter(items, acme.id), "|EXPERIMENT#")); n != 1 || len(filter(items, acme.experiments[acme.pages[1]])) != 1 {
		t.Errorf("%d experiments after the page's purge, want the other page's", n)
	}
	if e.objectCount(artifact.ExperimentPrefix("acme", acme.id, acme.experiments[acme.pages[0]])) != 0 ||
		e.objectCount(artifact.ExperimentPrefix("acme", acme.id, acme.experiments[acme.pages[1]])) != 2 {
		t.Error("page purge left its experiment's objects or took the other page's")
	}
	// A test series of the page stays with its website, report and all.
	if e.objectCount(acme.seriesObject) != 1 || len(filter(items, "|TS#")) != 2 || len(filter(items, "|TT#")) != 2 {
		t.Error("page purge removed a test series of the page")
	}

	// A deleted experiment: its objects go, and the page it measured stays.
	e.as(apitest.AdminKey).Call(e.t, "DELETE", "/"+acme.id+"/experiments/"+acme.experiments[acme.pages[1]], "", 204, nil)
	e.runWorker()
	items = e.Table().Keys()
	if n := len(filter(filter(items, acme.id), "|EXPERIMENT#")); n != 0 {
		t.Errorf("%d experiments after the last one's deletion", n)
	}
	if e.objectCount(artifact.ExperimentPrefix("acme", acme.id, acme.experiments[acme.pages[1]])) != 0 {
		t.Error("the deleted experiment's objects remain")
	}
	if n := len(filter(items, store.PageItemsPrefix(acme.pages[1]))); n != 4 || e.objectCount(acme.pageObjects[acme.pages[1]]) != 1 {
		t.Error("an experiment's purge touched its page")
	}

	// A deleted multistep test: its runs go.
	e.as(apitest.AdminKey).Call(e.t, "DELETE", "/"+acme.id+"/multistep/"+acme.test, "", 204, nil)
	e.runWorker()
	if n := len(filter(e.Table().Keys(), store.TestItemsPrefix(acme.test))); n != 0 {
		t.Errorf("%d items of the deleted test remain", n)
	}
	if e.objectCount(acme.testObject) != 0 {
		t.Error("the deleted test's objects remain")
	}

	// A deleted website: nothing of it is left in the table or the bucket.
	e.as(apitest.AdminKey).Call(e.t, "DELETE", "/"+acme.id, "", 204, nil)
	e.runWorker()
	items = e.Table().Keys()
	for _, k := range items {
		if strings.Contains(k, acme.id) || strings.Contains(k, "example.com") && strings.HasPrefix(k, "A#acme|") || strings.HasPrefix(k, "PURGE|") {
			t.Errorf("left behind: %s", k)
		}
	}
	if want := []string{"A#acme|ACCOUNT"}; strings.Join(filter(items, "acme"), ",") != strings.Join(want, ",") {
		t.Errorf("acme's items after the purge: %v, want only %v", filter(items, "acme"), want)
	}
	if n := e.objectCount(blobstore.WebsitePrefix("acme", acme.id)); n != 0 {
		t.Errorf("%d objects of the deleted website remain", n)
	}
	if n, m := e.rumObjects("acme", acme.id), e.rumObjects("globex", globex.id); n != 0 || m != 2 {
		t.Errorf("%d real-user objects of the deleted website remain, and %d of the other one, want 0 and its 2", n, m)
	}
	// Another account's website on the same domain is untouched.
	if got := filter(items, "globex"); strings.Join(got, ",") != strings.Join(globexBefore, ",") {
		t.Errorf("globex's items changed: %v, was %v", got, globexBefore)
	}
	if n := e.objectCount(blobstore.WebsitePrefix("globex", globex.id)); n != 9 {
		t.Errorf("globex has %d objects, want 9", n)
	}

	// Purging again, or a repeated message, is harmless.
	job := model.PurgeJob{Account: "acme", Website: acme.id}
	if err := e.worker.Purge(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if err := purge.NewQueue(e.queue).Enqueue(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	e.runWorker()
	if got := filter(e.Table().Keys(), "globex"); strings.Join(got, ",") != strings.Join(globexBefore, ",") {
		t.Errorf("a repeated purge touched globex: %v", got)
	}
}

// TestPurgePassesAgainUntilSettled shows that what a worker busy with a website stores after
// the website's deletion (a report, a result, a run's screenshot) is removed by the purge's
// later passes, and that the marker stays until the last one.
func TestPurgePassesAgainUntilSettled(t *testing.T) {
	const settle = 3 * time.Second
	e := newSettlingPurgeEnv(t, settle)
	acme := e.populate(apitest.AdminKey, "acme", "example.com")
	e.as(apitest.AdminKey).Call(e.t, "DELETE", "/"+acme.id, "", 204, nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.queue.Poll(ctx, 10, e.worker.HandleSQS, awstest.Log(e.t)); close(done) }()
	defer func() { cancel(); <-done }()

	// The first pass removes what existed at the deletion and leaves the marker.
	first := time.Now().Add(30 * time.Second) // a bound for a stuck worker, not a speed check
	for len(filter(e.Table().Keys(), acme.id)) > 1 && time.Now().Before(first) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := filter(e.Table().Keys(), acme.id); len(got) != 1 || !strings.HasPrefix(got[0], "PURGE|") {
		t.Fatalf("after the first pass: %v, want the purge marker only", got)
	}
	// A worker that was busy with the website finishes now and stores its results.
	late := blobstore.PagePrefix("acme", acme.id, acme.pages[0]) + "lighthouse/late-desktop.json.gz"
	if err := e.objects.Put(context.Background(), late, []byte("report"), "application/gzip"); err != nil {
		t.Fatal(err)
	}
	e.putRaw("acme", acme.id, store.PageItemsPrefix(acme.pages[0])+"LAB#desktop#20261121")
	e.putRaw("acme", acme.id, "OPP#late-opportunity")

	deadline := time.Now().Add(60 * time.Second)
	for len(filter(e.Table().Keys(), acme.id)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := filter(e.Table().Keys(), acme.id); len(got) != 0 {
		t.Errorf("left behind after the last pass: %v", got)
	}
	if n := e.objectCount(blobstore.WebsitePrefix("acme", acme.id)); n != 0 {
		t.Errorf("%d objects of the deleted website remain after the last pass", n)
	}
}

// TestSweepRequeuesLostPurges shows a purge whose message never reached the queue is found
// again from its marker and done.
func TestSweepRequeuesLostPurges(t *testing.T) {
	e := newPurgeEnv(t)
	acme := e.populate(apitest.AdminKey, "acme", "example.com")
	w, err := e.Store.Website(context.Background(), "acme", acme.id)
	if err != nil {
		t.Fatal(err)
	}
	// Delete without queuing, as if SQS had been unreachable.
	if _, err := e.Store.DeleteWebsite(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	pq := purge.NewQueue(e.queue)
	if n, err := purge.Sweep(context.Background(), e.Store, pq, time.Hour); err != nil || n != 0 {
		t.Fatalf("sweep within the grace period queued %d (%v), want 0", n, err)
	}
	if n, err := purge.Sweep(context.Background(), e.Store, pq, 0); err != nil || n != 1 {
		t.Fatalf("sweep queued %d (%v), want 1", n, err)
	}
	e.runWorker()
	for _, k := range e.Table().Keys() {
		if strings.Contains(k, acme.id) {
			t.Errorf("left behind: %s", k)
		}
	}
}

func TestPoisonMessageIsReportedAsFailure(t *testing.T) {
	e := newPurgeEnv(t)
	resp, err := e.worker.HandleSQS(context.Background(), awstest.SQSEvent(`{"account":"acme"}`, `not json`, `{"account":"acme","website":"nosuchsite"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 2 || resp.BatchItemFailures[0].ItemIdentifier != "m0" || resp.BatchItemFailures[1].ItemIdentifier != "m1" {
		t.Errorf("failures %+v, want m0 and m1 (a purge of nothing succeeds)", resp.BatchItemFailures)
	}
}

// filter keeps the keys that contain s.
func filter(keys []string, s string) []string {
	var out []string
	for _, k := range keys {
		if strings.Contains(k, s) {
			out = append(out, k)
		}
	}
	return out
}
