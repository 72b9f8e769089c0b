package store

import (
	"context"
	"errors"
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
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of the day it was created, for the table's TTL
}

func (s *Store) runItem(w model.Website, r model.Run) runItem {
	return runItem{PK: websitePK(w.Account, w.ID), SK: runSK(r.Test, r.Created, r.ID), Type: "run", Run: r,
		Expires: model.HistoryEnd(model.Day(r.Created)).Unix()}
}

// CreateRun records a new queued run of a test, queued at its creation, with its pending
// marker, and assigns its ID and creation time.
func (s *Store) CreateRun(ctx context.Context, w model.Website, t model.Test) (model.Run, error) {
	now := s.now()
	r := model.Run{ID: model.NewID(), Test: t.ID, Created: now, Device: t.Device, Status: model.RunQueued, Queued: &now}
	run, err := attributevalue.MarshalMap(s.runItem(w, r))
	if err != nil {
		return r, fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	marker, err := attributevalue.MarshalMap(pendingRunItem(w, r))
	if err != nil {
		return r, err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String(s.table), Item: run, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		{Put: &ddbtypes.Put{TableName: aws.String(s.table), Item: marker}},
	}})
	if len(cancellationReasons(err)) > 0 {
		return r, fmt.Errorf("run %s: id already in use", r.ID)
	}
	if err != nil {
		return r, fmt.Errorf("put run %s: %w", r.ID, err)
	}
	return r, nil
}

// ErrRunEnded is returned (wrapped) by UpdateRun for a run that had an outcome already: the
// first outcome recorded stays.
var ErrRunEnded = errors.New("the run has ended already")

// UpdateRun replaces a run that has no outcome yet: ErrNotFound when it does not exist,
// ErrRunEnded when it has an outcome. A run given an outcome loses its pending marker in the
// same write.
func (s *Store) UpdateRun(ctx context.Context, w model.Website, r model.Run) error {
	item, err := attributevalue.MarshalMap(s.runItem(w, r))
	if err != nil {
		return fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	put := &ddbtypes.Put{TableName: aws.String(s.table), Item: item,
		ConditionExpression:       aws.String("#s IN (:q, :t)"),
		ExpressionAttributeNames:  map[string]string{"#s": "Status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":q": str(model.RunQueued), ":t": str(model.RunTesting)},
	}
	writes := []ddbtypes.TransactWriteItem{{Put: put}}
	if r.IsFinished() {
		writes = append(writes, ddbtypes.TransactWriteItem{Delete: &ddbtypes.Delete{TableName: aws.String(s.table),
			Key: key(pendingPK, pendingRunSK(w.Account, w.ID, r.Test, r.Created, r.ID))}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
	if reasons := cancellationReasons(err); len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
		if _, gerr := s.GetRun(ctx, w, r.Test, r.Created, r.ID); gerr != nil {
			return gerr // ErrNotFound: deleted
		}
		return fmt.Errorf("run %s: %w", r.ID, ErrRunEnded)
	}
	if err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	return nil
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

// markOnce writes a marker item that expires after three days; false when it exists already.
func (s *Store) markOnce(ctx context.Context, pk, sk string) (bool, error) {
	expires := time.Now().Add(72 * time.Hour).Unix()
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item: map[string]ddbtypes.AttributeValue{
			attrPK:       str(pk),
			attrSK:       str(sk),
			"Type":       str("queued"),
			TTLAttribute: &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(expires)},
		},
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mark queued: %w", err)
	}
	return true, nil
}
