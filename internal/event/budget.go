package event

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// A budget's status is as bad as its worst page and device. Its state (store.BudgetState)
// keeps a tally of its pages and devices off it, each with its entry, so that after an audit
// only the audited page and device are judged again: a few reads a budget, whatever the number
// of pages. Every page is judged again, from the pages' rows, when the state's tally was made
// against another version of the budget (or none), and once a day, which brings in what no
// audit of a page tells: pages deleted, values older than the window, user-experience data.

// BudgetReporter reports budgets against every page of a website; *budget.Checker is one.
type BudgetReporter interface {
	Reports(ctx context.Context, w model.Website, budgets []model.Budget) ([]budget.Report, error)
}

// Measured is a page's latest values on one device, just after one of its results was stored.
type Measured struct {
	Page   model.Page
	Device string
	// Values are the page's latest values on Device, if Known; unknown values (the page has no
	// row yet) make every page be judged again.
	Values metrics.Values
	Known  bool
	// Day is today (yyyymmdd): a budget whose pages were last all judged before it has them
	// judged again.
	Day string
}

// Budgets records the status changes of a website's budgets after a result of m.Page on
// m.Device was stored (budget.status_changed, with the number of pages and devices off it), as
// if every page's latest values were judged: the audited page and device are judged, and
// every page when a budget's tally is not of today or of the budget as it is (every page's
// values then read once, through all). A budget never seen before counts as ok before.
func (r *Recorder) Budgets(ctx context.Context, w model.Website, m Measured, all BudgetReporter) error {
	budgets, err := r.store.Budgets(ctx, w)
	if err != nil || len(budgets) == 0 {
		return err
	}
	ids := make([]string, len(budgets))
	for i, b := range budgets {
		ids[i] = b.ID
	}
	states, entries, err := r.store.BudgetStates(ctx, w, ids, m.Page.ID, m.Device)
	if err != nil {
		return err
	}
	var reports map[string]budget.Report
	report := func(b model.Budget) (budget.Report, error) {
		if reports == nil {
			rs, err := all.Reports(ctx, w, budgets)
			if err != nil {
				return budget.Report{}, err
			}
			reports = make(map[string]budget.Report, len(rs))
			for _, rep := range rs {
				reports[rep.Budget.ID] = rep
			}
		}
		return reports[b.ID], nil
	}
	var errs []error
	for i, b := range budgets {
		errs = append(errs, r.budget(ctx, w, b, m, states[i], entries[i], report))
	}
	return errors.Join(errs...)
}

// budgetTries bounds how often a budget's state is read and judged again when another worker
// changed it meanwhile.
const budgetTries = 5

// budget records one budget's state after m, st being its state and entry m's page's status
// against it as read; report reports it against every page.
func (r *Recorder) budget(ctx context.Context, w model.Website, b model.Budget, m Measured, st model.State, entry string,
	report func(model.Budget) (budget.Report, error)) error {
	for range budgetTries {
		var next model.State
		var err error
		switch {
		case st.Basis != budget.Basis(b) || st.Day != m.Day || !m.Known:
			var rep budget.Report
			if rep, err = report(b); err != nil {
				return err
			}
			next, err = r.rejudge(ctx, w, b, st, rep, m.Day)
		case budget.AppliesTo(b.Device, m.Device):
			next, err = r.judge(ctx, w, b, st, entry, m)
		default:
			next = st
		}
		switch {
		case errors.Is(err, model.ErrChanged):
			states, entries, rerr := r.store.BudgetStates(ctx, w, []string{b.ID}, m.Page.ID, m.Device)
			if rerr != nil {
				return rerr
			}
			st, entry = states[0], entries[0]
			continue
		case model.IsNotFound(err): // the budget or the website is gone
			return nil
		case err != nil:
			return err
		}
		return r.flush(ctx, w, next)
	}
	return fmt.Errorf("budget %s kept changing", b.ID)
}

// judge moves m's page and device, whose entry off b is entry, to its status now, and records
// b's status as its tally has it (which a page's purge may have changed silently).
func (r *Recorder) judge(ctx context.Context, w model.Website, b model.Budget, st model.State, entry string, m Measured) (model.State, error) {
	status := budget.Judge(b, m.Device, m.Values)
	if status == budget.OK {
		status = "" // within it: no entry
	}
	var changes []model.BudgetEntryChange
	if status != entry {
		changes = []model.BudgetEntryChange{{Page: m.Page.ID, Device: m.Device, From: entry, To: status}}
	}
	to := st
	to.Tally = model.TallyMoved(st.Tally, entry, status)
	to.Value = budget.Tallied(to.Tally)
	if len(changes) == 0 && to.Value == st.Value {
		return st, nil
	}
	return r.store.ChangeBudgetState(ctx, w, st, to, budgetEvent(b, st, to), changes)
}

// rejudge makes b's entries those of rep (every page judged) and its state of them, judged on
// day against b as it is: in parts of store.MaxBudgetEntryChanges, all but the last silent,
// the last with the event of a change of status. A part written stays: after ErrChanged, the
// entries are read again and the rest follows.
func (r *Recorder) rejudge(ctx context.Context, w model.Website, b model.Budget, st model.State, rep budget.Report, day string) (model.State, error) {
	entries, err := r.store.BudgetEntries(ctx, w, b.ID)
	if err != nil {
		return st, err
	}
	type pageDevice struct{ page, device string }
	want := map[pageDevice]string{}
	tally := map[string]int{}
	for _, p := range rep.Pages {
		want[pageDevice{p.Page.ID, p.Device}] = p.Status
		tally[p.Status]++
	}
	var changes []model.BudgetEntryChange
	for _, e := range entries {
		k := pageDevice{e.Page, e.Device}
		if want[k] != e.Status {
			changes = append(changes, model.BudgetEntryChange{Page: e.Page, Device: e.Device, From: e.Status, To: want[k]})
		}
		delete(want, k)
	}
	for k, status := range want {
		changes = append(changes, model.BudgetEntryChange{Page: k.page, Device: k.device, To: status})
	}
	slices.SortFunc(changes, func(a, b model.BudgetEntryChange) int {
		return strings.Compare(a.Page+"#"+a.Device, b.Page+"#"+b.Device)
	})
	for len(changes) > store.MaxBudgetEntryChanges {
		part := changes[:store.MaxBudgetEntryChanges]
		to := st
		for _, c := range part {
			to.Tally = model.TallyMoved(to.Tally, c.From, c.To)
		}
		if st, err = r.store.ChangeBudgetState(ctx, w, st, to, nil, part); err != nil {
			return st, err
		}
		changes = changes[store.MaxBudgetEntryChanges:]
	}
	to := model.State{Value: budget.Tallied(tally), Day: day, Basis: budget.Basis(b), Tally: tally}
	if len(changes) == 0 && to.Value == st.Value && to.Day == st.Day && to.Basis == st.Basis && maps.Equal(to.Tally, st.Tally) {
		return st, nil
	}
	return r.store.ChangeBudgetState(ctx, w, st, to, budgetEvent(b, st, to), changes)
}

// budgetEvent is the event of b's state going from st to to, nil when its status stays.
func budgetEvent(b model.Budget, st, to model.State) *model.Event {
	before := st.Value
	if before == "" {
		before = budget.OK
	}
	if to.Value == before {
		return nil
	}
	return &model.Event{Type: BudgetStatusChanged, Budget: b.ID, Before: before, After: to.Value,
		Summary: fmt.Sprintf("Budget %s %s %s (%s): %s → %s, %s", b.Metric, operatorWord(b.Operator),
			strconv.FormatFloat(b.Value, 'f', -1, 64), b.Device, before, to.Value, pagesWord(budget.Off(to.Tally)))}
}

func operatorWord(op string) string {
	if op == "gt" {
		return "above"
	}
	return "below"
}

func pagesWord(n int) string {
	switch n {
	case 0:
		return "every page within it"
	case 1:
		return "1 page and device off it"
	}
	return strconv.Itoa(n) + " pages and devices off it"
}
