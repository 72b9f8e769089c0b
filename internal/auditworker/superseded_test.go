package auditworker_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestSupersededDailyAuditIsSkipped: a daily audit queued by a fan-out attempt that a later
// one took over is dropped before anything runs (no browser, no result, no error recorded):
// the later attempt's copy audits the page.
func TestSupersededDailyAuditIsSkipped(t *testing.T) {
	ctx := context.Background()
	e := awstest.NewEnv(t)
	site, pages := e.Website(awstest.Acme("example.com"), model.Page{URL: "/"})
	day := model.Day(time.Now())
	k := store.WebsiteFanoutKey(model.SiteRef{Account: site.Account, Website: site.ID}, day, "audits", "0000")
	past := time.Now().Add(-time.Hour)
	for _, at := range []time.Time{past, time.Now()} { // the first attempt stopped; the second took over
		if _, held, err := e.Store.ClaimFanout(ctx, k, at, at.Add(time.Minute), 0); err != nil || !held {
			t.Fatal(held, err)
		}
	}
	// No runner and no browser: an audit that started would fail.
	w := auditworker.NewWorker(auditworker.WorkerConfig{Runs: 1, Scheme: "http"}, e.Store, e.Bucket(), nil, e.Log)
	job := audit.Job{Account: site.Account, Website: site.ID, Page: pages[0].ID, Device: "mobile", Queued: past, Day: day, Shard: "0000", Attempt: 1}
	if err := w.Audit(ctx, job, 1); err != nil {
		t.Fatalf("the superseded copy: %v, want it skipped", err)
	}
	if rs, err := e.Store.LabResults(ctx, site, pages[0].ID, "mobile", day, day); err != nil || len(rs) != 0 {
		t.Errorf("results %v (%v), want none", rs, err)
	}
	if e, err := e.Store.LastLabError(ctx, site, pages[0].ID, "mobile"); !model.IsNotFound(err) {
		t.Errorf("an error was recorded: %+v (%v)", e, err)
	}
}
