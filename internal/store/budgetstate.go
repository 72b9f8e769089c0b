package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// Beside a budget's state (BudgetState: its status, changed only with its event) are its tally
// of its pages and devices off it (budgetTallySK) and an entry for each of those
// (budgetEntrySK), so that an audit judges its own page and device and reads three items a
// budget, whatever the number of pages. An entry changes only with the tally, in one
// transaction, so that the tally always counts the entries.

type budgetTallyItem struct {
	PK, SK, Type string
	model.BudgetTally
}

type budgetEntryItem struct {
	PK, SK, Type string
	Budget       string
	model.BudgetEntry
}

// MaxBudgetEntryChanges is how many entries one ChangeBudgetTally may change: a transaction
// holds 100 actions, six of which may be the tally's and the state's (the tally, the state,
// its event, the website's and the budget's checks).
const MaxBudgetEntryChanges = 94

// BudgetStates reads what a website's budgets hold for one page on one device, in one request
// for every 33 budgets: each budget's state (the zero State with its key when none was
// recorded), its tally (zero when none was made) and that page's status against it ("" within
// it).
func (s *Store) BudgetStates(ctx context.Context, w model.Website, budgets []string, page, device string) ([]model.State, []model.BudgetTally, []string, error) {
	pk := websitePK(w.Account, w.ID)
	keys := make([]map[string]ddbtypes.AttributeValue, 0, 3*len(budgets))
	for _, b := range budgets {
		keys = append(keys, key(pk, string(BudgetState(b))), key(pk, budgetTallySK(b)), key(pk, budgetEntrySK(b, page, device)))
	}
	items, err := s.batchGet(ctx, keys, true)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read budget states: %w", err)
	}
	got := make(map[string]map[string]ddbtypes.AttributeValue, len(items))
	for _, it := range items {
		if sk, ok := it[attrSK].(*ddbtypes.AttributeValueMemberS); ok {
			got[sk.Value] = it
		}
	}
	states, tallies, entries := make([]model.State, len(budgets)), make([]model.BudgetTally, len(budgets)), make([]string, len(budgets))
	for i, b := range budgets {
		var st stateItem
		var tally budgetTallyItem
		var entry budgetEntryItem
		for sk, into := range map[string]any{string(BudgetState(b)): &st, budgetTallySK(b): &tally, budgetEntrySK(b, page, device): &entry} {
			if av, ok := got[sk]; ok {
				if err := attributevalue.UnmarshalMap(av, into); err != nil {
					return nil, nil, nil, fmt.Errorf("decode %s: %w", sk, err)
				}
			}
		}
		states[i], tallies[i], entries[i] = st.State, tally.BudgetTally, entry.Status
		states[i].Key = BudgetState(b)
	}
	return states, tallies, entries, nil
}

// BudgetEntries lists a budget's pages and devices off it.
func (s *Store) BudgetEntries(ctx context.Context, w model.Website, budget string) ([]model.BudgetEntry, error) {
	return withPrefix(ctx, s, websitePK(w.Account, w.ID), budgetEntryPrefix(budget), "budget entries",
		func(it budgetEntryItem) model.BudgetEntry { return it.BudgetEntry })
}

// StatusChange is a change of a budget's status to record with its tally: its state as read,
// the status it takes, and the change's event (nil for none), as ChangeState records them.
type StatusChange struct {
	From  model.State
	Value string
	Event *model.Event
}

// ChangeBudgetTally records a budget's tally to (its version set here) over from as read,
// with changes (at most MaxBudgetEntryChanges) made to its entries, each only if the entry is
// still as its From says, and with status, when not nil, the budget's status changing: all in
// one transaction, or nothing and ErrChanged when the tally, an entry or the state changed
// since it was read (ErrNotFound once the budget or its website is gone). It returns the tally
// and the state as they now are.
func (s *Store) ChangeBudgetTally(ctx context.Context, w model.Website, budget string, from, to model.BudgetTally,
	changes []model.BudgetEntryChange, status *StatusChange) (model.BudgetTally, model.State, error) {
	if len(changes) > MaxBudgetEntryChanges {
		return from, model.State{}, fmt.Errorf("budget %s: %d entry changes, at most %d at once", budget, len(changes), MaxBudgetEntryChanges)
	}
	pk := websitePK(w.Account, w.ID)
	to.Version = from.Version + 1
	item, err := attributevalue.MarshalMap(budgetTallyItem{PK: pk, SK: budgetTallySK(budget), Type: "budget-tally", BudgetTally: to})
	if err != nil {
		return from, model.State{}, err
	}
	writes := []ddbtypes.TransactWriteItem{s.versionedPut(item, from.Version, "attribute_not_exists(PK)")}
	for _, c := range changes {
		write, err := s.budgetEntryWrite(pk, budget, c)
		if err != nil {
			return from, model.State{}, err
		}
		writes = append(writes, write)
	}
	if status != nil {
		st, err := s.changeState(ctx, w, status.From, model.State{Value: status.Value, Since: s.now()}, status.Event, writes)
		if err != nil {
			return from, st, err
		}
		return to, st, nil
	}
	actions := append([]ddbtypes.TransactWriteItem{s.websiteExists(w), s.existsCheck(key(pk, budgetSK(budget)))}, writes...)
	reasons, err := s.transact(ctx, actions...)
	switch {
	case len(reasons) == len(actions) && slices.Contains(reasons[:2], "ConditionalCheckFailed"):
		return from, model.State{}, fmt.Errorf("budget %s: %w", budget, model.ErrNotFound)
	case slices.Contains(reasons, "ConditionalCheckFailed"):
		return from, model.State{}, fmt.Errorf("tally of budget %s: %w", budget, model.ErrChanged)
	case err != nil:
		return from, model.State{}, fmt.Errorf("change the tally of budget %s: %w", budget, err)
	}
	return to, model.State{}, nil
}

// budgetEntryWrite is the write that makes an entry go from c.From to c.To ("" for none), if
// it is still as c.From says.
func (s *Store) budgetEntryWrite(pk, budget string, c model.BudgetEntryChange) (ddbtypes.TransactWriteItem, error) {
	k := key(pk, budgetEntrySK(budget, c.Page, c.Device))
	cond, names, values := "attribute_not_exists(PK)", map[string]string(nil), map[string]ddbtypes.AttributeValue(nil)
	if c.From != "" {
		cond, names, values = "#s = :from", map[string]string{"#s": "Status"}, map[string]ddbtypes.AttributeValue{":from": str(c.From)}
	}
	if c.To == "" {
		return withAttrs(s.deleteAction(k, cond), values, names), nil
	}
	item, err := attributevalue.MarshalMap(budgetEntryItem{PK: pk, SK: budgetEntrySK(budget, c.Page, c.Device), Type: "budget-entry", Budget: budget,
		BudgetEntry: model.BudgetEntry{Page: c.Page, Device: c.Device, Status: c.To}})
	if err != nil {
		return ddbtypes.TransactWriteItem{}, err
	}
	return withAttrs(s.putAction(item, cond), values, names), nil
}

// deleteBudgetTally removes a deleted budget's tally and entries.
func (s *Store) deleteBudgetTally(ctx context.Context, w model.Website, budget string) error {
	_, err := s.deletePrefix(ctx, websitePK(w.Account, w.ID), budgetTallyPrefix(budget))
	return err
}

// purgeBudgetEntries removes a purged page's entries, each with its budget's tally, so that
// nothing of the page is left and each tally stays its entries'. The budgets' statuses are left
// for the next audit to judge and tell.
func (s *Store) purgeBudgetEntries(ctx context.Context, w model.Website, page string) (int, error) {
	in := prefixQuery(s.table, websitePK(w.Account, w.ID), budgetStatePrefix, true)
	in.FilterExpression = aws.String("#t = :entry AND Page = :page")
	in.ExpressionAttributeNames = map[string]string{"#t": "Type"}
	in.ExpressionAttributeValues[":entry"] = str("budget-entry")
	in.ExpressionAttributeValues[":page"] = str(page)
	items, err := query[budgetEntryItem](ctx, s, in, 0)
	if err != nil {
		return 0, fmt.Errorf("list the budget entries of page %s: %w", page, err)
	}
	removed := 0
	for _, it := range items {
		if err := s.dropBudgetEntry(ctx, w, it.Budget, page, it.Device); err != nil {
			return removed, fmt.Errorf("remove the entry of page %s off budget %s: %w", page, it.Budget, err)
		}
		removed++
	}
	return removed, nil
}

// dropBudgetEntry removes a page's entry on a device off a budget with it from the budget's
// tally, whatever its status by then.
func (s *Store) dropBudgetEntry(ctx context.Context, w model.Website, budget, page, device string) error {
	for range changeTries {
		_, tallies, entries, err := s.BudgetStates(ctx, w, []string{budget}, page, device)
		if err != nil || entries[0] == "" {
			return err
		}
		to := tallies[0]
		to.Counts = model.TallyMoved(to.Counts, entries[0], "")
		_, _, err = s.ChangeBudgetTally(ctx, w, budget, tallies[0], to, []model.BudgetEntryChange{{Page: page, Device: device, From: entries[0]}}, nil)
		if model.IsNotFound(err) { // the budget or the website went meanwhile, and its entries with it
			return nil
		}
		if !errors.Is(err, model.ErrChanged) {
			return err
		}
	}
	return fmt.Errorf("budget %s kept changing", budget)
}
