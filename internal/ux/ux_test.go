package ux_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/ux"
)

// TestDailyQueuesEachWebsiteOncePerDay shows the daily handler queues one collection per
// website and UTC day, however often it runs, and that Track follows the recorded runs.
func TestDailyQueuesEachWebsiteOncePerDay(t *testing.T) {
	ctx := context.Background()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	q := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: queue.MaxReceives})
	sched := ux.NewQueue(st, q, awstest.Log(t))
	var sites []model.Website
	for _, d := range []string{"a.example", "b.example", "c.example"} {
		w := model.Website{Account: "acme", Domain: d, DisplayName: d}
		if err := st.CreateWebsite(ctx, &w); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, w)
	}
	day := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	first, err := sched.Daily(ctx, day)
	if err != nil || len(first) != 3 {
		t.Fatalf("first run queued %d (%v), want 3", len(first), err)
	}
	if again, err := sched.Daily(ctx, day.Add(5*time.Hour)); err != nil || len(again) != 0 {
		t.Errorf("second run the same day queued %d (%v), want 0", len(again), err)
	}
	if next, err := sched.Daily(ctx, day.Add(24*time.Hour)); err != nil || len(next) != 3 {
		t.Errorf("next day queued %d (%v), want 3", len(next), err)
	}
	bodies := awstest.Receive(t, q, 6)
	if len(bodies) != 6 {
		t.Fatalf("%d messages, want 6", len(bodies))
	}
	perDay := map[string]map[string]bool{}
	for _, b := range bodies {
		var j ux.Job
		if err := json.Unmarshal([]byte(b), &j); err != nil || j.Account != "acme" {
			t.Fatalf("message %s: %+v, %v", b, j, err)
		}
		if perDay[j.Day] == nil {
			perDay[j.Day] = map[string]bool{}
		}
		perDay[j.Day][j.Website] = true
	}
	if len(perDay["20261122"]) != 3 || len(perDay["20261123"]) != 3 {
		t.Errorf("websites per day %v, want the 3 websites on each of 20261122 and 20261123", perDay)
	}

	// Track: one finished, one failed for good, one retrying.
	for i, r := range []model.UXRun{
		{Day: "20261122", Attempt: 1, Finished: day.Add(time.Minute)},
		{Day: "20261122", Attempt: 3, Error: "CrUX answered 503 five times"},
		{Day: "20261122", Attempt: 1, Error: "CrUX answered 503 five times"},
	} {
		if err := st.PutUXRun(ctx, sites[i], r); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ux.Track(ctx, st, first)
	if want := (queue.Progress{Done: 1, Failed: 1, Retrying: 1}); err != nil || p != want {
		t.Errorf("Track = %+v, %v; want %+v", p, err, want)
	}
	if _, err := st.DeleteWebsite(ctx, sites[1]); err != nil {
		t.Fatal(err)
	}
	if p, err := ux.Track(ctx, st, first); err != nil || p.Done != 2 || p.Failed != 0 {
		t.Errorf("after deleting the failed website Track = %+v, %v; want it counted done", p, err)
	}
}
