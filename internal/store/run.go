package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type runItem struct {
	PK   string
	SK   string
	Type string
	model.Run
}

// CreateRun records a new queued run of a test and assigns its ID and creation time.
func (s *Store) CreateRun(ctx context.Context, w model.Website, t model.Test) (model.Run, error) {
	r := model.Run{ID: model.NewID(), Test: t.ID, Created: s.now(), Device: t.Device, Status: model.RunQueued}
	return r, s.putItem(ctx, runItem{PK: websitePK(w.Account, w.ID), SK: runSK(r.Test, r.Created, r.ID), Type: "run", Run: r}, false, "run "+r.ID)
}

// UpdateRun replaces a run that exists.
func (s *Store) UpdateRun(ctx context.Context, w model.Website, r model.Run) error {
	return s.putItem(ctx, runItem{PK: websitePK(w.Account, w.ID), SK: runSK(r.Test, r.Created, r.ID), Type: "run", Run: r}, true, "run "+r.ID)
}

// GetRun reads one run by its test, creation time and ID (as a run message carries them).
func (s *Store) GetRun(ctx context.Context, w model.Website, test string, created time.Time, id string) (model.Run, error) {
	var it runItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), runSK(test, created, id), "run "+id, &it)
	return it.Run, err
}

// Runs lists a test's runs created since a time, newest first, at most limit (0: no limit).
func (s *Store) Runs(ctx context.Context, w model.Website, test string, since time.Time, limit int) ([]model.Run, error) {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("PK = :pk AND SK BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":pk":   str(websitePK(w.Account, w.ID)),
			":from": str(TestItemsPrefix(test) + "RUN#" + since.UTC().Format(runTimeLayout)),
			":to":   str(TestItemsPrefix(test) + "RUN$"), // '$' sorts right after '#'
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
	}
	var items []runItem
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query runs: %w", err)
		}
		var page []runItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &page); err != nil {
			return nil, fmt.Errorf("decode runs: %w", err)
		}
		items = append(items, page...)
		if limit > 0 && len(items) >= limit {
			items = items[:limit]
			break
		}
	}
	runs := make([]model.Run, len(items))
	for i, it := range items {
		runs[i] = it.Run
	}
	return runs, nil
}

// MarkTestQueued records that a test's daily run was queued for a UTC day; false when it was
// already, so that a second scheduler run the same day queues nothing twice.
func (s *Store) MarkTestQueued(ctx context.Context, w model.SiteRef, test, day string) (bool, error) {
	return s.markOnce(ctx, websitePK(w.Account, w.Website), testQueuedSK(test, day))
}
