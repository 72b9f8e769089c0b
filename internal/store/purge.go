package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type purgeItem struct {
	PK   string
	SK   string
	Type string
	model.PurgeJob
}

func (s *Store) purgeMarker(j model.PurgeJob) (map[string]ddbtypes.AttributeValue, error) {
	return attributevalue.MarshalMap(purgeItem{PK: purgePK, SK: purgeSK(j), Type: "purge", PurgeJob: j})
}

// PendingPurges lists the purges recorded but not finished yet.
func (s *Store) PendingPurges(ctx context.Context) ([]model.PurgeJob, error) {
	return withPrefix(ctx, s, purgePK, "", "pending purges", func(it purgeItem) model.PurgeJob { return it.PurgeJob })
}

// PurgeItems deletes every item a purge job covers. It is idempotent: running it again, or
// for a job already done, deletes nothing more and succeeds. The job's marker stays until
// FinishPurge.
func (s *Store) PurgeItems(ctx context.Context, j model.PurgeJob) (int, error) {
	if j.Experiment != "" {
		// Its one item went with its deletion, and a worker that was running it updates
		// existing items only: nothing of it is left in the table.
		return 0, nil
	}
	prefix, attr, id := "", "", ""
	switch {
	case j.Page != "":
		prefix, attr, id = PageItemsPrefix(j.Page), "Page", j.Page
	case j.Test != "":
		prefix, attr, id = TestItemsPrefix(j.Test), "Test", j.Test
	}
	pk := websitePK(j.Account, j.Website)
	n, err := s.deletePrefix(ctx, pk, prefix)
	if err != nil {
		return n, err
	}
	m, err := s.purgePending(ctx, j)
	n += m
	if err != nil || attr == "" {
		return n, err
	}
	// A page's or test's regressions are website items (listed together), removed with it; so
	// are a page's experiments (the purge worker removed their objects first).
	m, err = s.deleteItemsOf(ctx, pk, regressionSKPrefix, attr, id)
	n += m
	if err != nil || j.Page == "" {
		return n, err
	}
	m, err = s.deleteItemsOf(ctx, pk, experimentSKPrefix, attr, id)
	n += m
	if err != nil {
		return n, err
	}
	// And its entries off the budgets, each with its budget's tally.
	m, err = s.purgeBudgetEntries(ctx, model.Website{Account: j.Account, ID: j.Website}, j.Page)
	return n + m, err
}

// FinishPurge removes a purge's marker once its last pass is done.
func (s *Store) FinishPurge(ctx context.Context, j model.PurgeJob) error {
	return s.dropItem(ctx, purgePK, purgeSK(j), "purge marker")
}

// CountItems counts the items of a purge job's scope; tests use it to show a purge is complete.
func (s *Store) CountItems(ctx context.Context, j model.PurgeJob) (int, error) {
	prefix := ""
	switch {
	case j.Page != "":
		prefix = PageItemsPrefix(j.Page)
	case j.Test != "":
		prefix = TestItemsPrefix(j.Test)
	case j.Experiment != "":
		prefix = experimentSK(j.Experiment)
	}
	keys, err := s.keysWithPrefix(ctx, websitePK(j.Account, j.Website), prefix)
	if err != nil || j.Page != "" || j.Experiment != "" {
		return len(keys), err
	}
	pendingPrefix := pendingWebsitePrefix(j.Account, j.Website)
	if j.Test != "" {
		pendingPrefix = pendingTestPrefix(j.Account, j.Website, j.Test)
	}
	markers, err := s.keysWithPrefix(ctx, pendingPK, pendingPrefix)
	return len(keys) + len(markers), err
}

func (s *Store) keysWithPrefix(ctx context.Context, pk, prefix string) ([]map[string]ddbtypes.AttributeValue, error) {
	keys, err := s.queryKeys(ctx, prefixQuery(s.table, pk, prefix, true))
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", pk, err)
	}
	return keys, nil
}

// deletePrefix deletes the items of a partition whose sort key starts with prefix, 25 a batch.
func (s *Store) deletePrefix(ctx context.Context, pk, prefix string) (int, error) {
	keys, err := s.keysWithPrefix(ctx, pk, prefix)
	if err != nil {
		return 0, err
	}
	return s.writeAll(ctx, deleteRequests(keys))
}
