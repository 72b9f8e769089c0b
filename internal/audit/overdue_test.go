package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestOverdueSeriesTestsEndOrQueueAgain: series tests whose audit messages are lost do not stay
// queued or testing. Before the audit queue's deadline (a visibility timeout per delivery)
// nothing changes; after it, a test whose audit never began is queued again once, with a new
// message; a test whose audit began, or that was queued again and is overdue again, ends
// failed with a reason. A test that ended is not touched, and the series ends.
func TestOverdueSeriesTestsEndOrQueueAgain(t *testing.T) {
	ctx := context.Background()
	e, q, s := newQueue(t)
	deadline := awstest.Deadline(t, q)
	w, pages := e.Website(awstest.Acme("example.com"), model.Page{URL: "/", Alias: "Home"}, model.Page{URL: "/shop", Alias: "Shop"})
	series, tests, n, err := s.Series(ctx, w, audit.SeriesRequest{Targets: []audit.Target{
		{Page: pages[0], Device: "desktop"}, // never delivered
		{Page: pages[0], Device: "mobile"},  // began, then its worker stopped for good
		{Page: pages[1], Device: "desktop"}, // completed
	}})
	if err != nil || n != 3 {
		t.Fatalf("series: %d queued, %v", n, err)
	}
	// Every message is lost (received and deleted, as a stand-in that restarted would).
	if got := awstest.Receive(t, q, 3); len(got) != 3 {
		t.Fatalf("%d messages, want 3", len(got))
	}
	if _, err := e.Store.StartSeriesTest(ctx, w, tests[1].ID, *tests[1].Queued); err != nil {
		t.Fatal(err)
	}
	done := tests[2]
	done.Status, done.Metrics = model.RunCompleted, map[string]float64{"lcp": 900}
	if _, err := e.Store.FinishSeriesTest(ctx, w, done); err != nil {
		t.Fatal(err)
	}
	status := func() ([]model.SeriesTest, model.TestSeries) {
		t.Helper()
		all, err := e.Store.SeriesTests(ctx, w, series.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Store.TestSeries(ctx, w, series.ID)
		if err != nil {
			t.Fatal(err)
		}
		return all, got
	}

	created := series.Created
	if swept, err := s.Overdue(ctx, created.Add(deadline-time.Second), deadline); err != nil || swept != (queue.Swept{}) {
		t.Fatalf("before the deadline: %+v, %v; want nothing done", swept, err)
	}
	sweep1 := created.Add(deadline + time.Minute) // past the started test's deadline too
	if swept, err := s.Overdue(ctx, sweep1, deadline); err != nil || swept != (queue.Swept{Requeued: 1, Failed: 1}) {
		t.Fatalf("after the deadline: %+v, %v; want one queued again, one failed", swept, err)
	}
	all, got := status()
	if all[0].Status != model.RunQueued || all[0].Requeued != 1 || all[0].Queued == nil || !all[0].Queued.Equal(sweep1) {
		t.Errorf("the test never delivered: %+v; want queued again at %s", all[0], sweep1)
	}
	if all[1].Status != model.RunFailed || !strings.HasPrefix(all[1].Error, "no result after 3m") || all[2].Status != model.RunCompleted {
		t.Errorf("the test that began: %+v; the completed one: %+v", all[1], all[2])
	}
	if got.Status() != model.RunTesting || got.Finished != 2 || got.Failed != 1 {
		t.Errorf("series %+v: %s", got, got.Status())
	}
	msgs := awstest.Receive(t, q, 1) // lost again
	var job audit.Job
	if len(msgs) != 1 || json.Unmarshal([]byte(msgs[0]), &job) != nil || job.Test != tests[0].ID || !job.Queued.Equal(sweep1) || job.Device != "desktop" {
		t.Fatalf("messages queued again %v, want the never delivered test's, queued at %s", msgs, sweep1)
	}

	// Overdue again: it ends failed; nothing else is done, then or later.
	if swept, err := s.Overdue(ctx, sweep1.Add(deadline-time.Second), deadline); err != nil || swept != (queue.Swept{}) {
		t.Fatalf("before its second deadline: %+v, %v", swept, err)
	}
	sweep2 := sweep1.Add(deadline + 5*time.Second)
	if swept, err := s.Overdue(ctx, sweep2, deadline); err != nil || swept != (queue.Swept{Failed: 1}) {
		t.Fatalf("after its second deadline: %+v, %v; want it failed", swept, err)
	}
	all, got = status()
	if all[0].Status != model.RunFailed || all[0].Error != "no result after 3m5s: the audit's message was lost, or every attempt was stopped before it could record an error" ||
		all[0].Finished == nil || !all[0].Finished.Equal(sweep2) {
		t.Errorf("the test queued again and lost again: %+v", all[0])
	}
	if got.Status() != model.RunFailed || got.Finished != 3 || got.Failed != 2 {
		t.Errorf("series %+v: %s, want failed with 2 of 3 failed", got, got.Status())
	}
	if pending, err := e.Store.PendingSeriesTests(ctx); err != nil || len(pending) != 0 {
		t.Errorf("pending tests %+v (%v), want none", pending, err)
	}
	if swept, err := s.Overdue(ctx, sweep2.Add(24*time.Hour), deadline); err != nil || swept != (queue.Swept{}) {
		t.Errorf("a day later: %+v, %v; want nothing left to do", swept, err)
	}
}

// TestRequeueQueuesEveryUnfinishedTest: the local service's start queues again every series
// test without an outcome, whatever its age and status, without counting it as a sweep's
// requeue; ended tests and tests of deleted websites are left (their markers dropped).
func TestRequeueQueuesEveryUnfinishedTest(t *testing.T) {
	ctx := context.Background()
	e, q, s := newQueue(t)
	var sites []model.Website
	for _, domain := range []string{"example.com", "gone.example"} {
		w, _ := e.Website(awstest.Acme(domain), model.Page{URL: "/", Alias: "Home"})
		sites = append(sites, w)
	}
	var tests []model.SeriesTest
	for _, w := range sites {
		pages, _ := e.Store.Pages(ctx, w)
		_, ts, _, err := s.Series(ctx, w, audit.SeriesRequest{Targets: []audit.Target{{Page: pages[0], Device: "desktop"}, {Page: pages[0], Device: "mobile"}}})
		if err != nil {
			t.Fatal(err)
		}
		tests = append(tests, ts...)
	}
	awstest.Receive(t, q, 4)
	if _, err := e.Store.StartSeriesTest(ctx, sites[0], tests[1].ID, *tests[1].Queued); err != nil { // testing when the service stopped
		t.Fatal(err)
	}
	if _, err := e.Store.DeleteWebsite(ctx, sites[1]); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	swept, err := s.Requeue(ctx, now)
	if err != nil || swept != (queue.Swept{Requeued: 2, Dropped: 2}) {
		t.Fatalf("requeue: %+v, %v; want the live website's two tests queued again, the deleted one's dropped", swept, err)
	}
	msgs := awstest.Receive(t, q, 2)
	seen := map[string]bool{}
	for _, m := range msgs {
		var job audit.Job
		if err := json.Unmarshal([]byte(m), &job); err != nil || !job.Queued.Equal(now) {
			t.Errorf("message %s: want queued at %s", m, now)
		}
		seen[job.Test] = true
	}
	if len(msgs) != 2 || !seen[tests[0].ID] || !seen[tests[1].ID] {
		t.Errorf("messages %v, want the two tests of the live website", msgs)
	}
	all, _ := e.Store.SeriesTests(ctx, sites[0], tests[0].Series)
	for _, tt := range all {
		if tt.Requeued != 0 || tt.Queued == nil || !tt.Queued.Equal(now) || tt.IsFinished() {
			t.Errorf("test after the restart: %+v", tt)
		}
	}
}
