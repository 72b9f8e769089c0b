package multistep_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// newRuns makes a test's env, a queue of its own with settings s and the runs queued on it, and
// a website with a test of one navigation for each of aliases, in order.
func newRuns(t *testing.T, s queue.Settings, aliases ...string) (*awstest.Env, *queue.Queue, *multistep.Queue, model.Website, []model.Test) {
	t.Helper()
	e := awstest.NewEnv(t)
	q := e.Queue(s)
	w, _ := e.Website(awstest.Acme("example.com"))
	tests := make([]model.Test, len(aliases))
	for i, alias := range aliases {
		tests[i] = model.Test{Alias: alias, Device: "mobile", Steps: []step.Step{{Type: step.Navigate, Target: "/"}}}
		if err := e.Store.CreateTest(context.Background(), w, &tests[i]); err != nil {
			t.Fatal(err)
		}
	}
	return e, q, multistep.NewQueue(e.Store, q, e.Log), w, tests
}

// TestDailyRunsOncePerDay shows a website's share of the daily fan-out queues one run per test
// per UTC day, and that the fan-out's claim names each run by a key it reads back.
func TestDailyRunsOncePerDay(t *testing.T) {
	ctx := context.Background()
	e, q, runs, w, _ := newRuns(t, awstest.QueueSettings, "a", "b", "c")
	if err := e.Store.EnsureAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	var first []multistep.Job
	for i, want := range []int{3, 0} {
		jobs, err := runs.DailyWebsite(ctx, w, model.Day(day))
		if err != nil || len(jobs) != want {
			t.Errorf("run %d the same day queued %d (%v), want %d", i+1, len(jobs), err, want)
		}
		if i == 0 {
			first = jobs
		}
	}
	if jobs, err := runs.DailyWebsite(ctx, w, model.Day(day.Add(24*time.Hour))); err != nil || len(jobs) != 3 {
		t.Errorf("next day queued %d (%v), want 3", len(jobs), err)
	}
	for _, j := range first {
		back, err := multistep.JobOfKey(model.SiteRef{Account: w.Account, Website: w.ID}, j.Key())
		if err != nil || back != j {
			t.Errorf("job %+v read back from its key %q as %+v (%v)", j, j.Key(), back, err)
		}
	}
	if _, err := multistep.JobOfKey(model.SiteRef{}, "t/r/yesterday"); err == nil {
		t.Error("a key without a time was read")
	}
	// Track follows the runs by what the worker records: one completed, one failed, one not
	// played yet.
	for i, status := range []string{model.RunCompleted, model.RunFailed} {
		r, err := e.Store.GetRun(ctx, w, first[i].Test, first[i].Created, first[i].Run)
		if err != nil {
			t.Fatal(err)
		}
		r.Status = status
		if err := e.Store.UpdateRun(ctx, w, r); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := multistep.Track(ctx, e.Store, first); err != nil || p != (queue.Progress{Done: 1, Failed: 1, Remaining: 1}) {
		t.Errorf("progress %+v (%v), want 1 done, 1 failed, 1 remaining", p, err)
	}
	if got := awstest.Receive(t, q, 6); len(got) != 6 {
		t.Errorf("%d run messages, want 6", len(got))
	}
	tests, _ := e.Store.Tests(ctx, w)
	for _, tt := range tests {
		rs, err := e.Store.Runs(ctx, w, tt.ID, time.Time{}, 0)
		if err != nil || len(rs) != 2 || rs[0].Status != model.RunQueued {
			t.Errorf("test %s runs %+v (%v), want 2 queued", tt.Alias, rs, err)
		}
	}
}
