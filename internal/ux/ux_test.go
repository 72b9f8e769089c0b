package ux_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/ux"
)

// TestDailyWebsiteAndTrack shows a website's share of the daily fan-out queues one collection
// of the day (once a day is the fan-out's claim: see internal/fanoutworker), and that Track
// follows the recorded runs.
func TestDailyWebsiteAndTrack(t *testing.T) {
	ctx := context.Background()
	e := awstest.NewEnv(t)
	q := e.Queue(queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: queue.MaxReceives})
	sched := ux.NewQueue(q)
	var sites []model.Website
	var first []ux.Job
	day := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for _, d := range []string{"a.example", "b.example", "c.example"} {
		w, _ := e.Website(awstest.Acme(d))
		sites = append(sites, w)
		ref := model.SiteRef{Account: w.Account, Website: w.ID}
		if err := sched.DailyWebsite(ctx, ref, model.Day(day), day); err != nil {
			t.Fatal(err)
		}
		first = append(first, ux.Job{Account: w.Account, Website: w.ID, Day: model.Day(day), Queued: day})
	}
	bodies := awstest.Receive(t, q, 3)
	if len(bodies) != 3 {
		t.Fatalf("%d messages, want 3", len(bodies))
	}
	seen := map[string]bool{}
	for _, b := range bodies {
		var j ux.Job
		if err := json.Unmarshal([]byte(b), &j); err != nil || j.Account != "acme" || j.Day != "20261122" || !j.Queued.Equal(day) {
			t.Fatalf("message %s: %+v, %v", b, j, err)
		}
		seen[j.Website] = true
	}
	if len(seen) != 3 {
		t.Errorf("websites %v, want the 3", seen)
	}

	// Track: one finished, one failed for good, one retrying.
	for i, r := range []model.UXRun{
		{Day: "20261122", Attempt: 1, Finished: day.Add(time.Minute)},
		{Day: "20261122", Attempt: 3, Error: "CrUX answered 503 five times"},
		{Day: "20261122", Attempt: 1, Error: "CrUX answered 503 five times"},
	} {
		if err := e.Store.PutUXRun(ctx, sites[i], r); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ux.Track(ctx, e.Store, first)
	if want := (queue.Progress{Done: 1, Failed: 1, Retrying: 1}); err != nil || p != want {
		t.Errorf("Track = %+v, %v; want %+v", p, err, want)
	}
	if _, err := e.Store.DeleteWebsite(ctx, sites[1]); err != nil {
		t.Fatal(err)
	}
	if p, err := ux.Track(ctx, e.Store, first); err != nil || p.Done != 2 || p.Failed != 0 {
		t.Errorf("after deleting the failed website Track = %+v, %v; want it counted done", p, err)
	}
}
