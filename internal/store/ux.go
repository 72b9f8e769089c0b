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

type uxItem struct {
	PK   string
	SK   string
	Type string
	model.UXResult
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of its day, for the table's TTL
}

// PutUXResult stores a page's record of one device and day, replacing the same day's, and
// marks the page's summary stale.
func (s *Store) PutUXResult(ctx context.Context, w model.Website, page model.Page, r model.UXResult) error {
	r.Page = page.ID
	item, err := attributevalue.MarshalMap(uxItem{PK: websitePK(w.Account, w.ID), SK: uxSK(r.Page, r.Device, r.Day), Type: "ux", UXResult: r,
		Expires: model.HistoryEnd(r.Day).Unix()})
	if err != nil {
		return err
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("put ux result: %w", err)
	}
	return s.staleSummary(ctx, w, page)
}

// UXResults returns a page's records on one device from day from to day to (yyyymmdd,
// inclusive), oldest first.
func (s *Store) UXResults(ctx context.Context, w model.Website, page, device, from, to string) ([]model.UXResult, error) {
	var items []uxItem
	if err := s.queryBetween(ctx, websitePK(w.Account, w.ID), uxSK(page, device, from), uxSK(page, device, to), &items); err != nil {
		return nil, fmt.Errorf("query ux results: %w", err)
	}
	out := make([]model.UXResult, len(items))
	for i, it := range items {
		out[i] = it.UXResult
	}
	return out, nil
}

type searchItem struct {
	PK   string
	SK   string
	Type string
	model.SearchResult
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of its day, for the table's TTL
}

// PutSearchResults stores the search analytics of a website's pages for one day, replacing
// that day's, and marks the summaries of pages (those the results are of) stale.
func (s *Store) PutSearchResults(ctx context.Context, w model.Website, pages []model.Page, rs []model.SearchResult) error {
	reqs := make([]ddbtypes.WriteRequest, 0, len(rs))
	for _, r := range rs {
		item, err := attributevalue.MarshalMap(searchItem{PK: websitePK(w.Account, w.ID), SK: searchSK(r.Page, r.Day), Type: "search", SearchResult: r,
			Expires: model.HistoryEnd(r.Day).Unix()})
		if err != nil {
			return err
		}
		reqs = append(reqs, ddbtypes.WriteRequest{PutRequest: &ddbtypes.PutRequest{Item: item}})
	}
	for start := 0; start < len(reqs); start += 25 {
		if err := s.batchWrite(ctx, reqs[start:min(start+25, len(reqs))]); err != nil {
			return fmt.Errorf("put search results: %w", err)
		}
	}
	byID := make(map[string]model.Page, len(pages))
	for _, p := range pages {
		byID[p.ID] = p
	}
	for _, r := range rs {
		p, ok := byID[r.Page]
		if !ok {
			return fmt.Errorf("put search results: page %s is not among the pages given", r.Page)
		}
		if err := s.staleSummary(ctx, w, p); err != nil {
			return err
		}
	}
	return nil
}

// SearchResults returns a page's search analytics collected from day from to day to
// (yyyymmdd, inclusive), oldest first.
func (s *Store) SearchResults(ctx context.Context, w model.Website, page, from, to string) ([]model.SearchResult, error) {
	var items []searchItem
	if err := s.queryBetween(ctx, websitePK(w.Account, w.ID), searchSK(page, from), searchSK(page, to), &items); err != nil {
		return nil, fmt.Errorf("query search results: %w", err)
	}
	out := make([]model.SearchResult, len(items))
	for i, it := range items {
		out[i] = it.SearchResult
	}
	return out, nil
}

type uxRunItem struct {
	PK      string
	SK      string
	Type    string
	Expires int64 `dynamodbav:"expires"`
	model.UXRun
}

// PutUXRun records how a website's collection of a day went, replacing what was recorded.
func (s *Store) PutUXRun(ctx context.Context, w model.Website, r model.UXRun) error {
	// Kept a month: it only serves to follow a collection and to explain a gap.
	item, err := attributevalue.MarshalMap(uxRunItem{PK: websitePK(w.Account, w.ID), SK: uxRunSK(r.Day), Type: "uxrun",
		Expires: s.now().Add(31 * 24 * time.Hour).Unix(), UXRun: r})
	if err != nil {
		return err
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("put ux run: %w", err)
	}
	return nil
}

// UXRun returns how a website's collection of a day went; ErrNotFound before it started.
func (s *Store) UXRun(ctx context.Context, w model.Website, day string) (model.UXRun, error) {
	var it uxRunItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), uxRunSK(day), "ux run "+day, &it)
	return it.UXRun, err
}

// queryBetween reads every item of a partition with a sort key from from to to (inclusive)
// into out (a pointer to a slice of item structs), following pagination.
func (s *Store) queryBetween(ctx context.Context, pk, from, to string, out any) error {
	var all []map[string]ddbtypes.AttributeValue
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("PK = :pk AND SK BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":pk": str(pk), ":from": str(from), ":to": str(to),
		},
		ConsistentRead: aws.Bool(true),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		all = append(all, page.Items...)
	}
	return attributevalue.UnmarshalListOfMaps(all, out)
}

// UXResultsOfDay returns the records of the given pages on the given devices for one UTC day
// (yyyymmdd), in one BatchGetItem per 100 page-devices; a page without a record that day on a
// device has none.
func (s *Store) UXResultsOfDay(ctx context.Context, w model.Website, pages []model.Page, devices []string, day string) ([]model.UXResult, error) {
	keys := make([]map[string]ddbtypes.AttributeValue, 0, len(pages)*len(devices))
	for _, p := range pages {
		for _, d := range devices {
			keys = append(keys, key(websitePK(w.Account, w.ID), uxSK(p.ID, d, day)))
		}
	}
	raw, err := s.batchGet(ctx, keys, false)
	if err != nil {
		return nil, fmt.Errorf("read ux results of %s: %w", day, err)
	}
	var items []uxItem
	if err := attributevalue.UnmarshalListOfMaps(raw, &items); err != nil {
		return nil, fmt.Errorf("decode ux results: %w", err)
	}
	out := make([]model.UXResult, len(items))
	for i, it := range items {
		out[i] = it.UXResult
	}
	return out, nil
}
