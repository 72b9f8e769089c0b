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

// A budget's status is as bad as its worst page and device. Beside its state it keeps a tally
// of its pages and devices off it, each with its entry (see store.ChangeBudgetTally), so that
// after an audit only the audited page and device are judged again: three items read a budget,
// whatever the number of pages. Every page is judged again, from the pages' rows, when the
// tally was made against another version of the budget (or none), and once a day, which brings
// in what no audit of a page tells: values older than the window, user-experience data. A
// purged page leaves the tallies with its entries, and the next audit tells the change. The
// state itself changes only with the status (and its event), as every watched state does.

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
	states, tallies, entries, err := r.store.BudgetStates(ctx, w, ids, m.Page.ID, m.Device)
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
		errs = append(errs, r.budget(ctx, w, b, m, budgetRead{states[i], tallies[i], entries[i]}, report))
	}
	return errors.Join(errs...)
}

// budgetRead is what a budget holds for one page and device: its state, its tally and that
// page and device's entry ("" within it).
type budgetRead struct {
	state model.State
	tally model.BudgetTally
	entry string
}

// budgetTries bounds how often a budget is read and judged again when another worker changed
// it meanwhile.
const budgetTries = 5

// budget records one budget's tally and status after m, as read in got; report reports it
// against every page.
func (r *Recorder) budget(ctx context.Context, w model.Website, b model.Budget, m Measured, got budgetRead,
	report func(model.Budget) (budget.Report, error)) error {
	for range budgetTries {
		st := got.state
		var err error
		switch {
		case got.tally.Basis != budget.Basis(b) || got.tally.Day != m.Day || !m.Known:
			var rep budget.Report
			if rep, err = report(b); err != nil {
				return err
			}
			st, err = r.rejudge(ctx, w, b, got, rep, m.Day)
		case budget.AppliesTo(b.Device, m.Device):
			st, err = r.judge(ctx, w, b, got, m)
		}
		switch {
		case errors.Is(err, model.ErrChanged):
			states, tallies, entries, rerr := r.store.BudgetStates(ctx, w, []string{b.ID}, m.Page.ID, m.Device)
			if rerr != nil {
				return rerr
			}
			got = budgetRead{states[0], tallies[0], entries[0]}
			continue
		case model.IsNotFound(err): // the budget or the website is gone
			return nil
		case err != nil:
			return err
		}
		return r.flush(ctx, w, st)
	}
	return fmt.Errorf("budget %s kept changing", b.ID)
}

// judge moves m's page and device to its status now, and records b's status as its tally has
// it (which a page's purge may have changed): it returns b's state.
func (r *Recorder) judge(ctx context.Context, w model.Website, b model.Budget, got budgetRead, m Measured) (model.State, error) {
	var methods []string
	if method := budget.MethodOf(b, m.Device, m.Values); method != "" {
		methods = []string{method}
	}
	status := budget.Judge(b, m.Device, m.Values)
	if status == budget.OK {
		status = "" // within it: no entry
	}
	var changes []model.BudgetEntryChange
	if status != got.entry {
		changes = []model.BudgetEntryChange{{Page: m.Page.ID, Device: m.Device, From: got.entry, To: status}}
	}
	to := got.tally
	to.Counts = model.TallyMoved(got.tally.Counts, got.entry, status)
	return r.record(ctx, w, b, got, to, changes, methods)
}

// record writes b's tally to and changes to its entries, with the change of its status that
// to's counts make: the event of a change of status, naming methods, those of the lab values
// judged. Nothing is written when nothing changes. It returns b's state.
func (r *Recorder) record(ctx context.Context, w model.Website, b model.Budget, got budgetRead, to model.BudgetTally, changes []model.BudgetEntryChange, methods []string) (model.State, error) {
	value := budget.Tallied(to.Counts)
	var status *store.StatusChange
	if value != got.state.Value {
		status = &store.StatusChange{From: got.state, Value: value, Event: budgetEvent(b, got.state.Value, value, budget.Off(to.Counts), methods)}
	}
	if status == nil && len(changes) == 0 && to.Basis == got.tally.Basis && to.Day == got.tally.Day && maps.Equal(to.Counts, got.tally.Counts) {
		return got.state, nil
	}
	_, st, err := r.store.ChangeBudgetTally(ctx, w, b.ID, got.tally, to, changes, status)
	if status == nil {
		st = got.state
	}
	return st, err
}

// rejudge makes b's entries those of rep (every page judged) and its tally theirs, judged on
// day against b as it is: in parts of store.MaxBudgetEntryChanges, all but the last leaving
// the status as it is, the last recording it. A part written stays: after ErrChanged, the
// entries are read again and the rest follows.
func (r *Recorder) rejudge(ctx context.Context, w model.Website, b model.Budget, got budgetRead, rep budget.Report, day string) (model.State, error) {
	entries, err := r.store.BudgetEntries(ctx, w, b.ID)
	if err != nil {
		return got.state, err
	}
	type pageDevice struct{ page, device string }
	want := map[pageDevice]string{}
	counts := map[string]int{}
	for _, p := range rep.Pages {
		want[pageDevice{p.Page.ID, p.Device}] = p.Status
		counts[p.Status]++
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
		to := got.tally
		for _, c := range part {
			to.Counts = model.TallyMoved(to.Counts, c.From, c.To)
		}
		if got.tally, _, err = r.store.ChangeBudgetTally(ctx, w, b.ID, got.tally, to, part, nil); err != nil {
			return got.state, err
		}
		changes = changes[store.MaxBudgetEntryChanges:]
	}
	return r.record(ctx, w, b, got, model.BudgetTally{Counts: counts, Basis: budget.Basis(b), Day: day}, changes, rep.Methods)
}

// budgetEvent is the event of b's status going from before ("" for never recorded, which
// counts as ok) to after with off pages and devices off it; nil when it stays (ok on a first
// record). Its summary names the measurement methods of the lab values judged: after an
// audit, the audited page's; when every page is judged again, every page's.
func budgetEvent(b model.Budget, before, after string, off int, methods []string) *model.Event {
	if before == "" {
		before = budget.OK
	}
	if after == before {
		return nil
	}
	where := b.Device
	if len(methods) > 0 {
		where += ", " + strings.Join(methods, " and ") + " throttling"
	}
	return &model.Event{Type: BudgetStatusChanged, Budget: b.ID, Before: before, After: after,
		Summary: fmt.Sprintf("Budget %s %s %s (%s): %s → %s, %s", metrics.Label(b.Metric), operatorWord(b.Operator),
			budgetValue(b), where, before, after, pagesWord(off))}
}

// budgetValue is a budget's threshold with its metric's unit, as people read it: "2,500 ms".
func budgetValue(b model.Budget) string {
	for _, n := range metrics.Names {
		if n.Field == b.Metric && n.Unit != "" && n.Unit != "score" {
			return withUnit(b.Value, n.Unit)
		}
	}
	return number(b.Value)
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
