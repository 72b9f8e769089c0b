package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// A budget's state (BudgetState) holds its status and a tally of its pages and devices off it;
// each of those has an entry item beside it (budgetEntrySK), so that an audit judges its own
// page and device and reads two items a budget, whatever the number of pages. An entry
// changes only with its state, in one transaction, so that the tally is always the entries'.

type budgetEntryItem struct {
	PK, SK, Type string
	Budget       string
	model.BudgetEntry
}

// MaxBudgetEntryChanges is how many entries one ChangeBudgetState may change: a transaction
// holds 100 actions, four of which are the state's (its event, itself, its website and its
// budget).
const MaxBudgetEntryChanges = 96

// BudgetStates reads the states of a website's budgets and the entries of one page on one
// device against them, in one request for every 50 budgets: each budget's state (the zero
// State with its key when none was recorded) and that page's status against it ("" within it).
func (s *Store) BudgetStates(ctx context.Context, w model.Website, budgets []string, page, device string) ([]model.State, []string, error) {
	pk := websitePK(w.Account, w.ID)
	keys := make([]map[string]ddbtypes.AttributeValue, 0, 2*len(budgets))
	for _, b := range budgets {
		keys = append(keys, key(pk, string(BudgetState(b))), key(pk, budgetEntrySK(b, page, device)))
	}
	items, err := s.batchGet(ctx, keys, true)
	if err != nil {
		return nil, nil, fmt.Errorf("read budget states: %w", err)
	}
	got := make(map[string]map[string]ddbtypes.AttributeValue, len(items))
	for _, it := range items {
		if sk, ok := it[attrSK].(*ddbtypes.AttributeValueMemberS); ok {
			got[sk.Value] = it
		}
	}
	states, entries := make([]model.State, len(budgets)), make([]string, len(budgets))
	for i, b := range budgets {
		states[i].Key = BudgetState(b)
		if av, ok := got[string(states[i].Key)]; ok {
			var it stateItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, nil, fmt.Errorf("decode budget state: %w", err)
			}
			states[i], states[i].Key = it.State, BudgetState(b)
		}
		if av, ok := got[budgetEntrySK(b, page, device)]; ok {
			var it budgetEntryItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, nil, fmt.Errorf("decode budget entry: %w", err)
			}
			entries[i] = it.Status
		}
	}
	return states, entries, nil
}

// BudgetEntries lists a budget's pages and devices off it.
func (s *Store) BudgetEntries(ctx context.Context, w model.Website, budget string) ([]model.BudgetEntry, error) {
	var items []budgetEntryItem
	if err := s.queryPrefix(ctx, websitePK(w.Account, w.ID), budgetEntryPrefix(budget), true, &items); err != nil {
		return nil, fmt.Errorf("list budget entries: %w", err)
	}
	out := make([]model.BudgetEntry, len(items))
	for i, it := range items {
		out[i] = it.BudgetEntry
	}
	return out, nil
}

// ChangeBudgetState records a budget's state to (its Value, Day, Basis and Tally; Since is
// kept while Value is, Unsent until an event) over from, as ChangeState does, with changes (at most
// MaxBudgetEntryChanges) made to its entries in the same transaction, each only if the entry is
// still as its From says: else nothing is written and the error is ErrChanged.
func (s *Store) ChangeBudgetState(ctx context.Context, w model.Website, from, to model.State, ev *model.Event, changes []model.BudgetEntryChange) (model.State, error) {
	if len(changes) > MaxBudgetEntryChanges {
		return from, fmt.Errorf("budget state %s: %d entry changes, at most %d at once", from.Key, len(changes), MaxBudgetEntryChanges)
	}
	budget := strings.TrimPrefix(string(from.Key), budgetStatePrefix)
	to.Unsent, to.Since = from.Unsent, from.Since // an event still to queue stays so through silent changes
	if to.Value != from.Value || from.Version == 0 {
		to.Since = s.now()
	}
	pk := websitePK(w.Account, w.ID)
	more := make([]ddbtypes.TransactWriteItem, 0, len(changes))
	for _, c := range changes {
		sk := budgetEntrySK(budget, c.Page, c.Device)
		cond, values := "attribute_not_exists(PK)", map[string]ddbtypes.AttributeValue(nil)
		if c.From != "" {
			cond, values = "#s = :from", map[string]ddbtypes.AttributeValue{":from": str(c.From)}
		}
		if c.To == "" {
			more = append(more, ddbtypes.TransactWriteItem{Delete: &ddbtypes.Delete{TableName: aws.String(s.table), Key: key(pk, sk),
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: map[string]string{"#s": "Status"}, ExpressionAttributeValues: values}})
			continue
		}
		item, err := attributevalue.MarshalMap(budgetEntryItem{PK: pk, SK: sk, Type: "budget-entry", Budget: budget,
			BudgetEntry: model.BudgetEntry{Page: c.Page, Device: c.Device, Status: c.To}})
		if err != nil {
			return from, err
		}
		put := &ddbtypes.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String(cond), ExpressionAttributeValues: values}
		if c.From != "" {
			put.ExpressionAttributeNames = map[string]string{"#s": "Status"}
		}
		more = append(more, ddbtypes.TransactWriteItem{Put: put})
	}
	return s.changeState(ctx, w, from, to, ev, more)
}

// deleteBudgetEntries removes a deleted budget's entries.
func (s *Store) deleteBudgetEntries(ctx context.Context, w model.Website, budget string) error {
	_, err := s.deletePrefix(ctx, websitePK(w.Account, w.ID), budgetEntryPrefix(budget))
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
	var items []budgetEntryItem
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("list the budget entries of page %s: %w", page, err)
		}
		var got []budgetEntryItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &got); err != nil {
			return 0, fmt.Errorf("decode budget entries: %w", err)
		}
		items = append(items, got...)
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
		states, entries, err := s.BudgetStates(ctx, w, []string{budget}, page, device)
		if err != nil || entries[0] == "" {
			return err
		}
		to := states[0]
		to.Tally = model.TallyMoved(to.Tally, entries[0], "")
		_, err = s.ChangeBudgetState(ctx, w, states[0], to, nil, []model.BudgetEntryChange{{Page: page, Device: device, From: entries[0]}})
		if model.IsNotFound(err) { // the budget or the website went meanwhile, and its entries with it
			return nil
		}
		if !errors.Is(err, model.ErrChanged) {
			return err
		}
	}
	return fmt.Errorf("budget %s kept changing", budget)
}
