package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// A website's items (budgets, multistep tests, channels, test profiles, experiments) are plain
// items of its partition keyed by their ID; these functions are their shared create, read,
// list, replace and delete.

// DynamoDB's limits on key values, in bytes: no item has a longer key, and DynamoDB refuses to
// even look one up.
const (
	maxPKBytes = 2048
	maxSKBytes = 1024
)

// possibleKey tells whether an item can have this key: an identifier from a request may be
// longer than any (a missing item, not a failure).
func possibleKey(pk, sk string) bool { return len(pk) <= maxPKBytes && len(sk) <= maxSKBytes }

// getItem reads one item into out; a missing item is ErrNotFound naming what.
func (s *Store) getItem(ctx context.Context, pk, sk, what string, out any) error {
	if !possibleKey(pk, sk) {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	res, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(pk, sk), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("get %s: %w", what, err)
	}
	if res.Item == nil {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// putItem writes item. With mustExist it replaces an existing item only (ErrNotFound
// otherwise); without, it creates a new one only.
func (s *Store) putItem(ctx context.Context, item any, mustExist bool, what string) error {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	cond := "attribute_not_exists(PK)"
	if mustExist {
		cond = "attribute_exists(PK)"
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: av, ConditionExpression: aws.String(cond),
	})
	if isConditionFailed(err) {
		if mustExist {
			return fmt.Errorf("%s: %w", what, model.ErrNotFound)
		}
		return fmt.Errorf("%s: id already in use", what)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

// deleteItem removes an existing item; a missing one is ErrNotFound.
func (s *Store) deleteItem(ctx context.Context, pk, sk, what string) error {
	if !possibleKey(pk, sk) {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: key(pk, sk),
		ConditionExpression: aws.String("attribute_exists(PK)"),
	})
	if isConditionFailed(err) {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	return nil
}

// newestFirst selects the items of a partition whose sort key lies between lo and hi
// (inclusive), newest (highest key) first, for a list window: at most up to before, a sort key
// that is the previous window's last item (skipped), when before is not "".
func (s *Store) newestFirst(pk, lo, hi, before string) *dynamodb.QueryInput {
	if before != "" && before < hi {
		hi = before
	}
	return &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("PK = :pk AND SK BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":pk": str(pk), ":lo": str(lo), ":hi": str(hi),
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
	}
}

// window runs a newestFirst query until it holds more than limit items (0: all of them),
// leaving out the item whose sort key is skip, and tells whether more remain. item turns a
// decoded item into its value and gives its sort key.
func window[I, T any](ctx context.Context, s *Store, in *dynamodb.QueryInput, skip string, limit int, what string, item func(I) (string, T)) ([]T, bool, error) {
	var out []T
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() && (limit == 0 || len(out) <= limit) {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("list %s: %w", what, err)
		}
		var items []I
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, false, fmt.Errorf("decode %s: %w", what, err)
		}
		for _, it := range items {
			if sk, v := item(it); sk != skip {
				out = append(out, v)
			}
		}
	}
	more := false
	if limit > 0 && len(out) > limit {
		out, more = out[:limit], true
	}
	return out, more, nil
}

// websiteItems lists a website's items of one kind, those under prefix in its partition,
// each the model value of its stored item I (of), by when each was made (created): oldest
// first, newest first when newest. kind names them in an error.
func websiteItems[I, T any](ctx context.Context, s *Store, w model.Website, prefix, kind string, of func(I) T, created func(T) time.Time, newest bool) ([]T, error) {
	var items []I
	if err := s.queryPrefix(ctx, websitePK(w.Account, w.ID), prefix, true, &items); err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = of(it)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := created(out[i]), created(out[j])
		if newest {
			return a.After(b)
		}
		return a.Before(b)
	})
	return out, nil
}
