package event_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// fixedReports reports each budget in its status (ok when it has none) with one page and
// device off it when it is not ok.
type fixedReports map[string]string

func (f fixedReports) Reports(_ context.Context, _ model.Website, budgets []model.Budget) ([]budget.Report, error) {
	out := make([]budget.Report, len(budgets))
	for i, b := range budgets {
		status := f[b.ID]
		if status == "" {
			status = budget.OK
		}
		out[i] = budget.Report{Budget: b, Status: status, Pages: []budget.PageStatus{}}
		if status != budget.OK {
			out[i].Pages = []budget.PageStatus{{Page: model.Page{ID: "home"}, Device: "mobile", Status: status}}
		}
	}
	return out, nil
}

// oldSummary is a budget.status_changed event's summary as it always was: the budget, its
// device and the measurement methods of its values, its statuses and how many pages and
// devices are off it.
func oldSummary(b model.Budget, methods []string, before, after string, off int) string {
	op := "below"
	if b.Operator == "gt" {
		op = "above"
	}
	pages := strconv.Itoa(off) + " pages and devices off it"
	switch off {
	case 0:
		pages = "every page within it"
	case 1:
		pages = "1 page and device off it"
	}
	where := b.Device
	if len(methods) > 0 {
		where += ", " + strings.Join(methods, " and ") + " throttling"
	}
	return fmt.Sprintf("Budget %s %s %s (%s): %s → %s, %s", metrics.Label(b.Metric), op, wantValue(b), where, before, after, pages)
}

// wantValue is a budget's threshold as a person reads it: grouped digits and the metric's
// unit (none for a score).
func wantValue(b model.Budget) string {
	s := strconv.FormatFloat(b.Value, 'f', -1, 64)
	if b.Value >= 1000 && b.Value == float64(int64(b.Value)) {
		s = fmt.Sprintf("%d,%03d", int64(b.Value)/1000, int64(b.Value)%1000)
	}
	for _, n := range metrics.Names {
		if n.Field == b.Metric && n.Unit != "" && n.Unit != "score" {
			return s + " " + n.Unit
		}
	}
	return s
}

// TestBudgetsAsIfEveryPageJudged plays 160 audits of a website's 6 pages with values drawn at
// random, a budget changed, one added and one deleted, a page deleted and a new day, and checks
// after each that the budgets' events are those every page judged after every audit gives (as
// the events always were: the status as bad as its worst page and device, and the same text),
// and that each budget's recorded status is the budgets list's.
func TestBudgetsAsIfEveryPageJudged(t *testing.T) {
	ctx := context.Background()
	st, w, _, rec, q := setup(t)
	today := time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC)
	reader := metrics.NewReader(st, func() time.Time { return today })
	checker := budget.NewChecker(st, reader)
	pages := make([]model.Page, 6)
	for i := range pages {
		pages[i].URL = "/p/" + strconv.Itoa(i)
	}
	if err := st.CreatePages(ctx, w, pages); err != nil {
		t.Fatal(err)
	}
	budgets := []*model.Budget{
		{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"},
		{Metric: "cls", Operator: "lt", Value: 0.1, Device: "mobile"},
		{Metric: "performance_score", Operator: "gt", Value: 90, Device: "desktop"},
	}
	for _, b := range budgets {
		if err := st.CreateBudget(ctx, w, b); err != nil {
			t.Fatal(err)
		}
	}

	last := map[string]string{} // each budget's status as the events told it
	var want []string
	rng := rand.New(rand.NewPCG(7, 11))
	live := slices.Clone(pages)
	for step := range 160 {
		switch step {
		case 40: // a budget made stricter
			budgets[0].Value = 2000
			if err := st.UpdateBudget(ctx, w, *budgets[0]); err != nil {
				t.Fatal(err)
			}
		case 70: // a page deleted and purged
			job, err := st.DeletePage(ctx, w, live[3])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.PurgeItems(ctx, job); err != nil {
				t.Fatal(err)
			}
			live = slices.Delete(live, 3, 4)
		case 100: // the next day
			today = today.AddDate(0, 0, 1)
		case 120: // a budget added, one deleted
			b := &model.Budget{Metric: "tbt", Operator: "lt", Value: 300, Device: "all"}
			if err := st.CreateBudget(ctx, w, b); err != nil {
				t.Fatal(err)
			}
			if err := st.DeleteBudget(ctx, w, budgets[1].ID); err != nil {
				t.Fatal(err)
			}
			delete(last, budgets[1].ID)
			budgets = append(slices.Delete(budgets, 1, 2), b)
		}
		p := live[rng.IntN(len(live))]
		device := []string{"desktop", "mobile"}[rng.IntN(2)]
		pick := func(v ...float64) float64 { return v[rng.IntN(len(v))] }
		// Mostly within the budgets, so that their statuses come and go.
		res := model.LabResult{Page: p.ID, Device: device, Day: model.Day(today), Audited: today, Runs: 1, Method: model.MethodApplied, Metrics: map[string]float64{
			"lcp": pick(1500, 1500, 1500, 1500, 2300, 3000), "cls": pick(0.01, 0.01, 0.01, 0.01, 0.095, 0.2),
			"performance_score": pick(95, 95, 95, 95, 92, 80), "tbt": pick(100, 100, 100, 100, 280, 500)}}
		record(t, st, rec, reader, w, p, res)

		// Every page judged, as the budgets list does.
		reports, err := checker.Website(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		for _, rep := range reports {
			before := last[rep.Budget.ID]
			if before == "" {
				before = budget.OK
			}
			if rep.Status != before {
				want = append(want, oldSummary(rep.Budget, rep.Methods, before, rep.Status, len(rep.Pages)))
			}
			last[rep.Budget.ID] = rep.Status
			states, tallies, _, err := st.BudgetStates(ctx, w, []string{rep.Budget.ID}, "", "")
			if err != nil {
				t.Fatal(err)
			}
			state, tally := states[0], tallies[0]
			listed := map[string]int{}
			for _, p := range rep.Pages {
				listed[p.Status]++
			}
			if state.Value != rep.Status || !equalTally(tally.Counts, listed) {
				t.Fatalf("step %d: budget %s recorded %s with %v off it, the list says %s with %v", step, budget.Basis(rep.Budget), state.Value, tally.Counts, rep.Status, listed)
			}
		}
		if got := q.Summaries(); !slices.Equal(got, want) {
			t.Fatalf("step %d: events\n%q\nwant\n%q", step, got, want)
		}
	}
	if len(want) < 20 {
		t.Fatalf("only %d events in 160 audits: the test shows little", len(want))
	}
	// Each tally is its entries', and the deleted page has none.
	for _, b := range budgets {
		entries, err := st.BudgetEntries(ctx, w, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		counted := map[string]int{}
		for _, e := range entries {
			counted[e.Status]++
			if e.Page == pages[3].ID {
				t.Errorf("the deleted page is still off budget %s: %+v", b.ID, e)
			}
		}
		_, tallies, _, err := st.BudgetStates(ctx, w, []string{b.ID}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if !equalTally(tallies[0].Counts, counted) {
			t.Errorf("budget %s: tally %v, entries %v", b.ID, tallies[0].Counts, counted)
		}
	}
}

func equalTally(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// TestBudgetJudgedAgainInParts: a budget with more pages and devices off it than one
// transaction holds is recorded in parts, with one event naming them all, and back.
func TestBudgetJudgedAgainInParts(t *testing.T) {
	ctx := context.Background()
	st, w, _, rec, q := setup(t)
	b := model.Budget{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"}
	if err := st.CreateBudget(ctx, w, &b); err != nil {
		t.Fatal(err)
	}
	off := manyOff(3*store.MaxBudgetEntryChanges + 7)
	m := event.Measured{Page: model.Page{ID: "p0"}, Device: "mobile", Day: "20261120"}
	if err := rec.Budgets(ctx, w, m, off); err != nil {
		t.Fatal(err)
	}
	entries, err := st.BudgetEntries(ctx, w, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{oldSummary(b, nil, budget.OK, budget.Exceeded, int(off))}
	if got := q.Summaries(); len(entries) != int(off) || !slices.Equal(got, want) {
		t.Fatalf("%d entries, events %q; want %d and %q", len(entries), got, int(off), want)
	}
	if err := rec.Budgets(ctx, w, m, fixedReports{}); err != nil {
		t.Fatal(err)
	}
	entries, err = st.BudgetEntries(ctx, w, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, oldSummary(b, nil, budget.Exceeded, budget.OK, 0))
	if got := q.Summaries(); len(entries) != 0 || !slices.Equal(got, want) {
		t.Fatalf("%d entries, events %q; want none and %q", len(entries), got, want)
	}
}

// manyOff reports every budget exceeded on n pages on mobile.
type manyOff int

func (n manyOff) Reports(_ context.Context, _ model.Website, budgets []model.Budget) ([]budget.Report, error) {
	out := make([]budget.Report, len(budgets))
	for i, b := range budgets {
		out[i] = budget.Report{Budget: b, Status: budget.Exceeded}
		for p := range int(n) {
			out[i].Pages = append(out[i].Pages, budget.PageStatus{Page: model.Page{ID: "p" + strconv.Itoa(p)}, Device: "mobile", Status: budget.Exceeded})
		}
	}
	return out, nil
}

// audit stores a result of p on device with values today and records the budgets' changes
// as the audit worker does.
func audit(t *testing.T, st *store.Store, rec *event.Recorder, reader *metrics.Reader, w model.Website, p model.Page, device string, today time.Time, values map[string]float64) {
	t.Helper()
	record(t, st, rec, reader, w, p, model.LabResult{Page: p.ID, Device: device, Day: model.Day(today), Audited: today, Runs: 1, Metrics: values})
}

// record stores res, a result of p, and records the budgets' changes as the audit worker does.
func record(t *testing.T, st *store.Store, rec *event.Recorder, reader *metrics.Reader, w model.Website, p model.Page, res model.LabResult) {
	t.Helper()
	ctx := context.Background()
	if err := st.PutLabResult(ctx, w, p, res); err != nil {
		t.Fatal(err)
	}
	listings, err := reader.Refresh(ctx, w, p)
	if err != nil {
		t.Fatal(err)
	}
	m := event.Measured{Page: p, Device: res.Device, Day: res.Day}
	for _, l := range listings {
		if l.Device == res.Device {
			m.Values, m.Known = l.Latest(), true
		}
	}
	if err := rec.Budgets(ctx, w, m, budget.NewChecker(st, reader)); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetAfterItsPageOrItselfChanged: what no audit of the page at hand changes still
// counts at the next audit, as when every page was judged after every audit: a page deleted
// that was the only one off a budget, a budget made stricter.
func TestBudgetAfterItsPageOrItselfChanged(t *testing.T) {
	ctx := context.Background()
	st, w, _, rec, q := setup(t)
	today := time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC)
	reader := metrics.NewReader(st, func() time.Time { return today })
	pages := []model.Page{{URL: "/slow"}, {URL: "/fine"}, {URL: "/close"}}
	if err := st.CreatePages(ctx, w, pages); err != nil {
		t.Fatal(err)
	}
	b := model.Budget{Metric: "lcp", Operator: "lt", Value: 2500, Device: "mobile"}
	if err := st.CreateBudget(ctx, w, &b); err != nil {
		t.Fatal(err)
	}
	audit(t, st, rec, reader, w, pages[1], "mobile", today, map[string]float64{"lcp": 1000})
	audit(t, st, rec, reader, w, pages[2], "mobile", today, map[string]float64{"lcp": 2000})
	audit(t, st, rec, reader, w, pages[0], "mobile", today, map[string]float64{"lcp": 4000})
	sim := []string{model.MethodSimulated} // results stored without a method are simulated ones
	want := []string{oldSummary(b, sim, budget.OK, budget.Exceeded, 1)}
	if got := q.Summaries(); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}

	job, err := st.DeletePage(ctx, w, pages[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PurgeItems(ctx, job); err != nil {
		t.Fatal(err)
	}
	audit(t, st, rec, reader, w, pages[1], "mobile", today, map[string]float64{"lcp": 1000}) // as it was
	want = append(want, oldSummary(b, sim, budget.Exceeded, budget.OK, 0))
	if got := q.Summaries(); !slices.Equal(got, want) {
		t.Fatalf("after the slow page's deletion: events %q, want %q", got, want)
	}

	b.Value = 2100 // /close's 2000 is at risk of it now
	if err := st.UpdateBudget(ctx, w, b); err != nil {
		t.Fatal(err)
	}
	audit(t, st, rec, reader, w, pages[1], "mobile", today, map[string]float64{"lcp": 1000})
	want = append(want, oldSummary(b, sim, budget.OK, budget.AtRisk, 1))
	if got := q.Summaries(); !slices.Equal(got, want) {
		t.Fatalf("after the budget changed: events %q, want %q", got, want)
	}
}

// TestBudgetStateChangesOnlyWithItsStatus: the pages and devices moving off or onto a budget
// whose status stays, and a new day judging every page again, leave its state (and so its last
// event, which the notifier drops once the state has changed since) as it was.
func TestBudgetStateChangesOnlyWithItsStatus(t *testing.T) {
	ctx := context.Background()
	st, w, _, rec, q := setup(t)
	today := time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC)
	reader := metrics.NewReader(st, func() time.Time { return today })
	pages := []model.Page{{URL: "/a"}, {URL: "/b"}}
	if err := st.CreatePages(ctx, w, pages); err != nil {
		t.Fatal(err)
	}
	b := model.Budget{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"}
	if err := st.CreateBudget(ctx, w, &b); err != nil {
		t.Fatal(err)
	}
	audit(t, st, rec, reader, w, pages[0], "mobile", today, map[string]float64{"lcp": 4000})
	before, err := st.WatchedState(ctx, w, store.BudgetState(b.ID))
	if err != nil || before.Value != budget.Exceeded || len(q.Summaries()) != 1 {
		t.Fatalf("state %+v (%v), events %q; want exceeded, one event", before, err, q.Summaries())
	}
	audit(t, st, rec, reader, w, pages[1], "desktop", today, map[string]float64{"lcp": 5000}) // a second page over it
	audit(t, st, rec, reader, w, pages[1], "desktop", today, map[string]float64{"lcp": 1000}) // and back
	today = today.AddDate(0, 0, 1)
	audit(t, st, rec, reader, w, pages[1], "mobile", today, map[string]float64{"lcp": 1000}) // every page judged again
	after, err := st.WatchedState(ctx, w, store.BudgetState(b.ID))
	if err != nil || after.Version != before.Version || after.Value != budget.Exceeded || len(q.Summaries()) != 1 {
		t.Fatalf("state %+v (%v), events %q; want it as it was, %+v", after, err, q.Summaries(), before)
	}
	_, tallies, _, err := st.BudgetStates(ctx, w, []string{b.ID}, "", "")
	if err != nil || tallies[0].Day != model.Day(today) || tallies[0].Counts[budget.Exceeded] != 1 || tallies[0].Version < 3 {
		t.Fatalf("tally %+v (%v), want today's with one page over, changed three times at least", tallies[0], err)
	}
}
