package event_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/eventtest"
)

// types are the queued events' types with their statuses before and after.
func types(q *eventtest.Queue) []string {
	var out []string
	for _, ev := range q.Events() {
		out = append(out, ev.Type+":"+ev.Before+">"+ev.After)
	}
	return out
}

func setup(t *testing.T) (*store.Store, model.Website, model.Page, *event.Recorder, *eventtest.Queue) {
	t.Helper()
	ctx := context.Background()
	st := awstest.Store(t, awstest.Clients(t))
	w := model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"}
	if err := st.CreateWebsite(ctx, &w); err != nil {
		t.Fatal(err)
	}
	pages := []model.Page{{URL: "/checkout"}}
	if err := st.CreatePages(ctx, w, pages); err != nil {
		t.Fatal(err)
	}
	q := &eventtest.Queue{}
	return st, w, pages[0], event.NewRecorder(st, q, awstest.Log(t)), q
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAuditFailingTwoDaysRunning: one failed day is not news; the second day running is
// audit.failing, once however often it is detected; a success is audit.recovered, once.
func TestAuditFailingTwoDaysRunning(t *testing.T) {
	ctx := context.Background()
	_, w, p, rec, q := setup(t)
	steps := []struct {
		fail bool
		day  string
		want []string
	}{
		{true, "20261120", nil},
		{true, "20261120", nil}, // a retry of the same day
		{false, "", nil},        // a success clears the day
		{true, "20261121", nil},
		{true, "20261123", nil}, // not the day after: counts afresh
		{true, "20261124", []string{"audit.failing:passing>failing"}},
		{true, "20261124", []string{"audit.failing:passing>failing"}}, // redelivered
		{true, "20261125", []string{"audit.failing:passing>failing"}},
		{false, "", []string{"audit.failing:passing>failing", "audit.recovered:failing>passing"}},
		{false, "", []string{"audit.failing:passing>failing", "audit.recovered:failing>passing"}},
	}
	for i, s := range steps {
		var err error
		if s.fail {
			err = rec.AuditFailed(ctx, w, p, "mobile", s.day, "the host does not resolve")
		} else {
			err = rec.AuditSucceeded(ctx, w, p, "mobile")
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := types(q); !equal(got, s.want) {
			t.Fatalf("step %d: events %v, want %v", i, got, s.want)
		}
	}
}

// TestBudgetAndTestEvents: a budget's first status is news only when it is not ok; a
// multistep test's first state only when it is down; a failed run after a completed one is
// multistep.run_failed, once.
func TestBudgetAndTestEvents(t *testing.T) {
	ctx := context.Background()
	st, w, _, rec, q := setup(t)
	ok := model.Budget{Metric: "cls", Operator: "lt", Value: 0.1, Device: "all"}
	over := model.Budget{Metric: "lcp", Operator: "lt", Value: 2500, Device: "mobile"}
	for _, b := range []*model.Budget{&ok, &over} {
		if err := st.CreateBudget(ctx, w, b); err != nil {
			t.Fatal(err)
		}
	}
	statuses := fixedReports{ok.ID: budget.OK, over.ID: budget.Exceeded}
	for range 2 {
		if err := rec.Budgets(ctx, w, event.Measured{Page: model.Page{ID: "home"}, Device: "mobile", Day: "20261120"}, statuses); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := types(q), []string{"budget.status_changed:ok>exceeded"}; !equal(got, want) {
		t.Fatalf("budget events %v, want %v", got, want)
	}

	test := model.Test{Alias: "Checkout", Device: "desktop"}
	if err := st.CreateTest(ctx, w, &test); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	run := func(status string, ago time.Duration) model.Run {
		return model.Run{ID: model.NewID(), Test: test.ID, Created: now.Add(-ago), Status: status, Error: "step 2: element not found"}
	}
	completed, failed, failedAgain := run(model.RunCompleted, 3*time.Hour), run(model.RunFailed, 2*time.Hour), run(model.RunFailed, time.Hour)
	q.Reset()
	if err := rec.Test(ctx, w, test, completed, []model.Run{completed}, now); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time as a redelivered message
		if err := rec.Test(ctx, w, test, failed, []model.Run{completed, failed}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Test(ctx, w, test, failedAgain, []model.Run{completed, failed, failedAgain}, now); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"multistep.state_changed:up>" + multistep.StateFlaky,
		"multistep.run_failed:completed>failed",
		"multistep.state_changed:" + multistep.StateFlaky + ">" + multistep.StateDown,
	}
	if got := types(q); !equal(got, want) {
		t.Fatalf("test events %v, want %v", got, want)
	}
}
